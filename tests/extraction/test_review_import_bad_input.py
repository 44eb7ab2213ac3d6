"""`review-import` with hostile lines: each bad line is named and skipped, the rest imported, exit 2.

A line nested 100,000 levels deep (the JSON parser's RecursionError), a lone surrogate in a note
(the store cannot encode it), a 300,000-character reviewer name (over EDUART_MAX_TEXT_CHARS) and a
line that is not UTF-8 must not abort the file; an empty file is one clear line and exit 2.
"""
from __future__ import annotations

import json

import pytest

from eduart_core.cli import main
from eduart_core.store import Store
from eduart_core.store import extraction as db
from tests.review_fixtures import build_template, copy_store

DATASET = "demo-extraction"
GOOD = {"dataset": DATASET, "page": "ex01/q02", "round": 1, "field": "answers", "reviewer": "Anna", "decision": "A"}


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return build_template(tmp_path_factory.mktemp("bad-input-template"))


@pytest.fixture
def store_path(template, tmp_path):
    return copy_store(template, tmp_path / "bad-input")


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_hostile_lines_are_named_and_skipped_and_the_rest_imported(store_path, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("EDUART_MAX_TEXT_CHARS", raising=False)
    deep = json.dumps(GOOD)[:-1] + ', "value": ' + "[" * 100_000 + "]" * 100_000 + "}"
    surrogate = json.dumps(GOOD | {"reviewer": "Bruno", "note": "x"}).replace('"x"', '"a \\ud800 b"')
    long_name = json.dumps(GOOD | {"reviewer": "R" * 300_000})
    lines = [json.dumps(GOOD).encode(),                                          # 1 good
             deep.encode(),                                                      # 2 nested too deeply
             surrogate.encode(),                                                 # 3 lone surrogate in the note
             long_name.encode(),                                                 # 4 reviewer name too long
             b'{"dataset": "demo-extraction", "note": "caf\xe9"}',               # 5 not UTF-8
             json.dumps(GOOD | {"page": "ex06/q01", "field": "question_text", "reviewer": "Bruno"}).encode()]  # 6
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    code, out, err = cli(capsys, "review-import", str(path), "--db", str(store_path))
    assert code == 2, err
    assert "imported 2 decision(s)" in out and "4 bad line(s) skipped" in out
    skipped = {line.split(": skipped: ")[0]: line.split(": skipped: ")[1] for line in out.splitlines()
               if ": skipped: " in line}
    assert sorted(skipped) == [f"{path}:{n}" for n in (2, 3, 4, 5)]
    assert "nested" in skipped[f"{path}:2"]
    assert "note" in skipped[f"{path}:3"] and "surrogate" in skipped[f"{path}:3"]
    assert "reviewer" in skipped[f"{path}:4"] and "EDUART_MAX_TEXT_CHARS" in skipped[f"{path}:4"]
    assert "UTF-8" in skipped[f"{path}:5"]
    assert all(len(line) < 300 for line in out.splitlines())  # one short line per bad line
    log = db.load_decisions(Store(store_path))
    assert sorted(log["reviewer"]) == ["Anna", "Bruno"]


def test_an_empty_file_is_one_line_and_exit_2(store_path, tmp_path, capsys):
    for name, content in (("empty.jsonl", b""), ("blank.jsonl", b"\n  \n\n")):
        path = tmp_path / name
        path.write_bytes(content)
        code, out, err = cli(capsys, "review-import", str(path), "--db", str(store_path))
        assert code == 2 and out == ""
        assert len(err.strip().splitlines()) == 1 and str(path) in err and "no decision" in err
    assert db.load_decisions(Store(store_path)).empty


def test_a_file_over_the_size_limit_is_refused_at_once(store_path, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("EDUART_MAX_FILE_MB", "0.001")
    path = tmp_path / "big.jsonl"
    path.write_text((json.dumps(GOOD) + "\n") * 50, encoding="utf-8")
    code, out, err = cli(capsys, "review-import", str(path), "--db", str(store_path))
    assert code == 2 and "EDUART_MAX_FILE_MB" in err and len(err.strip().splitlines()) == 1
    assert db.load_decisions(Store(store_path)).empty

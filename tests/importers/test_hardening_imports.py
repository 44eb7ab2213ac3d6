"""Adversarial imports: one poisoned file per kind, each skipped and named, the rest imported.

Real CLI, real DuckDB store in tmp_path; the poisons are generated small (see tests/poison.py).
Each case checks the one-line reason, the exit code and what the store holds afterwards.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from poison import (
    MODEL_DIR,
    deep_json,
    png_bytes,
    png_declaring,
    poisoned_layout,
    radio,
    truncated_png,
    write_json,
)

from eduart_core.cli import main
from eduart_core.store.items import load_items
from eduart_core.store.scores import stats


@pytest.fixture(autouse=True)
def _small_limits(monkeypatch):
    """Limits small enough that the poisons stay small (the defaults are documented in the README)."""
    monkeypatch.setenv("EDUART_MAX_FILE_MB", "0.5")
    monkeypatch.setenv("EDUART_MAX_TEXT_CHARS", "1000")


def _skipped_lines(err: str) -> dict[str, str]:
    """path -> reason from the `  path: reason` lines the importers print."""
    lines = {}
    for line in err.splitlines():
        if line.startswith("  ") and ": " in line:
            path, reason = line.strip().split(": ", 1)
            lines[path] = reason
    return lines


def test_published_layout_with_one_poison_per_kind_imports_every_good_file(store, tmp_path, capsys):
    root = tmp_path / "eduart"
    bad = poisoned_layout(root)
    code = main(["import-eduart", str(root), "--db", str(store.path), "--dataset", "pois"])
    out, err = capsys.readouterr()
    assert code == 2
    lines = _skipped_lines(err)
    for relative, words in bad.items():
        path = str(root / relative)
        assert path in lines, f"{relative} not named; got {sorted(lines)}"
        assert words in lines[path], (relative, lines[path])
        assert "\n" not in lines[path]
    named = {Path(p).name for p in lines}
    assert not named & {"_evaluation.json", "run.log", "reproducibility"}  # bookkeeping stays quiet
    # every good item is in, poisoned records are not; items with refused images are kept, flagged
    items = load_items(store, "pois").set_index("item_id")
    assert sorted(items.index) == ["0001", "0002", "0003", "0004", "0010", "0011", "0012"]
    assert items.loc["0001", "image_hash"] is not None and not items.loc["0001", "data_issue"]
    for item_id in ("0010", "0011", "0012"):
        assert items.loc[item_id, "image_hash"] is None and items.loc[item_id, "data_issue"]
    counts = stats(store)
    assert counts["images"] == 1  # only the good image was stored
    with store.connect(read_only=True) as con:
        rows = con.execute("SELECT u.condition, r.item_id, r.input_tokens FROM responses r JOIN runs u USING (run_id) "
                           "ORDER BY 1, 2").fetchall()
    assert rows == [("default", i, 100) for i in ("0001", "0002", "0003", "0004")] + [("motivation", "0004", 100)]
    assert "4 new response" not in out and "5 new response(s)" in out


def test_import_items_skips_bad_lines_and_images_and_names_them(store, tmp_path, capsys):
    src = tmp_path / "src"
    (src / "imgs").mkdir(parents=True)
    (src / "imgs" / "ok.png").write_bytes(png_bytes())
    (src / "imgs" / "bomb.png").write_bytes(png_declaring(20000, 20000))
    (src / "imgs" / "cut.png").write_bytes(truncated_png())
    lines = [json.dumps(radio("g1", "imgs/ok.png")), "{not json", json.dumps(radio("b1", "imgs/bomb.png")),
             deep_json(5000), json.dumps(radio("g2")), json.dumps(radio("b2", "imgs/cut.png")),
             '{"item_id": "n1", "exercise": NaN}', json.dumps(radio("s1", text="\ud800"))]
    (src / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(["import-items", str(src / "items.jsonl"), "--db", str(store.path), "--dataset", "mine"])
    out, err = capsys.readouterr()
    assert code == 2, err
    found = _skipped_lines(err)
    jsonl = str(src / "items.jsonl")
    assert "not valid JSON" in found[f"{jsonl}:2"]
    assert "nested too deeply" in found[f"{jsonl}:4"]
    assert "NaN is not a number" in found[f"{jsonl}:7"]
    assert "lone surrogate" in found[f"{jsonl}:8"]
    assert "exceeds the limit" in found[str(src / "imgs" / "bomb.png")]
    assert "broken image data" in found[str(src / "imgs" / "cut.png")]
    assert "b1 not imported" in found[f"{jsonl}:3"] and "b2 not imported" in found[f"{jsonl}:6"]
    assert sorted(load_items(store, "mine")["item_id"]) == ["g1", "g2"]
    assert stats(store)["images"] == 1
    assert "2 item(s) added" in out


def test_import_items_refused_names_every_bad_line_in_one_pass(store, tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    invalid = dict(radio("v1"), answers=[{"id": "Z"}])  # the key names no choice
    no_id = {k: v for k, v in radio("x").items() if k != "item_id"}
    lines = [json.dumps(radio("g1")), json.dumps(radio("g1")), "{not json", deep_json(5000), json.dumps(invalid),
             '{"item_id": "n1", "exercise": NaN}', json.dumps(radio("s1", text="\ud800")), json.dumps(no_id),
             json.dumps(radio("l1", text="x" * 5000)), json.dumps(radio("g2"))]
    (src / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(["import-items", str(src / "items.jsonl"), "--db", str(store.path), "--dataset", "mine"])
    out, err = capsys.readouterr()
    assert code == 2 and "added" not in out
    found = _skipped_lines(err)
    jsonl = str(src / "items.jsonl")
    for number, words in [(2, "appears twice"), (3, "not valid JSON"), (4, "nested too deeply"), (5, "item v1"),
                          (6, "NaN is not a number"), (7, "lone surrogate"), (8, "no item_id"), (9, "exceeds the limit")]:
        assert words in found.get(f"{jsonl}:{number}", ""), (number, err)
    assert err.strip().splitlines()[-1] == "error: nothing imported: 8 problem(s), listed above"
    assert not store.exists() or stats(store)["items"] == 0


def test_empty_inputs_are_errors_and_create_nothing(store, tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    assert main(["import-items", str(empty), "--db", str(store.path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no item records in") and err.count("\n") == 1
    assert not store.exists()
    folder = tmp_path / "layout"
    (folder / "dataset" / "metadata").mkdir(parents=True)
    assert main(["import-eduart", str(folder), "--db", str(store.path)]) == 2
    assert "no item files" in capsys.readouterr().err
    assert not store.exists()
    # only bad files: each named, then one error line; nothing written
    write_json(folder / "dataset" / "metadata" / "0001.json", "[1, 2")
    assert main(["import-eduart", str(folder), "--db", str(store.path)]) == 2
    err = capsys.readouterr().err
    assert "0001.json: not valid JSON" in err and "error: nothing imported" in err
    assert not store.exists()


def test_oversize_image_bytes_and_bad_limit_values(store, tmp_path, capsys, monkeypatch):
    src = tmp_path / "src"
    (src / "imgs").mkdir(parents=True)
    (src / "imgs" / "big.png").write_bytes(png_bytes((300, 300)))
    write_json(src / "a.json", [radio("a1", "imgs/big.png"), radio("a2")])
    monkeypatch.setenv("EDUART_MAX_IMAGE_MB", "0.01")
    assert main(["import-items", str(src / "a.json"), "--db", str(store.path)]) == 2
    err = capsys.readouterr().err
    assert "exceeds the limit of 0.01 MB (EDUART_MAX_IMAGE_MB)" in err
    assert sorted(load_items(store, "items")["item_id"]) == ["a2"]
    monkeypatch.setenv("EDUART_MAX_IMAGE_MB", "lots")
    assert main(["import-items", str(src / "a.json"), "--db", str(store.path)]) == 2
    assert capsys.readouterr().err == "error: EDUART_MAX_IMAGE_MB='lots': expected a number of MB\n"


def test_answer_file_names_and_model_folder_with_markup(store, tmp_path, capsys):
    """An answers folder named with markup is data: imported under that literal name."""
    root = tmp_path / "eduart"
    write_json(root / "dataset" / "metadata" / "0001.json", radio("0001"))
    odd = "acme_<img src=x onerror=alert(1)>"
    write_json(root / "answers" / odd / "default" / "0001.json", {"raw_response": '{"Answers": [{"id": "A"}]}'})
    write_json(root / "answers" / MODEL_DIR / "default" / "0001.json", {"raw_response": "A"})
    assert main(["import-eduart", str(root), "--db", str(store.path)]) == 0
    with store.connect(read_only=True) as con:
        names = sorted(r[0] for r in con.execute("SELECT display_name FROM models").fetchall())
    assert "<img src=x onerror=alert(1)>" in names

"""A truncated or damaged store file is one clear line, from the library, and the file is kept.

What a user relies on: pointing the CLI or the app at a store file that was cut short (a partial
copy or download) or holds garbage says "<path> is not a complete EduArt Studio store (why)",
exits non-zero without a traceback, shows one error line in the app, and never changes the file.
Real stores in tmp dirs, the real CLI, the app under AppTest.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eduart_core.cli import main
from eduart_core.scoring.item_writes import upsert_items
from eduart_core.store import Store, StoreError
from eduart_core.text import plain

ROOT = Path(__file__).resolve().parents[2]
RECORD = {"item_id": "q1", "type": "multiple_choice_radio", "question_text": "Who painted the Primavera?",
          "choices": [{"id": "A", "text": "Botticelli"}, {"id": "B", "text": "Titian"}],
          "answers": [{"id": "A", "description": "Botticelli"}], "language": "en", "has_image": False,
          "image": None}


@pytest.fixture(scope="module")
def real_store(tmp_path_factory) -> bytes:
    """The bytes of a real store file (one imported item), closed by every connection."""
    from eduart_core.store import release_readers

    path = tmp_path_factory.mktemp("whole") / "eduart.duckdb"
    upsert_items(Store(path), [RECORD], dataset="items", origin="import-items")
    release_readers()
    return path.read_bytes()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cut(real_store: bytes, tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"{kind}.duckdb"
    # DuckDB's three 4 KiB headers, then blocks of 256 KiB: the first cut ends inside the headers, the
    # second inside the first block (DuckDB fails opening it), the third after the first block (the
    # file opens; reading the items fails at the missing block).
    data = {"first_1000_bytes": real_store[:1000], "inside_the_first_block": real_store[:16384],
            "after_the_first_block": real_store[:12288 + 262144 + 4096], "garbage": os.urandom(5000)}[kind]
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("kind", ["first_1000_bytes", "inside_the_first_block", "after_the_first_block",
                                  "garbage"])
@pytest.mark.slow
def test_cli_says_one_line_with_the_path_and_keeps_the_file(real_store, tmp_path, kind, capfd):
    path = _cut(real_store, tmp_path, kind)
    before = _digest(path)
    # `show` on the file that DuckDB opens and then fails to read runs as `python -m eduart_core` in a
    # process of its own (what a user types); every other command goes through the same entry point in
    # this process, with the file descriptors captured, so whatever DuckDB itself writes to stderr is seen.
    for argv in (["show", "leaderboard"], ["stats"], ["import-items", str(tmp_path / "none.json")]):
        if argv[0] == "show" and kind == "after_the_first_block":
            done = subprocess.run([sys.executable, "-m", "eduart_core", *argv, "--db", str(path)],
                                  capture_output=True, text=True, cwd=ROOT, timeout=120)
            code, stderr = done.returncode, done.stderr
        else:
            code = main([*argv, "--db", str(path)])
            stderr = capfd.readouterr().err
        assert code != 0, argv
        assert "Traceback" not in stderr and "IOException" not in stderr
        lines = stderr.strip().splitlines()
        assert len(lines) == 1, stderr
        if argv[0] != "import-items":  # the missing input file is named first there
            assert f"{path} is not a complete EduArt Studio store (" in lines[0], lines[0]
    assert _digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no WAL, no replacement store


def test_writing_to_a_truncated_store_is_refused_before_duckdb_touches_it(real_store, tmp_path):
    path = _cut(real_store, tmp_path, "after_the_first_block")
    before = _digest(path)
    with pytest.raises(StoreError, match="is not a complete EduArt Studio store"):
        upsert_items(Store(path), [RECORD], dataset="items", origin="import-items")
    assert _digest(path) == before


@pytest.mark.parametrize("kind", ["first_1000_bytes", "after_the_first_block"])
def test_the_app_shows_one_error_line_and_no_exception(real_store, tmp_path, monkeypatch, kind):
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    path = _cut(real_store, tmp_path, kind)
    before = _digest(path)
    monkeypatch.setenv("EDUART_DB", str(path))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, at.exception[0].value
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "is not a complete EduArt Studio store" in errors[0]
    assert plain(str(path)) in errors[0]  # drawn as inert text
    assert _digest(path) == before

"""The data commands as a user runs them.

The import and `stats --json` go through a real `python -m eduart_core` subprocess; the other
calls run the same `cli.main` in-process (same parser, same exit codes, captured output), because
starting the interpreter costs seconds on a busy machine.
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.importers.test_ingest import ITEMS, build_published_folder

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, env_db: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if env_db is not None:
        env["EDUART_DB"] = str(env_db)
    return subprocess.run([sys.executable, "-m", "eduart_core", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def run(*args: str) -> subprocess.CompletedProcess:
    """`cli.main` in-process, returning what a subprocess would (exit code, stdout, stderr)."""
    from eduart_core.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """One published-layout folder imported once through the CLI (the slow part, shared)."""
    base = tmp_path_factory.mktemp("cli")
    folder = build_published_folder(base / "eduart")
    db = base / "store" / "eduart.duckdb"
    result = cli("import-eduart", folder, "--db", db)
    return folder, db, result


def test_import_eduart_reports_skipped_file_and_exit_2(imported):
    folder, db, result = imported
    assert result.returncode == 2, result.stderr
    assert "skipped 1 file(s)" in result.stderr
    assert str(folder / "answers" / "acme_vision-odd-2" / "default" / "0003.json") in result.stderr
    assert "not valid JSON" in result.stderr
    assert "5 item(s) added" in result.stdout and "4 run(s)" in result.stdout
    assert "0005: item 0005: field answers" in result.stdout  # the defective record is listed
    assert "Traceback" not in result.stderr


def test_score_and_stats_json(imported):
    _, db, _ = imported
    scored = run("score", "--profile", "all", "--db", db)
    assert scored.returncode == 0, scored.stderr
    assert "scored 38" in scored.stdout
    stats = cli("stats", "--json", "--db", db)
    assert stats.returncode == 0, stats.stderr
    data = json.loads(stats.stdout)
    for key in ("items", "items_by_type", "items_by_language", "items_with_image", "images", "models", "runs",
                "responses", "scores"):
        assert key in data
    assert (data["items"], data["images"], data["models"], data["runs"], data["responses"], data["scores"]) == (
        5, 1, 2, 4, 19, 38)
    assert data["items_by_type"]["select_errors"] == 1
    summary = run("stats", "--db", db)
    assert summary.returncode == 0 and "items 5" in summary.stdout and "dataset eduart" in summary.stdout


def test_export_scores_to_stdout_and_file(imported, tmp_path):
    _, db, _ = imported
    out = run("export-scores", "--profile", "paper", "--db", db)
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert list(rows[0]) == ["model", "condition", "item_id", "type", "language", "has_image", "profile",
                             "score", "correct"]
    assert len(rows) == 19 and {r["profile"] for r in rows} == {"paper"}
    radio = [r for r in rows if r["item_id"] == "0001" and r["condition"] == "motivation"
             and r["model"] == "vision-odd-2"]
    assert radio[0]["score"] == "1.0" and radio[0]["correct"] == "True" and radio[0]["has_image"] == "True"
    target = tmp_path / "scores.csv"
    written = run("export-scores", "--dataset", "eduart", "--out", target, "--db", db)
    assert written.returncode == 0 and "wrote 19 row(s)" in written.stderr
    strict = list(csv.DictReader(target.open()))
    assert len(strict) == 19 and {r["profile"] for r in strict} == {"strict"}


def test_reimport_through_cli_is_idempotent(imported):
    folder, db, _ = imported
    before = json.loads(run("stats", "--json", "--db", db).stdout)
    again = run("import-eduart", folder, "--db", db)
    assert again.returncode == 2 and "0 item(s) added, 0 updated" in again.stdout
    assert "0 new response(s)" in again.stdout
    assert json.loads(run("stats", "--json", "--db", db).stdout) == before


@pytest.mark.slow  # CLI subprocesses
def test_import_items_cli_and_one_line_errors(tmp_path):
    db = tmp_path / "s.duckdb"
    good = tmp_path / "items.jsonl"
    good.write_text("\n".join(json.dumps(dict(ITEMS[i], item_id=i)) for i in ("0002", "0003")), encoding="utf-8")
    ok = run("import-items", good, "--dataset", "mine", "--db", db)
    assert ok.returncode == 0 and "2 item(s) added" in ok.stdout, ok.stderr

    escape = tmp_path / "escape.json"
    escape.write_text(json.dumps(dict(ITEMS["0001"], item_id="x", image="../../etc/passwd")), encoding="utf-8")
    bad = cli("import-items", escape, "--db", db)
    assert bad.returncode != 0
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: nothing imported: {escape}: item x: field image")
    assert "escapes" in lines[0]

    for args, expected in [
        (("import-eduart", tmp_path / "nowhere"), "missing folder dataset/metadata"),
        (("import-items", tmp_path / "missing.json"), "no such file or folder"),
        (("export-scores", "--dataset", "nope"), "no dataset 'nope'"),
        (("stats", "--json"), "no store at"),
        (("score",), "no store at"),
    ]:
        result = run(*args, "--db", db if args[0] not in ("stats", "score") else tmp_path / "none.duckdb")
        assert result.returncode != 0, args
        assert result.stderr.count("\n") == 1 and expected in result.stderr, (args, result.stderr)
    assert json.loads(run("stats", "--json", "--db", db).stdout)["items"] == 2


def test_default_store_from_env(tmp_path, monkeypatch):
    db = tmp_path / "env" / "store.duckdb"
    monkeypatch.setenv("EDUART_DB", str(db))
    items = tmp_path / "one.json"
    items.write_text(json.dumps(dict(ITEMS["0002"], item_id="only")), encoding="utf-8")
    assert run("import-items", items).returncode == 0
    assert db.exists()
    assert json.loads(run("stats", "--json").stdout)["items"] == 1

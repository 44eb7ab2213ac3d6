"""Adversarial stores and disks: newer schema, foreign files as --db, a full disk.

The full disk is real: a tiny tmpfs mounted in a private mount namespace (``unshare -rm``) around
the CLI, so DuckDB, the importers and the output writers meet a genuine ENOSPC. Each case checks
the one line, the exit code and the store contents afterwards.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from poison import radio, write_json

from eduart_core.cli import main
from eduart_core.store import Store
from eduart_core.store.scores import stats

ROOT = Path(__file__).resolve().parents[2]


def _import(store: Store, tmp_path: Path, ids: list[str]) -> None:
    path = write_json(tmp_path / f"items-{ids[0]}.json", [radio(i) for i in ids])
    assert main(["import-items", str(path), "--db", str(store.path)]) == 0


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_newer_schema_store_is_refused_for_reading_and_writing(store, tmp_path, capsys):
    _import(store, tmp_path, ["a1"])
    with store.connect() as con:
        con.execute("INSERT INTO schema_version (version, name) VALUES (999, 'from the future')")
    before = _digest(store.path)
    capsys.readouterr()
    path = write_json(tmp_path / "more.json", [radio("a2")])
    for argv in (["stats"], ["import-items", str(path)], ["export-scores"]):
        assert main([*argv, "--db", str(store.path)]) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "made by a newer EduArt Studio" in err and "schema version 999" in err
    assert _digest(store.path) == before  # nothing was written, not even a migration


@pytest.mark.parametrize("kind", ["sqlite", "text"])
def test_foreign_file_as_db_is_one_line_and_untouched(tmp_path, capsys, kind):
    path = tmp_path / "other.db"
    if kind == "sqlite":
        import sqlite3

        con = sqlite3.connect(path)
        con.execute("CREATE TABLE t (x)")
        con.commit()
        con.close()
    else:
        path.write_text("name,score\nx,1\n" * 500, encoding="utf-8")
    before = _digest(path)
    extensions = Path.home() / ".duckdb" / "extensions"
    had = sorted(extensions.rglob("*")) if extensions.exists() else []
    assert main(["stats", "--db", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err
    assert ("SQLite" in err) if kind == "sqlite" else ("not a DuckDB database file" in err)
    assert "INSTALL" not in err and "extension" not in err.lower()
    assert _digest(path) == before
    assert (sorted(extensions.rglob("*")) if extensions.exists() else []) == had  # nothing fetched


def _unshare_available() -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k none /mnt 2>/dev/null || "
                            "mount -t tmpfs -o size=64k none \"$TMPDIR\""], capture_output=True,
                           env={**os.environ, "TMPDIR": "/tmp"})
    return probe.returncode == 0


needs_tmpfs = pytest.mark.skipif(not _unshare_available(),
                                 reason="needs unshare -rm to mount a tiny tmpfs (the full-disk simulation)")


def _on_tiny_disk(mount: Path, size: str, script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run ``script`` (sh) with a tmpfs of ``size`` mounted at ``mount``, in a private namespace."""
    mount.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PY": sys.executable, "M": str(mount), "T": str(tmp_path)}
    full = f'set -u\nmount -t tmpfs -o size={size} none "$M"\n{script}'
    return subprocess.run(["unshare", "-rm", "sh", "-c", full], capture_output=True, text=True, env=env,
                          cwd=str(ROOT), timeout=300)


@pytest.mark.slow  # a subprocess on a tiny tmpfs
@needs_tmpfs
def test_full_disk_store_write_names_the_cause_and_keeps_the_store(tmp_path):
    small = write_json(tmp_path / "small.json", [radio(f"s{i}") for i in range(3)])
    big = write_json(tmp_path / "big.json", [radio(f"b{i}", text="x" * 900 + f" {i}") for i in range(6000)])
    script = f"""
"$PY" -m eduart_core import-items {small} --db "$M/s.duckdb" --dataset d > "$T/1.out" 2>&1; echo $? > "$T/1.rc"
"$PY" -m eduart_core import-items {big} --db "$M/s.duckdb" --dataset d > "$T/2.out" 2>&1; echo $? > "$T/2.rc"
"$PY" -m eduart_core stats --json --db "$M/s.duckdb" > "$T/3.out" 2>&1; echo $? > "$T/3.rc"
"""
    done = _on_tiny_disk(tmp_path / "disk", "3m", script, tmp_path)
    assert done.returncode == 0, done.stderr

    def read(name: str) -> str:
        return (tmp_path / name).read_text(encoding="utf-8")

    assert read("1.rc").strip() == "0", read("1.out")
    assert read("2.rc").strip() == "2"
    err = read("2.out").strip()
    assert err.count("\n") == 0 and "no space left on device" in err and "s.duckdb" in err, err
    assert "rollback" not in err.lower() and "Traceback" not in err
    assert read("3.rc").strip() == "0", read("3.out")
    assert json.loads(read("3.out"))["items"] == 3  # the failed import left the store as it was


@pytest.mark.slow  # a subprocess on a tiny tmpfs
@needs_tmpfs
def test_full_disk_output_files_leave_no_partial_file(store, tmp_path):
    _import(store, tmp_path, [f"r{i}" for i in range(3)])
    assert main(["run", "--db", str(store.path), "--model", "chance", "--dataset", "items", "--quiet"]) == 0
    script = f"""
dd if=/dev/zero of="$M/filler" bs=1k 2>/dev/null  # until the disk is full
"$PY" -m eduart_core export-scores --db {store.path} --out "$M/scores.csv" > "$T/e.out" 2>&1; echo $? > "$T/e.rc"
"$PY" -m eduart_core report --db {store.path} --dataset items --baselines --out "$M/report.html" > "$T/r.out" 2>&1; echo $? > "$T/r.rc"
ls -a "$M" > "$T/ls.out"
"""
    done = _on_tiny_disk(tmp_path / "disk", "64k", script, tmp_path)
    assert done.returncode == 0, done.stderr
    for name in ("e", "r"):
        rc = (tmp_path / f"{name}.rc").read_text().strip()
        err = (tmp_path / f"{name}.out").read_text().strip()
        assert rc == "2" and err.count("\n") == 0 and "no space left on device" in err, (name, err)
    assert (tmp_path / "ls.out").read_text().split() == [".", "..", "filler"]  # no partial, no temp file


@pytest.mark.slow  # a subprocess on a tiny tmpfs
@needs_tmpfs
def test_full_disk_under_the_journal_stops_the_run_with_one_line(store, tmp_path):
    """The run's journal folder is a full tmpfs: the first answer cannot be recorded, so the run
    stops at once (asking more would pay for answers that are then lost)."""
    _import(store, tmp_path, [f"j{i}" for i in range(5)])
    run_id = "full__chance__default"
    folder = store.runs_dir / run_id
    script = f"""
dd if=/dev/zero of="$M/filler" bs=1k 2>/dev/null  # until the disk is full
"$PY" -m eduart_core run --db {store.path} --model chance --dataset items --run-id full --quiet \
    --concurrency 1 > "$T/run.out" 2> "$T/run.err"; echo $? > "$T/run.rc"
"""
    done = _on_tiny_disk(folder, "16k", script, tmp_path)
    assert done.returncode == 0, done.stderr
    err = (tmp_path / "run.err").read_text().strip().splitlines()
    assert (tmp_path / "run.rc").read_text().strip() == "2"
    journal = folder / "responses.jsonl"
    assert len(err) == 1 and "no space left on device" in err[0] and str(journal) in err[0], err
    assert "--resume full" in err[0]
    with store.connect(read_only=True) as con:
        assert con.execute("SELECT count(*) FROM responses").fetchone()[0] == 0
        assert con.execute("SELECT status FROM runs WHERE run_id = ?", [run_id]).fetchone()[0] == "failed"
    info = json.loads((store.runs_dir / "_launches" / "full.json").read_text())
    assert info["status"] == "failed" and info["exit_code"] == 2


def test_cache_that_cannot_be_written_never_loses_an_answer(store, tmp_path, capsys, monkeypatch):
    """The response cache is a plain file instead of a folder: every cache write fails, every answer
    is journaled and stored anyway (journal first, cache second)."""
    from stubs import StubServer

    _import(store, tmp_path, [f"c{i}" for i in range(4)])
    store.cache_dir.mkdir(parents=True)
    (store.cache_dir / "responses").write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("EDUART_LOG_LEVEL", "WARNING")  # the CLI shows library warnings when asked
    capsys.readouterr()
    with StubServer() as stub:
        code = main(["run", "--db", str(store.path), "--provider", "openai_compatible", "--base-url",
                     f"{stub.url}/v1", "--model-id", "stub", "--dataset", "items", "--quiet"])
    assert code == 0
    with store.connect(read_only=True) as con:
        assert con.execute("SELECT count(*) FROM responses WHERE error IS NULL").fetchone()[0] == 4
    assert capsys.readouterr().err.count("response cache not written") == 4
    assert stats(store)["responses"] == 4


@pytest.mark.parametrize(("location", "name"), [
    ("/home/ana/projects/eduart/data/eduart.duckdb", "eduart.duckdb"),
    ("postgresql://anna:s3cret@db.internal:5433/eduart_team?sslmode=require", "eduart_team (PostgreSQL)"),
    ("postgres://bob@db.internal", "bob (PostgreSQL)"),
])
def test_a_store_is_named_without_folders_hosts_users_or_passwords(location, name):
    from eduart_core.store import store_name

    assert store_name(location) == name

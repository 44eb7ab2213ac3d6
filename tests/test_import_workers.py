"""import-eduart with worker processes: the store and the report are exactly what one process
leaves (same rows, ids, scores and skipped files, in order); a second import adds nothing; a
killed import leaves no worker behind, keeps its batches, and the next run adds the rest.
Real CLI and library, real spawned workers, real DuckDB stores; placeholder items in the published
mix with the simulator's share of malformed replies."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eduart_core.bench.imports import write_layout
from eduart_core.cli import main
from eduart_core.importers import answer_files
from eduart_core.importers.records import import_eduart
from eduart_core.store import Store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def layout(tmp_path_factory) -> Path:
    """60 items of every EduArt format, 3 simulated models x 2 conditions, and a few files that are not answers."""
    root = tmp_path_factory.mktemp("layout") / "eduart"
    write_layout(root, 1, seed=3, models=3, items=60)
    folder = next((root / "answers").iterdir()) / "default"
    (folder / "syn00002.json").write_text("{not json", encoding="utf-8")
    (folder / "nobody.json").write_text(json.dumps({"raw_response": "A"}), encoding="utf-8")
    (folder / "inner").mkdir()
    return root


def _contents(store: Store) -> dict[str, list]:
    with store.connect(read_only=True) as con:
        return {
            "responses": con.execute(
                "SELECT response_id, run_id, item_id, request_key, raw_text, CAST(llm_answer AS TEXT), "
                "CAST(parsed_answers AS TEXT), motivation, parse_error, input_tokens, output_tokens, latency_s, "
                "is_latest FROM responses ORDER BY response_id").fetchall(),
            "scores": con.execute(
                "SELECT response_id, profile, item_version, score, correct, CAST(details AS TEXT), scorer "
                "FROM scores ORDER BY response_id, profile").fetchall(),
            "runs": con.execute("SELECT run_id, model, condition, status, n_errors, input_tokens, output_tokens FROM runs "
                                "ORDER BY run_id").fetchall(),
        }


def test_workers_store_exactly_what_one_process_stores(layout, tmp_path, monkeypatch):
    monkeypatch.setattr(answer_files, "CHUNK_FILES", 25)  # many chunks: several per folder and per worker
    alone, pooled = Store(tmp_path / "alone.duckdb"), Store(tmp_path / "pooled.duckdb")
    one = import_eduart(alone, layout, batch_size=70, workers=1)
    two = import_eduart(pooled, layout, batch_size=70, workers=2)
    assert one.responses_added == two.responses_added == 359  # 360 files, one not JSON
    assert two.skipped == one.skipped and len(one.skipped) == 3
    assert _contents(pooled) == _contents(alone)
    again = import_eduart(pooled, layout, batch_size=70, workers=2)
    assert again.responses_added == 0 and _contents(pooled) == _contents(alone)


def test_a_small_folder_is_read_in_this_process_unless_workers_are_asked_for(layout, monkeypatch):
    jobs = answer_files.answer_jobs(answer_files.answer_folders(layout / "answers", []))
    with answer_files.open_pool(jobs) as pool:
        assert pool is None  # 363 entries: starting workers would cost more than it saves
    monkeypatch.setattr(answer_files, "POOL_MIN_FILES", 100)
    with answer_files.open_pool(jobs) as pool:
        assert isinstance(pool, answer_files.AnswerPool)
    with answer_files.open_pool(jobs, workers=1) as pool:
        assert pool is None


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow  # a real kill
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc to find the workers")
def test_a_killed_import_leaves_no_worker_and_the_next_run_adds_the_rest(layout, tmp_path, capsys):
    store = Store(tmp_path / "killed.duckdb")
    argv = [sys.executable, "-m", "eduart_core", "import-eduart", str(layout), "--db", str(store.path),
            "--batch", "40", "--workers", "2"]
    proc = subprocess.Popen(argv, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stderr:
            if "new response(s) stored so far" in line:
                break
        else:
            raise AssertionError("the import ended before it could be killed")
        workers = _children(proc.pid)
        assert len(workers) >= 2  # the two workers (and multiprocessing's resource tracker)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(30)
        proc.stderr.close()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in workers if _alive(pid)], "a worker outlived the killed import"
    with store.connect(read_only=True) as con:
        kept = con.execute("SELECT count(*) FROM responses").fetchone()[0]
    assert kept >= 40 and kept % 40 == 0  # whole batches only
    assert main(["import-eduart", str(layout), "--db", str(store.path), "--workers", "2"]) == 2  # 3 files skipped
    assert f"6 run(s) from 3 model(s); {359 - kept} new response(s)" in capsys.readouterr().out
    with store.connect(read_only=True) as con:
        assert con.execute("SELECT count(*), count(DISTINCT run_id || request_key) FROM responses").fetchone() == (
            359, 359)

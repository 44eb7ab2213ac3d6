"""Batch mode survives ``kill -9``: the real CLI in a subprocess, killed while it polls (or while a
create call is in flight), then resumed; the stubs count every job creation."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from batch_env import batch_environ, item_answer, journal_records, responses, wait_until, write_registry
from batch_stubs import BatchStub
from runner_items import fill_store

from eduart_core.store import Store

ROOT = Path(__file__).resolve().parents[2]
STUCK = "the run did not get there in time"
MODEL = {"openai": "stub-gpt", "gemini": "stub-gemini", "bedrock": "stub-claude"}


@pytest.fixture
def stub(s3_url):
    with BatchStub(s3_endpoint=s3_url, answer=item_answer) as server:
        yield server


def _environ(tmp_path: Path, stub: BatchStub, s3_url: str, **limits) -> dict:
    registry = write_registry(tmp_path, stub.url, **limits)
    return {**os.environ, **batch_environ(registry, stub.url, s3_url), "PYTHONPATH": str(ROOT)}


def _cli(store: Store, *args: str) -> list[str]:
    return [sys.executable, "-m", "eduart_core", "run", "--db", str(store.path), "--quiet", "--poll-interval",
            "0.05", *args]


def _check_answered_once(store: Store, records: list[dict]) -> None:
    rows = responses(store)
    assert all(r["error"] is None for r in rows)
    for condition in ("default", "motivation"):
        items = sorted(r["item_id"] for r in rows if r["condition"] == condition)
        assert items == sorted(r["item_id"] for r in records)
    for r in rows:
        assert f"answer to item {r['item_id']}" in r["raw_text"]
    keys = [rec["request_key"] for rec in journal_records(store) if rec.get("status") == "ok"]
    assert len(keys) == len(set(keys)) == 2 * len(records)  # one journal answer per request, ever


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "gemini", "bedrock"])
def test_kill_9_while_polling_then_resume_submits_every_file_exactly_once(store, stub, s3_url, tmp_path, provider):
    records = fill_store(store, 2)  # 14 items, 28 requests
    env = _environ(tmp_path, stub, s3_url, openai_max_requests=10)  # OpenAI: three files
    expected = 3 if provider == "openai" else 1
    stub.hold = True
    proc = subprocess.Popen(_cli(store, "--batch", "--model", MODEL[provider], "--condition", "both", "--run-id",
                                 "kill"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: len(stub.submissions) == expected and stub.polls >= 2 * expected, 60, step=0.02,
                   what=STUCK)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    submitted = list(stub.submissions)
    ledger = (store.runs_dir / "_batches" / "kill" / "ledger.jsonl").read_text(encoding="utf-8")
    assert sum(1 for ln in ledger.splitlines() if '"job_id": "' in ln and '"state": "validating"' in ln) == expected
    stub.hold = False
    done = subprocess.run(_cli(store, "--resume", "kill"), env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert stub.submissions == submitted  # polled again, never submitted again
    assert len({sha for _, sha, _ in submitted}) == expected and sum(n for *_, n in submitted) == 28
    _check_answered_once(store, records)
    with store.connect(read_only=True) as con:
        assert {r[0] for r in con.execute("SELECT status FROM runs").fetchall()} == {"completed"}
        assert con.execute("SELECT count(*) FROM batch_requests WHERE state = 'answered'").fetchone()[0] == 28


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "gemini", "bedrock"])
def test_kill_9_between_create_and_ledger_write_finds_the_job_instead_of_creating_it_again(
        store, stub, s3_url, tmp_path, provider):
    records = fill_store(store, 1)
    env = _environ(tmp_path, stub, s3_url)
    stub.create_delay_s = 30  # the provider created the job; its reply never reaches the runner
    proc = subprocess.Popen(_cli(store, "--batch", "--model", MODEL[provider], "--condition", "both", "--run-id",
                                 "window"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: len(stub.submissions) == 1, 60, step=0.02, what=STUCK)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    stub.create_delay_s = 0
    ledger = [json.loads(ln) for ln in (store.runs_dir / "_batches" / "window" / "ledger.jsonl").read_text(
        encoding="utf-8").splitlines() if ln.strip()]
    assert [e["job"]["state"] for e in ledger if e["kind"] == "job" and "state" in e["job"]][-1] == "submitting"
    done = subprocess.run(_cli(store, "--resume", "window"), env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "found job" in done.stdout and "created by an interrupted submission" in done.stdout
    assert len(stub.submissions) == 1
    _check_answered_once(store, records)

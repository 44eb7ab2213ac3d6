"""Adversarial runs: a store held by another process at the end, Retry-After: 100000, empty replies,
a killed run, all through the real CLI, real SDKs over HTTP to a stub server and a real DuckDB lock.

No test sleeps for a server's Retry-After: the cap is exercised with an injected sleep that records
the waits, and the 100000 s case must never wait at all.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from runner_items import fill_store
from stubs import StubServer

from eduart_core import views
from eduart_core.cli import main
from eduart_core.providers.base import ProviderError
from eduart_core.runner import background, recovery
from eduart_core.runner.journal import Journal
from eduart_core.runner.pool import Job, RetryPolicy, run_jobs
from eduart_core.store import Store

ROOT = Path(__file__).resolve().parents[2]


def _answer(info) -> str:
    return json.dumps({"Answers": [{"id": "A", "text": "TRUE"}]})


def _adhoc_argv(stub: StubServer, store: Store, *extra: str) -> list[str]:
    return ["run", "--db", str(store.path), "--provider", "openai_compatible", "--base-url", f"{stub.url}/v1",
            "--model-id", "stub-model", "--quiet", "--backoff", "0.01", *extra]


def _count(store: Store, sql: str, params=()) -> int:
    with store.connect(read_only=True) as con:
        return int(con.execute(sql, list(params)).fetchone()[0])


# ---------------------------------------------------------------- Retry-After cap

def test_retry_wait_never_exceeds_the_cap_including_jitter(monkeypatch):
    random.seed(7)
    policy = RetryPolicy(max_attempts=10, base_delay_s=50.0, max_delay_s=1000.0, retry_after_cap_s=300)
    for _ in range(3000):
        retry_after = random.choice([None, random.uniform(0, 300), 300.0, 299.99])
        delay = policy.delay(random.randint(1, 9), retry_after)
        assert delay is not None and 0 <= delay <= 300
    assert policy.delay(1, 300.01) is None and policy.delay(1, 100000) is None
    monkeypatch.setenv("EDUART_RETRY_AFTER_CAP_S", "2")
    assert RetryPolicy().delay(1, 1.99) <= 2 and RetryPolicy().delay(1, 2.5) is None  # the default reads the env


def test_pool_waits_only_within_the_cap_and_gives_up_beyond_it(tmp_path):
    waits: list[float] = []
    calls: dict[str, int] = {}

    def call(job: Job) -> dict:
        calls[job.request_key] = calls.get(job.request_key, 0) + 1
        if job.request_key == "near" and calls["near"] < 3:
            raise ProviderError("HTTP 429", retryable=True, status=429, retry_after=9.95)
        if job.request_key == "far":
            raise ProviderError("HTTP 429", retryable=True, status=429, retry_after=100000)
        return {"raw_text": "ok"}

    policy = RetryPolicy(max_attempts=5, retry_after_cap_s=10, sleep=lambda s, cancel: waits.append(s))
    journal = Journal(tmp_path / "j.jsonl")
    result = run_jobs([Job("near"), Job("far"), Job("fine")], call, journal, concurrency=1, retry=policy)
    journal.close()
    assert result.ok == 2 and result.errors == 1
    assert len(waits) == 2 and all(9.95 <= w <= 10 for w in waits)  # jitter included, never above the cap
    assert calls["far"] == 1  # beyond the cap: recorded as failed at once, no wait at all
    far = journal.latest()["far"]
    assert far["status"] == "error" and "Retry-After" in far["error"] and "cap of 10 s" in far["error"]


def test_retry_after_100000_from_a_server_is_recorded_as_failed_and_the_run_goes_on(store, capsys):
    records = fill_store(store)
    target = "mosaic"
    with StubServer(answer=_answer) as stub:
        stub.fault_for = lambda info: ({"kind": "status", "status": 429, "retry_after": 100000}
                                       if target in info.user_text else None)
        code = main(_adhoc_argv(stub, store, "--run-id", "ra"))
        asked = len(stub.requests_for(target))
    err = capsys.readouterr().err
    assert code == 1
    assert asked == 1  # no retry, no wait
    assert "1 of 7 request(s) failed" in err and "--resume ra --retry-errors" in err
    errors = _count(store, "SELECT count(*) FROM responses WHERE error LIKE '%Retry-After%cap of 300%'")
    assert errors == 1
    assert _count(store, "SELECT count(*) FROM responses WHERE error IS NULL") == len(records) - 1


# ---------------------------------------------------------------- empty replies

def test_empty_and_null_replies_are_errors_not_answers_and_never_cached(store, capsys):
    fill_store(store)

    def answer(info) -> str:
        if "mosaic" in info.user_text:
            return ""
        if "fresco" in info.user_text:
            return "null"
        return _answer(info)

    with StubServer(answer=answer) as stub:
        assert main(_adhoc_argv(stub, store, "--run-id", "emp")) == 1
        errors = dict(_rows(store, "SELECT item_id, error FROM responses WHERE error IS NOT NULL"))
        assert set(errors) == {"0001", "0007"} and all("empty reply" in e for e in errors.values())
        cached = [p for p in store.cache_dir.rglob("*.json")]
        assert len(cached) == 5  # the five real answers; no empty reply was cached
        tokens = _count(store, "SELECT sum(input_tokens) FROM responses WHERE error IS NOT NULL")
        assert tokens == 200  # the empty replies were paid for: their tokens are kept
        stub.answer = _answer
        capsys.readouterr()
        assert main(_adhoc_argv(stub, store, "--resume", "emp", "--retry-errors")) == 0
        assert len(stub.requests) == 9  # exactly the two empty ones were asked again
    assert _count(store, "SELECT count(DISTINCT item_id) FROM responses WHERE error IS NULL") == 7


def _rows(store: Store, sql: str) -> list[tuple]:
    with store.connect(read_only=True) as con:
        return con.execute(sql).fetchall()


# ---------------------------------------------------------------- final ingest blocked by another process

LOCK_HOLDER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
print("locked", flush=True)
sys.stdin.read()
con.close()
"""


@pytest.mark.slow
@pytest.mark.parametrize("finish_with", ["resume", "dashboard start"])
def test_run_whose_final_ingest_is_blocked_never_reports_completed(store, tmp_path, finish_with):
    records = fill_store(store)
    release = threading.Event()
    first = threading.Event()

    def answer(info) -> str:
        first.set()
        release.wait(60)
        return _answer(info)

    env = {**os.environ, "PYTHONPATH": str(ROOT), "EDUART_INGEST_WAIT_S": "1"}
    holder = None
    with StubServer(answer=answer) as stub:
        run = subprocess.Popen([sys.executable, "-m", "eduart_core", *_adhoc_argv(stub, store, "--run-id", "blk",
                                                                                  "--concurrency", "1")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(ROOT), env=env)
        try:
            assert first.wait(60), "the run never asked anything"
            holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(store.path)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True)
            assert holder.stdout.readline().strip() == "locked"
            release.set()
            out, err = run.communicate(timeout=120)
        finally:
            release.set()
            if run.poll() is None:
                run.kill()
                run.wait()
        asked = len(stub.requests)
        assert run.returncode == 1, (out, err)
        lines = [line for line in err.strip().splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("waiting for ingest: ")
        assert f"--db {store.path} --resume blk" in lines[0] and "nothing is lost" in lines[0]
        assert "completed" not in out and "waiting_ingest" in out
        info = json.loads((store.runs_dir / "_launches" / "blk.json").read_text())
        assert info["status"] == "waiting_ingest" and info["exit_code"] == 1
        holder.stdin.close()
        holder.wait(30)
        # Reading shows the state without writing anything.
        version = store.data_version()
        history = background.run_history(store)
        assert list(history["status"]) == ["waiting_ingest"]
        assert store.data_version() == version
        assert _count(store, "SELECT count(*) FROM responses") < len(records)
        if finish_with == "resume":
            assert main(_adhoc_argv(stub, store, "--resume", "blk")) == 0
        else:
            done = recovery.recover_at_start(store.path)
            assert [d.status for d in done] == ["completed"] and done[0].added > 0
        assert len(stub.requests) == asked  # nothing was asked twice
    assert _count(store, "SELECT count(*) FROM responses WHERE error IS NULL") == len(records)
    assert _rows(store, "SELECT status FROM runs") == [("completed",)]
    info = json.loads((store.runs_dir / "_launches" / "blk.json").read_text())
    assert info["status"] == "completed" and info["exit_code"] == 0


# ---------------------------------------------------------------- a killed run: derived at read, written by recovery

@pytest.mark.slow  # a real kill
def test_killed_run_reads_as_interrupted_without_a_write_and_recovery_stores_it(store, tmp_path):
    fill_store(store)
    with StubServer(answer=_answer, latency_s=0.3) as stub:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        run = subprocess.Popen([sys.executable, "-m", "eduart_core", *_adhoc_argv(stub, store, "--run-id", "kil",
                                                                                  "--concurrency", "1")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=str(ROOT), env=env)
        journal = store.runs_dir / "kil__openai_compatible_stub-model__default" / "responses.jsonl"
        try:
            for _ in range(4800):  # up to 240 s: a busy machine starts the CLI slowly
                if journal.exists() and journal.read_bytes().count(b"\n") >= 2:
                    break
                threading.Event().wait(0.05)
        finally:
            run.kill()
            run.wait()
    journaled = journal.read_bytes().count(b"\n")
    assert journaled >= 2
    version = store.data_version()
    history = background.run_history(store)
    assert list(history["status"]) == ["interrupted"]
    # the Runs page's history (its run list cached per data version) says the same
    assert list(views.run_history(views.Source.of(store))["status"]) == ["interrupted"]
    assert _rows(store, "SELECT status FROM runs") == [("running",)]  # the store was not touched by reading
    assert store.data_version() == version
    done = recovery.recover(store)
    assert [(d.launch_id, d.status) for d in done] == [("kil", "interrupted")]
    assert _rows(store, "SELECT status FROM runs") == [("interrupted",)]
    assert _count(store, "SELECT count(*) FROM responses") >= journaled - 1  # every complete journal line
    assert recovery.recover(store) == []  # idempotent: nothing left to recover

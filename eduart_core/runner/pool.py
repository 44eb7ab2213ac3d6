"""A generic concurrent executor with retries, a rate limit and a journal.

Why generic: model runs and the extraction pipeline both need "ask N things of an API, fast,
without losing or repeating any". A job is a stable ``request_key`` plus whatever the ``call``
needs; the pool writes one journal record per finished job (success or final error) before
reporting progress, and skips keys the journal already holds, which makes every run resumable.
"""
from __future__ import annotations

import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ..providers.base import ProviderError, redact


@dataclass
class Job:
    """One request. ``meta`` is copied into its journal record (run_id, item_id, ...).

    ``after`` names the job whose answer this one needs first (the previous turn of a dialogue):
    the pool starts it only once that job has an ``ok`` record, and hands ``call`` a copy of the
    job whose ``history`` holds the ``ok`` records of the whole chain, oldest first. When the
    predecessor fails for good, this job is recorded as an error without being asked.
    """

    request_key: str
    payload: Any = None
    meta: dict = field(default_factory=dict)
    after: str | None = None
    history: tuple[dict, ...] = ()


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter; Retry-After from the server wins when it is given."""

    max_attempts: int = 6
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    jitter: float = 0.5  # delay is multiplied by a random factor in [1 - jitter, 1 + jitter]

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_delay_s * 5) + random.uniform(0, 0.1 * max(retry_after, 0.1))
        base = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        return base * random.uniform(1 - self.jitter, 1 + self.jitter)


class JournalLike(Protocol):
    def append(self, record: dict) -> None: ...
    def latest(self) -> dict[str, dict]: ...


@dataclass
class PoolResult:
    """Counts of one pool execution."""

    total: int = 0
    skipped: int = 0
    ok: int = 0
    errors: int = 0
    retries: int = 0
    cancelled: bool = False
    wall_s: float = 0.0


class RateLimiter:
    """At most ``rpm`` request starts per minute, spaced evenly, shared by all threads."""

    def __init__(self, rpm: float | None):
        self.interval = 60.0 / rpm if rpm else 0.0
        self._next = time.monotonic()
        self._lock = threading.Lock()

    def wait(self, cancel: threading.Event | None = None) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        delay = start - time.monotonic()
        if delay > 0:
            if cancel is not None:
                cancel.wait(delay)
            else:
                time.sleep(delay)


def pending_jobs(jobs: Iterable[Job], done: dict[str, dict], retry_errors: bool) -> tuple[list[Job], int]:
    """Jobs still to ask: never one with an ``ok`` record; a failed one only with ``retry_errors``."""
    todo: list[Job] = []
    skipped = 0
    for job in jobs:
        record = done.get(job.request_key)
        if record is None or (retry_errors and record.get("status") != "ok"):
            todo.append(job)
        else:
            skipped += 1
    return todo, skipped


def run_jobs(
    jobs: Iterable[Job],
    call: Callable[[Job], dict],
    journal: JournalLike,
    concurrency: int = 8,
    rpm: float | None = None,
    retry: RetryPolicy | None = None,
    progress: Callable[[PoolResult, dict], None] | None = None,
    *,
    retry_errors: bool = False,
    cancel: threading.Event | None = None,
) -> PoolResult:
    """Run ``call(job)`` for every job not yet in the journal, ``concurrency`` at a time.

    ``call`` returns a dict of result fields (merged into the journal record with
    ``status="ok"``) or raises ``ProviderError``; any other exception is recorded as a
    non-retryable error. The journal record is written before ``progress`` is called.
    """
    retry = retry or RetryPolicy()
    cancel = cancel or threading.Event()
    started = time.monotonic()
    jobs = list(jobs)
    latest = journal.latest()
    todo, skipped = pending_jobs(jobs, latest, retry_errors)
    result = PoolResult(total=len(todo) + skipped, skipped=skipped)
    limiter = RateLimiter(rpm)
    chain = _Chains(jobs, todo, latest)
    lock = threading.Lock()
    # Work waits in ``pending``; a worker leaves once nothing is pending and nothing is in flight
    # (only a job in flight can release more work: the next turn of its dialogue).
    wake = threading.Condition(threading.Lock())
    pending: deque[Job] = deque()
    in_flight = 0

    def blocked_record(job: Job, reason: str) -> dict:
        return {"request_key": job.request_key, **job.meta, "status": "error", "error": reason,
                "blocked": True, "attempts": 0, "ts": time.time()}

    def finish(job: Job, record: dict) -> None:
        journal.append(record)
        with lock:
            if record["status"] == "ok":
                result.ok += 1
            else:
                result.errors += 1
            if progress is not None:
                progress(result, record)
            released, blocked = chain.finished(job, record)
        if released:
            with wake:
                pending.extend(released)
                wake.notify_all()
        for follower, reason in blocked:
            finish(follower, blocked_record(follower, reason))

    def ask(job: Job) -> None:
        attempt = 0
        while True:
            attempt += 1
            limiter.wait(cancel)
            if cancel.is_set():
                return
            t0 = time.monotonic()
            try:
                fields = call(chain.with_history(job))
            except ProviderError as exc:
                error, retryable, retry_after, status = str(exc), exc.retryable, exc.retry_after, exc.status
            except Exception as exc:  # an adapter bug must not kill the run
                error, retryable, retry_after, status = redact(f"{type(exc).__name__}: {exc}")[:500], False, None, None
            else:
                record = {"request_key": job.request_key, **job.meta, **fields, "status": "ok",
                          "attempts": attempt, "latency_s": round(time.monotonic() - t0, 4),
                          "ts": time.time()}
                finish(job, record)
                return
            if retryable and attempt < retry.max_attempts and not cancel.is_set():
                with lock:
                    result.retries += 1
                cancel.wait(retry.delay(attempt, retry_after))
                if cancel.is_set():
                    return
                continue
            record = {"request_key": job.request_key, **job.meta, "status": "error", "error": error,
                      "http_status": status, "attempts": attempt, "ts": time.time()}
            finish(job, record)
            return

    def worker() -> None:
        nonlocal in_flight
        while True:
            with wake:
                while not pending and in_flight and not cancel.is_set():
                    wake.wait(0.2)
                if cancel.is_set() or not pending:
                    wake.notify_all()  # the others may leave too
                    return
                job = pending.popleft()
                in_flight += 1
            try:
                ask(job)
            finally:
                with wake:
                    in_flight -= 1
                    wake.notify_all()

    ready, blocked = chain.start()
    pending.extend(ready)
    for job, reason in blocked:
        finish(job, blocked_record(job, reason))
    threads = [threading.Thread(target=worker, daemon=True, name=f"pool-{i}")
               for i in range(max(1, min(concurrency, len(todo))))]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)
    except KeyboardInterrupt:
        cancel.set()
        for thread in threads:
            thread.join(5)
        result.cancelled = True
    result.cancelled = result.cancelled or cancel.is_set()
    result.wall_s = time.monotonic() - started
    return result


class _Chains:
    """Which jobs wait for which (``Job.after``), and the ``ok`` records their history is made of.

    Not thread-safe by itself: the pool calls ``finished`` under its lock.
    """

    def __init__(self, jobs: list[Job], todo: list[Job], latest: dict[str, dict]):
        self.by_key = {job.request_key: job for job in jobs}
        self.todo_keys = {job.request_key for job in todo}
        self.todo = todo
        self.records = {key: record for key, record in latest.items() if record.get("status") == "ok"}
        self.waiting: dict[str, list[Job]] = {}

    def start(self) -> tuple[list[Job], list[tuple[Job, str]]]:
        """Jobs to queue now, and jobs whose predecessor already failed for good (with the reason)."""
        ready, blocked = [], []
        for job in self.todo:
            if job.after is None or job.after in self.records and job.after not in self.todo_keys:
                ready.append(job)
            elif job.after in self.todo_keys:
                self.waiting.setdefault(job.after, []).append(job)
            else:
                blocked.append((job, self._reason(job.after)))
        return ready, blocked

    def finished(self, job: Job, record: dict) -> tuple[list[Job], list[tuple[Job, str]]]:
        """The followers to queue (``ok``) or to record as blocked (anything else)."""
        followers = self.waiting.pop(job.request_key, [])
        if record.get("status") == "ok":
            self.records[job.request_key] = record
            return followers, []
        return [], [(follower, self._reason(job.request_key)) for follower in followers]

    def _reason(self, key: str) -> str:
        return f"not asked: the previous turn ({key}) has no answer"

    def with_history(self, job: Job) -> Job:
        """``job`` with the ``ok`` records of its chain of predecessors, oldest first."""
        if job.after is None:
            return job
        history = []
        key: str | None = job.after
        while key is not None and key in self.records:
            history.append(self.records[key])
            previous = self.by_key.get(key)
            key = previous.after if previous is not None else None
        return replace(job, history=tuple(reversed(history)))

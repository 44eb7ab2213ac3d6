"""A generic concurrent executor with retries, a rate limit and a journal.

Why generic: model runs and the extraction pipeline both need "ask N things of an API, fast,
without losing or repeating any". A job is a stable ``request_key`` plus whatever the ``call``
needs; the pool writes one journal record per finished job (success or final error) before
reporting progress, and skips keys the journal already holds, which makes every run resumable.
"""
from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..providers.base import ProviderError, redact


@dataclass
class Job:
    """One request. ``meta`` is copied into its journal record (run_id, item_id, ...)."""

    request_key: str
    payload: Any = None
    meta: dict = field(default_factory=dict)


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
    todo, skipped = pending_jobs(list(jobs), journal.latest(), retry_errors)
    result = PoolResult(total=len(todo) + skipped, skipped=skipped)
    limiter = RateLimiter(rpm)
    work: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
    for job in todo:
        work.put(job)
    lock = threading.Lock()

    def finish(job: Job, record: dict) -> None:
        journal.append(record)
        with lock:
            if record["status"] == "ok":
                result.ok += 1
            else:
                result.errors += 1
            if progress is not None:
                progress(result, record)

    def ask(job: Job) -> None:
        attempt = 0
        while True:
            attempt += 1
            limiter.wait(cancel)
            if cancel.is_set():
                return
            t0 = time.monotonic()
            try:
                fields = call(job)
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
        while not cancel.is_set():
            try:
                job = work.get_nowait()
            except queue.Empty:
                return
            ask(job)

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

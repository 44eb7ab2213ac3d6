"""A generic concurrent executor with retries, a rate limit and a journal.

Why generic: model runs and the extraction pipeline both need "ask N things of an API, fast,
without losing or repeating any". A job is a stable ``request_key`` plus whatever the ``call``
needs; the pool writes one journal record per finished job (success or final error) before
reporting progress, and skips keys the journal already holds, which makes every run resumable.

Waits are bounded: a server's Retry-After is honoured up to ``retry_after_cap_s`` (default 300 s,
``EDUART_RETRY_AFTER_CAP_S``) with the jitter included in the cap; a server that asks for more
gets the request recorded as failed at once, and the run goes on with the other requests. A
journal that cannot be written (full disk) stops the pool: every further answer would be paid
for and lost.
"""
from __future__ import annotations

import logging
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ..limits import describe, limit
from ..providers.base import ProviderError, redact
from .journal import JournalWriteError

logger = logging.getLogger(__name__)


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


def _wait_on(seconds: float, cancel: threading.Event) -> None:
    cancel.wait(seconds)


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter; Retry-After from the server wins when it is given.

    Every wait, jitter included, is at most ``retry_after_cap_s`` (None: the configured
    EDUART_RETRY_AFTER_CAP_S, default 300 s). ``sleep(seconds, cancel)`` performs the wait; tests
    inject one that records instead of sleeping.
    """

    max_attempts: int = 6
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    jitter: float = 0.5  # delay is multiplied by a random factor in [1 - jitter, 1 + jitter]
    retry_after_cap_s: float | None = None
    sleep: Callable[[float, threading.Event], None] = _wait_on

    def cap(self) -> float:
        return float(self.retry_after_cap_s) if self.retry_after_cap_s is not None else limit("retry_after_cap_s")

    def delay(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, never above the cap; None when the
        server asks for a longer wait than the cap allows (the request is then recorded as failed)."""
        cap = self.cap()
        if retry_after is not None:
            if retry_after > cap:
                return None
            return min(cap, retry_after + random.uniform(0, 0.1 * max(retry_after, 0.1)))
        base = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        return min(cap, base * random.uniform(1 - self.jitter, 1 + self.jitter))

    def cap_text(self) -> str:
        if self.retry_after_cap_s is not None:
            return f"{self.retry_after_cap_s:g} s"
        return describe("retry_after_cap_s")


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
    journal_error: str | None = None  # the journal could not be written: the pool stopped
    lost: int = 0                     # answers received that could not be journaled


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
    after_journal: Callable[[Job, dict], None] | None = None,
) -> PoolResult:
    """Run ``call(job)`` for every job not yet in the journal, ``concurrency`` at a time.

    ``call`` returns a dict of result fields (merged into the journal record with
    ``status="ok"``) or raises ``ProviderError`` (whose optional ``fields`` dict, e.g. the
    tokens of an empty reply, goes into the error record); any other exception is recorded as a
    non-retryable error. The journal record is written first; then ``after_journal(job, record)``
    (e.g. filling a cache: its failure is logged, never fatal; ``job`` carries its dialogue
    history) and ``progress`` are called.
    """
    return JobPool(jobs, call, journal, concurrency, rpm, retry, progress, retry_errors=retry_errors,
                   cancel=cancel, after_journal=after_journal).run()


class JobPool:
    """One execution of `run_jobs`: the work queue, the worker threads and the counts.

    Work waits in ``pending``; a worker leaves once nothing is pending and nothing is in flight
    (only a job in flight can release more work: the next turn of its dialogue).
    """

    def __init__(self, jobs: Iterable[Job], call: Callable[[Job], dict], journal: JournalLike,
                 concurrency: int = 8, rpm: float | None = None, retry: RetryPolicy | None = None,
                 progress: Callable[[PoolResult, dict], None] | None = None, *, retry_errors: bool = False,
                 cancel: threading.Event | None = None, after_journal: Callable[[Job, dict], None] | None = None):
        self.call, self.journal, self.concurrency = call, journal, concurrency
        self.progress, self.after_journal = progress, after_journal
        self.retry = retry or RetryPolicy()
        self.cancel = cancel or threading.Event()
        self.started = time.monotonic()
        jobs = list(jobs)
        latest = journal.latest()
        self.todo, skipped = pending_jobs(jobs, latest, retry_errors)
        self.result = PoolResult(total=len(self.todo) + skipped, skipped=skipped)
        self.limiter = RateLimiter(rpm)
        self.chain = _Chains(jobs, self.todo, latest)
        self.lock = threading.Lock()
        self.wake = threading.Condition(threading.Lock())
        self.pending: deque[Job] = deque()
        self.in_flight = 0

    @staticmethod
    def blocked_record(job: Job, reason: str) -> dict:
        return {"request_key": job.request_key, **job.meta, "status": "error", "error": reason,
                "blocked": True, "attempts": 0, "ts": time.time()}

    def finish(self, job: Job, record: dict) -> None:
        """Journal the record first; then the after-journal step, the counts and progress, and the followers."""
        result = self.result
        try:
            self.journal.append(record)
        except JournalWriteError as exc:
            with self.lock:
                result.journal_error = result.journal_error or str(exc)
                result.lost += int(record["status"] == "ok")
            self.cancel.set()  # nothing more can be recorded: stop asking (and paying)
            return
        if self.after_journal is not None:
            try:
                self.after_journal(job, record)
            except Exception as exc:  # noqa: BLE001 - the answer is safe in the journal already
                logger.warning("after-journal step failed for %s: %s", job.request_key, redact(str(exc))[:300])
        with self.lock:
            if record["status"] == "ok":
                result.ok += 1
            else:
                result.errors += 1
            if self.progress is not None:
                self.progress(result, record)
            released, blocked = self.chain.finished(job, record)
        if released:
            with self.wake:
                self.pending.extend(released)
                self.wake.notify_all()
        for follower, reason in blocked:
            self.finish(follower, self.blocked_record(follower, reason))

    def ask(self, job: Job) -> None:
        """Ask one job, retrying what is retryable within the policy, and record how it ended."""
        retry, cancel = self.retry, self.cancel
        attempt = 0
        job = self.chain.with_history(job)  # the dialogue history is fixed once the job may start
        while True:
            attempt += 1
            self.limiter.wait(cancel)
            if cancel.is_set():
                return
            t0 = time.monotonic()
            extra: dict = {}
            try:
                fields = self.call(job)
            except ProviderError as exc:
                error, retryable, retry_after, status = str(exc), exc.retryable, exc.retry_after, exc.status
                extra = dict(getattr(exc, "fields", None) or {})
            except Exception as exc:  # an adapter bug must not kill the run
                error, retryable, retry_after, status = redact(f"{type(exc).__name__}: {exc}")[:500], False, None, None
            else:
                record = {"request_key": job.request_key, **job.meta, **fields, "status": "ok",
                          "attempts": attempt, "latency_s": round(time.monotonic() - t0, 4),
                          "ts": time.time()}
                self.finish(job, record)
                return
            if retryable and attempt < retry.max_attempts and not cancel.is_set():
                delay = retry.delay(attempt, retry_after)
                if delay is not None:
                    with self.lock:
                        self.result.retries += 1
                    retry.sleep(delay, cancel)
                    if cancel.is_set():
                        return
                    continue
                error = (f"{error}; the server asked to wait {retry_after:g} s (Retry-After), more than the cap of "
                         f"{retry.cap_text()}: recorded as failed, ask again later with --retry-errors")
            record = {"request_key": job.request_key, **job.meta, **extra, "status": "error", "error": error,
                      "http_status": status, "attempts": attempt, "ts": time.time()}
            self.finish(job, record)
            return

    def worker(self) -> None:
        wake = self.wake
        while True:
            with wake:
                while not self.pending and self.in_flight and not self.cancel.is_set():
                    wake.wait(0.2)
                if self.cancel.is_set() or not self.pending:
                    wake.notify_all()  # the others may leave too
                    return
                job = self.pending.popleft()
                self.in_flight += 1
            try:
                self.ask(job)
            finally:
                with wake:
                    self.in_flight -= 1
                    wake.notify_all()

    def run(self) -> PoolResult:
        """Queue what may start, record what never can, run the workers until the work is done."""
        result = self.result
        ready, blocked = self.chain.start()
        self.pending.extend(ready)
        for job, reason in blocked:
            self.finish(job, self.blocked_record(job, reason))
        threads = [threading.Thread(target=self.worker, daemon=True, name=f"pool-{i}")
                   for i in range(max(1, min(self.concurrency, len(self.todo))))]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.2)
        except KeyboardInterrupt:
            self.cancel.set()
            for thread in threads:
                thread.join(5)
            result.cancelled = True
        result.cancelled = result.cancelled or self.cancel.is_set()
        result.wall_s = time.monotonic() - self.started
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

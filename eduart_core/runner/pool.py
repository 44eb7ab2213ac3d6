"""A generic concurrent executor with retries, rate limits and a journal.

Why generic: model runs and the extraction pipeline both need "ask N things of an API, fast,
without losing or repeating any". A job is a stable ``request_key`` plus whatever the ``call``
needs; the pool writes one journal record per finished job (success or final error) before
reporting progress, and skips keys the journal already holds, which makes every run resumable.

Why lanes and limits: a sweep asks several providers at once, each with its own concurrency and
rate limit. Every job belongs to a lane (``Job.lane``: for a launch, one model x condition x
repetition) and every lane passes through one or more ``Limit`` s (its provider's, and its model's
own when it has one); lanes naming the same limit share it. A free worker takes the next job from
the lanes in turn (the lane served longest ago first), skipping lanes whose limits are full, so the
lanes of one provider take turns whatever the others do, and each provider runs at its
own limit at the same time as the others and a sweep takes as long as its slowest provider, not
the sum. Within a lane jobs start in the order given; a job that waits for another
(``Job.after``: the next turn of a dialogue) joins the front of its lane once that one is answered.
Without ``limits``, every job passes one limit of ``concurrency`` and ``rpm``.

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ..limits import describe, limit
from ..providers.base import ProviderError, redact
from .journal import JournalWriteError

logger = logging.getLogger(__name__)

#: The lane of a job that names none.
DEFAULT_LANE = ""


@dataclass
class Job:
    """One request. ``meta`` is copied into its journal record (run_id, item_id, ...).

    ``lane`` groups the jobs that share limits and keep their order (a launch uses the run id).
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
    lane: str = DEFAULT_LANE


@dataclass(frozen=True)
class Limit:
    """At most ``concurrency`` requests in flight and ``rpm`` request starts per minute (None: no
    rate limit), shared by every lane that names a limit of this ``name`` (a provider, a model)."""

    name: str
    concurrency: int = 8
    rpm: float | None = None

    def describe(self) -> str:
        """``4 at a time, 600 rpm``: the limit in words."""
        return f"{self.concurrency} at a time" + (f", {self.rpm:g} rpm" if self.rpm else "")


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


class _Gate:
    """The live state of one ``Limit``: requests in flight and the earliest next start."""

    def __init__(self, spec: Limit):
        self.spec = spec
        self.interval = 60.0 / spec.rpm if spec.rpm else 0.0
        self.in_flight = 0
        self.next_start = 0.0  # time.monotonic() of the earliest next start


class Pool:
    """Runs jobs under their lanes' limits, journaling each before anything else (module doc).

    ``call(job)`` returns a dict of result fields (merged into the journal record with
    ``status="ok"``) or raises ``ProviderError`` (whose optional ``fields`` dict, e.g. the
    tokens of an empty reply, goes into the error record); any other exception is recorded as a
    non-retryable error. The journal record is written first; then ``after_journal(job, record)``
    (e.g. filling a cache: its failure is logged, never fatal; ``job`` carries its dialogue
    history) and ``progress(result, record)`` are called.

    ``limits`` maps a lane to the limits its jobs pass, outermost first; a lane not in it passes
    one limit of ``concurrency`` and ``rpm``. One pool runs once; pools of consecutive rounds that pass
    the same ``gates`` dict share their limits' live state, so a rate holds across the rounds.
    """

    def __init__(self, call: Callable[[Job], dict], journal: JournalLike, *, concurrency: int = 8,
                 rpm: float | None = None, retry: RetryPolicy | None = None,
                 progress: Callable[[PoolResult, dict], None] | None = None, retry_errors: bool = False,
                 cancel: threading.Event | None = None,
                 after_journal: Callable[[Job, dict], None] | None = None,
                 limits: Mapping[str, Sequence[Limit]] | None = None, gates: dict | None = None):
        self.call, self.journal = call, journal
        self.retry = retry or RetryPolicy()
        self.progress, self.after_journal = progress, after_journal
        self.retry_errors = retry_errors
        self.cancel = cancel or threading.Event()
        self.default = (Limit("all", max(1, int(concurrency)), rpm),)
        self.limits = {lane: tuple(specs) for lane, specs in (limits or {}).items() if specs}
        self.result = PoolResult()
        # One condition guards the lanes, the gates, the counts and the dialogue chains.
        self._cv = threading.Condition(threading.Lock())
        # a dict shared by the pools of consecutive rounds (``gates``) keeps each limit's rate across them
        self._gates: dict[str, _Gate] = gates if gates is not None else {}
        self._lane_gates: dict[str, tuple[_Gate, ...]] = {}
        self._ready: dict[str, deque[Job]] = {}
        self._order: list[str] = []
        # When each lane last started a job (a tick): the lane served longest ago goes first, so the
        # lanes sharing a provider take turns whatever the other providers are doing.
        self._served: dict[str, int] = {}
        self._tick = 0
        self._in_flight = 0
        self._chain: _Chains | None = None

    # ------------------------------------------------------------ set-up
    def _gates_of(self, lane: str) -> tuple[_Gate, ...]:
        gates = self._lane_gates.get(lane)
        if gates is None:
            specs = self.limits.get(lane, self.default)
            gates = tuple(self._gates.setdefault(spec.name, _Gate(spec)) for spec in specs)
            self._lane_gates[lane] = gates
            self._ready[lane] = deque()
            self._served[lane] = len(self._order) - (1 << 40)  # before any start, in lane order
            self._order.append(lane)
        return gates

    def _workers_needed(self, todo: list[Job]) -> int:
        """Enough workers for every outermost limit to be full at once (each lane is capped by its
        tightest limit), never more than there are jobs."""
        per_outer: dict[str, int] = {}
        lanes = {job.lane for job in todo}
        for lane in lanes:
            gates = self._gates_of(lane)
            outer = gates[0].spec
            room = min(gate.spec.concurrency for gate in gates)
            per_outer[outer.name] = min(outer.concurrency, per_outer.get(outer.name, 0) + room)
        return max(1, min(len(todo), sum(per_outer.values()) or 1))

    # ------------------------------------------------------------ scheduling (under self._cv)
    def _pick(self, now: float) -> tuple[Job, tuple[_Gate, ...], float] | None:
        """The next job to start, from the lanes in turn: the soonest start any lane with room
        allows, ties to the lane served longest ago. Takes its slots and reserves its start."""
        best: tuple[float, int, str] | None = None
        for lane in self._order:
            if not self._ready[lane]:
                continue
            gates = self._lane_gates[lane]
            if any(gate.in_flight >= gate.spec.concurrency for gate in gates):
                continue
            key = (max(now, *(gate.next_start for gate in gates)), self._served[lane], lane)
            if best is None or key < best:
                best = key
        if best is None:
            return None
        start, _, lane = best
        self._tick += 1
        self._served[lane] = self._tick
        gates = self._lane_gates[lane]
        self._reserve(gates, start)
        job = self._ready[lane].popleft()
        return job, gates, start

    def _reserve(self, gates: tuple[_Gate, ...], start: float) -> None:
        for gate in gates:
            gate.in_flight += 1
            if gate.interval:
                gate.next_start = start + gate.interval

    def _next_start(self, gates: tuple[_Gate, ...]) -> float:
        """The start of a retry: the slots are held already, only the rates are waited for."""
        with self._cv:
            start = max(time.monotonic(), *(gate.next_start for gate in gates))
            for gate in gates:
                if gate.interval:
                    gate.next_start = start + gate.interval
        return start

    def _release(self, gates: tuple[_Gate, ...]) -> None:
        for gate in gates:
            gate.in_flight -= 1

    def _has_ready(self) -> bool:
        return any(self._ready[lane] for lane in self._order)

    def _queue(self, jobs: list[Job], front: bool = False) -> None:
        for job in (reversed(jobs) if front else jobs):
            self._gates_of(job.lane)
            if front:
                self._ready[job.lane].appendleft(job)
            else:
                self._ready[job.lane].append(job)

    # ------------------------------------------------------------ one job
    def _blocked_record(self, job: Job, reason: str) -> dict:
        return {"request_key": job.request_key, **job.meta, "status": "error", "error": reason,
                "blocked": True, "attempts": 0, "ts": time.time()}

    def _finish(self, job: Job, record: dict) -> None:
        result = self.result
        try:
            self.journal.append(record)
        except JournalWriteError as exc:
            with self._cv:
                result.journal_error = result.journal_error or str(exc)
                result.lost += int(record["status"] == "ok")
                self._cv.notify_all()
            self.cancel.set()  # nothing more can be recorded: stop asking (and paying)
            return
        if self.after_journal is not None:
            try:
                self.after_journal(job, record)
            except Exception as exc:  # noqa: BLE001 - the answer is safe in the journal already
                logger.warning("after-journal step failed for %s: %s", job.request_key, redact(str(exc))[:300])
        with self._cv:
            if record["status"] == "ok":
                result.ok += 1
            else:
                result.errors += 1
            if self.progress is not None:
                self.progress(result, record)
            released, blocked = self._chain.finished(job, record)
            if released:
                self._queue(released, front=True)  # the conversation goes on before new ones start
                self._cv.notify(len(released))
        for follower, reason in blocked:
            self._finish(follower, self._blocked_record(follower, reason))

    def _ask(self, job: Job, gates: tuple[_Gate, ...], start: float) -> None:
        retry, cancel = self.retry, self.cancel
        attempt = 0
        while True:
            attempt += 1
            if attempt > 1:
                start = self._next_start(gates)
            delay = start - time.monotonic()
            if delay > 0:
                cancel.wait(delay)
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
                self._finish(job, record)
                return
            if retryable and attempt < retry.max_attempts and not cancel.is_set():
                delay = retry.delay(attempt, retry_after)
                if delay is not None:
                    with self._cv:
                        self.result.retries += 1
                    retry.sleep(delay, cancel)
                    if cancel.is_set():
                        return
                    continue
                error = (f"{error}; the server asked to wait {retry_after:g} s (Retry-After), more than the cap of "
                         f"{retry.cap_text()}: recorded as failed, ask again later with --retry-errors")
            record = {"request_key": job.request_key, **job.meta, **extra, "status": "error", "error": error,
                      "http_status": status, "attempts": attempt, "ts": time.time()}
            self._finish(job, record)
            return

    def _worker(self) -> None:
        cv = self._cv
        while True:
            with cv:
                while True:
                    if self.cancel.is_set():
                        cv.notify_all()  # the others may leave too
                        return
                    picked = self._pick(time.monotonic())
                    if picked is not None:
                        break
                    if not self._in_flight and not self._has_ready():
                        cv.notify_all()  # nothing left, and nothing in flight could release more
                        return
                    cv.wait(0.2)
                job, gates, start = picked
                self._in_flight += 1
                job = self._chain.with_history(job)  # the dialogue history is fixed once the job may start
            try:
                self._ask(job, gates, start)
            finally:
                with cv:
                    self._release(gates)
                    self._in_flight -= 1
                    cv.notify()

    # ------------------------------------------------------------ the run
    def run(self, jobs: Iterable[Job]) -> PoolResult:
        """Ask every job not yet in the journal; returns the counts (``cancelled`` after a cancel,
        Ctrl-C or a journal that could not be written)."""
        started = time.monotonic()
        jobs = list(jobs)
        latest = self.journal.latest()
        todo, skipped = pending_jobs(jobs, latest, self.retry_errors)
        result = self.result
        result.total, result.skipped = len(todo) + skipped, skipped
        self._chain = _Chains(jobs, todo, latest)
        ready, blocked = self._chain.start()
        with self._cv:
            self._queue(ready)
        for job, reason in blocked:
            self._finish(job, self._blocked_record(job, reason))
        threads = [threading.Thread(target=self._worker, daemon=True, name=f"pool-{i}")
                   for i in range(self._workers_needed(todo))]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.2)
        except KeyboardInterrupt:
            self.cancel.set()
            with self._cv:
                self._cv.notify_all()
            for thread in threads:
                thread.join(5)
            result.cancelled = True
        result.cancelled = result.cancelled or self.cancel.is_set()
        result.wall_s = time.monotonic() - started
        return result


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
    limits: Mapping[str, Sequence[Limit]] | None = None,
) -> PoolResult:
    """Run ``call(job)`` for every job not yet in the journal (``Pool`` with these settings)."""
    return Pool(call, journal, concurrency=concurrency, rpm=rpm, retry=retry, progress=progress,
                retry_errors=retry_errors, cancel=cancel, after_journal=after_journal, limits=limits).run(jobs)


class _Chains:
    """Which jobs wait for which (``Job.after``), and the ``ok`` records their history is made of.

    Not thread-safe by itself: the pool calls it under its lock.
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

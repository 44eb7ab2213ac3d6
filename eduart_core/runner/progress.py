"""Following a running launch: live ingestion into the store and a terminal progress line.

Why a thread that ingests every few seconds: answers reach the dashboard while the run goes on,
and each ingestion is one short transaction, so the store is never held while waiting on the
network (DuckDB allows one writing process at a time).
"""
from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING

from ..store import Store, StoreError
from ..store import journal as store_journal
from .journal import read_new_records
from .pool import PoolResult

if TYPE_CHECKING:
    from .launch import Member


class Ingester:
    """Moves new journal lines into the store every few seconds, in short transactions."""

    def __init__(self, store: Store, members: list[Member], interval_s: float = 2.0):
        self.store, self.members, self.interval_s = store, members, interval_s
        self._sizes: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="ingester")
        self.last_error: str | None = None

    def start(self) -> Ingester:
        self._thread.start()
        return self

    def ingest(self) -> int:
        """Store the lines appended since the last call; a locked store is retried next round."""
        added = 0
        for member in self.members:
            path = member.journal_path
            offset = self._sizes.get(member.run_id, 0)
            if not path.exists() or path.stat().st_size == offset:
                continue
            records, new_offset = read_new_records(path, offset)
            try:
                added += store_journal.ingest_journal(self.store, member.run_id, path, records)
                self._sizes[member.run_id] = new_offset
                self.last_error = None
            except StoreError as exc:  # locked by a reader for too long: try again next round
                self.last_error = str(exc)
        return added

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.ingest()

    def stop(self) -> int:
        self._stop.set()
        self._thread.join(30)
        self.store.lock_timeout_s = max(self.store.lock_timeout_s, 60.0)
        return self.ingest()


class ProgressBar:
    """A plain terminal progress line (carriage return on a terminal, a line every 5 s otherwise)."""

    def __init__(self, total: int, done: int, stream=None):
        self.total, self.done0 = total, done
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.monotonic()
        self._last = 0.0

    def __call__(self, result: PoolResult, record: dict) -> None:
        now = time.monotonic()
        finished = result.ok + result.errors
        if now - self._last < (0.2 if self.tty else 5.0) and finished + result.skipped < result.total:
            return
        self._last = now
        done = result.skipped + finished
        width = 30
        fill = int(width * done / max(1, result.total))
        rate = finished / max(1e-6, now - self.t0)
        left = (result.total - done) / rate if rate > 0 else 0
        line = (f"[{'#' * fill}{'-' * (width - fill)}] {done}/{result.total}  answered now {result.ok}"
                f"  errors {result.errors}  retries {result.retries}  {rate:.1f} req/s  eta {int(left)}s")
        if self.tty:
            self.stream.write("\r" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()

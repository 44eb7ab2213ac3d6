"""Following a running launch in the terminal: one progress line.

(Live ingestion into the store lives in ``runner.ingestion``; this module imports neither it nor
``runner.launch``.)
"""
from __future__ import annotations

import sys
import time

from .pool import PoolResult


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

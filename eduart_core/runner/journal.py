"""Append-and-flush JSONL journals: the record of truth of a run while it is running.

Why a journal and not the store: DuckDB allows one writing process, and a run waits on the
network for hours. Every finished request is appended here (and flushed) before anything else
happens, so ``kill -9`` loses at most the requests in flight; the store ingests the journal in
short transactions. A half-written last line (crash mid-write) is skipped when reading.
"""
from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from ..fileio import os_cause


class JournalWriteError(Exception):
    """A journal line could not be written (full disk, lost folder): the run must stop, since
    every further answer would be paid for and then lost. The message names path and cause."""


def read_records(path: Path) -> Iterator[dict]:
    """Every complete JSON line of a journal, in order; a torn line is ignored."""
    if not path.exists():
        return
    with open(path, "rb") as handle:
        for line in handle:
            if not line.endswith(b"\n"):
                break  # torn final line from a crash: the request was in flight
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                yield record


def read_new_records(path: Path, offset: int) -> tuple[list[dict], int]:
    """Complete records appended after byte ``offset``, and the offset after the last complete line."""
    if not path.exists():
        return [], offset
    records = []
    with open(path, "rb") as handle:
        handle.seek(offset)
        for line in handle:
            if not line.endswith(b"\n"):
                break
            offset += len(line)
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
    return records, offset


def latest_by_key(records: Iterator[dict]) -> dict[str, dict]:
    """The last record per ``request_key``, except that an ``ok`` record is never replaced by a
    later error (a success stays a success)."""
    latest: dict[str, dict] = {}
    for record in records:
        key = record.get("request_key")
        if not key:
            continue
        previous = latest.get(key)
        if previous is not None and previous.get("status") == "ok" and record.get("status") != "ok":
            continue
        latest[key] = record
    return latest


class Journal:
    """One JSONL file; ``append`` is thread-safe and durable against a process kill."""

    def __init__(self, path: Path, fsync: bool = False):
        self.path = Path(path)
        self.fsync = fsync
        self._lock = threading.Lock()
        self._handle = None

    def _open(self):
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Repair a torn last line so the next record starts on its own line.
            if self.path.exists() and self.path.stat().st_size:
                with open(self.path, "rb") as h:
                    h.seek(-1, os.SEEK_END)
                    torn = h.read(1) != b"\n"
                if torn:
                    with open(self.path, "ab") as h:
                        h.write(b"\n")
            self._handle = open(self.path, "a", encoding="utf-8")
        return self._handle

    def append(self, record: dict) -> None:
        """Write one record and flush it; ``JournalWriteError`` (path + cause) when the disk says no."""
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            try:
                handle = self._open()
                handle.write(line)
                handle.flush()
                if self.fsync:
                    os.fsync(handle.fileno())
            except OSError as exc:
                self._discard()
                raise JournalWriteError(f"cannot write run journal {self.path}: {os_cause(exc)}") from None

    def _discard(self) -> None:
        """Drop a handle whose buffer could not be flushed (closing it would retry the write)."""
        handle, self._handle = self._handle, None
        if handle is None:
            return
        try:
            handle.close()
        except OSError:
            pass  # the buffered line is the one we just reported as lost

    def records(self) -> list[dict]:
        return list(read_records(self.path))

    def latest(self) -> dict[str, dict]:
        return latest_by_key(read_records(self.path))

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None


class JournalSet:
    """Several journals used by one pool (one per run of a launch), routed by ``run_id``."""

    def __init__(self, journals: dict[str, Journal]):
        self.journals = journals

    def append(self, record: dict) -> None:
        self.journals[record["run_id"]].append(record)

    def latest(self) -> dict[str, dict]:
        merged: dict[str, dict] = {}
        for journal in self.journals.values():
            merged.update(journal.latest())
        return merged

    def close(self) -> None:
        for journal in self.journals.values():
            journal.close()

"""The batch ledger of one launch: an append-only JSONL file, replayed into memory, mirrored to the store.

Why a file first: between "the provider created job X" and "we wrote down job X" nothing may be
lost, or a restart would submit the same requests again and pay twice. Every change is one JSON
line appended, flushed and fsynced before the runner does anything else (as the run journals do
for answers); the store's ``batch_jobs``/``batch_requests`` tables are a copy made in short
transactions (``sync``), so the dashboard can read while a run polls for hours. A torn last line
from a crash is ignored on replay.

Events: ``meta`` (launch-level facts such as the first submission time and the deadline),
``requests`` (registers planned requests: custom id -> run, item, model, condition, ...),
``state`` (a set of requests changes state, optionally with per-id errors), ``job`` (a full
snapshot of one job; the latest wins).
"""
from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path

from ...store import Store, StoreError
from ...store import batch as store_batch
from ..journal import read_records

logger = logging.getLogger(__name__)


def batch_dir(store: Store, launch_id: str) -> Path:
    return store.runs_dir / "_batches" / launch_id


def ledger_path(store: Store, launch_id: str) -> Path:
    return batch_dir(store, launch_id) / "ledger.jsonl"


def has_ledger(store: Store, launch_id: str) -> bool:
    return ledger_path(store, launch_id).exists()


class Ledger:
    """In-memory view of a launch's ledger file; every mutation is appended before it is applied."""

    def __init__(self, path: Path, launch_id: str):
        self.path = Path(path)
        self.launch_id = launch_id
        self.meta: dict = {}
        self.jobs: dict[str, dict] = {}
        self.requests: dict[str, dict] = {}
        self._lock = threading.Lock()
        self._handle = None
        self.changed = False
        self._replay()

    # ------------------------------------------------------------ reading
    def _replay(self) -> None:
        for event in read_records(self.path):
            self._apply(event)
        self.changed = False

    def _apply(self, event: dict) -> None:
        kind = event.get("kind")
        if kind == "meta":
            self.meta.update(event.get("values") or {})
        elif kind == "requests":
            for row in event.get("rows") or []:
                cid = row.get("custom_id")
                if cid and cid not in self.requests:
                    self.requests[cid] = {"state": "queued", "attempt": None, "job_key": None, "error": None,
                                          "updated_at": event.get("ts"), **row}
        elif kind == "state":
            fields = event.get("fields") or {}
            errors = event.get("errors") or {}
            for cid in event.get("ids") or []:
                row = self.requests.get(cid)
                if row is None:
                    continue
                row.update(fields)
                if errors:
                    row["error"] = errors.get(cid)
                elif "state" in fields and "error" not in fields:
                    row["error"] = None  # a new state without an error clears the old one
                row["updated_at"] = event.get("ts")
        elif kind == "job":
            snapshot = event.get("job") or {}
            key = snapshot.get("job_key")
            if key:
                self.jobs[key] = {**self.jobs.get(key, {}), **snapshot}
        self.changed = True

    # ------------------------------------------------------------ writing
    def _append(self, event: dict) -> None:
        event = {**event, "ts": time.time()}
        line = json.dumps(event, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            if self._handle is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                if self.path.exists() and self.path.stat().st_size:
                    with open(self.path, "rb") as h:  # repair a torn last line
                        h.seek(-1, os.SEEK_END)
                        torn = h.read(1) != b"\n"
                    if torn:
                        with open(self.path, "ab") as h:
                            h.write(b"\n")
                self._handle = open(self.path, "a", encoding="utf-8")
            self._handle.write(line)
            self._handle.flush()
            os.fsync(self._handle.fileno())
        self._apply(event)

    def set_meta(self, **values) -> None:
        if any(self.meta.get(k) != v for k, v in values.items()):
            self._append({"kind": "meta", "values": values})

    def add_requests(self, rows: list[dict]) -> int:
        fresh = [r for r in rows if r["custom_id"] not in self.requests]
        if fresh:
            self._append({"kind": "requests", "rows": fresh})
        return len(fresh)

    def set_state(self, ids, errors: dict[str, str] | None = None, **fields) -> None:
        ids = [c for c in ids if c in self.requests]
        if ids:
            event: dict = {"kind": "state", "ids": ids, "fields": fields}
            if errors:
                event["errors"] = {c: errors[c] for c in ids if c in errors}
            self._append(event)

    def put_job(self, job_key: str, **fields) -> dict:
        current = self.jobs.get(job_key, {})
        changed = {k: v for k, v in fields.items() if current.get(k) != v}
        if changed or not current:
            self._append({"kind": "job", "job": {"job_key": job_key, **changed, "updated_at": time.time()}})
        return self.jobs[job_key]

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None

    # ------------------------------------------------------------ views
    def job_rows(self) -> list[dict]:
        return [{**{k: v for k, v in job.items() if k != "custom_ids"}, "launch_id": self.launch_id}
                for job in self.jobs.values()]

    def request_rows(self) -> list[dict]:
        return [{**row, "launch_id": self.launch_id} for row in self.requests.values()]

    def sync(self, store: Store) -> bool:
        """Copy the ledger into the store; False (and a log line) when the store is busy."""
        try:
            store_batch.sync_ledger(store, self.launch_id, self.job_rows(), self.request_rows())
        except StoreError as exc:
            logger.warning("batch ledger of %s not copied to the store yet (%s); retrying later", self.launch_id, exc)
            return False
        self.changed = False
        return True


def read_ledger(store: Store, launch_id: str) -> Ledger | None:
    """The ledger of a launch, read-only use (``None`` when the launch has none)."""
    path = ledger_path(store, launch_id)
    return Ledger(path, launch_id) if path.exists() else None


def batch_launch_ids(store: Store) -> list[str]:
    folder = store.runs_dir / "_batches"
    if not folder.exists():
        return []
    return sorted(p.parent.name for p in folder.glob("*/ledger.jsonl"))

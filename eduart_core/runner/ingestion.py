"""Moving run journals into the store: live while a launch runs, and once more at its end.

Why short transactions: a run waits on the network for hours, but DuckDB lets only one process
hold the file for writing. The runner writes its journal first and ingests it every few seconds;
each ingestion opens the store, adds the new responses (parsed and scored under both profiles by
``scoring.responses.add_responses_con``) and closes it again, so the dashboard and other commands can
read between two ingestions.

Why the final ingest waits and then admits defeat: another process may hold the store as the run
ends. The last ingestion retries while the store is busy (up to ``EDUART_INGEST_WAIT_S``) and, if
it still cannot write, says so (``IngestOutcome.complete`` is False): the launch is then "waiting
for ingest", never "completed", and the next run, resume or dashboard start stores the rest.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..scoring.prefetch import embed_for_responses
from ..scoring.responses import add_responses_con
from ..store import Store, StoreError, StoreLockedError
from .journal import latest_by_key, read_new_records, read_records

logger = logging.getLogger(__name__)


class JournalSource(Protocol):
    """What the ingester needs of a run: its id and its journal (a launch member has both)."""

    run_id: str
    journal_path: Path


@dataclass
class JournalRef:
    """A plain JournalSource, for callers that have no launch member at hand (recovery)."""

    run_id: str
    journal_path: Path


def journal_rows(records: list[dict]) -> list[dict]:
    """Response rows for ``add_responses`` from journal records (latest per request, ok wins).

    A failed request is stored as an error response under its own key (request key + time), so
    a later successful retry is still stored as the item's newest response and the error stays
    in the history until then.
    """
    rows = []
    for key, record in latest_by_key(iter(records)).items():
        base = {"item_id": record.get("item_id"), "repetition": int(record.get("repetition") or 0),
                "image_sent": record.get("image_sent"), "latency_s": record.get("latency_s")}
        if record.get("status") == "ok":
            rows.append({**base, "request_key": key, "raw_text": record.get("raw_text") or "",
                         "input_tokens": record.get("input_tokens"), "output_tokens": record.get("output_tokens"),
                         "cost_usd": record.get("cost_usd"), "batch_job_id": record.get("batch_job_id")})
        else:
            rows.append({**base, "request_key": f"{key}!error@{record.get('ts')}", "raw_text": None,
                         "error": record.get("error") or "error",
                         "input_tokens": record.get("input_tokens"), "output_tokens": record.get("output_tokens")})
    return rows


def ingest_journal(store: Store, run_id: str, journal_path: Path, records: list[dict] | None = None) -> int:
    """Add the journal's responses not yet stored (idempotent); returns how many were added.

    ``records`` lets a caller that follows the journal pass only the lines appended since its
    last call (stored keys are skipped either way)."""
    if records is None:
        records = list(read_records(Path(journal_path)))
    if not records:
        return 0
    rows = journal_rows(records)
    embed_for_responses(store, [(run_id, rows)])  # no write transaction is open while the embedder runs
    with store.transaction() as con:
        return add_responses_con(con, run_id, rows)


@dataclass
class IngestOutcome:
    """How the final ingestion ended: ``complete`` when every journal line is in the store."""

    added: int
    complete: bool
    error: str | None = None


class Ingester:
    """Moves new journal lines into the store every few seconds, in short transactions."""

    def __init__(self, store: Store, members: Sequence[JournalSource], interval_s: float = 2.0):
        self.store, self.members, self.interval_s = store, list(members), interval_s
        self._sizes: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="ingester")
        self.last_error: str | None = None
        self.fatal: StoreError | None = None  # a store error that waiting cannot cure (full disk, ...)

    def start(self) -> Ingester:
        self._thread.start()
        return self

    def pending_count(self) -> int:
        """Complete journal lines not yet ingested by this ingester."""
        count = 0
        for member in self.members:
            path = Path(member.journal_path)
            try:
                size = path.stat().st_size
            except OSError:
                continue
            if size > self._sizes.get(member.run_id, 0):
                records, _ = read_new_records(path, self._sizes.get(member.run_id, 0))
                count += len(records)
        return count

    def pending(self) -> bool:
        """True while some journal holds complete lines not yet ingested."""
        return self.pending_count() > 0

    def ingest(self) -> int:
        """Store the lines appended since the last call, every run's in one transaction (a sweep
        of 24 runs costs one store opening per round, not 24); a locked store is retried next round."""
        batch: list[tuple[JournalSource, list[dict], int]] = []
        for member in self.members:
            path = Path(member.journal_path)
            offset = self._sizes.get(member.run_id, 0)
            if not path.exists() or path.stat().st_size == offset:
                continue
            records, new_offset = read_new_records(path, offset)
            batch.append((member, records, new_offset))
        if not batch:
            return 0
        added = 0
        rows = [(member.run_id, journal_rows(records) if records else []) for member, records, _ in batch]
        try:
            embed_for_responses(self.store, rows)  # no write transaction is open while the embedder runs
            with self.store.transaction() as con:
                for run_id, run_rows in rows:
                    if run_rows:
                        added += add_responses_con(con, run_id, run_rows)
        except StoreLockedError as exc:  # held by another process: try again next round
            self.last_error = str(exc)
            return 0
        except StoreError as exc:  # full disk, newer schema, ...: waiting will not help
            self.last_error = str(exc)
            self.fatal = exc
            logger.warning("ingesting the journals of %s failed: %s",
                           ", ".join(m.run_id for m, _, _ in batch), exc)
            return 0
        for member, _, new_offset in batch:
            self._sizes[member.run_id] = new_offset
        self.last_error = None
        return added

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.ingest()

    def finish(self, wait_s: float, poll_s: float = 0.5) -> IngestOutcome:
        """Stop following and store what is left, retrying while the store is busy for up to
        ``wait_s`` seconds. ``complete`` is False when lines are still not in the store."""
        self._stop.set()
        self._thread.join(30)
        deadline = time.monotonic() + max(0.0, wait_s)
        saved_timeout = self.store.lock_timeout_s
        added = 0
        try:
            while True:
                remaining = deadline - time.monotonic()
                self.store.lock_timeout_s = max(0.2, min(5.0, remaining))
                self.fatal = None
                added += self.ingest()
                if not self.pending():
                    return IngestOutcome(added, True)
                if self.fatal is not None or time.monotonic() >= deadline:
                    break
                time.sleep(min(poll_s, max(0.0, deadline - time.monotonic())))
        finally:
            self.store.lock_timeout_s = saved_timeout
        return IngestOutcome(added, False, self.last_error or "journal lines not yet stored")

"""Recovery: store what earlier sessions journaled but could not store, and close their runs.

Why an explicit step: reading never writes. Pages and ``show`` only *derive* that a run whose
process is gone is interrupted (``background.run_history``); the writes happen here, and only at
defined moments: at the start of every ``run`` command (before it plans), at dashboard start, and
when the user clicks "Ingest now" on the Runs page.

Two cases, both for launches whose process is no longer alive:
- ``waiting_ingest``: the session ended but another process held the store; its journals are
  ingested and its runs get the status and totals the session computed (saved in the launch file).
- ``running`` with a dead process (``kill -9``, a crash, a reboot): its journals are ingested and
  its open runs are marked ``interrupted``; a resume continues them.
A launch whose process is alive is never touched.
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from ..store import Store, StoreError
from ..store.journal import runs_of_launch
from ..store.runs import finish_run
from . import launchfile
from .ingestion import ingest_journal
from .journal import latest_by_key, read_records

logger = logging.getLogger(__name__)


@dataclass
class Recovered:
    """One launch brought up to date: answers added to the store and its status now."""

    launch_id: str
    added: int
    status: str
    line: str


def _spawn_pid(store: Store, launch_id: str) -> int | None:
    path = store.runs_dir / "_launches" / f"{launch_id}.spawn.json"
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("pid")
    except (OSError, ValueError, AttributeError):
        return None


def needs_recovery(store: Store, info: dict) -> bool:
    """True for a launch left waiting for ingest, or left running by a process that is gone."""
    if info.get("status") not in (launchfile.WAITING_INGEST, launchfile.RUNNING):
        return False
    launch_id = info.get("launch_id") or ""
    return not (launchfile.process_alive(info.get("pid")) or launchfile.process_alive(_spawn_pid(store, launch_id)))


def _journal_totals(path: Path) -> dict:
    latest = latest_by_key(read_records(path))
    paid = [r for r in latest.values() if not r.get("cached")]
    return {"input_tokens": sum(int(r.get("input_tokens") or 0) for r in paid),
            "output_tokens": sum(int(r.get("output_tokens") or 0) for r in paid),
            "n_errors": sum(1 for r in latest.values() if r.get("status") != "ok")}


def recover_launch(store: Store, info: dict) -> Recovered:
    """Ingest one launch's journals and close its runs (see the module docstring)."""
    launch_id = info["launch_id"]
    members = info.get("members") or []
    added = sum(ingest_journal(store, m["run_id"], Path(m["journal"])) for m in members)
    if info.get("status") == launchfile.WAITING_INGEST:
        for run_id, final in (info.get("final_runs") or {}).items():
            finish_run(store, run_id, final["status"], final.get("totals") or {})
        after = info.get("on_ingest") or {}
        status = after.get("status", launchfile.COMPLETED)
        line = after.get("outcome") or f"launch {launch_id} stored"
        info.update(status=status, exit_code=after.get("exit_code"), outcome=line)
    else:
        runs = runs_of_launch(store, launch_id)
        journals = {m["run_id"]: Path(m["journal"]) for m in members}
        for run_id in runs.loc[runs["status"] == launchfile.RUNNING, "run_id"]:
            totals = _journal_totals(journals[run_id]) if run_id in journals else {}
            finish_run(store, run_id, launchfile.INTERRUPTED, totals)
        status = launchfile.INTERRUPTED
        line = (f"interrupted: its process ended without finishing; answers so far are stored; resume with: "
                f"{launchfile.resume_command(store, launch_id)}")
        info.update(status=status, exit_code=None, outcome=line)
    info["recovered_at"] = time.time()
    launchfile.write_launch(store, launch_id, info)
    return Recovered(launch_id, added, status, line)


def recover(store: Store) -> list[Recovered]:
    """Recover every launch of this store that needs it; a locked store raises ``StoreLockedError``."""
    if not store.exists():
        return []
    done = []
    for launch_id in launchfile.launch_ids(store):
        info = launchfile.read_launch(store, launch_id)
        if info and needs_recovery(store, info):
            info.setdefault("launch_id", launch_id)
            done.append(recover_launch(store, info))
    return done


_LAST_TRY: dict[str, float] = {}
_RETRY_AFTER_S = 30.0


def recover_at_start(store_path: str | Path) -> list[Recovered] | None:
    """Dashboard start: recover once per process and store (retried after 30 s when the store was
    busy). Never raises: a failure is logged and the dashboard opens as usual."""
    key = str(store_path)
    seen = _LAST_TRY.get(key)
    if seen is not None and (seen == float("inf") or time.monotonic() - seen < _RETRY_AFTER_S):
        return None
    _LAST_TRY[key] = time.monotonic()
    try:
        done = recover(Store(store_path, lock_timeout_s=2.0))
    except StoreError as exc:
        logger.warning("recovering pending runs of %s skipped for now: %s", key, exc)
        return None
    except Exception:  # never block the dashboard on bookkeeping
        logger.exception("recovering pending runs of %s failed", key)
        return None
    _LAST_TRY[key] = float("inf")
    for item in done:
        logger.info("launch %s recovered: %d answer(s) stored, status %s", item.launch_id, item.added, item.status)
    return done

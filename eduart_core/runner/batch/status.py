"""What ``run --batch --status`` and the Runs page show about batch launches: jobs, states, counts.

Read from the ledger file (the record of truth, current even while the store is busy); nothing is
written and no provider is called.
"""
from __future__ import annotations

import time

import pandas as pd

from ...store import Store
from ..launchfile import RUNNING, process_alive, read_launch
from .ledger import batch_launch_ids, read_ledger

JOB_VIEW = ["model", "provider", "attempt", "turn", "state", "provider_state", "n_requests", "n_completed", "n_failed",
            "n_answered", "n_errors", "n_missing", "estimated_cost_usd", "actual_cost_usd", "submitted_at",
            "finished_at", "message", "job_id", "launch_id"]


def _when(value) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(value))) if value else ""


def jobs_frame(store: Store, launch_id: str | None = None) -> pd.DataFrame:
    """One row per batch job of one launch (or of every batch launch), oldest first."""
    ids = [launch_id] if launch_id else batch_launch_ids(store)
    rows = []
    for lid in ids:
        ledger = read_ledger(store, lid)
        if ledger is None:
            continue
        for job in sorted(ledger.jobs.values(), key=lambda j: j.get("prepared_at") or 0):
            row = {c: job.get(c) for c in JOB_VIEW}
            row["launch_id"] = lid
            row["submitted_at"] = _when(job.get("submitted_at"))
            row["finished_at"] = _when(job.get("finished_at"))
            rows.append(row)
    return pd.DataFrame(rows, columns=JOB_VIEW)


def request_summary(store: Store, launch_id: str) -> pd.DataFrame:
    """Requests of a batch launch per model, condition and state."""
    ledger = read_ledger(store, launch_id)
    if ledger is None or not ledger.requests:
        return pd.DataFrame(columns=["model", "condition", "state", "requests"])
    frame = pd.DataFrame([{"model": r.get("model"), "condition": r.get("condition"), "state": r.get("state")}
                          for r in ledger.requests.values()])
    return frame.groupby(["model", "condition", "state"], as_index=False).size().rename(columns={"size": "requests"})


def launch_summary(store: Store, launch_id: str) -> dict:
    """Facts of one batch launch for a heading: process, first submission, deadline."""
    ledger = read_ledger(store, launch_id)
    info = read_launch(store, launch_id) or {}
    alive = process_alive(info.get("pid")) and info.get("status") == RUNNING
    meta = ledger.meta if ledger else {}
    return {"launch_id": launch_id, "following": alive, "pid": info.get("pid") if alive else None,
            "first_submitted_at": _when(meta.get("first_submitted_at")), "deadline_h": meta.get("deadline_h"),
            "jobs": len(ledger.jobs) if ledger else 0, "requests": len(ledger.requests) if ledger else 0}

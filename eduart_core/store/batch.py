"""Store side of batch mode: the ledger tables and the usage sums per run, model and condition.

Why the store holds a mirror, not the truth: a batch run polls for hours, and a DuckDB store lets
one process write at a time, so the runner appends every ledger change to its own file first (a
crash loses nothing) and copies the launch's ledger here in one short transaction whenever it
changes. Pages, ``run --batch --status`` readers and ``show runs`` read these tables.
"""
from __future__ import annotations

import pandas as pd

from ..vocab import BATCH_MODE, MIXED_MODE, ONLINE_MODE
from .core import Store
from .runs import insert_frame

#: Origin of the runs launched from this tool (``run`` and the Runs page).
LIVE_ORIGIN = "live"

JOB_COLUMNS = ["job_key", "launch_id", "provider", "model", "api_model_id", "attempt", "turn", "part", "tag",
               "job_id", "state", "provider_state", "n_requests", "n_completed", "n_failed", "n_answered",
               "n_errors", "n_missing", "input_bytes", "input_location", "output_location", "error_location",
               "message", "prepared_at", "submitted_at", "finished_at", "updated_at", "estimated_cost_usd",
               "input_tokens", "output_tokens", "actual_cost_usd"]
REQUEST_COLUMNS = ["launch_id", "custom_id", "run_id", "item_id", "model", "condition", "repetition", "turn",
                   "job_key", "attempt", "state", "error", "updated_at"]
_TIMES = ("prepared_at", "submitted_at", "finished_at", "updated_at")
_INTS = ("attempt", "turn", "part", "n_requests", "n_completed", "n_failed", "n_answered", "n_errors",
         "n_missing", "input_bytes", "input_tokens", "output_tokens")


def _frame(rows: list[dict], columns: list[str], ints=(), floats=(), times=()) -> pd.DataFrame:
    frame = pd.DataFrame([{c: row.get(c) for c in columns} for row in rows], columns=columns)
    for c in columns:
        if c in ints:
            frame[c] = frame[c].astype("Int64")
        elif c in floats:
            frame[c] = frame[c].astype("Float64")
        elif c in times:
            frame[c] = pd.to_datetime(frame[c], unit="s", errors="coerce")
        else:
            frame[c] = frame[c].astype(object)
    return frame


def sync_ledger(store: Store, launch_id: str, jobs: list[dict], requests: list[dict]) -> None:
    """Replace the launch's ledger rows by the given ones (one transaction; times are epoch seconds)."""
    job_frame = _frame(jobs, JOB_COLUMNS, ints=_INTS, floats=("estimated_cost_usd", "actual_cost_usd"),
                       times=_TIMES)
    request_frame = _frame(requests, REQUEST_COLUMNS, ints=("repetition", "turn", "attempt"), times=("updated_at",))
    with store.transaction() as con:
        con.lock(f"batch:{launch_id}")
        con.execute("DELETE FROM batch_jobs WHERE launch_id = ?", [launch_id])
        con.execute("DELETE FROM batch_requests WHERE launch_id = ?", [launch_id])
        insert_frame(con, "batch_jobs", job_frame)
        insert_frame(con, "batch_requests", request_frame)


def load_batch_jobs(store: Store, launch_id: str | None = None, dataset: str | None = None) -> pd.DataFrame:
    """Ledger rows of the batch jobs (one launch, the launches over one dataset, or all), newest first."""
    if not store.exists():
        return pd.DataFrame(columns=JOB_COLUMNS)
    with store.connect(read_only=True) as con:
        return con.frame(
            f"SELECT {', '.join(JOB_COLUMNS)} FROM batch_jobs WHERE (? IS NULL OR launch_id = ?) "
            "AND (? IS NULL OR launch_id IN (SELECT launch_id FROM runs WHERE dataset = ?)) "
            "ORDER BY prepared_at DESC NULLS LAST, job_key", [launch_id, launch_id, dataset, dataset])


#: What a reader looks for first comes first (model, condition, how it was asked, how much), ids last.
USAGE_COLUMNS = ["model", "condition", "mode", "answered", "errors", "batch_answers", "online_answers",
                 "cached_or_free", "batch_jobs", "input_tokens", "output_tokens", "cost_usd", "origin", "repetition",
                 "run_id", "launch_id", "dataset", "model_key"]


def run_usage(store: Store, dataset: str | None = None, by: str = "run") -> pd.DataFrame:
    """Actual usage of every run: answers, tokens and cost, per run (``by="run"``) or summed per
    model and condition (``by="model"``).

    ``cost_usd`` is the sum of the per-response costs (batch answers at the batch price) at the
    registry's prices; runs stored before per-response costs existed fall back to the run total.
    ``mode`` (runs launched here, origin ``live``) is batch, online, or mixed (a batch launch whose
    remainder was asked online); imported and simulated runs have no mode and no cost.
    """
    empty = pd.DataFrame(columns=USAGE_COLUMNS)
    if not store.exists():
        return empty
    with store.connect(read_only=True) as con:
        frame = con.frame(
            """SELECT u.run_id, u.launch_id, u.dataset, m.display_name AS model, u.model AS model_key,
                      u.condition, u.repetition, u.origin,
                      count(r.response_id) FILTER (WHERE r.error IS NULL) AS answered,
                      count(r.error) AS errors,
                      count(r.response_id) FILTER (WHERE r.error IS NULL AND r.batch_job_id IS NOT NULL)
                          AS batch_answers,
                      count(r.response_id) FILTER (WHERE r.error IS NULL AND r.batch_job_id IS NULL) AS online_answers,
                      count(r.response_id) FILTER (WHERE r.error IS NULL AND coalesce(r.cost_usd, 0) = 0)
                          AS cached_or_free,
                      count(DISTINCT r.batch_job_id) AS batch_jobs,
                      coalesce(sum(r.input_tokens), 0) AS input_tokens,
                      coalesce(sum(r.output_tokens), 0) AS output_tokens,
                      CASE WHEN count(r.cost_usd) > 0 THEN sum(r.cost_usd) ELSE coalesce(u.cost_usd, 0) END AS cost_usd
               FROM runs u LEFT JOIN models m USING (model) LEFT JOIN responses r USING (run_id)
               WHERE ? IS NULL OR u.dataset = ?
               GROUP BY u.run_id, u.launch_id, u.dataset, m.display_name, u.model, u.condition, u.repetition,
                        u.origin, u.cost_usd
               ORDER BY u.launch_id, u.run_id""",
            [dataset, dataset])
    if frame.empty:
        return empty
    frame["mode"] = [None if origin != LIVE_ORIGIN else MIXED_MODE if b and o else BATCH_MODE if b else ONLINE_MODE
                     for origin, b, o in zip(frame["origin"], frame["batch_answers"], frame["online_answers"])]
    frame = frame[USAGE_COLUMNS]
    if by == "run":
        return frame.reset_index(drop=True)
    if by != "model":
        raise ValueError(f"by must be 'run' or 'model', not {by!r}")
    sums = ["answered", "errors", "batch_answers", "online_answers", "cached_or_free", "batch_jobs",
            "input_tokens", "output_tokens", "cost_usd"]
    grouped = frame.groupby(["model", "model_key", "condition"], as_index=False).agg(
        runs=("run_id", "nunique"), **{c: (c, "sum") for c in sums})
    return grouped

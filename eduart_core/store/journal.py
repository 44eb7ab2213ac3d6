"""Store side of model runs: ingesting run journals, reopening runs, repetition answers.

Why short transactions: a run waits on the network for hours, but DuckDB lets only one process
hold the file for writing. The runner therefore writes its journal first and calls
``ingest_journal`` every few seconds; each call opens the store, adds the new responses (parsed
and scored under both profiles by ``runs.add_responses``) and closes it again, so the dashboard
and other commands can read between two ingestions.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..runner.journal import latest_by_key, read_records
from .core import Store
from .runs import add_responses_con


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
                         "input_tokens": record.get("input_tokens"), "output_tokens": record.get("output_tokens")})
        else:
            rows.append({**base, "request_key": f"{key}!error@{record.get('ts')}", "raw_text": None,
                         "error": record.get("error") or "error"})
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
    with store.transaction() as con:
        return add_responses_con(con, run_id, rows)


def reopen_runs(store: Store, run_ids: list[str]) -> None:
    """Mark runs as running again (a resume), keeping their totals until the new finish."""
    if not run_ids:
        return
    with store.transaction() as con:
        con.execute("UPDATE runs SET status = 'running', finished_at = NULL WHERE run_id IN "
                    f"({', '.join('?' for _ in run_ids)})", run_ids)


def run_wall_seconds(store: Store, run_ids: list[str]) -> dict[str, float]:
    """Wall time already spent by earlier sessions of these runs (a resume adds to it)."""
    if not run_ids or not store.exists():
        return {}
    with store.connect(read_only=True) as con:
        rows = con.execute(f"SELECT run_id, coalesce(wall_seconds, 0) FROM runs WHERE run_id IN "
                           f"({', '.join('?' for _ in run_ids)})", run_ids).fetchall()
    return {r[0]: float(r[1]) for r in rows}


def dataset_names(store: Store) -> list[str]:
    """Datasets that hold items (the ones a run can ask)."""
    if not store.exists():
        return []
    with store.connect(read_only=True) as con:
        return [r[0] for r in con.execute(
            "SELECT DISTINCT dataset FROM items WHERE is_current ORDER BY dataset").fetchall()]


def load_repetition_answers(store: Store, dataset: str | None = None) -> pd.DataFrame:
    """One row per repeated response (runs with repetition >= 1): model, condition, item, answer, score.

    Columns: model (display name), condition, item_id, repetition, parsed_answers (JSON text or
    None), raw_text, score (strict profile), error.
    """
    if not store.exists():
        return pd.DataFrame(columns=["model", "condition", "item_id", "repetition", "parsed_answers",
                                     "raw_text", "score", "error"])
    with store.connect(read_only=True) as con:
        return con.execute(
            """SELECT m.display_name AS model, u.condition, r.item_id, u.repetition,
                      CAST(r.parsed_answers AS TEXT) AS parsed_answers, r.raw_text, s.score, r.error
               FROM responses r JOIN runs u USING (run_id) JOIN models m USING (model)
               LEFT JOIN scores s ON s.response_id = r.response_id AND s.profile = 'strict'
               WHERE u.repetition >= 1 AND (? IS NULL OR u.dataset = ?)
               ORDER BY model, u.condition, r.item_id, u.repetition""",
            [dataset, dataset],
        ).df()


def runs_of_launch(store: Store, launch_id: str) -> pd.DataFrame:
    """The member runs of one launch with their status and totals."""
    with store.connect(read_only=True) as con:
        return con.execute(
            "SELECT run_id, model, condition, repetition, status, input_tokens, output_tokens, cost_usd, "
            "n_errors, wall_seconds, journal_path, CAST(params AS TEXT) AS params FROM runs WHERE launch_id = ? "
            "ORDER BY run_id", [launch_id]).df()


def params_of(value) -> dict:
    try:
        return json.loads(value) if isinstance(value, str) else dict(value or {})
    except (TypeError, ValueError):
        return {}


def image_files(store: Store, hashes: list[str]) -> dict[str, tuple[Path, str]]:
    """image_hash -> (file path, mime) for the given hashes, in one read."""
    hashes = sorted({h for h in hashes if h})
    if not hashes:
        return {}
    with store.connect(read_only=True) as con:
        rows = con.execute(f"SELECT image_hash, rel_path, mime FROM images WHERE image_hash IN "
                           f"({', '.join('?' for _ in hashes)})", hashes).fetchall()
    return {h: (store.images_dir / rel, mime) for h, rel, mime in rows}

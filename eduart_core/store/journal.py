"""Store side of model runs: reopening runs, wall times, repetition answers, image files.

The journals themselves belong to the runner (``runner.journal``, ``runner.ingestion``): it reads
them and hands response rows to ``scoring.responses.add_responses``. This module holds only the SQL the runner
needs, and imports nothing from the runner (arrows point down).
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .core import Store


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
        return con.frame(
            """SELECT m.display_name AS model, u.condition, r.item_id, u.repetition,
                      CAST(r.parsed_answers AS TEXT) AS parsed_answers, r.raw_text, s.score, r.error
               FROM responses r JOIN runs u USING (run_id) JOIN models m USING (model)
               LEFT JOIN scores s ON s.response_id = r.response_id AND s.profile = 'strict'
               WHERE u.repetition >= 1 AND (? IS NULL OR u.dataset = ?)
               ORDER BY model, u.condition, r.item_id, u.repetition""",
            [dataset, dataset],
        )


def runs_of_launch(store: Store, launch_id: str) -> pd.DataFrame:
    """The member runs of one launch with their status and totals."""
    with store.connect(read_only=True) as con:
        return con.frame(
            "SELECT run_id, model, condition, repetition, status, input_tokens, output_tokens, cost_usd, "
            "n_errors, wall_seconds, journal_path, CAST(params AS TEXT) AS params FROM runs WHERE launch_id = ? "
            "ORDER BY run_id", [launch_id])


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
    images = store.images
    return {h: (images.path(rel), mime) for h, rel, mime in rows}

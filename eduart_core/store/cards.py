"""SQL of exam cards: what a card reads about the runs behind a dataset, and how a card's results are
stored back as a published (aggregate-only) dataset.

Why a room of its own: a card needs per run the dates, the sampling parameters and the repetition,
which no other read returns; and re-importing a card writes the same aggregate tables the published
reference fills (`reference_type_scores`), so the studio draws an imported card like the paper's
numbers. The store stores: which rows to write is decided by `eduart_core.cards`.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from ..vocab import REFERENCE_KIND
from .core import Store
from .team import add_event_con

RUN_COLUMNS = ["model", "model_key", "family", "kind", "provider", "api_model_id", "access", "condition",
               "repetition", "origin", "prompt_hash", "params", "started_at", "finished_at"]


def run_settings(store: Store, dataset: str) -> pd.DataFrame:
    """One row per run of ``dataset``: the model (display name, key, family, kind, provider, API id,
    access), condition, repetition, origin, prompt hash, generation parameters (JSON text) and dates."""
    with store.connect(read_only=True) as con:
        return con.frame(
            """SELECT m.display_name AS model, u.model AS model_key, m.family, m.kind, m.provider, m.api_model_id,
                      m.access, u.condition, u.repetition, u.origin, u.prompt_hash, CAST(u.params AS TEXT) AS params,
                      u.started_at, u.finished_at
               FROM runs u JOIN models m ON m.model = u.model
               WHERE u.dataset = ?
               ORDER BY m.display_name, u.condition, u.repetition, u.started_at""", [dataset])


def dataset_state(store: Store, dataset: str) -> dict[str, Any] | None:
    """The dataset's row (aggregate_only, kind) with its item and run counts, or None when it is new."""
    with store.connect(read_only=True) as con:
        row = con.execute("SELECT aggregate_only, kind FROM datasets WHERE dataset = ?", [dataset]).fetchone()
        if row is None:
            return None
        items = con.execute("SELECT count(*) FROM items WHERE dataset = ?", [dataset]).fetchone()[0]
        runs = con.execute("SELECT count(*) FROM runs WHERE dataset = ?", [dataset]).fetchone()[0]
    return {"aggregate_only": bool(row[0]), "kind": row[1], "items": int(items), "runs": int(runs)}


def save_published(store: Store, dataset: str, title: str, description: str, models: list[dict[str, Any]],
                   type_rows: list[list[Any]], actor: dict[str, Any], source: str) -> int:
    """Register ``dataset`` as aggregate-only and replace its published type means in one transaction.

    ``models``: dicts with model, display_name, family, provider, api_model_id, simulated, kind (the
    model rows are inserted or refreshed); ``type_rows``: [model key, condition, type, n, mean, ci_low,
    ci_high]. The import is an audit event carrying its actor and ``source``. Returns the rows written.
    """
    from .runs import ensure_dataset_con, ensure_model_con

    with store.transaction() as con:
        ensure_dataset_con(con, dataset, title, REFERENCE_KIND, simulated=any(m["simulated"] for m in models),
                           aggregate_only=True, description=description)
        for m in models:
            ensure_model_con(con, m["model"], m["display_name"], m["family"], m["provider"], m["api_model_id"],
                             simulated=m["simulated"], kind=m["kind"])
        con.lock(f"reference:{dataset}")
        con.execute("DELETE FROM reference_type_scores WHERE dataset = ?", [dataset])
        con.executemany("INSERT INTO reference_type_scores VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [[dataset, *row] for row in type_rows])
        add_event_con(con, "card imported", dataset, {"source": source, "rows": len(type_rows)}, actor)
    return len(type_rows)

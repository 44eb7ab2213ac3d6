"""Human score overrides: a researcher re-scores one response, with a reason (append-only).

Why: an automatic scorer misjudges some answers (a synonym in an open blank, a correct answer in
an unexpected shape). A researcher who checked the answer records the score it deserves and why;
the computed score is kept, the override is a row of its own, and every statistic can be shown
"with reviewed overrides" (the default) or without them. An override is tied to the gold version
it was made against: after a key correction (a new item version re-scores the response) it no
longer applies, because the human judgement was about the old key.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import pandas as pd

from ..errors import UserError
from ..vocab import PROFILES
from .core import Store

# The latest override row per (response, profile); a NULL score withdraws the override.
LATEST_OVERRIDES_SQL = (
    "SELECT response_id, profile, score, item_version, reason, reviewer, created_at, override_id "
    "FROM score_overrides QUALIFY row_number() OVER (PARTITION BY response_id, profile "
    "ORDER BY override_id DESC) = 1"
)


def has_overrides_table(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the store has the overrides table (a store from before migration 6 (review studio) has not)."""
    return bool(con.execute("SELECT count(*) FROM information_schema.tables "
                            "WHERE table_name = 'score_overrides'").fetchone()[0])


def add_override(store: Store, response_id: int, score: float | None, reason: str, reviewer: str,
                 profiles: tuple[str, ...] | list[str] = PROFILES, actor: dict | None = None) -> list[int]:
    """Record that ``response_id`` deserves ``score`` (None withdraws an earlier override) under
    each of ``profiles``; returns the new override ids. Nothing is written on a bad input.
    ``actor``: the identity columns of who made it (permissions are checked above the store,
    in ``eduart_core.overrides``)."""
    actor = actor or {}
    reason, reviewer = (reason or "").strip(), (reviewer or "").strip()
    if not reviewer:
        raise UserError("an override needs the reviewer's name")
    if not reason:
        raise UserError("an override needs a reason (what the scorer got wrong)")
    if score is not None:
        try:
            score = float(score)
        except (TypeError, ValueError):
            raise UserError(f"score must be a number between 0 and 1, not {score!r}") from None
        if math.isnan(score) or not 0.0 <= score <= 1.0:
            raise UserError(f"score must be between 0 and 1, not {score}")
    unknown = [p for p in profiles if p not in PROFILES]
    if unknown or not profiles:
        raise UserError(f"unknown scoring profile {', '.join(unknown) or '(none)'}")
    ids = []
    with store.transaction() as con:
        for profile in profiles:
            row = con.execute("SELECT item_version, score FROM scores WHERE response_id = ? AND profile = ?",
                              [int(response_id), profile]).fetchone()
            if row is None:
                raise UserError(f"response {response_id} has no {profile} score to override")
            found = con.execute(
                "INSERT INTO score_overrides (response_id, profile, score, reason, reviewer, item_version, "
                "original_score, actor_subject, actor_provider, actor_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "RETURNING override_id",
                [int(response_id), profile, score, reason, reviewer, int(row[0]), float(row[1]),
                 actor.get("actor_subject"), actor.get("actor_provider"), actor.get("actor_name")]).fetchone()
            ids.append(int(found[0]))
    return ids


def load_overrides(store: Store, dataset: str | None = None, item_id: str | None = None,
                   latest_only: bool = False) -> pd.DataFrame:
    """Overrides with their provenance (dataset, item, model, condition, run, response, the
    computed score seen, the override, reason, reviewer, time) and whether each applies now."""
    columns = ["override_id", "dataset", "item_id", "model", "model_key", "condition", "run_id", "response_id",
               "profile", "original_score", "score", "reason", "reviewer", "item_version", "current_version",
               "created_at", "latest", "applied", "actor_subject", "actor_provider", "actor_name"]
    with store.connect(read_only=True) as con:
        if not has_overrides_table(con):
            return pd.DataFrame(columns=columns)
        frame = con.execute(
            f"""WITH latest AS ({LATEST_OVERRIDES_SQL})
            SELECT o.override_id, u.dataset, r.item_id, m.display_name AS model, u.model AS model_key, u.condition,
                   u.run_id, o.response_id, o.profile, o.original_score, o.score, o.reason, o.reviewer,
                   o.item_version, s.item_version AS current_version, o.created_at,
                   l.override_id IS NOT NULL AS latest,
                   (l.override_id IS NOT NULL AND o.score IS NOT NULL AND o.item_version = s.item_version) AS applied,
                   o.actor_subject, o.actor_provider, o.actor_name
            FROM score_overrides o
            JOIN responses r USING (response_id) JOIN runs u USING (run_id) JOIN models m ON m.model = u.model
            LEFT JOIN scores s ON s.response_id = o.response_id AND s.profile = o.profile
            LEFT JOIN latest l ON l.override_id = o.override_id
            WHERE (? IS NULL OR u.dataset = ?) AND (? IS NULL OR r.item_id = ?)
            ORDER BY o.override_id""",
            [dataset, dataset, item_id, item_id]).df()
    if latest_only:
        frame = frame[frame["latest"]].reset_index(drop=True)
    for column in ("latest", "applied"):
        frame[column] = frame[column].astype(bool)
    return frame[columns]


def export_overrides(store: Store, out: Path, dataset: str | None = None) -> int:
    """Every override (withdrawals included) as JSONL with its provenance; returns the count."""
    frame = load_overrides(store, dataset)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for row in frame.to_dict("records"):
            row["created_at"] = row["created_at"].isoformat() if hasattr(row["created_at"], "isoformat") else None
            for key in ("original_score", "score"):
                row[key] = None if row[key] is None or pd.isna(row[key]) else float(row[key])
            for key in ("override_id", "response_id", "item_version", "current_version"):
                row[key] = None if row[key] is None or pd.isna(row[key]) else int(row[key])
            handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    return len(frame)

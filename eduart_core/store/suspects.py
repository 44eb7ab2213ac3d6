"""The suspect-key queue in the store: raised flags, key reviews, and the options models chose.

Why tables: flags computed from statistics are recomputed on every read (the store keeps no copy
that could go stale), but other analyses may raise flags of their own (``raise_flags``), and every
review of a key is kept as an append-only row: who confirmed or corrected which item version,
seeing which flags, and which version the correction became.
"""
from __future__ import annotations

import json
from collections.abc import Iterable

import duckdb
import pandas as pd

from ..errors import UserError
from .core import Store

KEY_ACTIONS = ("confirm", "correct")


def _has(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                            [table]).fetchone()[0])


_CHOICES_SQL = """
    SELECT m.display_name AS model, u.condition, r.item_id, CAST(r.parsed_answers AS TEXT) AS answers
    FROM responses r JOIN runs u USING (run_id) JOIN models m ON m.model = u.model
    JOIN items i ON i.dataset = u.dataset AND i.item_id = r.item_id AND i.is_current
    WHERE u.dataset = ? AND r.error IS NULL
      AND (CASE WHEN u.repetition <> 0 THEN u.repetition ELSE r.repetition END) = 0
      AND (? IS NULL OR list_contains(?, i.type)) AND (? IS NULL OR u.condition = ?)
      AND (? IS NULL OR r.item_id = ?)
    QUALIFY row_number() OVER (PARTITION BY u.model, u.condition, r.item_id ORDER BY r.response_id DESC) = 1
    ORDER BY 1, 2, 3"""


def load_choices(store: Store, dataset: str, types: tuple[str, ...] | None = None, condition: str | None = None,
                 item_id: str | None = None) -> pd.DataFrame:
    """The parsed answer of the latest repetition-0 response per model, condition and item
    (optionally only items of some formats, one condition, one item).

    Columns: model (display name), condition, item_id, answers (parsed list or None).
    """
    with store.connect(read_only=True) as con:
        return _choices_con(con, dataset, types, condition, item_id)


def _choices_con(con: duckdb.DuckDBPyConnection, dataset: str, types: tuple[str, ...] | None,
                 condition: str | None, item_id: str | None) -> pd.DataFrame:
    kinds = list(types) if types is not None else None
    frame = con.execute(_CHOICES_SQL, [dataset, kinds, kinds, condition, condition, item_id, item_id]).df()
    frame["answers"] = pd.Series([json.loads(v) if isinstance(v, str) else None for v in frame["answers"]],
                                 dtype=object, index=frame.index)
    return frame


def load_suspect_inputs(store: Store, dataset: str, types: tuple[str, ...], condition: str
                        ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(choices of ``types`` items in ``condition``, stored flags, key reviews) through one connection."""
    with store.connect(read_only=True) as con:
        return (_choices_con(con, dataset, types, condition, None), _stored_flags_con(con, dataset),
                _key_reviews_con(con, dataset, None))


def raise_flags(store: Store, dataset: str, rows: Iterable[dict]) -> int:
    """Store flags raised by another analysis: dicts with item_id, item_version, source, reason,
    detail. A flag already stored for the same item version, source and reason is not repeated."""
    rows = list(rows)
    for row in rows:
        for key in ("item_id", "item_version", "source", "reason"):
            if row.get(key) in (None, ""):
                raise UserError(f"a key flag needs {key}")
    added = 0
    with store.transaction() as con:
        for row in rows:
            exists = con.execute("SELECT 1 FROM key_flags WHERE dataset = ? AND item_id = ? AND item_version = ? "
                                 "AND source = ? AND reason = ?",
                                 [dataset, str(row["item_id"]), int(row["item_version"]), row["source"],
                                  row["reason"]]).fetchone()
            if exists:
                continue
            con.execute("INSERT INTO key_flags (dataset, item_id, item_version, source, reason, detail) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        [dataset, str(row["item_id"]), int(row["item_version"]), row["source"], row["reason"],
                         row.get("detail")])
            added += 1
    return added


_FLAG_COLUMNS = ["item_id", "item_version", "source", "reason", "detail", "raised_at"]


def _stored_flags_con(con: duckdb.DuckDBPyConnection, dataset: str) -> pd.DataFrame:
    if not _has(con, "key_flags"):
        return pd.DataFrame(columns=_FLAG_COLUMNS)
    return con.execute(f"SELECT {', '.join(_FLAG_COLUMNS)} FROM key_flags WHERE dataset = ? ORDER BY flag_id",
                       [dataset]).df()


def add_key_review(store: Store, dataset: str, item_id: str, item_version: int, action: str, reviewer: str,
                   note: str | None, flags: list[str], new_version: int | None = None,
                   actor: dict | None = None) -> int:
    """Append one key review (confirm or correct) with the flags the reviewer saw and the identity
    columns of who made it (``actor``)."""
    if action not in KEY_ACTIONS:
        raise UserError(f"unknown key review action {action!r}")
    actor = actor or {}
    with store.transaction() as con:
        row = con.execute(
            "INSERT INTO key_reviews (dataset, item_id, item_version, action, reviewer, note, flags, new_version, "
            "actor_subject, actor_provider, actor_name) "
            "VALUES (?, ?, ?, ?, ?, ?, CAST(? AS JSON), ?, ?, ?, ?) RETURNING review_id",
            [dataset, str(item_id), int(item_version), action, reviewer, note, json.dumps(sorted(flags)),
             new_version, actor.get("actor_subject"), actor.get("actor_provider"), actor.get("actor_name")]).fetchone()
    return int(row[0])


_REVIEW_COLUMNS = ["review_id", "item_id", "item_version", "action", "reviewer", "note", "flags", "new_version",
                   "decided_at", "actor_subject", "actor_provider", "actor_name"]


def load_key_reviews(store: Store, dataset: str, item_id: str | None = None) -> pd.DataFrame:
    """Every key review of a dataset (or one item), oldest first; ``flags`` decoded."""
    with store.connect(read_only=True) as con:
        return _key_reviews_con(con, dataset, item_id)


def _key_reviews_con(con: duckdb.DuckDBPyConnection, dataset: str, item_id: str | None) -> pd.DataFrame:
    if not _has(con, "key_reviews"):
        return pd.DataFrame(columns=_REVIEW_COLUMNS)
    frame = con.execute(
        "SELECT review_id, item_id, item_version, action, reviewer, note, CAST(flags AS TEXT) AS flags, "
        "new_version, decided_at, actor_subject, actor_provider, actor_name FROM key_reviews WHERE dataset = ? AND (? IS NULL OR item_id = ?) "
        "ORDER BY review_id", [dataset, item_id, item_id]).df()
    frame["flags"] = pd.Series([json.loads(v) if isinstance(v, str) else [] for v in frame["flags"]],
                               dtype=object, index=frame.index)
    frame["note"] = pd.Series([None if not isinstance(v, str) else v for v in frame["note"]], dtype=object,
                              index=frame.index)
    return frame[_REVIEW_COLUMNS]

"""Tables of team mode: role grants and revocations, and the audit events of launches.

Why append-only: who was given which role by whom, and who launched which run, is part of the
record; a revocation is a row, and the current roles are the latest row per subject and role.
The statements are portable SQL (a window in a subquery, ``?`` placeholders, standard types).
"""
from __future__ import annotations

import json
from typing import Any

import pandas as pd

from .core import Store

ACTOR_COLUMNS = ("actor_subject", "actor_provider", "actor_name")

_CURRENT_SQL = """
    SELECT subject, role, note, actor_subject, actor_provider, actor_name, changed_at FROM (
        SELECT c.*, row_number() OVER (PARTITION BY subject, role ORDER BY change_id DESC) AS latest
        FROM role_changes c) t
    WHERE latest = 1 AND granted
    ORDER BY subject, role"""


def _has_table(con, table: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                            [table]).fetchone()[0])


def _frame(cur) -> pd.DataFrame:
    columns = [d[0] for d in cur.description]
    return pd.DataFrame(cur.fetchall(), columns=columns, dtype=object)


def add_role_change(store: Store, subject: str, role: str, granted: bool, actor: dict[str, Any],
                    note: str | None = None) -> int:
    """Append one grant (``granted``) or revocation; returns its id."""
    with store.transaction() as con:
        row = con.execute(
            "INSERT INTO role_changes (subject, role, granted, note, actor_subject, actor_provider, actor_name) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING change_id",
            [subject, role, bool(granted), note, *(actor.get(c) for c in ACTOR_COLUMNS)]).fetchone()
    return int(row[0])


def current_roles(store: Store, subject: str | None = None) -> pd.DataFrame:
    """The roles granted now (one row per subject and role), of one subject or everyone."""
    columns = ["subject", "role", "note", *ACTOR_COLUMNS, "changed_at"]
    if not store.exists():
        return pd.DataFrame(columns=columns)
    with store.connect(read_only=True) as con:
        if not _has_table(con, "role_changes"):
            return pd.DataFrame(columns=columns)
        frame = _frame(con.execute(_CURRENT_SQL))
    if subject is not None:
        frame = frame[frame["subject"] == subject].reset_index(drop=True)
    return frame[columns]


def load_role_changes(store: Store) -> pd.DataFrame:
    """Every grant and revocation, oldest first (the audit log)."""
    columns = ["change_id", "subject", "role", "granted", "note", *ACTOR_COLUMNS, "changed_at"]
    with store.connect(read_only=True) as con:
        if not _has_table(con, "role_changes"):
            return pd.DataFrame(columns=columns)
        return _frame(con.execute(f"SELECT {', '.join(columns)} FROM role_changes ORDER BY change_id"))


def add_event(store: Store, action: str, target: str | None, detail: dict | None, actor: dict[str, Any]) -> int:
    """Append one audit event (a launch, a resume, a cancel); ``detail`` is stored as JSON text."""
    with store.transaction() as con:
        return add_event_con(con, action, target, detail, actor)


def add_event_con(con, action: str, target: str | None, detail: dict | None, actor: dict[str, Any]) -> int:
    """``add_event`` inside the caller's transaction."""
    row = con.execute(
        "INSERT INTO audit_events (action, target, detail, actor_subject, actor_provider, actor_name) "
        "VALUES (?, ?, ?, ?, ?, ?) RETURNING event_id",
        [action, target, json.dumps(detail, ensure_ascii=False, default=str) if detail is not None else None,
         *(actor.get(c) for c in ACTOR_COLUMNS)]).fetchone()
    return int(row[0])


def load_events(store: Store) -> pd.DataFrame:
    """Every audit event, oldest first."""
    columns = ["event_id", "action", "target", "detail", *ACTOR_COLUMNS, "created_at"]
    with store.connect(read_only=True) as con:
        if not _has_table(con, "audit_events"):
            return pd.DataFrame(columns=columns)
        return _frame(con.execute(f"SELECT {', '.join(columns)} FROM audit_events ORDER BY event_id"))


def latest_event(store: Store, action: str, target: str) -> dict | None:
    """The latest audit event of ``action`` on ``target`` (its detail decoded), or None."""
    with store.connect(read_only=True) as con:
        row = con.execute(f"SELECT detail, {', '.join(ACTOR_COLUMNS)}, created_at FROM audit_events "
                          "WHERE action = ? AND target = ? ORDER BY event_id DESC LIMIT 1", [action, target]).fetchone()
    if row is None:
        return None
    try:
        detail = json.loads(row[0]) if row[0] else {}
    except ValueError:
        detail = {}
    return {"detail": detail if isinstance(detail, dict) else {}, **dict(zip(ACTOR_COLUMNS, row[1:4])),
            "created_at": row[4]}

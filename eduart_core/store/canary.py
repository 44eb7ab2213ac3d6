"""The store's canary GUID (SQL only): meta keys `canary`, `canary_created_by`, `canary_created_at`.

Why in the store: the canary marks every export of this store's items, so it must be one value
per store, stable across sessions and exports. It is made lazily (uuid4) on the first export;
the first writer wins (`ON CONFLICT DO NOTHING`), so two exporters racing agree on one GUID.
"""
from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from .connection import Connection
from .core import Store
from .team import add_event_con

META_KEY = "canary"


def canary_con(con: Connection) -> str | None:
    """The store's canary GUID, or None when no export has made one yet."""
    rows = con.execute("SELECT value FROM meta WHERE key = ?", [META_KEY]).fetchall()
    return rows[0][0] if rows and rows[0][0] else None


def canary(store: Store) -> str | None:
    with store.connect(read_only=True) as con:
        return canary_con(con)


def canary_record(store: Store) -> dict[str, str]:
    """The canary with who made it and when (empty values when none was made yet)."""
    keys = (META_KEY, "canary_created_by", "canary_created_at")
    with store.connect(read_only=True) as con:
        rows = dict(con.execute("SELECT key, value FROM meta WHERE key IN (?, ?, ?)", list(keys)).fetchall())
    return {key: rows.get(key) or "" for key in keys}


def ensure_canary(store: Store, actor: dict[str, Any]) -> str:
    """The store's canary GUID, made on first use; its making is an audit event with its actor."""
    found = canary(store)
    if found:
        return found
    guid = str(uuid.uuid4())
    with store.transaction() as con:  # bumps the data version: a cached `canary` view shows the new GUID
        for key, value in ((META_KEY, guid), ("canary_created_by", actor.get("actor_name") or ""),
                           ("canary_created_at", datetime.now(UTC).isoformat(timespec="seconds"))):
            con.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                        [key, value]).fetchall()
        kept = canary_con(con) or guid
        if kept == guid:  # this call made it (a racing exporter's GUID wins otherwise)
            add_event_con(con, "canary created", guid, None, actor)
        return kept

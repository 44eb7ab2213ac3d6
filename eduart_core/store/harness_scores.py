"""Scores another harness gave (an Inspect scorer's value), stored beside ours under their own profile.

Why in the scores table rather than a table of their own: a profile is a column of the long score
frame, so every view, statistic and export reads an Inspect scorer's values (profile
``inspect:<scorer>``) exactly as it reads ``strict``: side by side with our scores of the same
responses. They are never recomputed (``rescore`` only rewrites the rule profiles it is given), and
writing them again for the same responses replaces them, so a re-import changes nothing.
"""
from __future__ import annotations

from .connection import Connection
from .core import Store

_COLUMNS = ("response_id", "profile", "item_version", "score", "correct", "details", "scorer")
_TYPES = {"response_id": "BIGINT", "item_version": "BIGINT", "score": "DOUBLE", "correct": "BOOLEAN"}


def response_ids_con(con: Connection, run_id: str, request_keys: list[str]) -> dict[str, int]:
    """request key -> response id of a run's stored responses (keys not stored are left out); for a
    batch of keys (a list parameter)."""
    if not request_keys:
        return {}
    rows = con.execute("SELECT request_key, response_id FROM responses WHERE run_id = ? AND request_key = ANY(?)",
                       [run_id, list(request_keys)]).fetchall()
    return {str(key): int(rid) for key, rid in rows}


def replace_scores_con(con: Connection, rows: list[tuple[int, str, int, float, str]]) -> int:
    """Store (response id, profile, item version, score, scorer) rows, replacing the same response's
    row under the same profile; ``correct`` is score >= 0.5 (the rule of a reviewed override)."""
    if not rows:
        return 0
    profiles = sorted({r[1] for r in rows})
    con.lock("scores")
    con.execute("DELETE FROM scores WHERE response_id = ANY(?) AND profile = ANY(?)",
                [sorted({r[0] for r in rows}), profiles])
    columns = {"response_id": [r[0] for r in rows], "profile": [r[1] for r in rows],
               "item_version": [r[2] for r in rows], "score": [float(r[3]) for r in rows],
               "correct": [float(r[3]) >= 0.5 for r in rows], "details": [None] * len(rows),
               "scorer": [r[4] for r in rows]}
    con.insert_columns("scores", {name: columns[name] for name in _COLUMNS}, _TYPES, json_columns=("details",))
    return len(rows)


def stored_profiles_con(con: Connection, dataset: str, prefix: str) -> list[str]:
    """The profiles starting with ``prefix`` that hold scores of ``dataset``'s responses, sorted (a
    store without any such score answers from one scan of the profile column, no join)."""
    if not con.execute("SELECT 1 FROM scores WHERE starts_with(profile, ?) LIMIT 1", [prefix]).fetchall():
        return []
    rows = con.execute(
        """SELECT DISTINCT s.profile FROM scores s JOIN responses r USING (response_id)
           JOIN runs u USING (run_id) WHERE u.dataset = ? AND starts_with(s.profile, ?)""",
        [dataset, prefix]).fetchall()
    return sorted(str(r[0]) for r in rows)


def stored_profiles(store: Store, dataset: str, prefix: str) -> list[str]:
    """``stored_profiles_con`` on a connection of its own."""
    with store.connect(read_only=True) as con:
        return stored_profiles_con(con, dataset, prefix)

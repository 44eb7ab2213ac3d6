"""Scores another harness gave (an Inspect scorer's value), stored beside ours under their own profile.

Why in the scores table rather than a table of their own: a profile is a column of the long score
frame, so every view, statistic and export reads an Inspect scorer's values (profile
``inspect:<scorer>``) exactly as it reads ``strict``: side by side with our scores of the same
responses. They are never recomputed (``rescore`` only rewrites the rule profiles it is given), and
writing them again for the same responses replaces them, so a re-import changes nothing. Which
datasets have them is noted in ``recorded_profiles`` (``store.recorded``), as for lm-eval's metrics.
"""
from __future__ import annotations

from .connection import Connection

_COLUMNS = ("response_id", "profile", "item_version", "score", "correct", "details", "scorer")
_TYPES = {"response_id": "BIGINT", "item_version": "BIGINT", "score": "DOUBLE", "correct": "BOOLEAN"}


def replace_scores_con(con: Connection, rows: list[tuple[int, str, int, float, str]]) -> int:
    """Store (response id, profile, item version, score, scorer) rows, replacing the same response's
    row under the same profile; ``correct`` is score >= 0.5 (the rule of a reviewed override)."""
    if not rows:
        return 0
    profiles = sorted({r[1] for r in rows})
    con.lock("scores")
    con.execute("DELETE FROM scores WHERE response_id = ANY(?) AND profile = ANY(?)",
                [sorted({r[0] for r in rows}), profiles])
    columns: dict[str, list] = {"response_id": [r[0] for r in rows], "profile": [r[1] for r in rows],
               "item_version": [r[2] for r in rows], "score": [float(r[3]) for r in rows],
               "correct": [float(r[3]) >= 0.5 for r in rows], "details": [None] * len(rows),
               "scorer": [r[4] for r in rows]}
    con.insert_columns("scores", {name: columns[name] for name in _COLUMNS}, _TYPES, json_columns=("details",))
    return len(rows)

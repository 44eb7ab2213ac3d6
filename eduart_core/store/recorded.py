"""Scores another tool recorded for answers the store holds (an evaluation harness's own metric).

Why a module of its own: a recorded score is not derived from the gold, so rescoring never touches
it; it lives in the scores table under its own profile (``vocab.is_recorded_profile``) beside the
scores our formats compute, and is written through the same replace-by-response statement the
judges use. This module only finds the responses such scores belong to.
"""
from __future__ import annotations

from collections.abc import Iterable

from .connection import Connection


def response_ids_by_key_con(con: Connection, run_id: str, request_keys: Iterable[str]) -> dict[str, int]:
    """request key -> response id of the answers of ``run_id`` stored under those keys."""
    keys = sorted(set(request_keys))
    out: dict[str, int] = {}
    for start in range(0, len(keys), 1000):
        chunk = keys[start:start + 1000]
        rows = con.execute(
            f"SELECT request_key, response_id FROM responses WHERE run_id = ? "
            f"AND request_key IN ({', '.join('?' for _ in chunk)})", [run_id, *chunk]).fetchall()
        out.update({str(key): int(response_id) for key, response_id in rows})
    return out

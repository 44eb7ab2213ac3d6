"""Scores another tool recorded for answers the store holds (an evaluation harness's own metric).

Why a module of its own: a recorded score is not derived from the gold, so rescoring never touches
it; it lives in the scores table under its own profile (``vocab.is_recorded_profile``) beside the
scores our formats compute, and is written through the same replace-by-response statement the
judges use. This module finds the responses such scores belong to and keeps the list of the
recorded profiles each dataset has (``recorded_profiles``), which the score table reads.
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


def register_recorded_profiles_con(con: Connection, dataset: str, profiles: Iterable[str], source: str) -> None:
    """Note that ``dataset`` has scores under ``profiles`` (a profile noted before stays as it was)."""
    for profile in sorted(set(profiles)):
        con.execute("INSERT INTO recorded_profiles (profile, dataset, source) VALUES (?, ?, ?) "
                    "ON CONFLICT (profile, dataset) DO NOTHING", [profile, dataset, source])


def stored_recorded_profiles_con(con: Connection, dataset: str | None = None) -> list[str]:
    """Names of the recorded profiles of ``dataset`` (every dataset when None), sorted; none in a
    store written before they existed (read-only readers never migrate)."""
    if not con.has_table("recorded_profiles"):
        return []
    rows = con.execute("SELECT DISTINCT profile FROM recorded_profiles WHERE (? IS NULL OR dataset = ?) ORDER BY 1",
                       [dataset, dataset]).fetchall()
    return [str(r[0]) for r in rows]

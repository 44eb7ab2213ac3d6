"""Human score overrides: a researcher re-scores one response by hand, with a reason.

The write side of the review work beside `suspects` (key reviews): pages and commands call these
functions, never the store. An override is append-only: the computed score is kept, every
statistic uses the override while "with reviewed overrides" is on, and an override applies only
while the gold version it was made on is current. The SQL and the checks on the values live in
`store.overrides`; the overrides themselves are read through `views.score_overrides`.
"""
from __future__ import annotations

from pathlib import Path

from .store import Store
from .store import overrides as store_overrides
from .vocab import PROFILES


def add_override(store: Store, response_id: int, score: float | None, reason: str, reviewer: str,
                 profiles: tuple[str, ...] | list[str] = PROFILES) -> list[int]:
    """Record that ``response_id`` deserves ``score`` (None withdraws an earlier override) under each of
    ``profiles``; returns the new override ids. Nothing is written on a bad input (a one-line UserError:
    no reviewer, no reason, a score outside [0, 1], an unknown profile or response)."""
    return store_overrides.add_override(store, response_id, score, reason, reviewer, profiles)


def export_overrides(store: Store, out: Path, dataset: str | None = None) -> int:
    """Every override (withdrawals included) as JSONL with its provenance; returns the count."""
    return store_overrides.export_overrides(store, out, dataset)


__all__ = ["add_override", "export_overrides"]

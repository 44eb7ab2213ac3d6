"""Human score overrides as permission-checked writes: a researcher re-scores one response by hand, with a reason.

The write side of the review work beside `suspects` (key reviews): pages and commands call these
functions, never the store. Why above the store: ``store.overrides`` writes the row and knows nothing
of people; this module checks that the acting identity may override scores (the researcher role) and
records who it was. An override is append-only: the computed score is kept, every statistic uses the
override while "with reviewed overrides" is on, and an override applies only while the gold version
it was made on is current. The SQL and the checks on the values live in `store.overrides`; pages read
the overrides through `views.score_overrides`.
"""
from __future__ import annotations

from pathlib import Path

from .store import Store
from .store import overrides as db
from .team import OVERRIDE_SCORE, Identity, as_identity
from .vocab import PROFILES


def add_override(store: Store, response_id: int, score: float | None, reason: str, actor: Identity,
                 profiles: tuple[str, ...] | list[str] = PROFILES) -> list[int]:
    """Record that ``response_id`` deserves ``score`` (None withdraws an earlier override) under each
    of ``profiles``, as ``actor``; returns the new override ids. Refused with one line unless the
    actor's roles allow overriding; nothing is written on a bad input (a one-line UserError: no
    reason, a score outside [0, 1], an unknown profile or response)."""
    who = as_identity(actor)
    who.require(OVERRIDE_SCORE)
    return db.add_override(store, response_id, score, reason, who.name, profiles, actor=who.columns())


def load_overrides(store: Store, dataset: str | None = None, item_id: str | None = None,
                   latest_only: bool = False):
    """Overrides with their provenance and who made them (see ``store.overrides.load_overrides``)."""
    return db.load_overrides(store, dataset, item_id, latest_only)


def export_overrides(store: Store, out: Path, dataset: str | None = None) -> int:
    """Every override (withdrawals included) as JSONL with its provenance; returns the count."""
    return db.export_overrides(store, out, dataset)


__all__ = ["add_override", "export_overrides", "load_overrides"]

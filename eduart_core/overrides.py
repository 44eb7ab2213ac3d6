"""Score overrides as a permission-checked write: a researcher re-scores one response, with a reason.

Why above the store: ``store.overrides`` writes the row and knows nothing of people; this module
checks that the acting identity may override scores (the researcher role) and records who it was.
The page and any script call ``add_override`` here, never the store's.
"""
from __future__ import annotations

from .store import Store
from .store import overrides as db
from .team import OVERRIDE_SCORE, Identity, as_identity
from .vocab import PROFILES


def add_override(store: Store, response_id: int, score: float | None, reason: str, actor: Identity | str,
                 profiles: tuple[str, ...] | list[str] = PROFILES) -> list[int]:
    """Record that ``response_id`` deserves ``score`` (None withdraws an earlier override) under each
    of ``profiles``, as ``actor`` (refused with one line unless their roles allow overriding)."""
    who = as_identity(actor)
    who.require(OVERRIDE_SCORE)
    return db.add_override(store, response_id, score, reason, who.name, profiles, actor=who.columns())


def load_overrides(store: Store, dataset: str | None = None, item_id: str | None = None,
                   latest_only: bool = False):
    """Overrides with their provenance and who made them (see ``store.overrides.load_overrides``)."""
    return db.load_overrides(store, dataset, item_id, latest_only)

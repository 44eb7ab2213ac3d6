"""From criterion points to an item score: how a rubric's marks become a 0-1 score.

Why the mean mark over repeats: a judge asked K times may differ from itself, and its expected
verdict is the mean (a majority with ties broken either way would bias an even K towards one
side). The item score is then a fraction like every other score, and the calibration compares
exactly these means with the human marks (the spread over repeats is reported as run-to-run SD).
"""
from __future__ import annotations

import math
from collections.abc import Iterable

from .rubric import Rubric


def mean_points(values: Iterable[float]) -> float | None:
    """The mean of ``values`` (None when there is none)."""
    found = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return sum(found) / len(found) if found else None


def item_score(rubric: Rubric, item_id: str, points: dict[str, float]) -> dict | None:
    """Score and per-criterion details of one answer; None until every applicable criterion has points."""
    applicable = [c for c in rubric.criteria if rubric.applies(c, item_id)]
    if not applicable or any(points.get(c.id) is None for c in applicable):
        return None
    total = sum(float(points[c.id]) for c in applicable)
    maximum = sum(c.points for c in applicable)
    score = total / maximum
    details = [{"element": c.id, "expected": c.points, "given": float(points[c.id]),
                "right": float(points[c.id]) == c.points, "method": c.method} for c in applicable]
    return {"score": score, "correct": score >= 0.5, "details": details}


def scorer_id(rubric: Rubric, judge: str) -> str:
    """The rule set behind a judge profile's score (like ``<format>/<version>`` for the built-in profiles)."""
    return f"rubric/{rubric.name}@{rubric.short_hash}+{judge}"

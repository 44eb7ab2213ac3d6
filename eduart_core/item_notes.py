"""The sentences about one item's statistics: what its discrimination says, in words.

Why a module of its own: the inspector's item card and the suspect-key queue's reasons speak of
the same point-biserial r_pb and its 95% interval, and both must say only what the interval
carries: a direction (stronger examinees do better, or worse) only when the interval excludes
zero; otherwise that the data do not tell, and why (how few examinees the r rests on).
"""
from __future__ import annotations

import math

__all__ = ["discrimination_meaning", "discrimination_note", "negative_discrimination_reason"]


def _known(x: object) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def _examinees(n: int | float | None) -> str:
    return f"{int(n)} examinees" if n is not None and _known(n) else "too few examinees"


def _interval(low: float | None, high: float | None) -> tuple[float, float] | None:
    """Both ends of an interval, or None when either is missing (None or NaN)."""
    if low is None or high is None or not (_known(low) and _known(high)):
        return None
    return low, high


def discrimination_meaning(r: float, low: float | None, high: float | None, n: int | None = None) -> str:
    """What r_pb with its 95% interval says about strong and weak examinees on the item.

    A direction is named only when the interval excludes zero; an interval that holds zero, or
    none at all, gives "the data do not tell" with the number of examinees behind it.
    """
    ends = _interval(low, high)
    if ends is None:
        return (f"with {_examinees(n)} there is no interval, so the data do not tell whether stronger examinees "
                "do better or worse on it")
    low, high = ends
    if low > 0:
        return "examinees that do well overall tend to get it right"
    if high < 0:
        return "stronger examinees do worse on it than weaker ones; check the answer key"
    return (f"the interval holds zero, so with {_examinees(n)} the data do not tell whether stronger examinees do "
            "better or worse on it")


def discrimination_note(r: float, low: float | None, high: float | None, n: int | None = None,
                        category: str | None = None) -> str:
    """The inspector's line: 'r_pb = 0.21 (fair; 95% interval -0.58 to 0.80, 8 examinees): ...'."""
    interval = (f"95% interval {low:.2f} to {high:.2f}" if _known(low) and _known(high)
                else "no interval")
    size = f", {int(n)} examinees" if n is not None and _known(n) else ""
    head = f"{category}; " if category else ""
    return f"r_pb = {r:.2f} ({head}{interval}{size}): {discrimination_meaning(r, low, high, n)}."


def negative_discrimination_reason(r: float, low: float | None, high: float | None, n: int | None) -> str:
    """The suspect-key queue's detail for r_pb < 0: the number, its interval and what it allows one to say."""
    interval = f"95% CI {low:.2f} to {high:.2f}, " if _known(low) and _known(high) else ""
    head = f"r_pb = {r:.2f} ({interval}{_examinees(n)})"
    if high is not None and _known(high) and high < 0:
        return f"{head}: stronger examinees do worse"
    return f"{head}: below zero, but {discrimination_meaning(r, low, high, n)}"

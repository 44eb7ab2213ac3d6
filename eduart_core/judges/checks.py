"""Deterministic checks of rubric criteria: code that marks a criterion the same way every time.

Why code for some criteria: whether an answer names the right artist (from a list of accepted
names) or dates a work within fifty years is not a matter of judgement, and a model judge asked
it adds cost and noise. Each check is one entry of `CHECKS`: ``fn(criterion, expected, text) ->
points`` (0 or the criterion's full points). Text is compared after folding case, accents and
punctuation (``text.norm_strict``), so "Giotto di Bondone," matches "giotto di bondone".
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..text import norm_strict

_YEAR = re.compile(r"(?<![\d.,])(\d{3,4})(?![\d.,]*\d)")
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50}
_CENTURY_IT = re.compile(r"\b([ivxl]+)\s*(?:secolo|sec)\b|\b(?:secolo|sec)\s+([ivxl]+)\b")
_CENTURY_EN = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\s+century\b")
_CENTURY_IT_NAMES = {"duecento": 1250, "trecento": 1350, "quattrocento": 1450, "cinquecento": 1550,
                     "seicento": 1650, "settecento": 1750, "ottocento": 1850, "novecento": 1950}


def _roman(text: str) -> int | None:
    total, last = 0, 0
    for ch in reversed(text):
        value = _ROMAN.get(ch)
        if value is None:
            return None
        total = total - value if value < last else total + value
        last = max(last, value)
    return total or None


def years_in(text: str) -> list[int]:
    """Years an answer names: numbers 100-2100, and centuries as their middle year ("XV secolo",
    "15th century", "Quattrocento" -> 1450)."""
    folded = norm_strict(text)
    years = [int(m.group(1)) for m in _YEAR.finditer(str(text or "")) if 100 <= int(m.group(1)) <= 2100]
    for m in _CENTURY_IT.finditer(folded):
        number = _roman(m.group(1) or m.group(2))
        if number and 1 <= number <= 21:
            years.append(100 * number - 50)
    for m in _CENTURY_EN.finditer(folded):
        number = int(m.group(1))
        if 1 <= number <= 21:
            years.append(100 * number - 50)
    for word, year in _CENTURY_IT_NAMES.items():
        if re.search(rf"\b{word}\b", folded):
            years.append(year)
    return years


def _span(expected: Any) -> tuple[float, float] | None:
    """A year, or a [first, last] range, as (first, last)."""
    if isinstance(expected, bool):
        return None
    if isinstance(expected, int | float):
        return float(expected), float(expected)
    if isinstance(expected, list | tuple) and len(expected) == 2 and all(isinstance(v, int | float) for v in expected):
        low, high = sorted(float(v) for v in expected)
        return low, high
    return None


def check_date_within(criterion, expected: Any, text: str) -> int:
    """Full points when any year the answer names lies within ``years`` (default 50) of the work's
    date (a year, or the first and last year of a range)."""
    span = _span(expected)
    if span is None:
        return 0
    tolerance = float(criterion.params.get("years", 50))
    low, high = span[0] - tolerance, span[1] + tolerance
    return criterion.points if any(low <= y <= high for y in years_in(text)) else 0


def _phrases(expected: Any) -> list[str]:
    values = [expected] if isinstance(expected, str) else list(expected or [])
    return [norm_strict(v) for v in values if isinstance(v, str) and norm_strict(v)]


def _contains(folded_text: str, phrase: str) -> bool:
    return f" {phrase} " in f" {folded_text} "


def check_alias(criterion, expected: Any, text: str) -> int:
    """Full points when the answer names one of the accepted names (whole words, case, accents
    and punctuation folded)."""
    folded = norm_strict(text)
    return criterion.points if any(_contains(folded, p) for p in _phrases(expected)) else 0


def check_required_term(criterion, expected: Any, text: str) -> int:
    """Full points when the answer uses the required term(s): any of them (``match = "any"``, the
    default) or all of them (``match = "all"``)."""
    folded = norm_strict(text)
    terms = _phrases(expected)
    if not terms:
        return 0
    found = [_contains(folded, t) for t in terms]
    ok = all(found) if str(criterion.params.get("match", "any")) == "all" else any(found)
    return criterion.points if ok else 0


#: The deterministic checks a rubric may name (explicit: a new check is one entry).
CHECKS: dict[str, Callable[[Any, Any, str], int]] = {
    "date_within": check_date_within,
    "alias": check_alias,
    "required_term": check_required_term,
}


def run_check(criterion, expected: Any, text: str) -> int:
    return int(CHECKS[criterion.check](criterion, expected, text or ""))

"""Score levels: the ordered categories an item's score falls into, for partial-credit IRT models.

Why: a cloze with three blanks scores 0, 1/3, 2/3 or 1. Dichotomising that at 0.5 throws away
what a partial-credit model uses (which blanks the examinee got); treating the share as
continuous ignores that it counts parts. Each format therefore declares how many parts earn
credit on their own (`AnswerFormat.score_parts`: an item has parts + 1 levels, 0..parts) and how
a stored score in [0, 1] maps to a level (`AnswerFormat.score_levels`, one of the rules below),
with the rule in words (`AnswerFormat.level_rule`) for the pages. The rules are vectorised:
an IRT fit maps hundreds of thousands of scores.
"""
from __future__ import annotations

import numpy as np

#: The rule of formats judged as a whole (multiple choice, numbers, free text, all-or-nothing parts).
RIGHT_AT = 0.5
WHOLE_RULE = "2 levels: right = score >= 0.5"
SHARE_RULE = ("{k} {parts}: k + 1 levels; level = {parts} right = score x k, rounded to the nearest whole number "
              "(the score is the share of {parts} right)")
FOUND_RULE = ("k errors: k + 1 levels; level = errors found = k x F1 / (2 - F1), rounded (the number of errors "
              "that gives this F1 when no wrong word is named; naming wrong words lowers it)")


def whole_levels(scores: np.ndarray, parts: np.ndarray) -> np.ndarray:
    """0 or 1: right when the score is at least 0.5 (the published regression's rule)."""
    return (np.asarray(scores, dtype=float) >= RIGHT_AT).astype(int)


def share_levels(scores: np.ndarray, parts: np.ndarray) -> np.ndarray:
    """Parts right out of k from a share of parts right (shares are stored rounded to 4 decimals,
    so the nearest whole number is the count)."""
    k = np.asarray(parts, dtype=float)
    return np.clip(np.rint(np.asarray(scores, dtype=float) * k), 0, k).astype(int)


def found_levels(scores: np.ndarray, parts: np.ndarray) -> np.ndarray:
    """Errors found out of k from an F1 score: F1 = 2m / (k + s) with m found among s named, so
    with no wrong word named (s = m) the count is m = k F1 / (2 - F1); wrong words named lower it."""
    f1 = np.clip(np.asarray(scores, dtype=float), 0.0, 1.0)
    k = np.asarray(parts, dtype=float)
    return np.clip(np.rint(k * f1 / (2.0 - f1)), 0, k).astype(int)


__all__ = ["FOUND_RULE", "RIGHT_AT", "SHARE_RULE", "WHOLE_RULE", "found_levels", "share_levels", "whole_levels"]

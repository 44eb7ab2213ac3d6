"""The published evaluator, step 2 (score), applied literally to a stored `llm_answer`.

Why a module of its own: the `paper` profile exists to reproduce the published numbers, quirks
included, so its rules are written once, as the formats doc section 3 states them, and every
format's paper scorer is built from these helpers only. `llm_answer` is whatever step 1 stored
(``answers.published_parse``) or an imported answer file holds: a list of objects and/or plain
strings, a string, null, ... Every helper returns an empty result when `llm_answer` is not a
list, exactly as published; nothing here re-parses a string.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .text import norm_paper

__all__ = ["TRUE_WORDS", "answer_ids", "checked_ids", "f1", "gold_id", "share", "text_map",
           "truthy_text", "unparsed_error"]

#: `norm` of a true verdict (true_false): anything else, missing included, reads as false.
TRUE_WORDS = frozenset({"true", "vero", "t", "v", "1"})
#: Marks that switch check answers to "only entries marked TRUE/VERO" (no punctuation folding).
_MARKS = frozenset({"TRUE", "FALSE", "VERO", "FALSO"})
_SELECTED = frozenset({"TRUE", "VERO"})


def _id(value: Any) -> str:
    """``str(id).strip().upper()``; a missing id is empty (and so dropped)."""
    return "" if value is None else str(value).strip().upper()


def answer_ids(llm_answer: Any) -> list[str]:
    """Ids in order: an object gives its `id`, a plain string itself; empty ids are dropped."""
    if not isinstance(llm_answer, list):
        return []
    out = []
    for entry in llm_answer:
        if isinstance(entry, dict):
            ident = _id(entry.get("id"))
        elif isinstance(entry, str):
            ident = entry.strip().upper()
        else:
            continue
        if ident:
            out.append(ident)
    return out


def truthy_text(entry: dict, keys: Iterable[str]) -> str:
    """The first truthy value among `keys` (an empty string falls through), else ""."""
    for key in keys:
        value = entry.get(key)
        if value:
            return str(value).strip()
    return ""


def text_map(llm_answer: Any) -> dict[str, str]:
    """id -> text over object entries with a non-empty id: first truthy of text, description."""
    if not isinstance(llm_answer, list):
        return {}
    out: dict[str, str] = {}
    for entry in llm_answer:
        if isinstance(entry, dict):
            ident = _id(entry.get("id"))
            if ident:
                out[ident] = truthy_text(entry, ("text", "description"))
    return out


def checked_ids(llm_answer: Any) -> set[str]:
    """Selected ids of a check answer.

    When any object entry's text (stripped, upper-cased, punctuation kept) is TRUE, FALSE, VERO
    or FALSO, only object entries marked TRUE or VERO count; otherwise every id does.
    """
    if not isinstance(llm_answer, list):
        return set()
    objects = [e for e in llm_answer if isinstance(e, dict)]
    if any(str(e.get("text")).strip().upper() in _MARKS for e in objects):
        return {i for e in objects if str(e.get("text")).strip().upper() in _SELECTED
                for i in [_id(e.get("id"))] if i}
    return set(answer_ids(llm_answer))


def gold_id(gold: list) -> str:
    """The (first) gold id of a single-answer item, "" when there is none."""
    ids = answer_ids(gold)
    return ids[0] if ids else ""


def f1(predicted: set, gold: set) -> float:
    """Both empty -> 1; one empty -> 0; else the usual F1, rounded to 4 decimals."""
    if not predicted and not gold:
        return 1.0
    if not predicted or not gold:
        return 0.0
    overlap = len(predicted & gold)
    if not overlap:
        return 0.0
    precision, recall = overlap / len(predicted), overlap / len(gold)
    return round(2 * precision * recall / (precision + recall), 4)


def share(right: int, total: int) -> float:
    """A share of elements right, rounded to 4 decimals (0 when there is nothing to score)."""
    return round(right / total, 4) if total else 0.0


def norm(value: Any) -> str:
    """The published `norm` (re-exported so format modules need one import)."""
    return norm_paper(value)


def unparsed_error(llm_answer: Any) -> str | None:
    """Why an `llm_answer` gives the helpers nothing to work with, or None when it is a list."""
    if isinstance(llm_answer, list):
        return None if llm_answer else "empty Answers list"
    return "not a JSON Answers list under the published parsing rule"

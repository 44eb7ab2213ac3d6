"""Helpers shared by the format modules: validation bits, strict-profile scoring bits.

Why here: several formats validate id lists or blank markers the same way and score sets or
per-element shares the same way; one copy keeps them consistent. Nothing here knows a format.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

from ..text import letter_id, norm_id, norm_strict
from ..vocab import COMPLETION_OPEN_TYPE

MARKER = re.compile(r"\[([A-Z]{1,2})\]")

TRUE_WORDS = frozenset({"true", "vero", "t", "v", "1"})
FALSE_WORDS = frozenset({"false", "falso", "f", "0"})
VERDICT_MARKS = frozenset({"true", "false", "vero", "falso"})
SELECTED_MARKS = frozenset({"true", "vero"})


# ---------------------------------------------------------------- validation

class Problems:
    """Collects (field path, problem) pairs; validation lists every problem, never stops early."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, path: str, problem: str) -> None:
        self.items.append((path, problem))


def nonempty_str(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())


def is_number(value: Any) -> TypeGuard[int | float]:
    """A finite int or float (booleans are not numbers here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def entry_label(entry: Any, index: int) -> str:
    if isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"]:
        return entry["id"]
    return str(index)


def check_ids(entries: list, name: str, out: Problems) -> list[str]:
    """Every entry is an object with a non-empty string id, ids unique; returns the ids."""
    ids: list[str] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            out.add(f"{name}[{i}]", f"expected an object, got {type(entry).__name__}")
            continue
        ident = entry.get("id")
        if ident is None or (isinstance(ident, str) and not ident.strip()):
            out.add(f"{name}[{i}].id", "missing id")
            continue
        if not isinstance(ident, str):
            out.add(f"{name}[{i}].id", f"id must be a letter, got {ident!r}")
            continue
        if ident in ids:
            out.add(f"{name}[{ident}]", f"duplicate id {ident}")
            continue
        ids.append(ident)
    return ids


def blank_ids(question_text: str | None) -> list[str]:
    """Blank ids in order of first appearance (`"[A] e [B]"` -> `["A", "B"]`); None -> []."""
    if not question_text:
        return []
    seen: dict[str, None] = {}
    for m in MARKER.finditer(question_text):
        seen.setdefault(m.group(1), None)
    return list(seen)


def marker_counts(question_text: str | None) -> dict[str, int]:
    counts: dict[str, int] = {}
    if question_text:
        for m in MARKER.finditer(question_text):
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


def keyed_answers(item_type: str, answers: Any) -> Any:
    """Older completion_open records hold a plain list of strings: key them A, B, ... in order."""
    if item_type == COMPLETION_OPEN_TYPE and isinstance(answers, list) and answers \
            and all(isinstance(a, str) for a in answers):
        return [{"id": letter_id(i), "description": a} for i, a in enumerate(answers)]
    return answers


#: Where a canonical record keeps an older completion_open key as its source wrote it (a plain
#: list of strings), after `keyed_answers` has keyed it A, B, ...: the `paper` profile and the
#: data-issue flag need the published form, which the keyed `answers` no longer show.
PLAIN_KEY_FIELD = "answers_as_strings"


def plain_list_key(record: Mapping[str, Any]) -> list[str] | None:
    """The plain list of strings a completion_open key was written as, or None.

    Either the record's `answers` are still that list, or the canonical record remembers it in
    `PLAIN_KEY_FIELD` and its keyed answers are still those strings in order (a key corrected
    since, by a reviewer, is an object list of its own: then the published form no longer applies).
    """
    if record.get("type") != COMPLETION_OPEN_TYPE:
        return None
    answers = record.get("answers")
    if answers is not None and keyed_answers(COMPLETION_OPEN_TYPE, answers) is not answers:
        return list(answers)
    remembered = record.get(PLAIN_KEY_FIELD)
    if not isinstance(remembered, list) or not isinstance(answers, list):
        return None
    keyed = keyed_answers(COMPLETION_OPEN_TYPE, remembered)
    return list(remembered) if keyed is not remembered and keyed == answers else None


def gold_entries(record: Mapping[str, Any]) -> list[dict]:
    """The gold answer objects of a record (old plain-list variants keyed first)."""
    answers = keyed_answers(str(record.get("type")), record.get("answers"))
    if not isinstance(answers, list):
        return []
    return [a for a in answers if isinstance(a, dict)]


def single_question_text(rec: dict, out: Problems, item_type: str) -> None:
    """Formats without blanks or choices need a question."""
    qt = rec.get("question_text")
    if not nonempty_str(qt):
        out.add("question_text", f"{item_type} needs a question_text")


def single_answer(rec: dict, out: Problems, item_type: str) -> dict | None:
    """The one gold entry of a single-part format, or None with the problem recorded."""
    answers = rec.get("answers") or []  # a list by now: the item check refuses any other answers first
    check_ids(answers, "answers", out)
    if len(answers) != 1:
        out.add("answers", f"{item_type} needs exactly one answer, got {len(answers)}")
        return None
    entry = answers[0]
    return entry if isinstance(entry, dict) else None


def null_choices(rec: dict, out: Problems, item_type: str) -> None:
    if rec.get("choices") not in (None, []):
        out.add("choices", f"{item_type} must have null choices")


def free_answer_entry(rec: dict, out: Problems, item_type: str) -> dict | None:
    """The checks every free-answer format (a question, no choices, one gold entry: numeric, open text)
    starts with; returns the gold entry for the format's own checks, or None with the problems recorded."""
    single_question_text(rec, out, item_type)
    null_choices(rec, out, item_type)
    return single_answer(rec, out, item_type)


# ---------------------------------------------------------------- strict scoring helpers

def entries(values: list) -> list[dict]:
    """Object entries with lower-cased keys (model output varies `ID`/`Text`)."""
    return [{(k.lower() if isinstance(k, str) else k): v for k, v in e.items()}
            for e in values if isinstance(e, dict)]


def entry_text(entry: Mapping[str, Any]) -> Any:
    """A blank's or verdict's predicted text: `text`, else `description`."""
    value = entry.get("text")
    return entry.get("description") if value is None else value


def gold_text(entry: Mapping[str, Any]) -> Any:
    value = entry.get("description")
    return entry.get("text") if value is None else value


def f1(predicted: set, gold: set) -> float:
    if not predicted and not gold:
        return 1.0
    if not predicted or not gold:
        return 0.0
    return 2 * len(predicted & gold) / (len(predicted) + len(gold))


def selection_details(predicted: set[str], gold: set[str]) -> list[dict]:
    return [{"element": ident, "expected": ident in gold, "given": ident in predicted,
             "right": (ident in gold) == (ident in predicted)}
            for ident in sorted(predicted | gold)]


def selected_ids(pred: list[dict], norm: Callable[[Any], str]) -> set[str]:
    """Check answers: when any entry carries a TRUE/FALSE mark, only TRUE/VERO entries count."""
    marked = any(norm(e.get("text")) in VERDICT_MARKS for e in pred)
    return {norm_id(e.get("id")) for e in pred
            if norm_id(e.get("id")) and (not marked or norm(e.get("text")) in SELECTED_MARKS)}


def grouped(pred: list[dict]) -> dict[str, list]:
    """Predicted texts per id; several different texts for one id make that element wrong."""
    out: dict[str, list] = {}
    for e in pred:
        ident = norm_id(e.get("id"))
        if ident:
            out.setdefault(ident, []).append(entry_text(e))
    return out


def verdict(value: Any) -> bool | None:
    word = norm_strict(value)
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


def share(details: list[dict]) -> float:
    return sum(d["right"] for d in details) / len(details) if details else 0.0


def missing_blanks(gold: list[dict]) -> list[dict]:
    """Details of an unparseable answer for per-id formats: every element expected, none given."""
    return [{"element": norm_id(a.get("id")), "expected": gold_text(a), "given": None,
             "right": False} for a in gold]

"""How an item and a scored answer read on a page: one vocabulary per format, on both sides.

Why in the library: the inspector, the model comparison, the report's failure examples, `show` and
the tests must show the same words for the same scorer details. Each answer format has one
`FormatDisplay` in `DISPLAYS` (an explicit registry; unknown formats fall back to the plain
`FormatDisplay`), so "expected" and "given" always use the same words: a true/false statement
reads TRUE/FALSE on both sides, a multiple-choice answer reads "C. option text" on both sides, a
check box reads "selected"/"not selected" on both sides. When the answer-format registry
(`eduart_core.formats`) lands, its `display_rows` can feed `card_rows` without changing callers.

Everything here returns plain data (strings, lists, DataFrames); pages decide how to draw them
and render every string as text (`text.plain`), never as markup.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from .text import norm_id, norm_strict
from .vocab import EDUART_FORMATS

__all__ = ["DISPLAYS", "FormatDisplay", "answer_rows", "answer_summary", "card", "display_for", "mark",
           "neighbours", "profile_marks"]

NOTHING = "—"
#: The gold mark of an option that is (one of) the right choice(s).
CORRECT_OPTION = "correct option"
#: How a per-element result reads (visual mark and word; the page adds colour).
MARKS = {True: "✓ right", False: "✗ wrong", None: ""}
# The words a strict true/false scorer reads as a verdict (display only: the scorer decides).
_TRUE = frozenset({"true", "vero", "t", "v", "1"})
_FALSE = frozenset({"false", "falso", "f", "0"})


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def mark(right: Any) -> str:
    """'✓ right' / '✗ wrong' / '' for a per-element or per-response result."""
    if _missing(right):
        return ""
    return MARKS[bool(right)]


def _ids(record: Mapping[str, Any], key: str) -> list[dict]:
    values = record.get(key)
    return [v for v in values if isinstance(v, dict)] if isinstance(values, list) else []


def _gold_text(entry: Mapping[str, Any]) -> str:
    for key in ("description", "text"):
        value = entry.get(key)
        if value not in (None, ""):
            return str(value)
    return ""


def _gold_entries(record: Mapping[str, Any]) -> list[dict]:
    """Gold answers keyed by id; old plain-list answers are keyed A, B, ... in order."""
    answers = record.get("answers")
    if not isinstance(answers, list):
        return []
    out = []
    for index, a in enumerate(answers):
        if isinstance(a, dict):
            out.append(a)
        elif a is not None:
            out.append({"id": chr(65 + index) if index < 26 else str(index + 1), "description": str(a)})
    return out


class FormatDisplay:
    """The plain display: values shown as written, one card row per gold answer."""

    def card_rows(self, record: Mapping[str, Any]) -> list[dict]:
        """Rows of the item card: ``element`` (id), ``text`` (what the student sees), ``gold``
        (the right answer in this format's words, or "" when this row is not part of it)."""
        return [{"element": norm_id(a.get("id")), "text": "", "gold": _gold_text(a)}
                for a in _gold_entries(record)]

    def extras(self, record: Mapping[str, Any]) -> dict[str, str]:
        """Extra lines of the card (a word bank), as label -> text."""
        return {}

    def value(self, value: Any, record: Mapping[str, Any]) -> str:
        """An expected or given value in this format's words (the same function for both sides)."""
        if _missing(value):
            return NOTHING
        if isinstance(value, list | tuple):
            shown = [self.value(v, record) for v in value]
            return " | ".join(shown) + (" (several answers)" if len(shown) > 1 else "") if shown else NOTHING
        if isinstance(value, bool):
            return "yes" if value else "no"
        return str(value)

    def element(self, element: Any, record: Mapping[str, Any]) -> str:
        return NOTHING if _missing(element) else str(element)

    def summary(self, details: list[dict] | None, record: Mapping[str, Any]) -> str:
        """What the model gave, in one line (from the scorer's details)."""
        parts = []
        for d in details or []:
            given = d.get("given")
            if _missing(given) or given == []:
                continue
            parts.append(f"[{self.element(d.get('element'), record)}] {self.value(given, record)}")
        return "; ".join(parts) or NOTHING


class ChoiceDisplay(FormatDisplay):
    """Options with ids: a value is an option id, shown as "C. option text"."""

    def _labels(self, record: Mapping[str, Any]) -> dict[str, str]:
        return {norm_id(c.get("id")): str(c.get("text") or "") for c in _ids(record, "choices")}

    def card_rows(self, record: Mapping[str, Any]) -> list[dict]:
        gold = {norm_id(a.get("id")) for a in _gold_entries(record)}
        return [{"element": norm_id(c.get("id")), "text": str(c.get("text") or ""),
                 "gold": CORRECT_OPTION if norm_id(c.get("id")) in gold else ""}
                for c in _ids(record, "choices")]

    def option(self, ident: Any, record: Mapping[str, Any]) -> str:
        key = norm_id(ident)
        text = self._labels(record).get(key)
        return f"{key}. {text}" if text else key

    def value(self, value: Any, record: Mapping[str, Any]) -> str:
        if isinstance(value, str) and value.strip():
            return self.option(value, record)
        return super().value(value, record)

    def summary(self, details: list[dict] | None, record: Mapping[str, Any]) -> str:
        given = [d.get("given") for d in details or [] if d.get("element") == "answer"]
        return self.value(given[0], record) if given else NOTHING


class CheckDisplay(ChoiceDisplay):
    """Several options may be right: each option reads "selected" or "not selected" on both sides."""

    def value(self, value: Any, record: Mapping[str, Any]) -> str:
        if isinstance(value, bool):
            return "selected" if value else "not selected"
        return super().value(value, record)

    def element(self, element: Any, record: Mapping[str, Any]) -> str:
        return self.option(element, record) if not _missing(element) else NOTHING

    def summary(self, details: list[dict] | None, record: Mapping[str, Any]) -> str:
        chosen = [self.option(d.get("element"), record) for d in details or [] if d.get("given") is True]
        return ", ".join(chosen) or "nothing selected"


def verdict(value: Any) -> str | None:
    """TRUE / FALSE for anything a scorer reads as a verdict (bools, Vero/Falso, t/f), else None."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    word = norm_strict(value)
    if word in _TRUE:
        return "TRUE"
    if word in _FALSE:
        return "FALSE"
    return None


class TrueFalseDisplay(ChoiceDisplay):
    """Statements judged true or false: expected and given both read TRUE / FALSE."""

    def card_rows(self, record: Mapping[str, Any]) -> list[dict]:
        gold = {norm_id(a.get("id")): verdict(_gold_text(a)) or _gold_text(a) for a in _gold_entries(record)}
        return [{"element": norm_id(c.get("id")), "text": str(c.get("text") or ""),
                 "gold": gold.get(norm_id(c.get("id")), "")} for c in _ids(record, "choices")]

    def value(self, value: Any, record: Mapping[str, Any]) -> str:
        if _missing(value):
            return NOTHING
        if isinstance(value, list | tuple):
            return FormatDisplay.value(self, value, record)
        word = verdict(value)
        return word if word else f"unreadable ({value!s})"

    def element(self, element: Any, record: Mapping[str, Any]) -> str:
        return NOTHING if _missing(element) else norm_id(element)

    def summary(self, details: list[dict] | None, record: Mapping[str, Any]) -> str:
        return ", ".join(f"{self.element(d.get('element'), record)} {self.value(d.get('given'), record)}"
                         for d in details or []) or NOTHING


class BlankDisplay(FormatDisplay):
    """Blanks [A], [B], ...: a value is the term written in the blank."""

    def card_rows(self, record: Mapping[str, Any]) -> list[dict]:
        options = {norm_id(c.get("id")): " / ".join(str(o) for o in c.get("options") or [])
                   for c in _ids(record, "choices")}
        return [{"element": norm_id(a.get("id")), "text": options.get(norm_id(a.get("id")), ""),
                 "gold": _gold_text(a)} for a in _gold_entries(record)]

    def extras(self, record: Mapping[str, Any]) -> dict[str, str]:
        choices = record.get("choices")
        if isinstance(choices, list) and choices and all(not isinstance(c, dict) for c in choices):
            return {"Word bank": ", ".join(str(c) for c in choices)}
        return {}


class SelectErrorsDisplay(FormatDisplay):
    """Errors in a passage: a value is a word of the passage; "extra" rows are spans that are no error."""

    def card_rows(self, record: Mapping[str, Any]) -> list[dict]:
        return [{"element": str(a.get("error") or ""), "text": str(a.get("error") or ""),
                 "gold": f"error, correct: {a.get('correct') or NOTHING}"} for a in _gold_entries(record)]

    def value(self, value: Any, record: Mapping[str, Any]) -> str:
        return NOTHING if _missing(value) else super().value(value, record)

    def element(self, element: Any, record: Mapping[str, Any]) -> str:
        return "not an error" if element == "extra" else super().element(element, record)

    def summary(self, details: list[dict] | None, record: Mapping[str, Any]) -> str:
        found = [self.value(d.get("given"), record) for d in details or [] if not _missing(d.get("given"))]
        return ", ".join(found) or "no error marked"


_DEFAULT = FormatDisplay()
_RADIO, _CHECK, _TRUE_FALSE, _POSITIONING, _CLOSED, _OPEN, _ERRORS = EDUART_FORMATS  # published order
#: One display per answer format (explicit registry; a new format adds one line, an unknown
#: format falls back to the plain display).
DISPLAYS: dict[str, FormatDisplay] = {
    _RADIO: ChoiceDisplay(),
    _CHECK: CheckDisplay(),
    _TRUE_FALSE: TrueFalseDisplay(),
    _POSITIONING: BlankDisplay(),
    _CLOSED: BlankDisplay(),
    _OPEN: BlankDisplay(),
    _ERRORS: SelectErrorsDisplay(),
}


def display_for(record: Mapping[str, Any] | None) -> FormatDisplay:
    """The display of a record's format (the plain display for an unknown format)."""
    return DISPLAYS.get(str((record or {}).get("type")), _DEFAULT)


def card(record: Mapping[str, Any] | None) -> dict:
    """What the item card shows, as plain data: title, instructions, text, rows, extras, gold."""
    record = record or {}
    shown = display_for(record)
    rows = shown.card_rows(record)
    return {"type": record.get("type"), "question_title": record.get("question_title"),
            "instructions": record.get("instructions"), "question_text": record.get("question_text"),
            "source": record.get("source"), "rows": rows, "extras": shown.extras(record),
            "gold": "; ".join(_gold_words(r) for r in rows if r.get("gold"))}


def _gold_words(row: dict) -> str:
    """One card row's key in a line: 'B. option text' for a right option, 'A: term' otherwise."""
    if row["gold"] == CORRECT_OPTION:
        return f"{row['element']}. {row['text']}" if row["text"] else str(row["element"])
    return f"{row['element']}: {row['gold']}" if row["element"] else str(row["gold"])


def _frame_of(details: Any) -> list[dict]:
    return [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []


def answer_rows(details: list | None, record: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Per-element marks of one scored response (mark, element, expected, given), in the format's words."""
    record = record or {}
    shown = display_for(record)
    rows = [{"mark": mark(d.get("right")), "element": shown.element(d.get("element"), record),
             "expected": shown.value(d.get("expected"), record), "given": shown.value(d.get("given"), record)}
            for d in _frame_of(details)]
    return pd.DataFrame(rows, columns=["mark", "element", "expected", "given"])


def answer_summary(details: list | None, record: Mapping[str, Any] | None = None) -> str:
    """What the model answered, in one line of the format's words."""
    record = record or {}
    return display_for(record).summary(_frame_of(details), record)


def profile_marks(details_by_profile: Mapping[str, Any], record: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Both profiles side by side: element, expected, then per profile the given value and its mark.

    The profiles may read a response differently (the published parser rejects what the strict one
    repairs), so each profile keeps its own "given" column; rows are matched by element.
    """
    record = record or {}
    shown = display_for(record)
    table: dict[str, dict] = {}
    for profile, details in details_by_profile.items():
        for d in _frame_of(details):
            element = shown.element(d.get("element"), record)
            key = element if element != "not an error" else f"{element}: {shown.value(d.get('given'), record)}"
            row = table.setdefault(key, {"element": element, "expected": shown.value(d.get("expected"), record)})
            row[f"given ({profile})"] = shown.value(d.get("given"), record)
            row[profile] = mark(d.get("right"))
    columns = ["element", "expected"]
    for profile in details_by_profile:
        columns += [f"given ({profile})", profile]
    frame = pd.DataFrame(list(table.values()), columns=columns)
    return frame.fillna("")


def neighbours(ids: list[str], current: str) -> tuple[str | None, str | None]:
    """Previous and next id around ``current`` in a list (None at the ends)."""
    if current not in ids:
        return None, (ids[0] if ids else None)
    i = ids.index(current)
    return (ids[i - 1] if i > 0 else None), (ids[i + 1] if i + 1 < len(ids) else None)

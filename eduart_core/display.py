"""How an item and a scored answer read on a page: one vocabulary per format, on both sides.

Why in the library: the inspector, the model comparison, the report's failure examples, `show` and
the tests must show the same words for the same scorer details. Each answer format has one
`FormatDisplay` in `DISPLAYS` (an explicit registry; unknown formats fall back to the plain
`FormatDisplay`), so "expected" and "given" always use the same words: a true/false statement
reads TRUE/FALSE on both sides, a multiple-choice answer reads "C. option text" on both sides, a
check box reads "selected"/"not selected" on both sides. The rows of the item card come from the
answer-format registry (`formats.display_item`); this module only puts its key into words.

Everything here returns plain data (strings, lists, DataFrames); pages decide how to draw them
and render every string as text (`text.plain`), never as markup.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from .formats import display_item
from .text import norm_id, norm_strict
from .vocab import (
    CHECK_TYPE,
    COMPLETION_CLOSED_TYPE,
    COMPLETION_OPEN_TYPE,
    MCQ_TYPE,
    POSITIONING_TYPE,
    SELECT_ERRORS_TYPE,
    TRUE_FALSE_TYPE,
)

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


class FormatDisplay:
    """The plain display: values shown as written, one card row per gold answer."""

    def gold_word(self, gold: Any) -> str:
        """The key of one card row (``formats.display_item``) in this format's words; "" when the
        row is not part of the answer (an option that is not the right one)."""
        if gold is True:
            return CORRECT_OPTION
        if gold is False or _missing(gold):
            return ""
        return str(gold)

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

    def gold_word(self, gold: Any) -> str:
        return "" if _missing(gold) else (verdict(gold) or str(gold))

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

    """(The card rows and the word bank come from the format registry as they are.)"""


class SelectErrorsDisplay(FormatDisplay):
    """Errors in a passage: a value is a word of the passage; "extra" rows are spans that are no error."""

    def gold_word(self, gold: Any) -> str:
        return f"error, correct: {NOTHING if _missing(gold) or gold == '' else gold}"

    def value(self, value: Any, record: Mapping[str, Any]) -> str:
        return NOTHING if _missing(value) else super().value(value, record)

    def element(self, element: Any, record: Mapping[str, Any]) -> str:
        return "not an error" if element == "extra" else super().element(element, record)

    def summary(self, details: list[dict] | None, record: Mapping[str, Any]) -> str:
        found = [self.value(d.get("given"), record) for d in details or [] if not _missing(d.get("given"))]
        return ", ".join(found) or "no error marked"


_DEFAULT = FormatDisplay()
#: One display per answer format (explicit registry; a new format adds one line, an unknown
#: format, like numeric, multi-part or open text for now, reads values as written).
DISPLAYS: dict[str, FormatDisplay] = {
    MCQ_TYPE: ChoiceDisplay(),
    CHECK_TYPE: CheckDisplay(),
    TRUE_FALSE_TYPE: TrueFalseDisplay(),
    POSITIONING_TYPE: BlankDisplay(),
    COMPLETION_CLOSED_TYPE: BlankDisplay(),
    COMPLETION_OPEN_TYPE: BlankDisplay(),
    SELECT_ERRORS_TYPE: SelectErrorsDisplay(),
}


def display_for(record: Mapping[str, Any] | None) -> FormatDisplay:
    """The display of a record's format (the plain display for an unknown format)."""
    return DISPLAYS.get(str((record or {}).get("type")), _DEFAULT)


def card(record: Mapping[str, Any] | None) -> dict:
    """What the item card shows, as plain data: title, instructions, text, rows, extras, gold.

    Rows are the format registry's (`formats.display_item`: one per option, statement, blank,
    part or error) with the key put into words: "correct option", TRUE/FALSE, the term, the
    correction. ``extras`` holds the word bank of a positioning item; ``chance`` the chance level.
    """
    record = record or {}
    shown = display_for(record)
    item = display_item(record)
    rows = []
    for row in item["rows"]:
        element = "" if _missing(row.get("element")) else str(row.get("element"))
        if row.get("label"):
            element = f"{element} ({row['label']})" if element else str(row["label"])
        rows.append({"element": element, "text": "" if _missing(row.get("text")) else str(row.get("text")),
                     "gold": shown.gold_word(row.get("gold"))})
    extras = {"Word bank": ", ".join(item["word_bank"])} if item.get("word_bank") else {}
    return {"type": record.get("type"), "question_title": record.get("question_title"),
            "instructions": record.get("instructions"), "question_text": record.get("question_text"),
            "source": record.get("source"), "rows": rows, "extras": extras, "chance": item.get("chance"),
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

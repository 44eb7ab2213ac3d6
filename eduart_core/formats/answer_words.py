"""How a format's key and a scored answer read in words: one vocabulary per format, on both sides.

Why here, beside the formats: the inspector, the model comparison, the report's failure examples and
`show` must show the same words for the same scorer details, and a format's words are part of the
format (`AnswerFormat.answer_words`), so a new format brings its own. "Expected" and "given" use the
same words: a true/false statement reads TRUE/FALSE on both sides, a multiple-choice answer reads
"C. option text" on both sides, a check box reads "selected"/"not selected" on both sides; a format
without words of its own reads values as written (`FormatDisplay`). Plain strings only: pages render
them as text, never as markup.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..text import norm_id, norm_strict

__all__ = ["CORRECT_OPTION", "NOTHING", "BlankDisplay", "CheckDisplay", "ChoiceDisplay", "FormatDisplay",
           "SelectErrorsDisplay", "TrueFalseDisplay", "verdict"]

NOTHING = "—"
#: The gold mark of an option that is (one of) the right choice(s).
CORRECT_OPTION = "correct option"
# The words a strict true/false scorer reads as a verdict (display only: the scorer decides).
_TRUE = frozenset({"true", "vero", "t", "v", "1"})
_FALSE = frozenset({"false", "falso", "f", "0"})


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


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

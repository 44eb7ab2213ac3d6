"""numeric: the answer is one number (object counts and the like), right within a tolerance.

Record: `answers: [{"id": "A", "value": 7, "tolerance": 0}]` (absolute tolerance, default 0),
`choices` null. The reply's text must name exactly one number (`numbers.parse_number`). Score 1
when |predicted - value| <= tolerance, else 0; details keep the predicted value and the absolute
error, from which analysis derives the mean absolute error and the off-by-one rate.

Single-part: a reply without parsable JSON is read as the answer text itself. Under `paper`
(no published EduArt rule exists for this format) the published step-1 output is read the same
way: the text of the gold id's entry, or the unparsed string itself.
"""
from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import eduart_core.formats.common as common

from .. import paper
from ..text import norm_id
from ..vocab import NUMERIC_TYPE
from .base import TEXT_CHECK, AnswerFormat, ScoringOptions, StrictInput
from .common import Problems
from .numbers import parse_number

#: The chance model answers a uniform whole number in this range (the number words' range).
CHANCE_RANGE = (0, 20)
_TOLERANCE_EPS = 1e-9

EDITOR = {
    "format": NUMERIC_TYPE,
    "fields": [
        {"path": "question_text", "widget": "textarea", "label": "Question", "required": True},
        {"path": "answers[0].value", "widget": "number", "label": "Correct value", "required": True},
        {"path": "answers[0].tolerance", "widget": "number", "label": "Tolerance (absolute, 0 = exact)",
         "min": 0, "default": 0},
    ],
}


def _gold(gold: list[dict]) -> tuple[str, float | None, float]:
    entry = gold[0] if gold else {}
    value = entry.get("value")
    tolerance = entry.get("tolerance")
    return (norm_id(entry.get("id")) or "A",
            float(value) if common.is_number(value) else None,
            float(tolerance) if common.is_number(tolerance) else 0.0)


def judge(text: Any, gold: list[dict]) -> tuple[float, dict, str | None]:
    """Score one answer text against the numeric gold; (score, detail, parse error)."""
    ident, value, tolerance = _gold(gold)
    predicted = parse_number(text)
    detail = {"element": ident, "expected": value, "tolerance": tolerance, "given": text,
              "predicted": predicted, "abs_error": None, "right": False}
    if predicted is None:
        why = "no answer text" if text in (None, "") else "the answer does not name exactly one number"
        return 0.0, detail, why
    if value is None:
        return 0.0, detail, None
    error = abs(predicted - value)
    detail["abs_error"] = error
    detail["right"] = error <= tolerance + _TOLERANCE_EPS
    return float(detail["right"]), detail, None


#: How a simulated study respondent writes small counts in words.
_STUDY_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


class Numeric(AnswerFormat):
    name = NUMERIC_TYPE
    answer_check = TEXT_CHECK

    def reads_answer(self, text: str) -> bool:
        """A count is read when its text names exactly one number (the scorer's own reading rule)."""
        return parse_number(text) is not None
    single_part = True
    editor = EDITOR
    respondent = {"path": "answers[0].value", "widget": "number", "label": "Your answer (a number)"}

    def validate(self, rec: dict, out: Problems) -> None:
        entry = common.free_answer_entry(rec, out, self.name)
        if entry is None:
            return
        if not common.is_number(entry.get("value")):
            out.add(f"answers[{common.entry_label(entry, 0)}].value",
                    f"value must be a number, got {entry.get('value')!r}")
        tolerance = entry.get("tolerance")
        if tolerance is not None and (not common.is_number(tolerance) or tolerance < 0):
            out.add(f"answers[{common.entry_label(entry, 0)}].tolerance",
                    f"tolerance must be a number >= 0, got {tolerance!r}")

    def score_strict(self, record, gold, given: StrictInput, options: ScoringOptions):
        ident = _gold(gold)[0]
        if given.entries is None:
            score, detail, _ = judge(None, gold)
            return score, [detail], given.error
        if given.free_form:
            text = given.entries[0].get("text")
        else:
            said = common.grouped(given.entries).get(ident, [])
            values = {parse_number(s) for s in said}
            if len(said) > 1 and len(values) > 1:
                score, detail, _ = judge(None, gold)
                detail["given"] = said
                return score, [detail], None
            text = said[0] if said else None
        score, detail, why = judge(text, gold)
        return score, [detail], why if text is None or detail["predicted"] is None else None

    def score_paper(self, record, gold, llm, options: ScoringOptions):
        ident = _gold(gold)[0]
        text: str | None
        if isinstance(llm, str):
            text = llm
        else:
            text = paper.text_map(llm).get(ident) or None
        score, detail, why = judge(text, gold)
        return score, [detail], why

    def chance(self, record: Mapping[str, Any]) -> float | None:
        _, value, tolerance = _gold(self.gold(record))
        if value is None:
            return None
        low, high = CHANCE_RANGE
        hits = sum(1 for n in range(low, high + 1) if abs(n - value) <= tolerance + _TOLERANCE_EPS)
        return hits / (high - low + 1)

    def chance_answer(self, record: Mapping[str, Any], rng: random.Random) -> list[dict]:
        ident = _gold(self.gold(record))[0]
        return [{"id": ident, "text": str(rng.randint(*CHANCE_RANGE))}]

    def display_rows(self, record: Mapping[str, Any]) -> list[dict]:
        ident, value, tolerance = _gold(self.gold(record))
        gold = "" if value is None else f"{value:g}" + (f" ± {tolerance:g}" if tolerance else "")
        return [{"element": ident, "text": "", "gold": gold}]

    def study_answer(self, record: Mapping[str, Any], p: float, model: Any,
                     rng: random.Random) -> tuple[list[dict], bool] | None:
        """A count: right with probability p, else off by one (the usual slip) or further; digits or a word."""
        gold = int((record.get("answers") or [{}])[0].get("value") or 0)
        value = gold
        if rng.random() >= p:
            step = 1 if rng.random() < 0.5 + 0.15 * model.lure else rng.choice((2, 3))
            value = max(0, gold + step if rng.random() < 0.5 or gold - step < 0 else gold - step)
        text = _STUDY_WORDS[value] if value < len(_STUDY_WORDS) and rng.random() < 0.3 else str(value)
        return [{"id": "A", "text": text}], value == gold

    def study_invalid(self, record: Mapping[str, Any]) -> str | None:
        """Two numbers: no single count to read."""
        return "Maybe two or three, it is hard to count."


FORMAT = Numeric()

"""select_errors: a passage with wrong words; the model names them, scored by F1 of errors found."""
from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import eduart_core.formats.common as common

from .. import paper
from ..text import norm_strict
from ..vocab import SELECT_ERRORS_TYPE
from .answer_words import SelectErrorsDisplay
from .base import AnswerFormat, ScoringOptions, StrictInput
from .blanks import passage_words
from .common import Problems
from .levels import FOUND_RULE, found_levels
from .simulation import PRODUCTION, widen


def _span_target(span: str, golds: list[str]) -> str | None:
    """The gold error a predicted span stands for, under the span rule, or None."""
    if span in golds:
        return span
    padded = f" {span} "
    inside = [g for g in golds if f" {g} " in padded]
    if len(inside) != 1:
        return None
    if len(span.split()) - len(inside[0].split()) > 3:
        return None
    return inside[0]


class SelectErrors(AnswerFormat):
    name = SELECT_ERRORS_TYPE
    profile_rules = ("Strict matches a predicted span to the error it contains; paper compares exact strings "
                     "and treats an unparseable response as one long prediction.")
    site = {"body": "words", "key": "errors"}
    sim_difficulty = 1.6
    sim_skill = PRODUCTION
    synthetic_parts = 4
    synthetic_shift = -0.6
    sim_reasons = "errors"
    sim_topic = {"it": "gli errori presenti nel testo", "en": "the errors in the passage"}
    answer_words = SelectErrorsDisplay()
    entry_word = "error"
    #: the review page's editor: which widget edits each field (plain data, see extraction.editors)
    editor = {"format": SELECT_ERRORS_TYPE, "fields": [
        {"path": "question_text", "widget": "textarea", "label": "Passage with the errors"},
        {"path": "answers", "widget": "error_rows", "label": "Errors and corrections"},
    ]}
    level_rule = FOUND_RULE
    partial_credit = True
    respondent = {"fields": {"text": "error", "correct": "correct"}, "rows": 4, "row": {"error": "", "correct": ""}}

    def score_parts(self, record: Mapping[str, Any]) -> int:
        """Each error to find earns credit on its own."""
        return max(1, len({norm_strict(a.get("error")) for a in self.gold(record)} - {""}))

    def score_levels(self, scores, parts):
        return found_levels(scores, parts)

    def validate(self, rec: dict, out: Problems) -> None:
        qt, answers = rec["question_text"], rec["answers"]
        if not common.nonempty_str(qt):
            out.add("question_text", "select_errors needs the passage in question_text")
        if rec["choices"] not in (None, []):
            out.add("choices", "select_errors must have null choices")
        if not answers:
            out.add("answers", "select_errors needs at least one error")
        passage = f" {norm_strict(qt)} " if isinstance(qt, str) else None
        seen: set[str] = set()
        for i, a in enumerate(answers):
            if not isinstance(a, dict):
                out.add(f"answers[{i}]", f"expected an object, got {type(a).__name__}")
                continue
            error = a.get("error")
            if not common.nonempty_str(error):
                out.add(f"answers[{i}].error", "missing error text")
                continue
            key = norm_strict(error)
            if key in seen:
                out.add(f"answers[{i}].error", f"duplicate error {error!r}")
            seen.add(key)
            if passage is not None and f" {key} " not in passage:
                out.add(f"answers[{i}].error", f"error {error!r} does not occur in question_text")
            if "correct" in a and a["correct"] is not None and not isinstance(a["correct"], str):
                out.add(f"answers[{i}].correct", "correction must be a string")

    def entry_schema(self, record: Mapping[str, Any] | None = None) -> dict:
        return {"type": "object", "properties": {"text": {"type": "string"}, "correct": {"type": "string"}},
                "required": ["text"]}

    def score_strict(self, record, gold, given: StrictInput, options: ScoringOptions):
        if given.entries is None:
            return 0.0, [{"element": a.get("error"), "expected": a.get("error"), "given": None, "right": False}
                         for a in gold], given.error
        golds = sorted({norm_strict(a.get("error")) for a in gold} - {""})
        spans: dict[str, Any] = {}
        for e in given.entries:
            value = e.get("text")
            if value is None:
                value = e.get("error")
            if value is None:
                value = e.get("description")
            form = norm_strict(value)
            if form:
                spans.setdefault(form, value)
        matched: dict[str, Any] = {}  # gold -> the first span that found it
        extra: list[Any] = []
        for form, original in spans.items():
            target = _span_target(form, golds)
            if target is not None and target not in matched:
                matched[target] = original
            else:
                extra.append(original)
        details = [{"element": g, "expected": g, "given": matched.get(g), "right": g in matched}
                   for g in golds]
        details += [{"element": "extra", "expected": None, "given": x, "right": False} for x in extra]
        if not golds and not spans:
            return 1.0, details, None
        if not golds or not spans:
            return 0.0, details, None
        return 2 * len(matched) / (len(golds) + len(spans)), details, None

    def score_paper(self, record, gold, llm, options: ScoringOptions):
        """F1 of normalised errors: a list gives one per object entry, a string is one prediction."""
        gold_set = {paper.norm(a.get("error")) for a in gold if a.get("error")}
        if isinstance(llm, list):
            predicted = {paper.norm(paper.truthy_text(e, ("text", "error", "description")))
                         for e in llm if isinstance(e, dict)}
        elif isinstance(llm, str):
            predicted = {paper.norm(llm)}
        else:
            predicted = set()
        details = [{"element": g, "expected": g, "given": g if g in predicted else None,
                    "right": g in predicted} for g in sorted(gold_set)]
        details += [{"element": "extra", "expected": None, "given": p, "right": False}
                    for p in sorted(predicted - gold_set)]
        return paper.f1(predicted, gold_set), details, self.paper_error(llm)

    def chance_answer(self, record: Mapping[str, Any], rng: random.Random) -> list[dict]:
        words = passage_words(record)
        n = max(1, len(record.get("answers") or []))
        return [{"text": w} for w in rng.sample(words, min(n, len(words)))]

    def display_rows(self, record: Mapping[str, Any]) -> list[dict]:
        return [{"element": a.get("error"), "text": a.get("error") or "", "gold": a.get("correct")}
                for a in self.gold(record)]

    def gold_summary(self, record: Mapping[str, Any]) -> str:
        return "; ".join(f"{a.get('error')} -> {a.get('correct')}" for a in self.gold(record))

    def screenshot_lines(self, record: Mapping[str, Any]) -> list[str]:
        return ["Sottolinea le parole errate e scrivi la correzione."]

    def sim_plan(self, record: Mapping[str, Any]) -> dict:
        return {"errors": [str(a.get("error", "")) for a in record.get("answers") or []]}

    def simulate_answers(self, plan: Any, p: float, draws: Any, model: Any, shared: random.Random) -> list[dict]:
        """The errors known (sometimes with the word before), plausible wrong spans otherwise."""
        spans: list[str] = []
        for error in plan.errors:
            u, w, g = draws.next()
            if u < p:
                spans.append(widen(error, plan.passage) if g < 0.1 else error)
            elif g < 0.5 and plan.passage_words:
                spans.append(plan.passage_words[int(w * len(plan.passage_words)) % len(plan.passage_words)])
        if not spans and plan.passage_words:  # models rarely answer with nothing
            spans.append(plan.passage_words[int(shared.random() * len(plan.passage_words)) % len(plan.passage_words)])
        seen: list[str] = []
        for s in spans:
            if s not in seen:
                seen.append(s)
        return [{"id": chr(65 + i), "text": s} for i, s in enumerate(seen)]

    def placeholder(self, tag: str, rng: random.Random) -> dict:
        errors = [f"mistake{tag}a", f"mistake{tag}b"]
        text = (f"Synthetic passage {tag} describes a placeholder painting: the {errors[0]} stands "
                f"beside a column, while the {errors[1]} closes the scene under a golden arch.")
        return {"question_text": text, "choices": None,
                "answers": [{"error": e, "correct": f"fix{tag}{e[-1]}"} for e in errors]}


FORMAT = SelectErrors()

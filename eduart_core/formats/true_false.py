"""true_false: a verdict per statement; scored by the share of statements judged right."""
from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import eduart_core.formats.common as common

from .. import paper
from ..text import norm_id, norm_strict
from ..vocab import TRUE_FALSE_TYPE
from .answer_words import TrueFalseDisplay
from .base import ScoringOptions, StrictInput
from .choices import ChoiceFormat
from .common import Problems
from .levels import SHARE_RULE, share_levels
from .simulation import RECOGNITION, letters


def verdict_text(value: Any) -> Any:
    """Vero/Falso/true/false/booleans -> "True"/"False"; anything else is left for validation."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        word = norm_strict(value)
        if word in ("true", "vero"):
            return "True"
        if word in ("false", "falso"):
            return "False"
    return value


class TrueFalse(ChoiceFormat):
    name = TRUE_FALSE_TYPE
    profile_rules = ("Paper credits the statements whose answer is False when the response cannot be parsed; "
                     "strict gives no credit for an unreadable answer.")
    site = {"body": "statements", "key": "statements"}
    sim_difficulty = -0.1
    sim_skill = RECOGNITION
    synthetic_shift = 0.3
    sim_reasons = "verdict"
    sim_topic = {"it": "la verità di ciascuna affermazione", "en": "the truth of each statement"}
    answer_words = TrueFalseDisplay()
    row_word = key_word = "statement"
    #: the review page's editor: which widget edits each field (plain data, see extraction.editors)
    editor = {"format": TRUE_FALSE_TYPE, "fields": [
        {"path": "choices", "widget": "option_rows", "label": "Statements"},
        {"path": "answers", "widget": "statement_verdicts", "label": "True or false"},
        {"path": "answers[*].text", "widget": "verdict", "label": "True or false"},
    ]}
    word = "statement"
    level_rule = SHARE_RULE.format(k="k", parts="statements")
    partial_credit = True
    respondent = {"fields": {"id": "id", "text": "text"}}

    def score_parts(self, record: Mapping[str, Any]) -> int:
        """Each statement's verdict earns credit on its own."""
        return max(1, len(self.gold(record)))

    def score_levels(self, scores, parts):
        return share_levels(scores, parts)

    def key_line(self, entry: Mapping[str, Any]) -> str:
        """``A: True``: each statement's verdict."""
        text = entry.get("text")
        return f"{entry.get('id')}: {'' if text is None else text}"

    def normalise(self, record: dict) -> dict:
        answers = record.get("answers")
        if isinstance(answers, list):
            record["answers"] = [{**a, "text": verdict_text(a["text"])}
                                 if isinstance(a, dict) and "text" in a else a for a in answers]
        return record

    def validate_against_choices(self, answers, choice_ids, answer_ids, out: Problems) -> None:
        for i, a in enumerate(answers):
            if isinstance(a, dict) and a.get("text") not in ("True", "False"):
                out.add(f"answers[{common.entry_label(a, i)}].text",
                        f"verdict must be True/False (or Vero/Falso), got {a.get('text')!r}")
        for ident in choice_ids:
            if ident not in answer_ids:
                out.add(f"answers[{ident}]", f"statement {ident} has no verdict")

    def score_strict(self, record, gold, given: StrictInput, options: ScoringOptions):
        if given.entries is None:
            return 0.0, [{"element": norm_id(a.get("id")), "expected": common.verdict(a.get("text")),
                          "given": None, "right": False} for a in gold], given.error
        by_id = common.grouped(given.entries)
        details = []
        for a in gold:
            ident = norm_id(a.get("id"))
            expected = common.verdict(a.get("text"))
            said = by_id.get(ident, [])
            verdicts = {common.verdict(s) for s in said}
            verdict = verdicts.pop() if len(verdicts) == 1 else None
            details.append({"element": ident, "expected": expected,
                            "given": said[0] if len(said) == 1 else (said or None),
                            "right": expected is not None and verdict == expected})
        return common.share(details), details, None

    def score_paper(self, record, gold, llm, options: ScoringOptions):
        """Share of gold statements whose truth is matched; missing or unrecognised reads false."""
        given = paper.text_map(llm)
        details: list[dict[str, Any]] = []
        for ident, gold_text in paper.text_map(gold).items():
            expected = paper.norm(gold_text) in paper.TRUE_WORDS
            said = given.get(ident)
            verdict = paper.norm(said or "") in paper.TRUE_WORDS
            details.append({"element": ident, "expected": expected, "given": said,
                            "right": verdict == expected})
        return paper.share(sum(d["right"] for d in details), len(details)), details, self.paper_error(llm)

    def chance(self, record: Mapping[str, Any]) -> float | None:
        return 0.5 if self.gold(record) else None

    def chance_answer(self, record: Mapping[str, Any], rng: random.Random) -> list[dict]:
        return [{"id": c["id"], "text": rng.choice(["TRUE", "FALSE"])} for c in record.get("choices") or []]

    def display_rows(self, record: Mapping[str, Any]) -> list[dict]:
        verdicts = {norm_id(a.get("id")): a.get("text") for a in self.gold(record)}
        return [{"element": norm_id(c.get("id")), "text": c.get("text") or "",
                 "gold": verdicts.get(norm_id(c.get("id")))}
                for c in record.get("choices") or [] if isinstance(c, dict)]

    def gold_summary(self, record: Mapping[str, Any]) -> str:
        return ", ".join(f"{r['element']} {r['gold']}" for r in self.display_rows(record))

    def screenshot_lines(self, record: Mapping[str, Any]) -> list[str]:
        return [f"{c.get('id')}. {c.get('text')}      V   F" for c in record.get("choices") or [] if isinstance(c, dict)]

    def sim_plan(self, record: Mapping[str, Any]) -> dict:
        truth = {str(a["id"]).strip().upper(): str(a.get("text", "")).strip().lower() in ("true", "vero")
                 for a in record.get("answers") or []}
        return {"statements": [(str(c["id"]).strip().upper(), truth.get(str(c["id"]).strip().upper(), False))
                               for c in record.get("choices") or []]}

    def simulate_answers(self, plan: Any, p: float, draws: Any, model: Any, shared: random.Random) -> list[dict]:
        """Each statement judged right when known, else by a coin."""
        out = []
        for sid, truth in plan.statements:
            u, _, g = draws.next()
            verdict = truth if u < p else g < 0.5
            out.append({"id": sid, "text": "TRUE" if verdict else "FALSE"})
        return out

    def placeholder(self, tag: str, rng: random.Random) -> dict:
        ids = letters(4)
        return {"question_text": f"Synthetic item {tag}: judge each placeholder statement.",
                "choices": [{"id": i, "text": f"Synthetic statement {i} of item {tag}."} for i in ids],
                "answers": [{"id": i, "text": "True" if rng.random() < 0.5 else "False"} for i in ids]}


FORMAT = TrueFalse()

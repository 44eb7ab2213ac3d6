"""multiple_choice_radio: exactly one option is right (options may be image boxes or images)."""
from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

from .. import paper
from ..text import norm_id
from ..vocab import MCQ_TYPE
from .answer_words import ChoiceDisplay
from .base import OPTION_CHECK, ScoringOptions, StrictInput
from .choices import ChoiceFormat
from .common import Problems
from .simulation import RECOGNITION, choice_placeholder, letters, option_plan


def strict_radio(gold: list[dict], pred: list[dict]) -> tuple[float, list[dict]]:
    """Strict gives the point only when the gold id is the one id given."""
    expected = norm_id(gold[0].get("id")) if gold else ""
    given = sorted({norm_id(e.get("id")) for e in pred} - {""})
    right = bool(expected) and given == [expected]
    return float(right), [{"element": "answer", "expected": expected, "given": given, "right": right}]


class Radio(ChoiceFormat):
    name = MCQ_TYPE
    profile_rules = ("Paper gives the point when the right option is one of several selected; "
                     "strict requires exactly the right option.")
    site = {"body": "choices", "input": "radio", "key": "options", "label": "Right answer"}
    sim_difficulty = -1.3
    sim_skill = RECOGNITION
    synthetic_shift = 1.2
    answer_check = OPTION_CHECK
    answer_words = ChoiceDisplay()
    #: the review page's editor: which widget edits each field (plain data, see extraction.editors)
    editor = {"format": MCQ_TYPE, "fields": [
        {"path": "choices", "widget": "option_rows", "label": "Options"},
        {"path": "answers", "widget": "single_key", "label": "Answer key"},
    ]}
    visual = True
    respondent = {"fields": {"id": "id"}, "label": "Your answer"}

    def validate_answers(self, rec: dict, answers: list, out: Problems) -> None:
        if len(answers) != 1:
            out.add("answers", f"multiple_choice_radio needs exactly one answer, got {len(answers)}")

    def entry_schema(self, record: Mapping[str, Any] | None = None) -> dict:
        return {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}

    def score_strict(self, record, gold, given: StrictInput, options: ScoringOptions):
        if given.entries is None:
            expected = norm_id(gold[0].get("id")) if gold else ""
            return 0.0, [{"element": "answer", "expected": expected, "given": None, "right": False}], given.error
        score, details = strict_radio(gold, given.entries)
        return score, details, None

    def score_paper(self, record, gold, llm, options: ScoringOptions):
        """1 when the (first) gold id is among the ids given: several options still earn 1."""
        expected = paper.gold_id(gold)
        given = sorted(set(paper.answer_ids(llm)))
        right = bool(expected) and expected in given
        return float(right), [{"element": "answer", "expected": expected,
                               "given": given if isinstance(llm, list) else None, "right": right}], \
            self.paper_error(llm)

    def chance(self, record: Mapping[str, Any]) -> float | None:
        choices = [c for c in record.get("choices") or [] if isinstance(c, dict)]
        return 1 / len(choices) if choices else None

    def chance_answer(self, record: Mapping[str, Any], rng: random.Random) -> list[dict]:
        choices = record.get("choices") or []
        return [{"id": rng.choice(choices)["id"]}] if choices else []

    def screenshot_lines(self, record: Mapping[str, Any]) -> list[str]:
        return [f"○  {c.get('id')}. {c.get('text')}" for c in record.get("choices") or [] if isinstance(c, dict)]

    def sim_plan(self, record: Mapping[str, Any]) -> dict:
        return option_plan(record)

    def simulate_answers(self, plan: Any, p: float, draws: Any, model: Any, shared: random.Random) -> list[dict]:
        """One option: the right one when known, else a random one; a hedging model adds a second id."""
        u, w, g = draws.next()
        ids = plan.option_ids or ["A"]
        chosen = plan.gold_ids[0] if (u < p and plan.gold_ids) else ids[int(w * len(ids)) % len(ids)]
        picked = [chosen]
        if g < model.multi_select_rate and len(ids) > 1:  # hedging: a second id
            other = [i for i in ids if i != chosen]
            picked.append(other[int(g / model.multi_select_rate * len(other)) % len(other)])
            picked.sort()
        return [{"id": i} for i in picked]

    def placeholder(self, tag: str, rng: random.Random) -> dict:
        ids = letters(4)
        return choice_placeholder(tag, ids, sorted(rng.sample(ids, 1)))

    def study_answer(self, record: Mapping[str, Any], p: float, model: Any,
                     rng: random.Random) -> tuple[list[dict], bool] | None:
        """The right id with probability p, else a tempting wrong one."""
        choices = [c for c in record.get("choices") or [] if isinstance(c, dict)]
        gold = {str(a.get("id")) for a in record.get("answers") or [] if isinstance(a, dict)}
        if (rng.random() < p and gold) or len(choices) <= len(gold):
            return [{"id": sorted(gold)[0] if gold else "A"}], True
        wrong = [c for c in choices if str(c.get("id")) not in gold]
        return [{"id": str(rng.choices(wrong, weights=[model.lure_weight(c) for c in wrong])[0]["id"])}], False

    def study_invalid(self, record: Mapping[str, Any]) -> str | None:
        """An option the item does not have."""
        if not record.get("choices"):
            return None
        return json.dumps({"Answers": [{"id": "E" if len(record["choices"]) < 5 else "Z"}]}, ensure_ascii=False)


FORMAT = Radio()
__all__ = ["FORMAT", "Radio", "strict_radio"]

"""multiple_choice_check: one or more options are right; scored by F1 of the selected ids."""
from __future__ import annotations

import itertools
import random
from collections.abc import Mapping
from typing import Any

import eduart_core.formats.common as common

from .. import paper
from ..text import norm_id, norm_strict
from ..vocab import CHECK_TYPE
from .answer_words import CheckDisplay
from .base import OPTIONS_CHECK, ScoringOptions, StrictInput
from .choices import ChoiceFormat
from .common import Problems
from .simulation import RECOGNITION, choice_placeholder, letters, option_plan

_EXACT_CHANCE_MAX = 12  # options; beyond this the chance level is not enumerated


class Check(ChoiceFormat):
    name = CHECK_TYPE
    profile_rules = "Both use F1 on the selected options; they differ in how unreadable output is handled."
    site = {"body": "choices", "input": "checkbox", "key": "options", "label": "Right answers"}
    sim_difficulty = -0.3
    sim_skill = RECOGNITION
    synthetic_parts = 4
    synthetic_shift = 0.6
    sim_topic = {"it": "le opzioni corrette", "en": "the correct options"}
    answer_check = OPTIONS_CHECK
    answer_words = CheckDisplay()
    #: the review page's editor: which widget edits each field (plain data, see extraction.editors)
    editor = {"format": CHECK_TYPE, "fields": [
        {"path": "choices", "widget": "option_rows", "label": "Options"},
        {"path": "answers", "widget": "multi_key", "label": "Answer key"},
    ]}
    visual = True
    respondent = {"fields": {"id": "id"}}

    def validate_answers(self, rec: dict, answers: list, out: Problems) -> None:
        if not answers:
            out.add("answers", "multiple_choice_check needs at least one answer")

    def entry_schema(self, record: Mapping[str, Any] | None = None) -> dict:
        return {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}

    def score_strict(self, record, gold, given: StrictInput, options: ScoringOptions):
        gold_ids = {norm_id(a.get("id")) for a in gold} - {""}
        if given.entries is None:
            return 0.0, [{"element": norm_id(a.get("id")), "expected": True, "given": None, "right": False}
                         for a in gold], given.error
        predicted = common.selected_ids(given.entries, norm_strict)
        return common.f1(predicted, gold_ids), common.selection_details(predicted, gold_ids), None

    def score_paper(self, record, gold, llm, options: ScoringOptions):
        gold_ids = set(paper.answer_ids(gold))
        predicted = paper.checked_ids(llm)
        details = common.selection_details(predicted, gold_ids)
        if not isinstance(llm, list):
            details = [{**d, "given": None} for d in details]
        return paper.f1(predicted, gold_ids), details, self.paper_error(llm)

    def chance(self, record: Mapping[str, Any]) -> float | None:
        """Expected F1 of the chance model: each option with probability 1/2, never none."""
        ids = [norm_id(c.get("id")) for c in record.get("choices") or [] if isinstance(c, dict)]
        gold = self.gold_ids(record)
        n = len(ids)
        if not n or n > _EXACT_CHANCE_MAX:
            return None
        total = 0.0
        for k in range(1, n + 1):
            for subset in itertools.combinations(ids, k):
                weight = 0.5 ** n + (0.5 ** n / n if k == 1 else 0.0)  # empty draw -> one at random
                total += weight * common.f1(set(subset), gold)
        return total

    def chance_answer(self, record: Mapping[str, Any], rng: random.Random) -> list[dict]:
        choices = record.get("choices") or []
        picked = [c for c in choices if rng.random() < 0.5] or ([rng.choice(choices)] if choices else [])
        return [{"id": c["id"]} for c in picked]

    def screenshot_lines(self, record: Mapping[str, Any]) -> list[str]:
        return [f"☐  {c.get('id')}. {c.get('text')}" for c in record.get("choices") or [] if isinstance(c, dict)]

    def sim_plan(self, record: Mapping[str, Any]) -> dict:
        return option_plan(record)

    def simulate_answers(self, plan: Any, p: float, draws: Any, model: Any, shared: random.Random) -> list[dict]:
        """Each option ticked when known to be right, else by a coin; never nothing at all."""
        selected = []
        first_w = 0.0
        for n, option in enumerate(plan.option_ids):
            u, w, g = draws.next()
            first_w = w if n == 0 else first_w
            right = option in plan.gold_ids
            if (u < p and right) or (u >= p and g < 0.5):
                selected.append(option)
        if not selected and plan.option_ids:
            selected = [plan.option_ids[int(first_w * len(plan.option_ids)) % len(plan.option_ids)]]
        return [{"id": i} for i in selected]

    def placeholder(self, tag: str, rng: random.Random) -> dict:
        ids = letters(5)
        return choice_placeholder(tag, ids, sorted(rng.sample(ids, rng.randint(2, 3))))


FORMAT = Check()

"""multi_part_choice: several linked choices (lateral / depth / vertical; entity and evidence).

Record: `choices: [{"id": "A", "label": "lateral", "options": ["left", "none", "right"]}, ...]`,
`answers: [{"id": "A", "description": "left"}, ...]`, one answer per part. A part is right when
the answer text equals the gold option after folding case, accents and punctuation; the item
scores 1 only when every part is right. Details keep each part (analysis reports per-part
accuracy). Chance = the product of 1/(number of options) over the parts.

Under `paper` (no published EduArt rule exists for this format) the published step-1 output is
read with the published id -> text map, then the same rule applies.
"""
from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

import eduart_core.formats.common as common

from .. import paper
from ..text import norm_id, norm_strict
from ..vocab import MULTI_PART_TYPE
from .base import AnswerFormat, ScoringOptions, StrictInput
from .blanks import option_block_lines
from .common import Problems

EDITOR = {
    "format": MULTI_PART_TYPE,
    "fields": [
        {"path": "question_text", "widget": "textarea", "label": "Question", "required": True},
        {"path": "choices", "widget": "list", "label": "Parts", "min_items": 1, "item_fields": [
            {"key": "id", "widget": "text", "label": "Part id (A, B, ...)", "required": True},
            {"key": "label", "widget": "text", "label": "What the part asks (e.g. lateral)"},
            {"key": "options", "widget": "text_list", "label": "Options", "min_items": 2, "required": True},
        ]},
        {"path": "answers", "widget": "per_part_choice", "label": "Right option per part",
         "parts_from": "choices", "value_key": "description", "options_key": "options"},
    ],
}


def _options(record: Mapping[str, Any]) -> dict[str, list[str]]:
    return {norm_id(c.get("id")): [str(o) for o in c.get("options") or []]
            for c in record.get("choices") or [] if isinstance(c, dict)}


class MultiPartChoice(AnswerFormat):
    name = MULTI_PART_TYPE
    editor = EDITOR
    respondent = {"fields": {"id": "id", "text": "description"}, "parts_from": "choices"}

    def validate(self, rec: dict, out: Problems) -> None:
        common.single_question_text(rec, out, self.name)
        choices, answers = rec["choices"], rec["answers"]
        options_by_id: dict[str, list] = {}
        if not isinstance(choices, list) or not choices:
            out.add("choices", "multi_part_choice needs a non-empty list of parts {id, label, options}")
        else:
            for ident in common.check_ids(choices, "choices", out):
                part = next(c for c in choices if isinstance(c, dict) and c.get("id") == ident)
                options = part.get("options")
                if not isinstance(options, list) or len(options) < 2 \
                        or not all(common.nonempty_str(o) for o in options):
                    out.add(f"choices[{ident}].options", "each part needs at least 2 non-empty text options")
                    options = []
                elif len({norm_strict(o) for o in options}) != len(options):
                    out.add(f"choices[{ident}].options", "options of a part must differ after folding "
                            "case, accents and punctuation")
                if part.get("label") is not None and not isinstance(part.get("label"), str):
                    out.add(f"choices[{ident}].label", "label must be a string")
                options_by_id[ident] = options
        answer_ids = common.check_ids(answers, "answers", out)
        for i, a in enumerate(answers):
            if not isinstance(a, dict):
                continue
            where = f"answers[{common.entry_label(a, i)}]"
            if not common.nonempty_str(a.get("description")):
                out.add(f"{where}.description", "missing the right option")
                continue
            part_id = a.get("id")  # an id that is no text (a list, say) is a problem check_ids reported, not a crash
            options = options_by_id.get(part_id) if isinstance(part_id, str) else None
            if options_by_id and options is None:
                out.add(where, f"part {a.get('id')} does not exist in choices")
            elif options and norm_strict(a["description"]) not in {norm_strict(o) for o in options}:
                out.add(f"{where}.description", f"{a['description']!r} is not one of the options {options}")
        for ident in options_by_id:
            if ident not in answer_ids:
                out.add(f"answers[{ident}]", f"part {ident} has no answer")

    def choice_lines(self, record: Mapping[str, Any]) -> list[str]:
        return option_block_lines(record.get("choices"))

    def _judge(self, gold: list[dict], given: dict[str, list]) -> tuple[float, list[dict]]:
        details = []
        for a in gold:
            ident = norm_id(a.get("id"))
            expected = common.gold_text(a)
            said = given.get(ident, [])
            forms = {norm_strict(s) for s in said}
            right = len(forms) == 1 and bool(norm_strict(expected)) and forms == {norm_strict(expected)}
            details.append({"element": ident, "expected": expected,
                            "given": said[0] if len(said) == 1 else (said or None), "right": right})
        return float(bool(details) and all(d["right"] for d in details)), details

    def score_strict(self, record, gold, given: StrictInput, options: ScoringOptions):
        if given.entries is None:
            return 0.0, common.missing_blanks(gold), given.error
        score, details = self._judge(gold, common.grouped(given.entries))
        return score, details, None

    def score_paper(self, record, gold, llm, options: ScoringOptions):
        given = {ident: [text] for ident, text in paper.text_map(llm).items()}
        score, details = self._judge(gold, given)
        return score, details, self.paper_error(llm)

    def chance(self, record: Mapping[str, Any]) -> float | None:
        sizes = [len(o) for o in _options(record).values()]
        return math.prod(1 / n for n in sizes) if sizes and all(sizes) else None

    def chance_answer(self, record: Mapping[str, Any], rng: random.Random) -> list[dict]:
        return [{"id": c["id"], "text": rng.choice(c.get("options") or [""])}
                for c in record.get("choices") or [] if isinstance(c, dict) and c.get("id")]

    def display_rows(self, record: Mapping[str, Any]) -> list[dict]:
        options = _options(record)
        labels = {norm_id(c.get("id")): c.get("label") or "" for c in record.get("choices") or []
                  if isinstance(c, dict)}
        gold = {norm_id(a.get("id")): common.gold_text(a) for a in self.gold(record)}
        return [{"element": ident, "label": labels.get(ident, ""), "text": " / ".join(opts),
                 "gold": gold.get(ident)} for ident, opts in options.items()]

    def study_answer(self, record: Mapping[str, Any], p: float, model: Any,
                     rng: random.Random) -> tuple[list[dict], bool] | None:
        """Each part right with probability p ** (1 / parts), so all parts right about p."""
        gold: dict[str, Any] = {str(a.get("id")): a.get("description")
                                for a in record.get("answers") or [] if isinstance(a, dict)}
        parts = [c for c in record.get("choices") or [] if isinstance(c, dict)]
        p_part = p ** (1.0 / max(1, len(parts)))
        out: list[dict[str, Any]] = []
        for c in parts:
            ident, options = str(c.get("id")), [str(o) for o in c.get("options") or []]
            if rng.random() < p_part or len(options) < 2:
                out.append({"id": ident, "text": gold.get(ident)})
            else:
                out.append({"id": ident, "text": rng.choice([o for o in options if o != gold.get(ident)])})
        return out, all(e["text"] == gold.get(e["id"]) for e in out)


FORMAT = MultiPartChoice()

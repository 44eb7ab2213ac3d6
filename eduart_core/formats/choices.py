"""The shared shape of choice formats: `choices` = [{"id", "text"}], answers refer to their ids.

Why a shared base: multiple_choice_radio, multiple_choice_check and true_false validate their
options and answer ids the same way, and MCQ options may point at the image (`bbox`) or be
images (`image`), see `visual`.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import eduart_core.formats.common as common

from ..text import norm_id
from .base import AnswerFormat
from .common import Problems
from .visual import check_visual_choices


class ChoiceFormat(AnswerFormat):
    """Options with ids; subclasses add their answer rules."""

    #: what an option is called in problems ("choice", "statement")
    word = "choice"
    #: options may carry `bbox` / `image` and then need no text
    visual = False

    def key_line(self, entry: Mapping[str, Any]) -> str:
        """``key B: Monet``: the option the key marks, with its text."""
        text = entry.get("description")
        return f"key {entry.get('id')}: {'' if text is None else text}"

    def validate(self, rec: dict, out: Problems) -> None:
        choices, answers = rec["choices"], rec["answers"]
        choice_ids: list[str] = []
        if not isinstance(choices, list) or not choices:
            out.add("choices", f"{self.name} needs a non-empty list of {self.word}s")
        else:
            choice_ids = common.check_ids(choices, "choices", out)
            for i, c in enumerate(choices):
                if not isinstance(c, dict) or isinstance(c.get("text"), str):
                    continue
                if self.visual and (c.get("bbox") is not None or common.nonempty_str(c.get("image"))) \
                        and c.get("text") is None:
                    continue
                out.add(f"choices[{common.entry_label(c, i)}].text", f"{self.word} text missing")
            if self.visual:
                check_visual_choices(rec, out)
        answer_ids = common.check_ids(answers, "answers", out)
        self.validate_answers(rec, answers, out)
        if not choice_ids:
            return
        for ident in answer_ids:
            if ident not in choice_ids:
                out.add(f"answers[{ident}]", f"{self.word} {ident} does not exist in choices")
        self.validate_against_choices(answers, choice_ids, answer_ids, out)

    def validate_answers(self, rec: dict, answers: list, out: Problems) -> None:
        """Checks of the answer list alone (count of answers)."""

    def validate_against_choices(self, answers: list, choice_ids: list[str], answer_ids: list[str],
                                 out: Problems) -> None:
        """Checks that need both lists (every statement has a verdict)."""

    def gold_ids(self, record: Mapping[str, Any]) -> set[str]:
        return {norm_id(a.get("id")) for a in self.gold(record)} - {""}

    def display_rows(self, record: Mapping[str, Any]) -> list[dict]:
        gold = self.gold_ids(record)
        rows = []
        for c in record.get("choices") or []:
            if not isinstance(c, dict):
                continue
            ident = norm_id(c.get("id"))
            row = {"element": ident, "text": c.get("text") or "", "gold": ident in gold}
            if c.get("bbox") is not None:
                row["bbox"] = c["bbox"]
            if c.get("image"):
                row["image"] = c["image"]
            rows.append(row)
        return rows

    def gold_summary(self, record: Mapping[str, Any]) -> str:
        return ", ".join(sorted(self.gold_ids(record)))

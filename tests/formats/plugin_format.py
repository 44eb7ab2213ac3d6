"""A format that does not ship with the studio: one word, written from memory ("one_word").

The whole of what a new format takes, in one module: record rules, scoring under both profiles,
chance, the inspector's rows and words, the review editors' spec and words, the exam-page
screenshot, the answer-quality reading and the demo simulation. Its prompt rules live in a file of
the test's own (`prompt_path`), and `eduart_core.formats.register` adds it; nothing else is edited.
"""
from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from eduart_core.formats import AnswerFormat
from eduart_core.formats.answer_words import FormatDisplay
from eduart_core.formats.base import TEXT_CHECK, ScoringOptions, StrictInput
from eduart_core.formats.common import Problems
from eduart_core.formats.simulation import PRODUCTION, misspell
from eduart_core.text import norm_strict

NAME = "one_word"
LABEL = "One word"
RULES = "Answer with one word only: the object of the 'Answers' list has the id A and your word as its text."
PROMPT = f"{RULES}\n\n```json\n{{\"Answers\": [{{\"id\": \"A\", \"text\": \"fresco\"}}]}}\n```\n"


def record(item_id: str = "w1", word: str = "Fresco") -> dict:
    """A valid item of the format."""
    return {"item_id": item_id, "type": NAME, "language": "en", "question_title": "Techniques",
            "instructions": "One word.", "question_text": "Paint on wet plaster is called?", "choices": None,
            "answers": [{"id": "A", "description": word}], "has_image": False, "image": None}


class OneWordWords(FormatDisplay):
    """The inspector reads a word in capitals on both sides."""

    def value(self, value: Any, record: Mapping[str, Any]) -> str:
        return str(value).upper() if isinstance(value, str) else super().value(value, record)


class OneWord(AnswerFormat):
    name = NAME
    single_part = True
    answer_check = TEXT_CHECK
    answer_words = OneWordWords()
    editor = {"format": NAME, "fields": [
        {"path": "question_text", "widget": "textarea", "label": "Question", "required": True},
        {"path": "answers[0].description", "widget": "line", "label": "The word", "required": True},
    ]}
    profile_rules = "Strict ignores case and accents; paper compares the word exactly."
    sim_difficulty = 0.4
    sim_skill = PRODUCTION
    sim_topic = {"it": "la parola giusta", "en": "the right word"}

    def __init__(self, prompt_path: str | None = None):
        self.prompt_path = prompt_path

    def validate(self, rec: dict, out: Problems) -> None:
        answers = rec.get("answers")
        if not (isinstance(answers, list) and len(answers) == 1 and isinstance(answers[0], dict)
                and str(answers[0].get("description") or "").strip()):
            out.add("answers", "needs exactly one entry with the word as its description")

    def _word(self, record: Mapping[str, Any]) -> str:
        return str((self.gold(record) or [{}])[0].get("description") or "")

    def score_strict(self, record, gold, given: StrictInput, options: ScoringOptions):
        word = self._word(record)
        said = (given.entries or [{}])[0].get("text") if given.entries else None
        right = said is not None and norm_strict(said) == norm_strict(word)
        return float(right), [{"element": "A", "expected": word, "given": said, "right": right}], given.error

    def score_paper(self, record, gold, llm, options: ScoringOptions):
        word = self._word(record)
        said = llm[0].get("text") if isinstance(llm, list) and llm and isinstance(llm[0], dict) else None
        right = said == word
        return float(right), [{"element": "A", "expected": word, "given": said, "right": right}], \
            None if said is not None else "no word"

    def chance(self, record: Mapping[str, Any]) -> float | None:
        return 0.0

    def chance_answer(self, record: Mapping[str, Any], rng: random.Random) -> list[dict]:
        return [{"id": "A", "text": rng.choice(["tempera", "oil", "mosaic"])}]

    def display_rows(self, record: Mapping[str, Any]) -> list[dict]:
        return [{"element": "A", "text": record.get("question_text"), "gold": self._word(record)}]

    def screenshot_lines(self, record: Mapping[str, Any]) -> list[str]:
        return ["Write one word: ______________"]

    def sim_plan(self, record: Mapping[str, Any]) -> dict:
        return {"blanks": [("A", self._word(record))]}

    def simulate_answers(self, plan: Any, p: float, draws: Any, model: Any, shared: random.Random) -> list[dict]:
        u, w, _ = draws.next()
        word = plan.blanks[0][1] if plan.blanks else ""
        return [{"id": "A", "text": word if u < p else misspell(word, random.Random(w))}]

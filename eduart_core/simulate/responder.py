"""From an item and a simulated model to the answer the model intends to give.

Why this shape: a 2PL-like model gives the probability that the respondent *knows* each element
of an item (an option, a statement, a blank, an error); when it does not know, it guesses the way
a real model does (a wrong option, the other alternative, a word from the bank, a misspelling, a
plausible but wrong span). Per-element draws make partial credit realistic. The uniform draws
are shared between the two conditions of one model and item (common random numbers), so the
motivation condition changes only the answers near the model's threshold, as in real paired data.
Nothing here scores: the answers are rendered to text and go through the real parser and scorer.
"""
from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field

from ..formats import find_format
from .models import SimModel

IMAGE_DIFFICULTY = 0.25  # image items are a little harder on average
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class ItemPlan:
    """What the simulator needs of an item, computed once per item and seed."""

    item_id: str
    type: str
    language: str
    has_image: bool
    difficulty: float
    discrimination: float
    passage_words: list[str]               # candidate wrong spans (select the errors)
    passage: str
    title: str
    prompt_chars: int
    # what the item's format needs (`AnswerFormat.sim_plan`)
    option_ids: list[str] = field(default_factory=list)            # choice items: option ids
    gold_ids: list[str] = field(default_factory=list)              # choice items: correct ids
    statements: list[tuple[str, bool]] = field(default_factory=list)  # statements: (id, truth)
    blanks: list[tuple[str, str]] = field(default_factory=list)    # blanks: (id, gold term)
    alternatives: dict[str, list[str]] = field(default_factory=dict)  # blank id -> its alternatives
    bank: list[str] = field(default_factory=list)                  # word bank
    errors: list[str] = field(default_factory=list)                # gold error strings


def _unit(rng_key: str) -> random.Random:
    return random.Random(rng_key)


def plan_item(record: dict, seed: int) -> ItemPlan:
    """Derive difficulty and discrimination deterministically from item_id and seed."""
    item_id = str(record["item_id"])
    item_type = record["type"]
    rng = _unit(f"item|{seed}|{item_id}")
    has_image = bool(record.get("has_image"))
    fmt = find_format(item_type)
    difficulty = (fmt.sim_difficulty if fmt is not None else 0.0) + rng.gauss(0.0, 0.9)
    if has_image:
        difficulty += IMAGE_DIFFICULTY
    discrimination = min(2.5, max(0.4, math.exp(rng.gauss(0.15, 0.35))))
    choices = record.get("choices") or []
    text = record.get("question_text") or ""
    fields = fmt.sim_plan(record) if fmt is not None else {}
    errors = fields.get("errors", [])
    error_words = {w.lower() for e in errors for w in _WORD.findall(e)}
    passage_words = [w for w in _WORD.findall(text) if len(w) >= 4 and w.lower() not in error_words]
    prompt_chars = len(text) + sum(len(str(c)) for c in choices) + len(record.get("instructions") or "")
    return ItemPlan(
        item_id=item_id, type=item_type, language=record.get("language") or "it", has_image=has_image,
        difficulty=difficulty, discrimination=discrimination, passage_words=passage_words, passage=text,
        title=record.get("question_title") or "", prompt_chars=prompt_chars, **fields,
    )


def know_probability(model: SimModel, plan: ItemPlan, condition: str) -> float:
    """2PL: probability that the model knows one element of this item."""
    theta = model.effective_ability(plan.type, plan.has_image, condition)
    x = plan.discrimination * (theta - plan.difficulty)
    return 1.0 / (1.0 + math.exp(-x))


class _Draws:
    """Three uniforms per element, always consumed, so both conditions see the same numbers."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def next(self) -> tuple[float, float, float]:
        r = self.rng.random
        return r(), r(), r()


def intended_answers(model: SimModel, plan: ItemPlan, condition: str, shared: random.Random) -> list[dict]:
    """The Answers list the model means to output (before any formatting accident).

    Every random choice comes from ``shared`` (same stream in both conditions), so a model
    whose motivation shift is zero gives the same answers in both conditions.
    """
    p = know_probability(model, plan, condition)
    draws = _Draws(shared)
    fmt = find_format(plan.type)
    return fmt.simulate_answers(plan, p, draws, model, shared) if fmt is not None else []

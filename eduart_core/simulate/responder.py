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
import unicodedata
from dataclasses import dataclass

from .models import SimModel

# Mean difficulty per format on the logit scale; calibrated so the archetypes land near the
# published ranges (radio easy, select_errors hard).
TYPE_DIFFICULTY = {
    "multiple_choice_radio": -1.3,
    "multiple_choice_check": -0.3,
    "true_false": -0.1,
    "positioning": 0.0,
    "completion_closed": 0.2,
    "completion_open": 0.5,
    "select_errors": 1.6,
}
IMAGE_DIFFICULTY = 0.25  # image items are a little harder on average

WRONG_WORDS = {
    "it": ["affresco", "tempera", "sfumato", "chiaroscuro", "prospettiva", "pala", "polittico",
           "lunetta", "cartone", "velatura", "scorcio", "Firenze", "Venezia", "Roma", "Siena",
           "Quattrocento", "Cinquecento", "Giotto", "Masaccio", "Raffaello", "tavola", "tela"],
    "en": ["fresco", "tempera", "sfumato", "chiaroscuro", "perspective", "altarpiece", "polyptych",
           "lunette", "cartoon", "glaze", "foreshortening", "Florence", "Venice", "Rome", "Siena",
           "fifteenth", "sixteenth", "Giotto", "Masaccio", "Raphael", "panel", "canvas"],
}
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
    option_ids: list[str]
    gold_ids: list[str]                    # radio/check: correct ids
    statements: list[tuple[str, bool]]     # true_false: (id, truth)
    blanks: list[tuple[str, str]]          # positioning/completion: (id, gold term)
    alternatives: dict[str, list[str]]     # completion_closed: id -> two options
    bank: list[str]                        # positioning word bank
    errors: list[str]                      # select_errors gold error strings
    passage_words: list[str]               # select_errors: candidate wrong spans
    passage: str
    title: str
    prompt_chars: int


def _unit(rng_key: str) -> random.Random:
    return random.Random(rng_key)


def plan_item(record: dict, seed: int) -> ItemPlan:
    """Derive difficulty and discrimination deterministically from item_id and seed."""
    item_id = str(record["item_id"])
    item_type = record["type"]
    rng = _unit(f"item|{seed}|{item_id}")
    has_image = bool(record.get("has_image"))
    difficulty = TYPE_DIFFICULTY.get(item_type, 0.0) + rng.gauss(0.0, 0.9)
    if has_image:
        difficulty += IMAGE_DIFFICULTY
    discrimination = min(2.5, max(0.4, math.exp(rng.gauss(0.15, 0.35))))
    choices = record.get("choices") or []
    answers = record.get("answers") or []
    text = record.get("question_text") or ""

    option_ids, gold_ids, statements, blanks, alternatives, bank, errors = [], [], [], [], {}, [], []
    if item_type in ("multiple_choice_radio", "multiple_choice_check"):
        option_ids = [str(c["id"]).strip().upper() for c in choices]
        gold_ids = [str(a["id"]).strip().upper() for a in answers]
    elif item_type == "true_false":
        truth = {str(a["id"]).strip().upper(): str(a.get("text", "")).strip().lower() in ("true", "vero")
                 for a in answers}
        statements = [(str(c["id"]).strip().upper(), truth.get(str(c["id"]).strip().upper(), False))
                      for c in choices]
    elif item_type in ("positioning", "completion_closed", "completion_open"):
        blanks = [(str(a["id"]).strip().upper(), str(a.get("description", ""))) for a in answers]
        if item_type == "positioning":
            bank = [str(term) for term in choices]
        elif item_type == "completion_closed":
            alternatives = {str(c["id"]).strip().upper(): [str(o) for o in c.get("options", [])]
                            for c in choices}
    elif item_type == "select_errors":
        errors = [str(a.get("error", "")) for a in answers]
    error_words = {w.lower() for e in errors for w in _WORD.findall(e)}
    passage_words = [w for w in _WORD.findall(text) if len(w) >= 4 and w.lower() not in error_words]
    prompt_chars = len(text) + sum(len(str(c)) for c in choices) + len(record.get("instructions") or "")
    return ItemPlan(
        item_id=item_id, type=item_type, language=record.get("language") or "it", has_image=has_image,
        difficulty=difficulty, discrimination=discrimination, option_ids=option_ids, gold_ids=gold_ids,
        statements=statements, blanks=blanks, alternatives=alternatives, bank=bank, errors=errors,
        passage_words=passage_words, passage=text, title=record.get("question_title") or "",
        prompt_chars=prompt_chars,
    )


def know_probability(model: SimModel, plan: ItemPlan, condition: str) -> float:
    """2PL: probability that the model knows one element of this item."""
    theta = model.effective_ability(plan.type, plan.has_image, condition)
    x = plan.discrimination * (theta - plan.difficulty)
    return 1.0 / (1.0 + math.exp(-x))


def _misspell(word: str, rng: random.Random) -> str:
    """A one-edit slip: swap, drop or double a letter (what sloppy output looks like)."""
    if len(word) < 4:
        return word + word[-1:]
    i = rng.randrange(1, len(word) - 2)
    kind = rng.randrange(3)
    if kind == 0:
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if kind == 1:
        return word[:i] + word[i + 1:]
    return word[:i] + word[i] + word[i:]


def _strip_accents(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFD", text) if not unicodedata.combining(ch))


def _pick(pool: list[str], w: float, exclude: str) -> str | None:
    options = [p for p in pool if p.strip().lower() != exclude.strip().lower()]
    return options[int(w * len(options)) % len(options)] if options else None


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
    t = plan.type
    if t == "multiple_choice_radio":
        u, w, g = draws.next()
        ids = plan.option_ids or ["A"]
        chosen = plan.gold_ids[0] if (u < p and plan.gold_ids) else ids[int(w * len(ids)) % len(ids)]
        picked = [chosen]
        if g < model.multi_select_rate and len(ids) > 1:  # hedging: a second id
            other = [i for i in ids if i != chosen]
            picked.append(other[int(g / model.multi_select_rate * len(other)) % len(other)])
            picked.sort()
        return [{"id": i} for i in picked]
    if t == "multiple_choice_check":
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
    if t == "true_false":
        out = []
        for sid, truth in plan.statements:
            u, _, g = draws.next()
            verdict = truth if u < p else g < 0.5
            out.append({"id": sid, "text": "TRUE" if verdict else "FALSE"})
        return out
    if t in ("positioning", "completion_closed", "completion_open"):
        out = []
        golds = [g for _, g in plan.blanks]
        for bid, gold in plan.blanks:
            u, w, g = draws.next()
            if u < p:
                text = gold
                if t == "completion_open" and g < 0.08:  # right but sloppy: case/accents only
                    text = _strip_accents(gold).lower()
            elif t == "completion_closed":
                alts = plan.alternatives.get(bid) or [gold]
                text = gold if g < 0.5 else (_pick(alts, w, gold) or gold)
            elif t == "positioning":
                text = _pick(plan.bank or golds, w, gold) or gold
            else:
                if g < 0.15:  # a slip: wrong under paper, often forgiven by strict's fuzzy match
                    text = _misspell(gold, random.Random(w))
                else:
                    pool = [x for x in golds if x != gold] + WRONG_WORDS.get(plan.language, WRONG_WORDS["en"])
                    text = _pick(pool, w, gold) or _misspell(gold, random.Random(w))
            out.append({"id": bid, "text": text})
        return out
    if t == "select_errors":
        spans: list[str] = []
        for error in plan.errors:
            u, w, g = draws.next()
            if u < p:
                spans.append(_widen(error, plan.passage) if g < 0.1 else error)
            elif g < 0.5 and plan.passage_words:
                spans.append(plan.passage_words[int(w * len(plan.passage_words)) % len(plan.passage_words)])
        if not spans and plan.passage_words:  # models rarely answer with nothing
            spans.append(plan.passage_words[int(shared.random() * len(plan.passage_words)) % len(plan.passage_words)])
        seen: list[str] = []
        for s in spans:
            if s not in seen:
                seen.append(s)
        return [{"id": chr(65 + i), "text": s} for i, s in enumerate(seen)]
    return []


def _widen(error: str, passage: str) -> str:
    """The error span with the word before it ("su tela" for "tela"): right under strict only."""
    match = re.search(r"(\w+)\s+" + re.escape(error), passage)
    return f"{match.group(1)} {error}" if match else error

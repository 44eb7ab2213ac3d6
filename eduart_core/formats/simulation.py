"""What the demo's simulated respondents need from a format: the pieces a wrong answer is made of.

Why beside the formats: how a respondent who does not know an element guesses (a wrong option, the
other alternative, a word from the bank, a misspelling, a plausible but wrong span) depends on the
format, so each format entry simulates its own answers (`AnswerFormat.sim_plan`,
`AnswerFormat.simulate_answers`) and `eduart_core.simulate` only draws abilities and renders the
text. These helpers are shared by the format modules; every random choice comes from the caller's
uniform draws, so both prompt conditions of one model and item see the same numbers.
"""
from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Mapping
from typing import Any, Protocol

__all__ = ["PRODUCTION", "RECOGNITION", "WRONG_WORDS", "Draws", "misspell", "option_plan", "pick", "strip_accents",
           "widen"]

#: The skills of a simulated archetype (`AnswerFormat.sim_skill`): recognising the right option or
#: statement, or producing the right term or span.
RECOGNITION, PRODUCTION = "recognition", "production"

#: Plausible wrong terms per language (completion_open guesses), from general art-history words.
WRONG_WORDS = {
    "it": ["affresco", "tempera", "sfumato", "chiaroscuro", "prospettiva", "pala", "polittico",
           "lunetta", "cartone", "velatura", "scorcio", "Firenze", "Venezia", "Roma", "Siena",
           "Quattrocento", "Cinquecento", "Giotto", "Masaccio", "Raffaello", "tavola", "tela"],
    "en": ["fresco", "tempera", "sfumato", "chiaroscuro", "perspective", "altarpiece", "polyptych",
           "lunette", "cartoon", "glaze", "foreshortening", "Florence", "Venice", "Rome", "Siena",
           "fifteenth", "sixteenth", "Giotto", "Masaccio", "Raphael", "panel", "canvas"],
}


class Draws(Protocol):
    """Three uniforms per element, always consumed (`eduart_core.simulate.responder`)."""

    rng: random.Random

    def next(self) -> tuple[float, float, float]: ...


def misspell(word: str, rng: random.Random) -> str:
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


def strip_accents(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFD", text) if not unicodedata.combining(ch))


def pick(pool: list[str], w: float, exclude: str) -> str | None:
    options = [p for p in pool if p.strip().lower() != exclude.strip().lower()]
    return options[int(w * len(options)) % len(options)] if options else None


def widen(error: str, passage: str) -> str:
    """The error span with the word before it ("su tela" for "tela"): right under strict only."""
    match = re.search(r"(\w+)\s+" + re.escape(error), passage)
    return f"{match.group(1)} {error}" if match else error


def option_plan(record: Mapping[str, Any]) -> dict:
    """The option ids and the right ids of a choice item, upper case."""
    choices = record.get("choices") or []
    answers = record.get("answers") or []
    return {"option_ids": [str(c["id"]).strip().upper() for c in choices],
            "gold_ids": [str(a["id"]).strip().upper() for a in answers]}


def letters(n: int) -> list[str]:
    """The ids A, B, C, ... of a placeholder item's n options, statements or blanks."""
    return [chr(65 + i) for i in range(n)]


def choice_placeholder(tag: str, ids: list[str], right: list[str]) -> dict:
    """A placeholder choice item: options ``ids``, the ``right`` ones keyed."""
    return {"question_text": f"Synthetic item {tag}: which option is the placeholder answer?",
            "choices": [{"id": i, "text": f"Synthetic option {i} of item {tag}"} for i in ids],
            "answers": [{"id": i, "description": f"Synthetic option {i} of item {tag}"} for i in right]}

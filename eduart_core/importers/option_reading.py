"""How an answer written for another tool becomes a response our formats score.

Why a reading of its own: harnesses keep the model's words as they came ("B", "(B) Rome",
"The answer is B") or only the option they picked by likelihood, while our multiple-choice format
reads a JSON answer. An answer our parser already reads is stored verbatim; otherwise, when it
names exactly one option by one of the rules below, it is stored as the JSON answer of that option
with the words kept beside it (``"prediction"``), so the inspector shows both and the reading is
visible. Anything else is stored verbatim and scores as unparsed.

Rules (first that applies): the whole answer is one option letter, bare or as ``(B)``, ``B.``,
``B)``, ``B:``; the answer starts with such a letter followed by text; it says ``answer is B`` /
``answer: B`` exactly once; its text equals one option's text.
"""
from __future__ import annotations

import json
import re

from ..answers import parse_answer
from ..text import norm_strict

_WHOLE = re.compile(r"^\(?([A-Z])\)?[.:)]?$")
_LEADING = re.compile(r"^\(?([A-Z])[.:)]\s+\S")
_SAID = re.compile(r"\banswer\s*(?:is|:)\s*:?\s*\(?([A-Z])\)?(?![A-Za-z])", re.IGNORECASE)


def read_option(text: str, choices: list[dict]) -> str | None:
    """The id of the one option ``text`` names by the module's rules, else None."""
    ids = {c["id"] for c in choices}
    clean = text.strip()
    for pattern in (_WHOLE, _LEADING):
        match = pattern.match(clean)
        if match and match.group(1) in ids:
            return match.group(1)
    said = {m.group(1).upper() for m in _SAID.finditer(clean)}
    if len(said) == 1 and next(iter(said)) in ids:
        return next(iter(said))
    by_text = [c["id"] for c in choices if norm_strict(c["text"]) == norm_strict(clean)]
    return by_text[0] if len(by_text) == 1 else None


def choice_answer(option: str, **kept: object) -> tuple[str, list[dict]]:
    """(raw text, imported answer) of a response that picked ``option``; ``kept``: what the tool
    recorded beside it (the words, the likelihoods), kept in the raw text."""
    answers = [{"id": option}]
    return json.dumps({"answers": answers, **kept}, ensure_ascii=False), answers


def response_of(text: str, choices: list[dict] | None) -> tuple[str, list[dict] | None]:
    """(raw text, imported answer or None) of an answer text to an item with ``choices`` (None: no
    options, the text is the answer)."""
    if not choices or parse_answer(text).answers is not None:
        return text, None
    option = read_option(text, choices)
    if option is None:
        return text, None
    return choice_answer(option, prediction=text)

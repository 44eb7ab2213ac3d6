"""The offline ``chance`` baseline: uniform random answers from each item's own options.

Why: a run must work with no key and no network (fresh clone, CI, demos), and a chance baseline
is the floor every model should beat. The answer depends only on the seed and the request, so a
rerun gives the same answers.
"""
from __future__ import annotations

import hashlib
import json
import random
import re

from .base import ProviderError, ProviderReply, ProviderRequest

_BLANK = re.compile(r"\[([A-Z])\]")
_WORD = re.compile(r"\w{3,}", re.UNICODE)


class ChanceProvider:
    """Needs ``request.item`` (the item record); never looks at the network."""

    def __init__(self, seed: int = 0):
        self.seed = seed

    def complete(self, request: ProviderRequest) -> ProviderReply:
        item = request.item
        if not item:
            raise ProviderError("the chance baseline needs the item record")
        # earlier turns of a dialogue (the model's own answers included) change the draw, as they
        # would change a real model's answer
        history = "".join(f"{m.role}:{m.text}\x00" for m in request.prior)  # "" for a single turn
        digest = hashlib.sha256(f"{self.seed}:{request.seed}:{history}{request.user_text}".encode()).hexdigest()
        rng = random.Random(digest)
        answers = chance_answers(item, rng)
        payload: dict = {"Answers": answers}
        if request.json_schema and "motivation" in (request.json_schema.get("properties") or {}):
            payload["motivation"] = "Chance baseline: the answer was drawn at random from the options."
        text = json.dumps(payload, ensure_ascii=False)
        return ProviderReply(text=text, input_tokens=0, output_tokens=0, finish_reason="stop")


def _blank_ids(item: dict) -> list[str]:
    ids = _BLANK.findall(item.get("question_text") or "")
    if not ids:
        ids = [a.get("id") for a in item.get("answers") or [] if isinstance(a, dict) and a.get("id")]
    return list(dict.fromkeys(ids))


def chance_answers(item: dict, rng: random.Random) -> list[dict]:
    """One uniformly random answer in the output schema of the item's format."""
    kind = item.get("type")
    choices = item.get("choices") or []
    if kind == "multiple_choice_radio":
        return [{"id": rng.choice(choices)["id"]}] if choices else []
    if kind == "multiple_choice_check":
        picked = [c for c in choices if rng.random() < 0.5] or ([rng.choice(choices)] if choices else [])
        return [{"id": c["id"]} for c in picked]
    if kind == "true_false":
        return [{"id": c["id"], "text": rng.choice(["TRUE", "FALSE"])} for c in choices]
    if kind == "positioning":
        bank = [str(c) for c in choices]
        return [{"id": b, "text": rng.choice(bank)} for b in _blank_ids(item)] if bank else []
    if kind == "completion_closed":
        return [{"id": c["id"], "text": rng.choice(c.get("options") or [""])} for c in choices]
    # completion_open and select_errors offer no options: guess words of the passage itself.
    words = _WORD.findall(_BLANK.sub(" ", item.get("question_text") or "")) or ["?"]
    if kind == "completion_open":
        return [{"id": b, "text": rng.choice(words)} for b in _blank_ids(item)]
    if kind == "select_errors":
        n = max(1, len(item.get("answers") or []))
        return [{"text": w} for w in rng.sample(words, min(n, len(words)))]
    return []

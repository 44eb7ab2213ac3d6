"""The offline ``chance`` baseline: uniform random answers from each item's own options.

Why: a run must work with no key and no network (fresh clone, CI, demos), and a chance baseline
is the floor every model should beat. The answer depends only on the seed and the request, so a
rerun gives the same answers.
"""
from __future__ import annotations

import hashlib
import json
import random

from .base import ProviderError, ProviderReply, ProviderRequest


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


def chance_answers(item: dict, rng: random.Random) -> list[dict]:
    """One uniformly random answer in the output schema of the item's format (see the registry)."""
    from ..formats import find_format

    fmt = find_format(item.get("type"))
    return fmt.chance_answer(item, rng) if fmt is not None else []


def build(spec, credentials: None, source, timeout_s: float) -> ChanceProvider:
    """The provider table's builder: no credentials, no network."""
    return ChanceProvider(seed=spec.seed or 0)

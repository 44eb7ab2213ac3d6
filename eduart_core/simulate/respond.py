"""One simulated run: a model answers a list of items under one condition.

Pure and in memory (no store): the bulk writer calls it per model x condition and hands the rows
to the store in one call, so simulating thousands of items stays fast.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from ..vocab import CONDITIONS, MOTIVATION_CONDITION
from .formatting import motivation_text, pick_kind, render_response
from .models import SimModel
from .responder import ItemPlan, intended_answers, plan_item

IMAGE_TOKENS = 260
SYSTEM_TOKENS = 180


@dataclass
class SimResponse:
    """A raw response plus what the simulator meant (for tests; never stored as a score)."""

    item_id: str
    raw_text: str
    kind: str                       # 'clean' or a malformed kind
    intended: list[dict]            # the Answers list before formatting
    motivation: str | None
    input_tokens: int
    output_tokens: int
    latency_s: float
    image_sent: bool

    def to_row(self, request_key: str | None = None, repetition: int = 0) -> dict:
        """A row for ``scoring.responses.add_responses`` (the scoring stage parses and scores it; the store
        keeps it)."""
        return {
            "item_id": self.item_id, "repetition": repetition, "request_key": request_key,
            "raw_text": self.raw_text, "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens, "latency_s": self.latency_s,
            "image_sent": self.image_sent, "error": None,
        }


def plan_items(records: list[dict], seed: int) -> list[ItemPlan]:
    """Item parameters once per item, reused for every model and condition."""
    return [plan_item(record, seed) for record in records]


def simulate_run(model: SimModel, plans: list[ItemPlan], condition: str, seed: int,
                 repetition: int = 0) -> list[SimResponse]:
    """Responses of one model to every planned item under one condition; deterministic in seed.

    ``repetition`` > 0 asks the items again: with probability ``model.repeat_noise`` (drawn per
    item and repeat) the answer is drawn afresh, as a sampled model at a temperature above 0
    would; otherwise the repeat gives repeat 0's answer word for word. Repeat 0 is the main run.
    """
    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, not {condition!r}")
    indent = random.Random(f"style|{seed}|{model.key}").random() < 0.5
    out: list[SimResponse] = []
    for plan in plans:
        fresh = repetition > 0 and random.Random(
            f"repeat|{seed}|{model.key}|{condition}|{plan.item_id}|{repetition}").random() < model.repeat_noise
        again = f"|rep{repetition}" if fresh else ""
        shared = random.Random(f"{seed}|{model.key}|{plan.item_id}{again}")
        local = random.Random(f"{seed}|{model.key}|{condition}|{plan.item_id}{again}")
        answers = intended_answers(model, plan, condition, shared)
        motivation = None
        if condition == MOTIVATION_CONDITION:
            motivation = motivation_text(plan.language, plan.type, plan.title, plan.has_image, answers, local)
        kind = pick_kind(model.malformed_rate, local)
        raw = render_response(answers, motivation, kind, plan.language, indent, local)
        input_tokens = SYSTEM_TOKENS + plan.prompt_chars // 4 + (IMAGE_TOKENS if plan.has_image else 0)
        output_tokens = max(1, len(raw) // 4)
        latency = round(0.4 + output_tokens * 0.015 + local.expovariate(2.0), 3)
        out.append(SimResponse(plan.item_id, raw, kind, answers, motivation, input_tokens,
                               output_tokens, latency, plan.has_image))
    return out

"""Token and cost estimates before a launch (``run --dry-run`` and the Runs page).

Text is counted with the offline counter of ``eduart_core.tokens``; images at a flat per-image
allowance; output at a per-condition allowance.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..tokens import token_counter
from ..vocab import DEFAULT_CONDITION, MOTIVATION_CONDITION

IMAGE_TOKENS = 1100  # flat allowance per image (a ~1 MP picture at high detail, order of magnitude)
OUTPUT_TOKENS = {DEFAULT_CONDITION: 60, MOTIVATION_CONDITION: 160}  # JSON answer, plus a 2-4 sentence justification
PER_MESSAGE_OVERHEAD = 8


@dataclass
class Estimate:
    """Per model and condition: requests still to ask, tokens and cost (cache hits cost nothing)."""

    model: str
    condition: str
    requests: int
    cached: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    images: int
    answered: int = 0  # already answered in this launch's journals: not asked again


def estimate_request(system: str, user_text: str, image: bool, condition: str) -> tuple[int, int]:
    counter = token_counter()
    tokens_in = counter.count(system) + counter.count(user_text) + 2 * PER_MESSAGE_OVERHEAD
    if image:
        tokens_in += IMAGE_TOKENS
    return tokens_in, OUTPUT_TOKENS.get(condition, 60)

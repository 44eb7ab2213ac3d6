"""Token and cost estimates before a launch (``run --dry-run`` and the Runs page).

Tokens are counted with tiktoken's ``o200k_base`` encoding. tiktoken downloads that vocabulary
on first use, which fails without network, so we build the encoding from the copy shipped inside
the ``bpe-openai`` wheel (same ranks, checked: "hello world" -> [24912, 2375]). If neither is
available we fall back to an approximation (4 characters per token) and say so in the output.
Images are counted at a flat per-image allowance; output at a per-format allowance.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from ..vocab import DEFAULT_CONDITION, MOTIVATION_CONDITION

IMAGE_TOKENS = 1100  # flat allowance per image (a ~1 MP picture at high detail, order of magnitude)
OUTPUT_TOKENS = {DEFAULT_CONDITION: 60, MOTIVATION_CONDITION: 160}  # JSON answer, plus a 2-4 sentence justification
PER_MESSAGE_OVERHEAD = 8


@dataclass
class Counter:
    count: Callable[[str], int]
    method: str  # "tiktoken o200k_base" or the approximation used


@lru_cache(maxsize=1)
def token_counter() -> Counter:
    """The best offline counter available; ``method`` says which one it is."""
    try:
        import tiktoken

        try:
            from bpe_openai import registry

            encoding = tiktoken.Encoding(**registry.o200k_base())
        except Exception:
            encoding = tiktoken.get_encoding("o200k_base")  # works when the vocabulary is cached
        return Counter(lambda text: len(encoding.encode(text, disallowed_special=())), "tiktoken o200k_base")
    except Exception:
        return Counter(lambda text: max(1, len(text) // 4),
                       "approximation: 4 characters per token (o200k_base vocabulary not available offline)")


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

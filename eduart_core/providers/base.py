"""The provider interface shared by model runs and extraction.

Why so small: every adapter only turns one request into one reply (or one ``ProviderError``).
Concurrency, retries, rate limits, journals and caches live in ``eduart_core.runner`` so that
they behave identically for every API.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

# Key-looking strings that must never reach a message the user, a log or the store sees.
_KEY_PATTERNS = [
    re.compile(r"sk-[A-Za-z0-9_\-]{8,}"),             # OpenAI style
    re.compile(r"AIza[0-9A-Za-z_\-]{20,}"),            # Google API keys
    re.compile(r"(?<![A-Z0-9])(AKIA|ASIA)[A-Z0-9]{12,}"),  # AWS access key ids
    re.compile(r"(?i)(api[_-]?key|key|token|secret|authorization|bearer)([\"'=:\s]+)([A-Za-z0-9_\-\./+]{12,})"),
]
_EXTRA_SECRETS: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember a secret value so ``redact`` removes it even if it has no recognisable shape."""
    if value and len(value) >= 6:
        _EXTRA_SECRETS.add(value)


def redact(text: str) -> str:
    """Replace anything that looks like an API key with ``[redacted]``."""
    if not text:
        return text
    for secret in sorted(_EXTRA_SECRETS, key=len, reverse=True):
        text = text.replace(secret, "[redacted]")
    for pattern in _KEY_PATTERNS[:3]:
        text = pattern.sub("[redacted]", text)
    text = _KEY_PATTERNS[3].sub(lambda m: f"{m.group(1)}{m.group(2)}[redacted]", text)
    return text


USER_ROLE = "user"
ASSISTANT_ROLE = "assistant"


@dataclass(frozen=True)
class Message:
    """One earlier message of a conversation: what the user asked (with its image) or what the
    model answered. Adapters map the roles to their API's names (Gemini calls the model "model")."""

    role: str  # USER_ROLE | ASSISTANT_ROLE
    text: str
    image: bytes | None = None
    image_mime: str | None = None


@dataclass(frozen=True)
class RequestImage:
    """One more image of a request, sent after the item image with its label as a text part.

    Why labelled: options that are images (a jigsaw piece, a detail) must reach the model in
    option order and each must be nameable, so every image follows a line like "Option A:".
    """

    label: str
    data: bytes
    mime: str = "image/jpeg"


@dataclass
class ProviderRequest:
    """One model call: system prompt, user text, optional image(s), optional JSON schema.

    ``prior`` holds the earlier turns of a multi-turn item (user, assistant, user, assistant, ...),
    sent before ``user_text`` so that a later question can build on the model's own answers.
    `image` is the item image (sent right after the text); `images` are further labelled images
    (options that are images), sent after it in order, each preceded by its label.
    """

    system: str
    user_text: str
    image: bytes | None = None
    image_mime: str | None = None
    json_schema: dict | None = None
    temperature: float | None = None
    max_output_tokens: int | None = None
    seed: int | None = None
    # The item record, for offline baselines only (never sent to an API).
    item: dict | None = None
    prior: tuple[Message, ...] = ()
    images: list[RequestImage] = field(default_factory=list)


@dataclass
class ProviderReply:
    """What came back: the text as the model wrote it, token counts when the API reports them."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str | None = None


class ProviderError(Exception):
    """A failed call. ``retryable`` tells the runner whether asking again can help.

    The message is always passed through ``redact`` so it never carries a key.
    """

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None,
                 retry_after: float | None = None):
        super().__init__(redact(str(message))[:500])
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


def classify_status(status: int | None) -> bool:
    """Retry on 408, 409 (lock contention at some providers), 429 and 5xx; never on other 4xx."""
    if status is None:
        return True
    return status in (408, 409, 429) or status >= 500


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta seconds only; HTTP dates are rare for APIs)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


class Provider(Protocol):
    """Anything with ``complete``: the adapters and test doubles alike."""

    def complete(self, request: ProviderRequest) -> ProviderReply: ...

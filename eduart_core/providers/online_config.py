"""Online limits per provider (requests in flight, requests per minute), read from the model
registry TOML.

Why in ``models.toml``: a provider's rate limits are facts about an account (OpenAI's tier,
Bedrock's quotas, a local server's GPU), like the prices and the batch limits next to them. A
table ``[online.<provider>]`` sets ``concurrency`` and ``rpm`` for every model of that provider; a
model's own ``concurrency`` / ``rpm`` fields narrow it further; the ``run`` flags ``--concurrency``
and ``--rpm`` are the defaults where the file says nothing. ``EDUART_MODELS`` overrides the
tables key by key, like the models.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from .registry import PROVIDERS, SHIPPED_REGISTRY, check_online_limits

_FIELDS = ("concurrency", "rpm")


@dataclass(frozen=True)
class OnlineLimits:
    """What one provider allows online; None: the launch's default applies."""

    provider: str
    concurrency: int | None = None
    rpm: float | None = None


def _tables(path: Path) -> dict[str, dict]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"model registry {path} not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"model registry {path}: invalid TOML: {exc}") from None
    tables = data.get("online") or {}
    if not isinstance(tables, dict):
        raise UserError(f"model registry {path}: [online] must be a table of providers")
    for provider, entry in tables.items():
        if provider not in PROVIDERS:
            raise UserError(f"model registry {path}: online.{provider}: unknown provider "
                            f"(use {', '.join(PROVIDERS)})")
        if not isinstance(entry, dict):
            raise UserError(f"model registry {path}: online.{provider} is not a table")
        unknown = set(entry) - set(_FIELDS)
        if unknown:
            raise UserError(f"model registry {path}: online.{provider}: unknown field(s) {', '.join(sorted(unknown))}")
        check_online_limits(entry, f"model registry {path}: online.{provider}")
    return tables


def load_online_limits(path: str | os.PathLike | None = None) -> dict[str, OnlineLimits]:
    """Limits per provider: shipped tables, then the user's file (``path`` or ``$EDUART_MODELS``) on top."""
    merged: dict[str, dict] = {}
    sources = [SHIPPED_REGISTRY]
    user = path or os.environ.get("EDUART_MODELS")
    if user:
        sources.append(Path(user).expanduser())
    for source in sources:
        for provider, entry in _tables(Path(source)).items():
            merged.setdefault(provider, {}).update(entry)
    return {provider: OnlineLimits(provider=provider, **entry) for provider, entry in merged.items()}

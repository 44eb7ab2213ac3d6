"""Batch limits and the batch discount per provider, read from the model registry TOML.

Why in ``models.toml``: the limits (requests and bytes per input file, Bedrock's minimum records
per job) and the discount are facts about a provider and an account that change over time; a
researcher adjusts them in the same text file as the prices, and ``EDUART_MODELS`` overrides them
table by table like the models.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from ..errors import UserError
from .registry import SHIPPED_REGISTRY


@dataclass(frozen=True)
class BatchLimits:
    """What one provider's batch API accepts, and what it costs relative to on-demand."""

    provider: str
    max_requests: int = 50000
    max_bytes: int = 200_000_000
    min_requests: int = 1
    discount: float = 0.5
    inline_max_bytes: int = 0
    completion_window: str = "24h"
    timeout_hours: int = 24
    role_arn: str | None = None
    s3_uri: str | None = None

    @property
    def price_factor(self) -> float:
        """Batch price as a fraction of the on-demand price."""
        return 1.0 - self.discount


_FIELDS = {f.name for f in fields(BatchLimits)} - {"provider"}
#: Providers with a batch API we drive (the offline baseline has none: it always runs online).
BATCH_PROVIDERS = ("openai", "openai_compatible", "gemini", "bedrock")


def _tables(path: Path) -> dict[str, dict]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"model registry {path} not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"model registry {path}: invalid TOML: {exc}") from None
    tables = data.get("batch") or {}
    if not isinstance(tables, dict):
        raise UserError(f"model registry {path}: [batch] must be a table of providers")
    for provider, entry in tables.items():
        if provider not in BATCH_PROVIDERS:
            raise UserError(f"model registry {path}: batch.{provider}: no batch support for this provider "
                            f"(use {', '.join(BATCH_PROVIDERS)})")
        if not isinstance(entry, dict):
            raise UserError(f"model registry {path}: batch.{provider} is not a table")
        unknown = set(entry) - _FIELDS
        if unknown:
            raise UserError(f"model registry {path}: batch.{provider}: unknown field(s) {', '.join(sorted(unknown))}")
        discount = entry.get("discount", 0.5)
        if not isinstance(discount, (int, float)) or not 0 <= discount < 1:
            raise UserError(f"model registry {path}: batch.{provider}.discount must be a number in [0, 1)")
        for name in ("max_requests", "max_bytes", "min_requests"):
            value = entry.get(name, 1)
            if not isinstance(value, int) or value < 1:
                raise UserError(f"model registry {path}: batch.{provider}.{name} must be a positive integer")
    return tables


def load_batch_limits(path: str | os.PathLike | None = None) -> dict[str, BatchLimits]:
    """Limits per provider: shipped tables, then the user's file (``path`` or ``$EDUART_MODELS``) on top."""
    merged: dict[str, dict] = {}
    sources = [SHIPPED_REGISTRY]
    user = path or os.environ.get("EDUART_MODELS")
    if user:
        sources.append(Path(user).expanduser())
    for source in sources:
        for provider, entry in _tables(Path(source)).items():
            merged.setdefault(provider, {}).update(entry)
    return {provider: BatchLimits(provider=provider, **entry) for provider, entry in merged.items()}

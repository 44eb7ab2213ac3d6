"""Which limits each run of a launch passes: its provider's, and its model's own.

Why per provider: a sweep asks several providers at once, and each bounds requests in flight and
requests per minute on its own (per account, per server). Every run (one model x condition x
repetition) is a lane of the pool; its jobs pass the limit of the provider it counts against and,
when the registry gives the model its own ``concurrency`` or ``rpm``, that model's limit too.
Where ``models.toml`` says nothing (``[online.<provider>]``, the model's fields), the launch's
``--concurrency`` and ``--rpm`` apply, to each provider separately.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..providers.online_config import OnlineLimits, load_online_limits
from ..providers.registry import ModelSpec
from .pool import Limit


class LaneSource(Protocol):
    """What a lane needs of a launch member: its run id and its model."""

    run_id: str
    spec: ModelSpec


def provider_group(spec: ModelSpec) -> str:
    """The provider a model's requests count against: one per API, one per server for a model
    with its own base URL (two local servers are two providers)."""
    return spec.provider if not spec.base_url else f"{spec.provider} at {spec.base_url}"


def provider_limit(spec: ModelSpec, concurrency: int, rpm: float | None,
                   online: dict[str, OnlineLimits]) -> Limit:
    """The limit of the model's provider: ``[online.<provider>]``, else the launch's flags."""
    table = online.get(spec.provider) or OnlineLimits(spec.provider)
    return Limit(f"provider {provider_group(spec)}", table.concurrency or concurrency,
                 table.rpm if table.rpm is not None else rpm)


def lane_limits(members: Sequence[LaneSource], concurrency: int, rpm: float | None,
                online: dict[str, OnlineLimits] | None = None) -> dict[str, tuple[Limit, ...]]:
    """run id -> the limits its requests pass, provider first (the pool's ``limits``)."""
    online = load_online_limits() if online is None else online
    lanes: dict[str, tuple[Limit, ...]] = {}
    for member in members:
        spec = member.spec
        outer = provider_limit(spec, concurrency, rpm, online)
        limits = [outer]
        if spec.concurrency is not None or spec.rpm is not None:
            limits.append(Limit(f"model {spec.key}", spec.concurrency or outer.concurrency, spec.rpm))
        lanes[member.run_id] = tuple(limits)
    return lanes


def describe_limits(lanes: dict[str, tuple[Limit, ...]]) -> str:
    """``provider openai: 16 at a time, 3000 rpm; provider gemini: 8 at a time``: one line."""
    seen: dict[str, Limit] = {}
    for limits in lanes.values():
        for item in limits:
            seen.setdefault(item.name, item)
    return "; ".join(f"{name}: {item.describe()}" for name, item in seen.items())

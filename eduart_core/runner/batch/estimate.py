"""Online and batch cost side by side, before a launch (``run --dry-run`` and the Runs page).

The batch cost is the online estimate times the provider's batch price factor (``1 - discount``
from ``models.toml``); a model that cannot be asked in batch (`providers.batch_registry.batch_unavailable`:
its provider has no batch API, or its OpenAI-compatible server declares none) shows no batch price
and says why. The number
of jobs follows from the request count and the provider's per-file request limit (the byte limit
can add files: the exact split is made when the files are written).
"""
from __future__ import annotations

import pandas as pd

from ...providers.batch_config import BatchLimits, load_batch_limits
from ...providers.batch_registry import batch_unavailable
from ...store import Store
from ..launch import Plan, estimate_plan

COLUMNS = ["model", "condition", "requests", "cached", "images", "input_tokens", "output_tokens", "answered",
           "cost_online_usd", "cost_batch_usd", "batch_discount", "batch"]


def side_by_side(store: Store, plan: Plan, limits: dict[str, BatchLimits] | None = None) -> tuple[pd.DataFrame, str]:
    """One row per model and condition: the online estimate and what the same requests cost in batch."""
    limits = limits if limits is not None else load_batch_limits()
    estimates, method = estimate_plan(store, plan)
    specs = {m.spec.key: m.spec for m in plan.members}
    rows = []
    for e in estimates:
        spec = specs[e.model]
        unavailable = batch_unavailable(spec, limits)
        batchable = unavailable is None
        lim = limits.get(spec.provider)
        note = "yes"
        if not batchable:
            note = f"not available ({unavailable}): online"
        elif lim.min_requests > 1:
            pooled = sum(x.requests for x in estimates if x.model == e.model)
            if pooled < lim.min_requests:
                note = f"online: {pooled} < {lim.min_requests} requests per job"
        rows.append({"model": e.model, "condition": e.condition, "requests": e.requests, "cached": e.cached,
                     "images": e.images, "input_tokens": e.input_tokens, "output_tokens": e.output_tokens,
                     "answered": e.answered, "cost_online_usd": e.cost_usd,
                     "cost_batch_usd": e.cost_usd * lim.price_factor if batchable else None,
                     "batch_discount": lim.discount if batchable else None, "batch": note})
    return pd.DataFrame(rows, columns=COLUMNS), method


#: The estimate table's columns in the studio's words.
ESTIMATE_WORDS = {"model": "Model", "condition": "Condition", "requests": "Requests to send", "cached": "Cached (free)",
                  "images": "Images", "input_tokens": "Input tokens", "output_tokens": "Output tokens",
                  "answered": "Answered already", "cost_online_usd": "Online (USD)", "cost_batch_usd": "Batch (USD)",
                  "batch_discount": "Batch discount", "batch": "Batch mode"}


def estimate_words(est: pd.DataFrame) -> pd.DataFrame:
    """The estimate as a person reads it: named columns, and 'not offered' / '—' (never None) where a
    model has no batch mode, whose reason the last column gives."""
    shown = est.assign(
        cost_batch_usd=["not offered" if pd.isna(v) else f"{float(v):.6f}" for v in est["cost_batch_usd"]],
        batch_discount=["—" if pd.isna(v) else f"{100 * float(v):.0f}%" for v in est["batch_discount"]])
    return shown.rename(columns=ESTIMATE_WORDS)

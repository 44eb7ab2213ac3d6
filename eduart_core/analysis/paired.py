"""Paired comparison of two models on the items both answered: is the leader's margin beyond noise?

Why paired: two models answer the same items, so most of the item-to-item variation is shared;
comparing their two (unpaired) intervals would call many real gaps "noise". The leaderboard ranks
by the macro average (unweighted mean of the format means), so the difference tested is the
difference of macro averages, and the bootstrap resamples items within each format (the macro
average stays defined and each format keeps its size). The seed is fixed: the page, the report and
`show findings` print the same interval.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import UserError
from ._frame import prepare

#: Bootstrap draws and seed of every paired comparison (documented in the report's methods).
N_BOOT = 2000
SEED = 20260
_CHUNK = 250  # draws per batch: memory stays at CHUNK x items per format


def paired_macro_difference(df: pd.DataFrame, model_a: str, model_b: str, *, n_boot: int = N_BOOT,
                            seed: int = SEED, level: float = 0.95) -> dict:
    """Macro-average difference ``model_a - model_b`` on common items with a paired bootstrap interval.

    Input: the long frame of one condition. Only items both models answered count (n_items);
    items are resampled with replacement within each format, ``n_boot`` times, and the interval is
    the percentile interval at ``level``. Returns a dict: model_a, model_b, n_items, n_types,
    diff_macro, ci_low, ci_high, diff_micro, n_a_better, n_b_better (items where one scored
    higher), n_boot, seed, level. Raises UserError when the two share no item.
    """
    d, _ = prepare(df, ["model", "item_id", "type", "score"])
    a = d[d["model"] == model_a].drop_duplicates("item_id", keep="last").set_index("item_id")
    b = d[d["model"] == model_b].drop_duplicates("item_id", keep="last").set_index("item_id")
    common = a[["type", "score"]].join(b[["score"]], how="inner", rsuffix="_b")
    if common.empty:
        raise UserError(f"{model_a} and {model_b} share no answered item: no paired comparison")
    diff = (common["score"] - common["score_b"]).to_numpy(dtype=float)
    groups = [diff[(common["type"] == t).to_numpy()] for t in pd.unique(common["type"])]
    observed = float(np.mean([g.mean() for g in groups]))
    rng = np.random.default_rng(seed)
    draws = np.empty(n_boot)
    for start in range(0, n_boot, _CHUNK):
        size = min(_CHUNK, n_boot - start)
        total = np.zeros(size)
        for g in groups:
            idx = rng.integers(0, len(g), size=(size, len(g)))
            total += g[idx].mean(axis=1)
        draws[start:start + size] = total / len(groups)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(draws, [tail, 1.0 - tail])
    return {"model_a": model_a, "model_b": model_b, "n_items": int(len(diff)), "n_types": len(groups),
            "diff_macro": observed, "ci_low": float(low), "ci_high": float(high),
            "diff_micro": float(diff.mean()), "n_a_better": int((diff > 1e-9).sum()),
            "n_b_better": int((diff < -1e-9).sum()), "n_boot": int(n_boot), "seed": int(seed), "level": level}

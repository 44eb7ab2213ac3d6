"""Analyses of an aggregate-only dataset: the published per-model per-format means.

Why a module of its own: the publication gives type means (with n) and a pooled motivation
comparison, but no item-level answers. The leaderboard, the format heatmap, the format spread and
the motivation charts can still be drawn from those aggregates, and they must be drawn with the
same formulas as for item-level data (Wilson intervals, macro = unweighted mean of type means), so
the aggregate path lives here beside the item-level one instead of in the data-access layer.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..vocab import DEFAULT_CONDITION, MOTIVATION_CONDITION
from ._frame import finish, sort_frame
from .intervals import wilson_interval
from .motivation import holm

TYPE_MEAN_COLUMNS = ["model", "family", "condition", "type", "n", "mean", "ci_low", "ci_high"]


def published_type_means(frame: pd.DataFrame) -> pd.DataFrame:
    """The stored published type means as the ``type_scores`` frame (fractions, every interval set).

    The publication prints Wilson intervals for the default condition only; missing intervals are
    filled with the same Wilson interval (``intervals.Z95``) that ``type_scores`` uses.
    """
    out = frame.copy()
    for col in ("mean", "ci_low", "ci_high"):
        if col in out and len(out) and out[col].max() > 1.5:  # given in percent
            out[col] = out[col] / 100.0
    missing = out["ci_low"].isna() | out["ci_high"].isna()
    if missing.any():
        low, high = wilson_interval(out.loc[missing, "mean"].to_numpy(dtype=float),
                                    out.loc[missing, "n"].to_numpy(dtype=float))
        out.loc[missing, "ci_low"], out.loc[missing, "ci_high"] = low, high
    return finish(sort_frame(out[[c for c in TYPE_MEAN_COLUMNS if c in out]], ["model", "condition", "type"]), 0)


def published_format_spread(type_means: pd.DataFrame) -> pd.DataFrame:
    """``format_spread`` from type means: best and worst format per model and condition."""
    rows = []
    for (model, condition), sub in type_means.groupby(["model", "condition"], sort=False):
        best, worst = sub.loc[sub["mean"].idxmax()], sub.loc[sub["mean"].idxmin()]
        rows.append({"model": model, "condition": condition, "best_type": best["type"],
                     "best_mean": best["mean"], "worst_type": worst["type"], "worst_mean": worst["mean"],
                     "spread": best["mean"] - worst["mean"], "n_types": int(sub["type"].nunique())})
    columns = ["model", "condition", "best_type", "best_mean", "worst_type", "worst_mean", "spread", "n_types"]
    return finish(sort_frame(pd.DataFrame(rows, columns=columns), ["model", "condition"]), 0)


def published_motivation(macro: pd.DataFrame, pooled: pd.DataFrame | None) -> pd.DataFrame:
    """Per model default vs motivation macro from the type means, joined with the published pooled
    (micro) paired comparison when the dataset has one. No item-level test can be run here:
    ``p_holm`` is the Holm adjustment of the published paired t-test p-values across models."""
    wide = macro.pivot_table(index="model", columns="condition", values="macro")
    out = pd.DataFrame({"model": wide.index,
                        "default_macro": wide.get(DEFAULT_CONDITION),
                        "motivation_macro": wide.get(MOTIVATION_CONDITION)}).reset_index(drop=True)
    out["delta_macro"] = out["motivation_macro"] - out["default_macro"]
    keep = ["default_micro", "motivation_micro", "delta_micro", "delta_micro_ci_low", "delta_micro_ci_high",
            "p_ttest", "n_paired", "n_improved", "n_same", "n_degraded"]
    if pooled is not None and len(pooled):
        out = out.merge(pooled[["model"] + [c for c in keep if c in pooled]], on="model", how="left")
    else:
        for c in keep:
            out[c] = np.nan
    out["p_wilcoxon"] = np.nan
    out = out.dropna(subset=["default_macro", "motivation_macro"]).reset_index(drop=True)
    # The published p-values are per model; counting "significant" models needs the same Holm
    # correction the item-level path applies (there to the Wilcoxon p-values).
    p = out["p_ttest"].to_numpy(dtype=float) if "p_ttest" in out else np.full(len(out), np.nan)
    adjusted = np.full(len(out), np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        adjusted[ok] = holm(p[ok])
    out["p_holm"] = adjusted
    return finish(sort_frame(out, ["model"]), 0, holm_of="p_ttest")


def published_motivation_by_type(type_means: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-format Table 9 frame, per model x format delta frame) from the type means."""
    wide = type_means.pivot_table(index=["model", "type"], columns="condition", values="mean").reset_index()
    wide["delta"] = wide[MOTIVATION_CONDITION] - wide[DEFAULT_CONDITION]
    table = wide.groupby("type")["delta"].agg(mean_delta="mean", min_delta="min", max_delta="max").reset_index()
    return finish(sort_frame(table, ["type"]), 0), finish(sort_frame(wide[["model", "type", "delta"]],
                                                                         ["model", "type"]), 0)


def pooled_motivation_fractions(frame: pd.DataFrame) -> pd.DataFrame:
    """The stored pooled comparison with any percent columns (``*_pct``, ``*_pp``) as fractions."""
    out = frame.copy()
    for col in list(out.columns):
        if col.endswith("_pct") or col.endswith("_pp"):
            out[col.rsplit("_", 1)[0]] = out[col] / 100.0
    return out


def published_items_by_format(type_means: pd.DataFrame, condition: str) -> tuple[pd.Series, int]:
    """Items per format of an aggregate-only dataset (the n behind its type means), and its model count."""
    tm = type_means[type_means["condition"] == condition]
    counts = tm.groupby("type")["n"].max()
    order = sort_frame(pd.DataFrame({"type": counts.index}), ["type"])["type"]
    return counts.reindex(order).astype(int), int(tm["model"].nunique())

"""Stability over repeats: does an examinee give the same answers when asked the same items again?

Input: the per-repeat long frame (one row per model x condition x item x repetition, columns
model, condition, item_id, type, repetition, score, correct), as `store.scores.load_scores(...,
include_repetitions=True)` gives it. Only items an examinee answered in at least two repeats count
("items with repeats"); the rest carry no information about stability.

Per model and condition (`stability`):

* ``agree_share``: share of those items whose repeats all got the same score;
* ``flip_rate``: share of items right in some repeats and wrong in others (``correct`` differs),
  with its 95% Wilson score interval (n = items with repeats);
* ``macro_sd``: run-to-run SD of the macro average: the macro average (unweighted mean of the
  format means) of each repeat on the items answered in every repeat, SD across repeats (ddof 1);
* the variance of the repeat-averaged macro average split into item sampling and repeats (the
  one-way random-effects split of Miller 2024, "Adding Error Bars to Evals", section on resampling
  within questions). With K_i repeats of item i, its mean ybar_i and within-item variance s2_i
  (ddof 1), n_f items of format f and F formats:
  ``var_total = sum_f s2_f(ybar) / (F^2 n_f)`` (s2_f(ybar): variance of the item means of format f),
  ``var_repeats = sum_f mean_{i in f}(s2_i / K_i) / (F^2 n_f)``,
  ``var_items = max(var_total - var_repeats, 0)``; ``repeat_share = var_repeats / var_total``.

Per item (`item_stability`): how many examinees (model x condition) flipped on it, of those that
answered it in at least two repeats. `unstable_model` is the finding's test: the model with the
highest flip rate is named only when an exact McNemar test on the items both answered in repeats
(flipped vs. not, paired by item) says it flips more than each rival, Holm-corrected over rivals.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .intervals import WILSON_WORDS, wilson_interval
from .motivation import holm

STABILITY_COLUMNS = ["model", "condition", "items", "repeats", "agree_share", "flips", "flip_rate", "flip_low",
                     "flip_high", "macro_sd", "macro_min", "macro_max", "var_items", "var_repeats", "repeat_share"]
ITEM_STABILITY_COLUMNS = ["item_id", "type", "examinees", "flips", "flip_share", "mean_score", "flipped"]
#: How the caption and the docs name the methods.
METHOD_WORDS = (f"flip rate with its {WILSON_WORDS}; variance split: one-way random effects over repeats "
                "(Miller 2024, Adding Error Bars to Evals)")
TEST_WORDS = "exact McNemar test on the items both answered in repeats, Holm-corrected over the rivals"


def item_repeats(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per model x condition x item answered in at least two repeats: n_repeats, mean score,
    within-item variance of the score (ddof 1), agree (one score in every repeat), flip (right in
    some repeats, wrong in others), type."""
    cols = ["model", "condition", "item_id", "type", "repetition", "score", "correct"]
    if frame.empty:
        return pd.DataFrame(columns=["model", "condition", "item_id", "type", "n_repeats", "mean", "var",
                                     "agree", "flip"])
    d = frame[cols].dropna(subset=["score"]).copy()
    d["model"] = d["model"].astype(str)
    d["condition"] = d["condition"].astype(str)
    d["item_id"] = d["item_id"].astype(str)
    d["type"] = d["type"].astype(str)
    d["correct"] = d["correct"].astype(bool)
    g = d.groupby(["model", "condition", "item_id"], sort=True, observed=True)
    out = g.agg(type=("type", "first"), n_repeats=("repetition", "nunique"), mean=("score", "mean"),
                var=("score", "var"), low=("score", "min"), high=("score", "max"),
                right=("correct", "any"), all_right=("correct", "all")).reset_index()
    out = out[out["n_repeats"] >= 2].copy()
    out["agree"] = out["low"] == out["high"]
    out["flip"] = out["right"] & ~out["all_right"]
    return out.drop(columns=["low", "high", "right", "all_right"]).reset_index(drop=True)


def _variance_split(per_item: pd.DataFrame) -> tuple[float, float, float]:
    """(var_total, var_items, var_repeats) of the repeat-averaged macro average (module docstring)."""
    formats = [g for _, g in per_item.groupby("type", sort=True)]
    f = len(formats)
    total = repeats = 0.0
    for g in formats:
        n = len(g)
        between = float(g["mean"].var(ddof=1)) if n > 1 else 0.0
        within = float((g["var"] / g["n_repeats"]).mean())
        total += between / (f * f * n)
        repeats += within / (f * f * n)
    return total, max(total - repeats, 0.0), repeats


def _macro_per_repeat(frame: pd.DataFrame, items: set[str]) -> pd.Series:
    """The macro average of each repeat over the items answered in every repeat."""
    d = frame[frame["item_id"].astype(str).isin(items)]
    reps = sorted(d["repetition"].unique())
    per_item = d.groupby("item_id")["repetition"].nunique()
    complete = set(per_item[per_item == len(reps)].index.astype(str))
    d = d[d["item_id"].astype(str).isin(complete)]
    if d.empty:
        return pd.Series(dtype=float)
    by_type = d.groupby(["repetition", "type"], observed=True)["score"].mean()
    return by_type.groupby(level="repetition").mean()


def stability(frame: pd.DataFrame) -> pd.DataFrame:
    """Stability per model x condition (module docstring); examinees without repeats are left out."""
    per = item_repeats(frame)
    rows = []
    if per.empty:
        return pd.DataFrame(columns=STABILITY_COLUMNS)
    d = frame.dropna(subset=["score"]).copy()
    d["model"], d["condition"] = d["model"].astype(str), d["condition"].astype(str)
    for (model, condition), g in per.groupby(["model", "condition"], sort=True):
        n = len(g)
        flips = int(g["flip"].sum())
        low, high = wilson_interval(flips / n, n)
        mine = d[(d["model"] == model) & (d["condition"] == condition)]
        macros = _macro_per_repeat(mine, set(g["item_id"]))
        total, items_var, repeats_var = _variance_split(g)
        rows.append({"model": model, "condition": condition, "items": n, "repeats": int(g["n_repeats"].max()),
                     "agree_share": float(g["agree"].mean()), "flips": flips, "flip_rate": flips / n,
                     "flip_low": low, "flip_high": high,
                     "macro_sd": float(macros.std(ddof=1)) if len(macros) > 1 else float("nan"),
                     "macro_min": float(macros.min()) if len(macros) else float("nan"),
                     "macro_max": float(macros.max()) if len(macros) else float("nan"),
                     "var_items": items_var, "var_repeats": repeats_var,
                     "repeat_share": repeats_var / total if total > 0 else float("nan")})
    return pd.DataFrame(rows, columns=STABILITY_COLUMNS)


def item_stability(frame: pd.DataFrame, top: int | None = None) -> pd.DataFrame:
    """Items by how many examinees flipped on them (most first; ties by item id); ``top`` keeps the
    first rows. ``flipped`` names the examinees (``model (condition)``) that flipped."""
    per = item_repeats(frame)
    if per.empty:
        return pd.DataFrame(columns=ITEM_STABILITY_COLUMNS)
    per["who"] = per["model"] + " (" + per["condition"] + ")"
    rows = []
    for item_id, g in per.groupby("item_id", sort=True):
        flipped = g.loc[g["flip"], "who"].tolist()
        rows.append({"item_id": item_id, "type": g["type"].iloc[0], "examinees": len(g), "flips": len(flipped),
                     "flip_share": len(flipped) / len(g), "mean_score": float(g["mean"].mean()),
                     "flipped": ", ".join(flipped)})
    out = pd.DataFrame(rows, columns=ITEM_STABILITY_COLUMNS)
    out = out.sort_values(["flips", "flip_share", "item_id"], ascending=[False, False, True]).reset_index(drop=True)
    return out.head(top) if top is not None else out


def unstable_model(frame: pd.DataFrame, condition: str, alpha: float = 0.05) -> dict | None:
    """The model of ``condition`` whose answers flip between repeats more than every rival's, or None.

    The candidate is the model with the highest flip rate; against each rival, the items both
    answered in at least two repeats are paired and an exact McNemar test (binomial on the items
    where exactly one of the two flipped, one-sided: the candidate flips more) gives a p-value; the
    candidate is named only when every Holm-adjusted p-value is below ``alpha``. Needs two models.
    Returns model, flip_rate, flip_low, flip_high, items, repeats, rivals, p_max (the largest
    adjusted p), rival_max_high (the highest Wilson upper bound among the rivals).
    """
    per = item_repeats(frame)
    per = per[per["condition"] == str(condition)]
    table = stability(frame)
    table = table[table["condition"] == str(condition)]
    if len(table) < 2:
        return None
    best = table.sort_values(["flip_rate", "model"], ascending=[False, True]).iloc[0]
    mine = per[per["model"] == best["model"]].set_index("item_id")["flip"]
    pvalues = []
    for rival in table["model"]:
        if rival == best["model"]:
            continue
        theirs = per[per["model"] == rival].set_index("item_id")["flip"]
        both = pd.concat([mine, theirs], axis=1, join="inner", keys=["a", "b"])
        only_a = int((both["a"] & ~both["b"]).sum())
        only_b = int((~both["a"] & both["b"]).sum())
        if only_a + only_b == 0:
            pvalues.append(1.0)
            continue
        pvalues.append(float(stats.binomtest(only_a, only_a + only_b, 0.5, alternative="greater").pvalue))
    adjusted = holm(np.asarray(pvalues, dtype=float)).tolist()
    if not adjusted or max(adjusted) >= alpha:
        return None
    rivals = table[table["model"] != best["model"]]
    return {"model": best["model"], "flip_rate": float(best["flip_rate"]), "flip_low": float(best["flip_low"]),
            "flip_high": float(best["flip_high"]), "items": int(best["items"]), "repeats": int(best["repeats"]),
            "rivals": len(rivals), "p_max": float(max(adjusted)),
            "rival_max_high": float(rivals["flip_high"].max()), "rival_max_rate": float(rivals["flip_rate"].max())}

"""Power before spending: how many items a comparison or a new model's interval needs, from a pilot.

Why from the paired variance: two models asked the same items are compared item by item; most
items are answered alike by both, so the variance of the paired difference is far smaller than the
sum of the two models' variances, and the items needed follow from it (Miller, "Adding Error Bars
to Evals", 2024, Sec. 4: paired differences and power).

The measure is the macro average (mean of the format means), as on the leaderboard. With n items
of which a share pi_f are of format f (kept as in the pilot), the variance of the macro
difference is sum_f Var_f / (F^2 n pi_f), Var_f the per-item variance of the paired difference
within format f; a two-sided test at level alpha with power 1 - beta needs
n = (z_{1-alpha/2} + z_{1-beta})^2 * sum_f Var_f / (F^2 pi_f) / d^2 (normal approximation). A new
model's macro 95% interval of +/- w needs n = z_{0.975}^2 * sum_f S_f / (F^2 pi_f) / w^2, S_f the
pilot models' mean per-item score variance within format f.

The plan is in items: a model with repeats is scored per item as the mean over its repeats, so
the pilot's per-item variance already holds the run-to-run noise at the pilot's number of repeats;
the plan does not split it into item and repeat parts. Formats with fewer than two pilot items
borrow the variance over all formats. Pure (pandas/scipy): no store.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

__all__ = ["POWER_METHOD", "items_for_difference", "items_for_interval", "macro_variance_factor",
           "paired_pilot", "power_table"]

POWER_METHOD = ("normal approximation, macro average (mean of format means) with the pilot's format shares; "
                "paired per-item differences (Miller 2024); scores averaged over repeats per item")


def _per_item(frame: pd.DataFrame) -> pd.DataFrame:
    """One score per model and item (the mean over repeats and duplicates), with its format."""
    return frame.groupby(["model", "item_id"], observed=True, as_index=False).agg(
        score=("score", "mean"), type=("type", "first"))


def paired_pilot(frame: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Items both A and B answered: item_id, type, score_a, score_b, diff (= score_a - score_b)."""
    return _paired(_per_item(frame), a, b)


def _paired(per: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    left = per[per["model"] == a].set_index("item_id")
    right = per[per["model"] == b].set_index("item_id")
    both = left.join(right[["score"]], how="inner", lsuffix="_a", rsuffix="_b")
    out = pd.DataFrame({"item_id": both.index, "type": both["type"].astype(str).to_numpy(),
                        "score_a": both["score_a"].to_numpy(float), "score_b": both["score_b"].to_numpy(float)})
    out["diff"] = out["score_a"] - out["score_b"]
    return out


def macro_variance_factor(values: pd.Series, formats: pd.Series) -> tuple[float, int]:
    """sum_f Var_f / (F^2 pi_f): the variance of a macro mean over one item (divide by n for n items),
    and F. ``values`` per item, ``formats`` its format."""
    frame = pd.DataFrame({"v": np.asarray(values, float), "f": np.asarray(formats)})
    total = len(frame)
    overall = float(frame["v"].var(ddof=1)) if total >= 2 else 0.0
    groups = frame.groupby("f")["v"]
    n_formats = groups.ngroups
    factor = 0.0
    for _, group in groups:
        var = float(group.var(ddof=1)) if len(group) >= 2 else overall
        factor += var / (len(group) / total)
    return factor / n_formats ** 2, n_formats


def items_for_difference(factor: float, d: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Items needed to detect a macro difference of ``d`` (score units) given the per-item variance
    factor of the paired difference (two-sided ``alpha``, ``power``)."""
    from scipy.stats import norm  # lazy: importing the views must not pay for scipy.stats

    if d <= 0:
        raise ValueError("the difference to detect must be above zero")
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    return max(2, math.ceil(z ** 2 * factor / d ** 2))


def items_for_interval(factor: float, w: float, level: float = 0.95) -> int:
    """Items needed for a macro interval of +/- ``w`` given the per-item variance factor of a score."""
    from scipy.stats import norm

    if w <= 0:
        raise ValueError("the interval half-width must be above zero")
    return max(2, math.ceil(norm.ppf(0.5 + level / 2) ** 2 * factor / w ** 2))


def power_table(frame: pd.DataFrame, d_points: float = 5.0, w_points: float = 3.0, pairs: list[tuple[str, str]] | None = None,
                alpha: float = 0.05, power: float = 0.8) -> pd.DataFrame:
    """Per pair of models: the pilot (items both answered, macro difference, SD of the paired
    difference) and the items needed to detect ``d_points`` with ``power`` at two-sided ``alpha``;
    then one row for a new model: the items needed for a macro 95% interval of +/- ``w_points``.

    ``frame``: the long score frame (model, item_id, type, score). Points are percentage points.
    """
    models = sorted(frame["model"].astype(str).unique())
    pairs = pairs if pairs is not None else list(itertools.combinations(models, 2))
    named = {m for pair in pairs for m in pair}
    if named:  # only the named models' rows are read below: averaging the others' per item is wasted
        frame = frame[frame["model"].astype(str).isin(named)]
    rows = []
    per = _per_item(frame)
    per["model"] = per["model"].astype(str)
    for a, b in pairs:
        pilot = _paired(per, a, b)
        if len(pilot) < 2:
            rows.append({"question": f"tell A from B by {d_points:g} points", "model_a": a, "model_b": b,
                         "pilot_items": len(pilot), "formats": pilot["type"].nunique(), "pilot_macro_diff": np.nan,
                         "sd_paired_diff": np.nan, "target_points": d_points, "items_needed": np.nan,
                         "pilot_enough": False})
            continue
        factor, n_formats = macro_variance_factor(pilot["diff"], pilot["type"])
        macro = float(pilot.groupby("type")["diff"].mean().mean())
        needed = items_for_difference(factor, d_points / 100, alpha, power) if factor > 0 else 2
        rows.append({"question": f"tell A from B by {d_points:g} points", "model_a": a, "model_b": b,
                     "pilot_items": len(pilot), "formats": n_formats, "pilot_macro_diff": round(100 * macro, 2),
                     "sd_paired_diff": round(100 * float(pilot["diff"].std(ddof=1)), 2), "target_points": d_points,
                     "items_needed": needed, "pilot_enough": len(pilot) >= needed})
    per = per[per["model"].isin({m for pair in pairs for m in pair} or set(models))]
    if len(per) >= 2:
        factors = [macro_variance_factor(g["score"], g["type"].astype(str))[0]
                   for _, g in per.groupby("model", observed=True) if len(g) >= 2]
        factor = float(np.mean(factors)) if factors else 0.0
        n_items = int(per["item_id"].nunique())
        needed = items_for_interval(factor, w_points / 100) if factor > 0 else 2
        rows.append({"question": f"a new model's macro 95% interval of +/- {w_points:g} points", "model_a": "(a new model)",
                     "model_b": "", "pilot_items": n_items, "formats": int(per["type"].nunique()),
                     "pilot_macro_diff": np.nan, "sd_paired_diff": np.nan, "target_points": w_points,
                     "items_needed": needed, "pilot_enough": n_items >= needed})
    out = pd.DataFrame(rows, columns=["question", "model_a", "model_b", "pilot_items", "formats", "pilot_macro_diff",
                                      "sd_paired_diff", "target_points", "items_needed", "pilot_enough"])
    out["items_needed"] = out["items_needed"].astype("Int64")
    out.attrs.update(method=POWER_METHOD, alpha=alpha, power=power, d_points=d_points, w_points=w_points)
    return out

"""Within-model paired contrasts of parallel item forms (items linked by `parallel_of`).

Why: language and image are properties of items, not of examinees, so they are not DIF groups.
Where an item has a parallel form (the Italian and the English version, or the image and the
text-only version of one question) each model answers both, and the difference of its two scores
is a contrast with the model held fixed. Across the models of a pair the differences give a mean
with a t interval and an exact sign test on the models that scored the two forms differently.
In EduArt, language is confounded with source (Italian school items vs AP items): only parallel
forms separate the two, and the pages say so.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ..vocab import language_label
from ._frame import prepare
from .intervals import t_interval

COLUMNS = ["item_id", "parallel_of", "type", "differs", "n_examinees", "mean_item", "mean_parallel", "mean_diff",
           "ci_low", "ci_high", "n_item_better", "n_parallel_better", "n_tied", "p_sign"]


def _differs(a: pd.Series, b: pd.Series) -> str:
    parts = []
    if a.get("language") != b.get("language"):
        parts.append(f"language: {language_label(a.get('language'))} vs {language_label(b.get('language'))}")
    if bool(a.get("has_image")) != bool(b.get("has_image")):
        parts.append("image: " + ("with vs without" if a.get("has_image") else "without vs with"))
    if a.get("type") != b.get("type"):
        parts.append(f"format: {a.get('type')} vs {b.get('type')}")
    return "; ".join(parts) or "wording only"


def parallel_contrasts(df: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """One row per linked pair (item, its parallel form) with both forms in the score frame.

    ``df``: the long score frame (examinees = model x condition rows); ``items``: item_id,
    parallel_of, language, has_image, type. Differences are item minus parallel form, per
    examinee who answered both. attrs: n_examinees (examinees in the frame), n_pairs.
    """
    d, dropped = prepare(df, ["model", "condition", "item_id", "type", "score"])
    n_examinees = len(d[["model", "condition"]].drop_duplicates())
    info = items.assign(item_id=items["item_id"].astype(str)).set_index("item_id")
    wide = d.assign(item_id=d["item_id"].astype(str)).pivot_table(
        index=["model", "condition"], columns="item_id", values="score", aggfunc="first")
    rows = []
    if "parallel_of" in info:
        for item_id, other in info["parallel_of"].dropna().items():
            other = str(other)
            if not other or item_id not in wide or other not in wide or other not in info.index:
                continue
            both = wide[[item_id, other]].dropna()
            diff = (both[item_id] - both[other]).to_numpy(dtype=float)
            better, worse = int((diff > 0).sum()), int((diff < 0).sum())
            p_sign = float(stats.binomtest(better, better + worse).pvalue) if better + worse else float("nan")
            low, high = t_interval(diff)
            rows.append({"item_id": item_id, "parallel_of": other, "type": info.at[item_id, "type"],
                         "differs": _differs(info.loc[item_id], info.loc[other]), "n_examinees": len(both),
                         "mean_item": float(both[item_id].mean()) if len(both) else np.nan,
                         "mean_parallel": float(both[other].mean()) if len(both) else np.nan,
                         "mean_diff": float(diff.mean()) if len(diff) else np.nan, "ci_low": low, "ci_high": high,
                         "n_item_better": better, "n_parallel_better": worse, "n_tied": int(len(diff) - better - worse),
                         "p_sign": p_sign})
    out = pd.DataFrame(rows, columns=COLUMNS)
    out.attrs.update(n_dropped=int(dropped), n_examinees=n_examinees, n_pairs=len(out))
    return out


__all__ = ["COLUMNS", "parallel_contrasts"]

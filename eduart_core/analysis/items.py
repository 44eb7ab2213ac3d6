"""Per-item summaries for browsing: the inspector's item table, its quick filters, the dataset at a glance.

Why here and not in a page: "models right", "top models fail while weak ones pass" and the
length and image summaries are statistics; the inspector, the report and `show items` must agree
on them, so they are computed once, from the same frames, by these functions.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._frame import finish, prepare, sort_frame

#: Quick filters of the item list, with the words a page shows for them.
ITEM_FILTERS: dict[str, str] = {
    "all": "All items",
    "all_wrong": "All models wrong",
    "disagree": "Models disagree",
    "negative_rpb": "Negative discrimination (suspect key)",
    "top_fail": "Top models fail, weak ones pass",
}


def item_overview(df: pd.DataFrame, stats: pd.DataFrame) -> pd.DataFrame:
    """One row per item of a single-condition long frame: format, language, image, mean score,
    models right (score >= 0.5), p and r_pb with its category, and ``top_minus_weak`` (mean score
    of the stronger half of the models minus the weaker half; negative = strong models fail)."""
    d, dropped = prepare(df, ["model", "condition", "item_id", "type", "language", "has_image", "score"])
    right = d.assign(right=d["score"] >= 0.5)
    agg = right.groupby("item_id").agg(type=("type", "first"), language=("language", "first"),
                                       has_image=("has_image", "first"), mean_score=("score", "mean"),
                                       models_right=("right", "sum"), n_models=("model", "nunique"))
    keep = ["p", "r_pb", "r_pb_ci_low", "r_pb_ci_high", "discrimination_category"]
    table = agg.join(stats.set_index("item_id")[[c for c in keep if c in stats]], how="left").reset_index()
    ability = d.groupby("model")["score"].mean().sort_values(ascending=False)
    top = set(ability.index[: max(1, len(ability) // 2)])
    by = d.assign(top=d["model"].isin(top)).groupby(["item_id", "top"])["score"].mean().unstack()
    table["top_minus_weak"] = (table["item_id"].map(by[True] - by[False])
                               if True in by and False in by else np.nan)
    table["models_right"] = table["models_right"].astype(int)
    return finish(table.sort_values("item_id").reset_index(drop=True), dropped)


def filter_items(table: pd.DataFrame, kind: str, search: str = "") -> pd.DataFrame:
    """Rows of ``item_overview`` kept by a quick filter and a case-insensitive search on id and text."""
    if kind not in ITEM_FILTERS:
        raise ValueError(f"unknown item filter {kind!r}; use one of {', '.join(ITEM_FILTERS)}")
    out = table
    if kind == "all_wrong":
        out = out[out["models_right"] == 0]
    elif kind == "disagree":
        out = out[(out["models_right"] > 0) & (out["models_right"] < out["n_models"])]
    elif kind == "negative_rpb":
        out = out[out["r_pb"] < 0]
    elif kind == "top_fail":
        out = out[out["top_minus_weak"] < 0]
    if search:
        s = search.lower()
        text = out["text"] if "text" in out else pd.Series("", index=out.index)
        out = out[out["item_id"].str.lower().str.contains(s, regex=False)
                  | text.str.lower().str.contains(s, regex=False)]
    return out


def counts_by(items: pd.DataFrame, column: str) -> pd.DataFrame:
    """Items per value of a column (format, language, has_image): columns ``column``, items."""
    return sort_frame(items.groupby(column).size().rename("items").reset_index(), [column])


def length_summary(values, label: str) -> pd.DataFrame:
    """Mean, SD, min, median and max of item lengths (published Table 2), one row named ``label``."""
    d = pd.Series(values, dtype=float).describe()
    return pd.DataFrame([{"measure": label, "mean": d["mean"], "sd": d["std"], "min": d["min"],
                          "median": d["50%"], "max": d["max"], "n_items": int(d["count"])}])


def image_summary(images: pd.DataFrame) -> pd.DataFrame:
    """Mean, min, median and max of image width, height and file size (published Table 3)."""
    columns = ["width", "height", "kb"]
    if images.empty:
        return pd.DataFrame(columns=["statistic", *columns])
    desc = images[columns].describe().loc[["mean", "min", "50%", "max"]]
    desc.index = ["mean", "min", "median", "max"]
    return desc.reset_index(names="statistic")


def disagreement_examples(table: pd.DataFrame, per_format: int = 2) -> pd.DataFrame:
    """The items of ``item_overview`` on which the models split most evenly, ``per_format`` per format.

    Models disagree on an item when some answer it right and some wrong; the closer the share
    right is to one half, the more telling the example (ties: item id). Formats in published
    order. Adds ``share_right``.
    """
    d = table[(table["models_right"] > 0) & (table["models_right"] < table["n_models"])].copy()
    if d.empty:
        return d.assign(share_right=pd.Series(dtype=float))
    d["share_right"] = d["models_right"] / d["n_models"]
    d["_closeness"] = (d["share_right"] - 0.5).abs()
    d = d.sort_values(["_closeness", "item_id"], kind="stable").groupby("type", sort=False).head(per_format)
    return sort_frame(d.drop(columns="_closeness"), ["type", "item_id"])

"""Per-item summaries for browsing: the inspector's item table, its quick filters, the dataset at a glance.

Why here and not in a page: "models right", "top models fail while weak ones pass" and the
length and image summaries are statistics; the inspector, the report and `show items` must agree
on them, so they are computed once, from the same frames, by these functions.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ._frame import finish, prepare, sort_frame


def _column(table: pd.DataFrame, name: str, fill: object = 0) -> pd.Series:
    """A column of the item table, or ``fill`` everywhere when the table lacks it (no flags yet)."""
    return table[name] if name in table else pd.Series(fill, index=table.index)


#: The filter that keeps every item, and the one that needs baseline models (`vocab.BASELINE_KIND`).
EVERY_ITEM, BASELINE_ONLY = "all", "baseline_only_right"
#: The filter that compares the two scoring profiles (it needs both profiles' scores).
PROFILE_CHANGE = "profile_change"
#: The filter that needs an IRT fit and one examinee: the items where its answer is unexpected
#: (`explorer.mark_unexpected` adds the columns it reads).
ABERRANT = "aberrant"
#: Quick filters of the item list: name -> (words a page shows, rule over the item table). An
#: explicit registry: a new filter is one entry. The flag columns come from `explorer.item_flags`;
#: a table without them keeps no row for those filters.
ITEM_FILTER_RULES: dict[str, tuple[str, Callable[[pd.DataFrame], pd.Series]]] = {
    EVERY_ITEM: ("All items", lambda t: pd.Series(True, index=t.index)),
    "all_wrong": ("No model fully right", lambda t: (t["models_right"] == 0) & (_column(t, "n_models") > 0)),
    "disagree": ("Models disagree", lambda t: (t["models_right"] > 0) & (t["models_right"] < t["n_models"])),
    "wrong_with_justification": ("Wrong only with justification (right without it)",
                                 lambda t: _column(t, "n_wrong_with_justification") > 0),
    PROFILE_CHANGE: ("Score changes between the profiles", lambda t: _column(t, "n_profile_changes") > 0),
    "negative_rpb": ("Suspect key (negative discrimination)", lambda t: _column(t, "r_pb", np.nan) < 0),
    "top_fail": ("Top models fail, weak ones pass", lambda t: _column(t, "top_minus_weak", np.nan) < 0),
    BASELINE_ONLY: ("Only a baseline is right",
                            lambda t: _column(t, "baseline_only_right", False).fillna(False).astype(bool)),
    ABERRANT: ("Aberrant for this model (answers the IRT model did not expect)",
               lambda t: _column(t, "irt_unexpected", False).fillna(False).astype(bool)),
}
#: The filters' names and words (what a selector lists).
ITEM_FILTERS: dict[str, str] = {name: label for name, (label, _) in ITEM_FILTER_RULES.items()}


#: "Right" in counts of models right: full credit. With this rule "right for every examinee" is
#: exactly p = 1, so the counts agree with the difficulty p computed over the same examinees.
FULL_CREDIT = 1.0


def item_overview(df: pd.DataFrame, stats: pd.DataFrame) -> pd.DataFrame:
    """One row per item of a single-condition long frame: format, language, image, mean score,
    models right (full credit, score = 1, over the same examinees as p), p and r_pb with its
    category, and ``top_minus_weak`` (mean score of the stronger half of the models minus the
    weaker half; negative = strong models fail). ``stats`` must come from the same frame."""
    d, dropped = prepare(df, ["model", "condition", "item_id", "type", "language", "has_image", "score"])
    right = d.assign(right=d["score"] >= FULL_CREDIT - 1e-9)
    agg = right.groupby("item_id").agg(type=("type", "first"), language=("language", "first"),
                                       has_image=("has_image", "first"), mean_score=("score", "mean"),
                                       models_right=("right", "sum"), n_models=("model", "nunique"))
    keep = ["p", "r_pb", "r_pb_ci_low", "r_pb_ci_high", "discrimination_category", "n_examinees"]
    table = agg.join(stats.set_index("item_id")[[c for c in keep if c in stats]], how="left").reset_index()
    ability = d.groupby("model")["score"].mean().sort_values(ascending=False)
    top = set(ability.index[: max(1, len(ability) // 2)])
    by = d.assign(top=d["model"].isin(top)).groupby(["item_id", "top"])["score"].mean().unstack()
    table["top_minus_weak"] = (table["item_id"].map(by[True] - by[False])
                               if True in by and False in by else np.nan)
    table["models_right"] = table["models_right"].astype(int)
    return finish(table.sort_values("item_id").reset_index(drop=True), dropped)


def filter_items(table: pd.DataFrame, kind: str, search: str = "") -> pd.DataFrame:
    """Rows of the item table kept by a quick filter and a case-insensitive search on id and text."""
    if kind not in ITEM_FILTER_RULES:
        raise ValueError(f"unknown item filter {kind!r}; use one of {', '.join(ITEM_FILTER_RULES)}")
    keep = ITEM_FILTER_RULES[kind][1](table)
    out = table[keep.fillna(False).to_numpy(dtype=bool)] if len(table) else table
    if search:
        s = search.lower()
        text = out["text"] if "text" in out else pd.Series("", index=out.index)
        out = out[out["item_id"].astype(str).str.lower().str.contains(s, regex=False)
                  | text.fillna("").astype(str).str.lower().str.contains(s, regex=False)]
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

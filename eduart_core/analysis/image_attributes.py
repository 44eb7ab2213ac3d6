"""Accuracy by what the picture shows: genre, number of figures, indoor or outdoor, warm or cool.

Why: VQArt-Bench-style datasets describe each image (its genre, how many figures it holds, whether
the scene is inside, its colour temperature), and "models fail on crowded scenes" is a claim only
these breakdowns can test. Numeric attributes with many values (a warm/cool ratio) are cut into
three equal-count bins so that each bin has enough items; whole numbers with few values (figures)
keep their values. Pure function: the long score frame plus each item's attributes in, one row per
attribute x value x model out (and a pooled row over models), with Wilson intervals.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import UserError
from ._frame import finish, prepare
from .intervals import wilson_interval

ALL_MODELS = "All models"
ATTRIBUTE_COLUMNS = ["attribute", "value", "model", "n_items", "n", "score", "ci_low", "ci_high"]
#: A numeric attribute with more distinct values than this is binned into terciles.
MAX_LEVELS = 6


def _levels(values: pd.Series) -> pd.Series:
    """Text labels per item: categories as given, many-valued numbers as tercile ranges."""
    numeric = pd.to_numeric(values, errors="coerce")
    if numeric.notna().all() and numeric.nunique() > MAX_LEVELS:
        edges = np.unique(np.quantile(numeric, [0, 1 / 3, 2 / 3, 1]))
        if len(edges) >= 3:
            bins = pd.cut(numeric, edges, include_lowest=True, duplicates="drop")
            return bins.map(lambda b: f"{b.left:.2f} to {b.right:.2f}").astype(str)
    if numeric.notna().all():
        return numeric.map(lambda v: str(int(v)) if float(v).is_integer() else f"{v:g}")
    return values.astype(str)


def attribute_scores(df: pd.DataFrame, attributes: pd.DataFrame) -> pd.DataFrame:
    """Mean score per image attribute value and model (Wilson 95% on n answers), plus all models pooled.

    ``attributes``: item_id, attribute, value (one row per item x attribute). Columns:
    `ATTRIBUTE_COLUMNS`; ``n_items`` counts the items with that value. Integer codes and bincounts:
    a VQArt-scale panel gives 200,000 answers per attribute.
    """
    d, dropped = prepare(df, ["model", "item_id", "score"])
    if attributes.empty:
        raise UserError("no item in the selection carries image attributes")
    model, models = pd.factorize(d["model"])
    labels = np.array([*models, ALL_MODELS], dtype=object)
    n_models = len(labels)
    y = d["score"].to_numpy(float)
    rows = []
    for name, group in attributes.groupby("attribute", sort=True):
        group = group.drop_duplicates("item_id")
        values = _levels(group["value"].reset_index(drop=True))
        level, level_names = pd.factorize(values)
        at = pd.Index(group["item_id"]).get_indexer(d["item_id"])
        has = at >= 0
        if not has.any():
            continue
        lv = level[at[has]]
        size = len(level_names) * n_models
        for codes in (lv * n_models + model[has], lv * n_models + (n_models - 1)):
            n = np.bincount(codes, minlength=size)
            total = np.bincount(codes, weights=y[has], minlength=size)
            present = np.flatnonzero(n)
            items_per = np.bincount(level, minlength=len(level_names))
            rows.append(pd.DataFrame({"attribute": name, "value": np.asarray(level_names, dtype=object)[present // n_models],
                                      "model": labels[present % n_models], "n": n[present],
                                      "score": total[present] / n[present],
                                      "n_items": items_per[present // n_models]}))
    if not rows:
        raise UserError("no scored item in the selection carries image attributes")
    out = pd.concat(rows, ignore_index=True)
    out["ci_low"], out["ci_high"] = wilson_interval(out["score"].to_numpy(float), out["n"].to_numpy(float))
    out["_all"] = (out["model"] == ALL_MODELS).astype(int)
    out = out.sort_values(["attribute", "value", "_all", "model"], kind="stable").drop(columns="_all")
    return finish(out[ATTRIBUTE_COLUMNS], dropped)

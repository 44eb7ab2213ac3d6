"""Raw image effect: accuracy on items with an image against items without, per model.

This is the unadjusted comparison (image items may differ in format and language too); the
adjusted effect is the `has_image:True` odds ratio of `logistic_regression`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..vocab import DEFAULT_CONDITION, WITH_IMAGE, WITHOUT_IMAGE
from ._frame import filter_conditions, finish, prepare, sort_frame


def image_effect(df: pd.DataFrame, condition: str | None = DEFAULT_CONDITION) -> pd.DataFrame:
    """Per model: mean_without, mean_with, delta (with - without), n_without, n_with.

    condition=None pools both conditions. A model without image items (or without image-free
    items) gets NaN for that mean and the delta, and n 0.
    """
    d, dropped = prepare(df, ["model", "condition", "has_image", "score"])
    d = filter_conditions(d, condition)
    g = d.groupby(["model", "has_image"], sort=False)["score"].agg(["mean", "count"])
    means = g["mean"].unstack("has_image")
    counts = g["count"].unstack("has_image")
    out = pd.DataFrame({"model": means.index})
    for flag, suffix in ((False, WITHOUT_IMAGE), (True, WITH_IMAGE)):
        out[f"mean_{suffix}"] = (means[flag].to_numpy() if flag in means.columns
                                 else np.full(len(out), np.nan))
        out[f"n_{suffix}"] = (counts[flag].fillna(0).astype(int).to_numpy()
                              if flag in counts.columns else np.zeros(len(out), dtype=int))
    out["delta"] = out["mean_with"] - out["mean_without"]
    out = out[["model", "mean_without", "mean_with", "delta", "n_without", "n_with"]]
    return finish(sort_frame(out, ["model"]), dropped, condition=condition)

"""How much of the spread of scores is due to the format, how much to the model.

Why: "the format matters as much as the model" is a claim about variance, so it is computed: on
the grid of model x format means (one condition), the total sum of squares around the grand mean
splits exactly into a format part, a model part and a remainder (model-specific strengths and
weaknesses, the interaction), because the grid has one mean per cell. The shares are descriptive
(no test): there is one number per cell and no replication.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import UserError


def format_model_variance(type_means: pd.DataFrame) -> dict:
    """Shares of the variation of model x format means explained by format, by model, and the rest.

    Input: model, type, mean (one condition). Only models with a mean on every kept format are
    used (a balanced grid); formats every model lacks are dropped first. Returns a dict:
    share_format, share_model, share_rest (sum 1), n_models, n_formats, n_cells, grand_mean,
    models_dropped. UserError with fewer than 2 models or 2 formats, or no variation at all.
    """
    grid = type_means.pivot_table(index="model", columns="type", values="mean", aggfunc="mean")
    grid = grid.dropna(axis=1, how="all")
    complete = grid.dropna(axis=0, how="any")
    dropped = len(grid) - len(complete)
    if complete.shape[0] < 2 or complete.shape[1] < 2:
        raise UserError("the format/model comparison needs at least 2 models with a mean on at least 2 formats")
    z = complete.to_numpy(dtype=float)
    grand = z.mean()
    ss_total = float(((z - grand) ** 2).sum())
    if ss_total <= 1e-15:
        raise UserError("every model x format mean is the same: nothing to explain")
    ss_format = float(z.shape[0] * ((z.mean(axis=0) - grand) ** 2).sum())
    ss_model = float(z.shape[1] * ((z.mean(axis=1) - grand) ** 2).sum())
    rest = max(0.0, ss_total - ss_format - ss_model)
    return {"share_format": ss_format / ss_total, "share_model": ss_model / ss_total, "share_rest": rest / ss_total,
            "n_models": int(z.shape[0]), "n_formats": int(z.shape[1]), "n_cells": int(np.prod(z.shape)),
            "grand_mean": float(grand), "models_dropped": int(dropped)}

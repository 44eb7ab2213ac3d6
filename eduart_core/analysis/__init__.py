"""Analysis engine: pure functions from the long score frame to result frames.

Input: one row per model x condition x item with model, condition, item_id, type, language,
has_image, score (other columns are ignored). Proportions are fractions in [0, 1]; every delta is
treatment minus baseline (motivation - default, with image - without, paper - strict). Rows with
a missing score are dropped and counted in ``result.attrs["n_dropped"]``. No Streamlit, no SQL.
"""
from __future__ import annotations

from ._frame import CONDITION_ORDER, MCQ_TYPE, TYPE_ORDER
from .ctt import (DIFFICULTY_CATEGORIES, DISCRIMINATION_CATEGORIES, item_statistics,
                  item_statistics_summary, reliability)
from .images import image_effect
from .intervals import t_interval, wilson_interval
from .motivation import motivation_by_model_type, motivation_by_type, motivation_effect
from .regression import logistic_regression
from .scores import (format_spread, leaderboard, macro_from_type_means, macro_scores,
                     profile_impact, type_scores)

__all__ = [
    "CONDITION_ORDER", "DIFFICULTY_CATEGORIES", "DISCRIMINATION_CATEGORIES", "MCQ_TYPE",
    "TYPE_ORDER", "format_spread", "image_effect", "item_statistics", "item_statistics_summary",
    "leaderboard", "logistic_regression", "macro_from_type_means", "macro_scores",
    "motivation_by_model_type", "motivation_by_type", "motivation_effect", "profile_impact",
    "reliability", "t_interval", "type_scores", "wilson_interval",
]

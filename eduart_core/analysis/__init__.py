"""Analysis engine: pure functions from the long score frame to result frames.

Input: one row per model x condition x item with model, condition, item_id, type, language,
has_image, score (other columns are ignored). Proportions are fractions in [0, 1]; every delta is
treatment minus baseline (motivation - default, with image - without, paper - strict). Rows with
a missing score are dropped and counted in ``result.attrs["n_dropped"]``. No Streamlit, no SQL.
"""
from __future__ import annotations

from .ctt import DIFFICULTY_CATEGORIES, DISCRIMINATION_CATEGORIES, item_statistics, item_statistics_summary, reliability
from .images import image_effect
from .intervals import t_interval, wilson_interval
from .motivation import motivation_by_model_type, motivation_by_type, motivation_effect
from .published import (
                  pooled_motivation_fractions,
                  published_format_spread,
                  published_items_by_format,
                  published_motivation,
                  published_motivation_by_type,
                  published_type_means,
)
from .regression import logistic_regression
from .scores import format_spread, leaderboard, macro_from_type_means, macro_scores, profile_impact, type_scores

__all__ = [
    "DIFFICULTY_CATEGORIES", "DISCRIMINATION_CATEGORIES", "format_spread", "image_effect", "item_statistics", "item_statistics_summary",
    "leaderboard", "logistic_regression", "macro_from_type_means", "macro_scores",
    "motivation_by_model_type", "motivation_by_type", "motivation_effect", "profile_impact",
    "pooled_motivation_fractions", "published_format_spread", "published_items_by_format",
    "published_motivation", "published_motivation_by_type", "published_type_means",
    "reliability", "t_interval", "type_scores", "wilson_interval",
]

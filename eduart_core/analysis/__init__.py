"""Analysis engine: pure functions from the long score frame to result frames.

Input: one row per model x condition x item with model, condition, item_id, type, language,
has_image, score (other columns are ignored). Proportions are fractions in [0, 1]; every delta is
treatment minus baseline (motivation - default, with image - without, paper - strict). Rows with
a missing score are dropped and counted in ``result.attrs["n_dropped"]``. No Streamlit, no SQL.
Aggregate-only data (published type means) go through `published`, with the same formulas.
"""
from __future__ import annotations

from .ctt import (
    DIFFICULTY_CATEGORIES,
    DISCRIMINATION_CATEGORIES,
    item_statistics,
    item_statistics_summary,
    reliability,
)
from .formats import chance_levels, numeric_errors, part_accuracy
from .images import image_effect
from .intervals import Z95, t_interval, wilson_interval
from .items import (
    ITEM_FILTERS,
    counts_by,
    disagreement_examples,
    filter_items,
    image_summary,
    item_overview,
    length_summary,
)
from .motivation import largest_condition_changes, motivation_by_model_type, motivation_by_type, motivation_effect
from .published import (
    pooled_motivation_fractions,
    published_format_spread,
    published_items_by_format,
    published_motivation,
    published_motivation_by_type,
    published_type_means,
)
from .regression import logistic_regression
from .scores import (
    format_spread,
    leaderboard,
    macro_from_type_means,
    macro_scores,
    mcq_vs_macro,
    profile_differences,
    profile_impact,
    type_scores,
    type_scores_by,
)

__all__ = [
    "ITEM_FILTERS", "counts_by", "disagreement_examples", "filter_items", "image_summary", "item_overview", "length_summary",
    "DIFFICULTY_CATEGORIES", "DISCRIMINATION_CATEGORIES", "Z95", "format_spread", "image_effect",
    "item_statistics", "item_statistics_summary", "largest_condition_changes", "leaderboard",
    "logistic_regression", "macro_from_type_means", "macro_scores", "mcq_vs_macro", "motivation_by_model_type",
    "motivation_by_type", "motivation_effect", "pooled_motivation_fractions", "profile_differences",
    "profile_impact", "published_format_spread", "published_items_by_format", "published_motivation",
    "published_motivation_by_type", "published_type_means", "reliability", "t_interval", "type_scores",
    "type_scores_by", "wilson_interval",
    "chance_levels", "numeric_errors", "part_accuracy",
]

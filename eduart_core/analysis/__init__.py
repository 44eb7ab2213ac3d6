"""Analysis engine: pure functions from the long score frame to result frames.

Input: one row per model x condition x item with model, condition, item_id, type, language,
has_image, score (other columns are ignored). Proportions are fractions in [0, 1]; every delta is
treatment minus baseline (motivation - default, with image - without, paper - strict). Rows with
a missing score are dropped and counted in ``result.attrs["n_dropped"]``. No Streamlit, no SQL.
Aggregate-only data (published type means) go through `published`, with the same formulas.
"""
from __future__ import annotations

from ._frame import group_codes
from .answer_quality import answer_status, answer_statuses, distractor_choices, invalid_by_model, invalid_rates
from .consistency import consistency_checks
from .correlations import external_correlations, task_correlations
from .ctt import (
    DIFFICULTY_CATEGORIES,
    DISCRIMINATION_CATEGORIES,
    item_statistics,
    item_statistics_summary,
    reliability,
)
from .explorer import (
    CELL_STATES,
    COMPARE_FILTERS,
    cell_state,
    cell_states,
    compare_models,
    comparison_summary,
    failure_matrix,
    filter_comparison,
    item_flags,
    mark_unexpected,
)
from .formats import chance_levels, numeric_errors, part_accuracy
from .image_attributes import attribute_scores
from .images import image_effect
from .intervals import WILSON_WORDS, Z95, t_interval, wilson_interval
from .items import (
    ABERRANT,
    BASELINE_ONLY,
    EVERY_ITEM,
    ITEM_FILTER_RULES,
    ITEM_FILTERS,
    PROFILE_CHANGE,
    counts_by,
    disagreement_examples,
    filter_items,
    image_summary,
    item_overview,
    length_summary,
)
from .motivation import largest_condition_changes, motivation_by_model_type, motivation_by_type, motivation_effect
from .paired import paired_macro_difference
from .published import (
    pooled_motivation_fractions,
    published_format_spread,
    published_items_by_format,
    published_motivation,
    published_motivation_by_type,
    published_type_means,
)
from .regression import logistic_regression, median_ability_model, not_estimable_text, regression_references
from .scores import (
    format_spread,
    leaderboard,
    macro_from_type_means,
    macro_scores,
    mcq_vs_macro,
    point_ranks,
    profile_differences,
    profile_impact,
    type_scores,
    type_scores_by,
)
from .study_scores import dimension_scores, family_best, published_dimension_scores, score_grid
from .variance import format_model_variance

__all__ = [
    "group_codes",
    "answer_status", "answer_statuses", "attribute_scores", "consistency_checks", "dimension_scores",
    "distractor_choices", "external_correlations", "family_best", "invalid_by_model", "invalid_rates", "published_dimension_scores",
    "score_grid", "task_correlations",
    "CELL_STATES", "COMPARE_FILTERS", "cell_state", "cell_states", "compare_models", "comparison_summary",
    "failure_matrix", "filter_comparison", "item_flags", "mark_unexpected", "ABERRANT", "BASELINE_ONLY", "EVERY_ITEM",
    "ITEM_FILTER_RULES", "PROFILE_CHANGE",
    "ITEM_FILTERS", "counts_by", "filter_items", "image_summary", "item_overview", "length_summary",
    "format_model_variance", "paired_macro_difference",
    "WILSON_WORDS", "DIFFICULTY_CATEGORIES", "DISCRIMINATION_CATEGORIES", "Z95", "format_spread", "image_effect",
    "disagreement_examples",
    "item_statistics", "item_statistics_summary", "largest_condition_changes", "leaderboard",
    "logistic_regression", "median_ability_model", "not_estimable_text", "regression_references", "macro_from_type_means", "macro_scores", "point_ranks", "mcq_vs_macro", "motivation_by_model_type",
    "motivation_by_type", "motivation_effect", "pooled_motivation_fractions", "profile_differences",
    "profile_impact", "published_format_spread", "published_items_by_format", "published_motivation",
    "published_motivation_by_type", "published_type_means", "reliability", "t_interval", "type_scores",
    "type_scores_by", "wilson_interval",
    "chance_levels", "numeric_errors", "part_accuracy",
]

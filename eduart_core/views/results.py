"""Views of the results pages (Overview, Formats, Motivation, Images, Scoring profiles).

Each view loads the frame for a selection and hands it to one analysis function; for an
aggregate-only dataset (the published reference) it hands the stored type means to the matching
aggregate analysis instead. No statistics here.
"""
from __future__ import annotations

import pandas as pd

from .. import analysis, findings
from ..errors import UserError
from ..selection import Selection
from ..vocab import ALL_ITEMS, MCQ_TYPE, PAPER_PROFILE, STRICT_PROFILE
from ._base import (
    EmptySelection,
    Source,
    cached,
    dataset_flags,
    published_pooled_motivation,
    published_type_means,
    selected_scores,
)


@cached()
def type_means(src: Source, sel: Selection, all_conditions: bool = False) -> pd.DataFrame:
    """Mean score per model x format (Wilson 95%), from item rows or from published aggregates."""
    if dataset_flags(src, sel.dataset).aggregate_only:
        frame = sel.apply(published_type_means(src, sel.dataset), all_conditions=all_conditions)
        if frame.empty:
            raise EmptySelection("No published scores match the current selection.")
        return frame.reset_index(drop=True)
    return analysis.type_scores(selected_scores(src, sel, all_conditions))


def type_scores(src: Source, sel: Selection) -> pd.DataFrame:
    """Mean score per model and format in the selected condition, with Wilson 95% intervals (heatmap)."""
    return type_means(src, sel)


@cached()
def leaderboard(src: Source, sel: Selection) -> pd.DataFrame:
    """Macro, micro and multiple-choice accuracy (Wilson 95%) per model, ranked by macro average."""
    if dataset_flags(src, sel.dataset).aggregate_only:
        board = analysis.leaderboard(type_means(src, sel))
    else:
        board = analysis.leaderboard(selected_scores(src, sel))
    if board.empty:
        raise EmptySelection(f"No scores in condition '{sel.condition}' for the current selection.")
    return board.sort_values(["rank", "model"]).reset_index(drop=True)


@cached()
def mcq_vs_macro(src: Source, sel: Selection) -> pd.DataFrame:
    """Multiple-choice accuracy against the macro average per model (published Table 5)."""
    return analysis.mcq_vs_macro(leaderboard(src, sel))


@cached()
def format_spread(src: Source, sel: Selection) -> pd.DataFrame:
    """Best and worst format per model in the selected condition, and the distance between them."""
    if dataset_flags(src, sel.dataset).aggregate_only:
        return analysis.published_format_spread(type_means(src, sel))
    return analysis.format_spread(selected_scores(src, sel))


@cached()
def mcq_by_language(src: Source, sel: Selection) -> pd.DataFrame:
    """Single-answer multiple-choice accuracy per model and language (Wilson 95%)."""
    frame = selected_scores(src, sel.with_(types=(MCQ_TYPE,), languages=()))
    return analysis.type_scores_by(frame, "language")


@cached()
def motivation(src: Source, sel: Selection) -> pd.DataFrame:
    """Default vs motivation per model (macro and micro) with the paired tests."""
    if dataset_flags(src, sel.dataset).aggregate_only:
        macro = analysis.macro_from_type_means(type_means(src, sel, all_conditions=True))
        return analysis.published_motivation(macro, published_pooled_motivation(src, sel.dataset))
    return analysis.motivation_effect(selected_scores(src, sel, all_conditions=True))


@cached()
def _motivation_types(src: Source, sel: Selection) -> tuple[pd.DataFrame, pd.DataFrame]:
    if dataset_flags(src, sel.dataset).aggregate_only:
        return analysis.published_motivation_by_type(type_means(src, sel, all_conditions=True))
    frame = selected_scores(src, sel, all_conditions=True)
    return analysis.motivation_by_type(frame), analysis.motivation_by_model_type(frame)


def motivation_by_type(src: Source, sel: Selection) -> pd.DataFrame:
    """Per format: mean, lowest and highest change over models, motivation minus default (published Table 9)."""
    return _motivation_types(src, sel)[0]


def motivation_by_model_type(src: Source, sel: Selection) -> pd.DataFrame:
    """Motivation minus default per model and format (the heatmap behind Table 9)."""
    return _motivation_types(src, sel)[1]


@cached()
def item_changes(src: Source, sel: Selection, model: str = "", limit: int = 15) -> pd.DataFrame:
    """Items whose score changed most between the conditions for one model (option: model)."""
    if not model:
        raise EmptySelection("Choose a model (option model=<display name>).")
    frame = selected_scores(src, sel.with_(models=(model,)), all_conditions=True)
    return analysis.largest_condition_changes(frame, limit=limit)


@cached()
def image_effect(src: Source, sel: Selection) -> pd.DataFrame:
    """Per model mean score on items with vs without an image, in the selected condition."""
    frame = selected_scores(src, sel.with_(image=ALL_ITEMS))
    return analysis.image_effect(frame, condition=None)


@cached()
def regression(src: Source, sel: Selection, clustered: bool = True) -> pd.DataFrame:
    """Logistic regression correct ~ format + image + language + model (odds ratios; option: clustered)."""
    frame = selected_scores(src, sel)
    return analysis.logistic_regression(frame, condition=None, cluster="item" if clustered else None)


@cached()
def profile_impact(src: Source, sel: Selection) -> pd.DataFrame:
    """Paper minus strict mean score per model and format in the selected condition."""
    strict = selected_scores(src, sel.with_(profile=STRICT_PROFILE))
    paper = selected_scores(src, sel.with_(profile=PAPER_PROFILE))
    return analysis.profile_impact(strict, paper)


@cached()
def profile_examples(src: Source, sel: Selection, limit: int = 3) -> pd.DataFrame:
    """Responses whose score differs between the profiles, a few per format (option: limit)."""
    strict = selected_scores(src, sel.with_(profile=STRICT_PROFILE))
    paper = selected_scores(src, sel.with_(profile=PAPER_PROFILE))
    return analysis.profile_differences(strict, paper, limit=limit)


def _optional(fn, *args, **kwargs):
    """A piece a finding may use, or None when the selection cannot provide it."""
    try:
        return fn(*args, **kwargs)
    except (UserError, ValueError):  # too few rows or levels for that analysis (EmptySelection included)
        return None


@cached()
def key_findings(src: Source, sel: Selection) -> list[findings.Finding]:
    """The plain-language findings of the Overview and the report, computed from the selection."""
    aggregate = dataset_flags(src, sel.dataset).aggregate_only
    board = leaderboard(src, sel)
    means = type_means(src, sel)
    effect = _optional(motivation, src, sel)
    image = None if aggregate else _optional(image_effect, src, sel)
    reg = None if aggregate else _optional(regression, src, sel, clustered=True)
    return findings.key_findings(board, means, effect, reg, image)


def findings_table(src: Source, sel: Selection) -> pd.DataFrame:
    """The key findings as rows: headline, detail, test."""
    return findings.as_frame(key_findings(src, sel))

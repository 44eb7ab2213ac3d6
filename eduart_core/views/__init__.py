"""Named views: the frames behind every table and chart, for the pages, the report and `show`.

A view is a function ``view(source, selection, **options) -> DataFrame`` that loads the rows of a
selection and hands them to one analysis function. `VIEWS` is the explicit registry: a page calls
the function by name (``views.leaderboard(src, sel)``), and ``python -m eduart_core show NAME``
looks it up here, so the CLI prints exactly the numbers the page draws. To add a view: write the
function in the module of its page (``results``, ``items``, ``psychometrics``, ...) and add one
`ViewSpec` line below.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from ..errors import UserError
from ..selection import Selection
from ._base import (
    DatasetFlags,
    EmptySelection,
    ItemLevelUnavailable,
    Source,
    clear_caches,
    dataset_flags,
    datasets,
    family_map,
    languages,
    models,
    models_with_data,
    selected_scores,
)
from .formats import answer_key, chance_levels, numeric_errors, part_accuracy
from .items import (
    dataset_glance,
    image_sizes,
    item_detail,
    item_lengths,
    item_list,
    item_metadata,
    item_responses,
    item_texts,
    items_by_format,
    items_by_image,
    items_by_language,
    responses,
)
from .psychometrics import (
    difficulty_categories,
    discrimination_by_format,
    examinee_setting,
    item_statistics,
    reliability,
)
from .report import failure_examples, provenance, scorer_fingerprint
from .results import (
    findings_table,
    format_spread,
    image_effect,
    item_changes,
    key_findings,
    leaderboard,
    mcq_by_language,
    mcq_vs_macro,
    motivation,
    motivation_by_model_type,
    motivation_by_type,
    profile_examples,
    profile_impact,
    regression,
    type_means,
    type_scores,
)
from .scope import FilterState, analysable_datasets, dataset_filters, item_level


@dataclass(frozen=True)
class ViewSpec:
    """One named view and the page element it backs."""

    name: str
    fn: Callable[..., pd.DataFrame]
    shows: str

    @property
    def summary(self) -> str:
        """The first line of the function's docstring."""
        return (inspect.getdoc(self.fn) or "").splitlines()[0]

    @property
    def options(self) -> dict[str, object]:
        """Keyword options beyond (source, selection), with their defaults."""
        params = list(inspect.signature(self.fn).parameters.values())[2:]
        return {p.name: p.default for p in params}


_SPECS = (
    ViewSpec("leaderboard", leaderboard, "Overview: leaderboard chart and table"),
    ViewSpec("findings", findings_table, "Overview: key findings (and the presentation headlines)"),
    ViewSpec("type_scores", type_scores, "Formats: model x format heatmap; report Figure 2"),
    ViewSpec("mcq_vs_macro", mcq_vs_macro, "Formats: multiple choice vs macro average table"),
    ViewSpec("format_spread", format_spread, "Formats: best-minus-worst format chart"),
    ViewSpec("mcq_by_language", mcq_by_language, "Formats: multiple choice in Italian and English"),
    ViewSpec("regression", regression, "Formats: forest plot and regression table; Images: adjusted odds ratio"),
    ViewSpec("motivation", motivation, "Motivation: dumbbell chart and table; report Figure 3"),
    ViewSpec("motivation_by_type", motivation_by_type, "Motivation: change per format table (Table 9)"),
    ViewSpec("motivation_by_model_type", motivation_by_model_type, "Motivation: model x format change heatmap"),
    ViewSpec("item_changes", item_changes, "Motivation: items that changed most for one model"),
    ViewSpec("image_effect", image_effect, "Images: dumbbell chart and table; report Figure 4"),
    ViewSpec("profile_impact", profile_impact, "Scoring profiles: chart and table"),
    ViewSpec("profile_examples", profile_examples, "Scoring profiles: examples where the rules differ"),
    ViewSpec("item_statistics", item_statistics, "Psychometrics: difficulty vs discrimination scatter; report Figure 1"),
    ViewSpec("difficulty_categories", difficulty_categories, "Psychometrics: difficulty categories (Table 6)"),
    ViewSpec("discrimination_by_format", discrimination_by_format, "Psychometrics: discrimination by format (Table 7)"),
    ViewSpec("reliability", reliability, "Psychometrics: mean p, mean r_pb, non-estimable items, KR-20/alpha"),
    ViewSpec("items", item_list, "Item inspector: the item list"),
    ViewSpec("item_metadata", item_metadata, "Item inspector: task, dimension, tags, parallel form, dialogue turn"),
    ViewSpec("responses", responses, "Item inspector: every model's answer (option item=<id> for one item)"),
    ViewSpec("items_by_format", items_by_format, "Overview: items by format"),
    ViewSpec("items_by_language", items_by_language, "Overview: items by language"),
    ViewSpec("items_by_image", items_by_image, "Overview: items with and without an image"),
    ViewSpec("item_lengths", item_lengths, "Overview: item length in words and tokens"),
    ViewSpec("image_sizes", image_sizes, "Overview: image width, height and file size"),
    ViewSpec("chance_levels", chance_levels, "Formats: chance level per format (reference marks)"),
    ViewSpec("answer_key", answer_key, "Item inspector: the answer key of an item (option item=<id>)"),
    ViewSpec("failure_examples", failure_examples, "Report: failure examples (items where the models disagree)"),
    ViewSpec("provenance", provenance, "Report: provenance block (versions, scorer, prompts, API model ids)"),
)
VIEWS: dict[str, ViewSpec] = {spec.name: spec for spec in _SPECS}


def run_view(name: str, src: Source, sel: Selection, **options: object) -> pd.DataFrame:
    """The frame of one named view; unknown names and options are one-line errors."""
    spec = VIEWS.get(name)
    if spec is None:
        raise UserError(f"unknown view {name!r}; `show --list` lists them")
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        allowed = ", ".join(spec.options) or "none"
        raise UserError(f"view {name!r} has no option {', '.join(unknown)} (options: {allowed})")
    return spec.fn(src, sel, **options)


__all__ = [
    "failure_examples", "provenance", "scorer_fingerprint",
    "FilterState", "analysable_datasets", "dataset_filters", "item_level",
    "VIEWS", "answer_key", "chance_levels", "numeric_errors", "part_accuracy", "DatasetFlags", "EmptySelection",
    "ItemLevelUnavailable", "Source", "ViewSpec", "clear_caches",
    "dataset_flags", "dataset_glance", "datasets", "difficulty_categories", "discrimination_by_format",
    "examinee_setting", "family_map", "findings_table", "format_spread", "image_effect", "image_sizes",
    "item_changes", "item_detail", "item_lengths", "item_list", "item_metadata", "item_responses", "item_statistics",
    "item_texts", "items_by_format", "languages", "models_with_data", "items_by_image", "items_by_language", "key_findings", "leaderboard",
    "mcq_by_language", "mcq_vs_macro", "models", "motivation", "motivation_by_model_type", "motivation_by_type",
    "profile_examples", "profile_impact", "regression", "reliability", "responses", "run_view",
    "selected_scores", "type_means", "type_scores",
]

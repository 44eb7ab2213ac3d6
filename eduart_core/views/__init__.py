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
    baseline_models,
    clear_caches,
    dataset_flags,
    datasets,
    family_map,
    human_models,
    languages,
    models,
    models_with_data,
    selected_scores,
)
from .explorer import (
    answer_marks,
    explorer_items,
    failure_matrix,
    item_card,
    item_flags,
    latest_responses,
    model_comparison,
)
from .formats import answer_key, chance_levels, numeric_errors, part_accuracy
from .humans import (
    comparison_selection,
    exam_progress,
    exam_sessions,
    human_accuracy,
    human_gap,
    human_ranking,
    human_wright_map,
)
from .irt import (
    dif,
    distractors,
    irt_abilities,
    irt_fit,
    irt_information,
    irt_item_curve,
    irt_items,
    irt_wright_map,
    parallel_contrasts,
)
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
from .labels import data_label
from .psychometrics import (
    difficulty_categories,
    discrimination_by_format,
    examinee_setting,
    item_statistics,
    published_setting,
    reliability,
    setting_words,
)
from .report import failure_examples, provenance, scorer_fingerprint
from .results import (
    baseline_type_scores,
    baselines,
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
    regression_choices,
    type_means,
    type_scores,
)
from .review import review_agreement, review_queue, suspect_keys
from .runs import batch_jobs, launch_progress, runs
from .scope import PAGE_RULES, FilterState, analysable_datasets, dataset_filters, item_level, page_not_applicable
from .studies import (
    ItemPicture,
    StudyFeatures,
    access_map,
    consistency_checks,
    dialogue,
    dimension_scores,
    distractor_choices,
    external_correlations,
    family_best,
    image_attributes,
    invalid_rates,
    item_picture,
    study_features,
    task_correlations,
)
from .team import audit_log


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
    ViewSpec("baselines", baselines, "Overview: baseline reference lines on the leaderboard"),
    ViewSpec("baseline_type_scores", baseline_type_scores, "Formats: baseline reference marks on the format heatmap"),
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
    ViewSpec("irt_items", irt_items, "Psychometrics, IRT tab: item difficulties (Wright map) and the item table"),
    ViewSpec("irt_abilities", irt_abilities, "Psychometrics, IRT tab: abilities with 95% intervals and ranks"),
    ViewSpec("irt_information", irt_information, "Psychometrics, IRT tab: test information curves per format"),
    ViewSpec("irt_wright_map", irt_wright_map, "Psychometrics, IRT tab: Wright map"),
    ViewSpec("irt_item_curve", irt_item_curve, "Item inspector: item characteristic curve (option item=<id>)"),
    ViewSpec("distractors", distractors, "Psychometrics, Distractors tab: option shares, r_pb and flags"),
    ViewSpec("dif", dif, "Psychometrics, DIF tab: Mantel-Haenszel and logistic-regression DIF between conditions"),
    ViewSpec("parallel_contrasts", parallel_contrasts, "Psychometrics, DIF tab: paired contrasts of parallel forms"),
    ViewSpec("items", item_list, "Item inspector: the item list"),
    ViewSpec("item_metadata", item_metadata, "Item inspector: task, dimension, tags, parallel form, dialogue turn"),
    ViewSpec("responses", responses, "Item inspector: every model's answer (option item=<id> for one item)"),
    ViewSpec("item_flags", item_flags, "Item inspector: the counts behind the failure filters"),
    ViewSpec("explorer_items", explorer_items, "Item inspector: the item list, kept by a failure filter and a search"),
    ViewSpec("failure_matrix", failure_matrix, "Item inspector: the items x (model, condition) matrix"),
    ViewSpec("item_card", item_card, "Item inspector: the item card (options, statements or blanks with the key)"),
    ViewSpec("answer_marks", answer_marks, "Item inspector: one response marked under both profiles"),
    ViewSpec("compare_models", model_comparison, "Item inspector: two models compared item by item"),
    ViewSpec("items_by_format", items_by_format, "Overview: items by format"),
    ViewSpec("items_by_language", items_by_language, "Overview: items by language"),
    ViewSpec("items_by_image", items_by_image, "Overview: items with and without an image"),
    ViewSpec("item_lengths", item_lengths, "Overview: item length in words and tokens"),
    ViewSpec("image_sizes", image_sizes, "Overview: image width, height and file size"),
    ViewSpec("chance_levels", chance_levels, "Formats: chance level per format (reference marks)"),
    ViewSpec("answer_key", answer_key, "Item inspector: the answer key of an item (option item=<id>)"),
    ViewSpec("review_queue", review_queue, "Review studio: the extraction review queue"),
    ViewSpec("review_agreement", review_agreement, "Review studio: reviewer agreement per round, field or format"),
    ViewSpec("audit_log", audit_log, "Review studio, audit log: who changed rounds, keys, scores, runs and roles"),
    ViewSpec("suspect_keys", suspect_keys, "Review studio: the suspect-key queue; Item inspector: key flags"),
    ViewSpec("runs", runs, "Runs: usage per run (by=model: per model and condition; by=job: the batch jobs)"),
    ViewSpec("launch_progress", launch_progress,
             "Runs, running now: a bar per model (by=provider: each provider's rate and limits)"),
    ViewSpec("numeric_errors", numeric_errors, "Tasks and dimensions: counting answers, mean absolute error and "
                                               "off-by-one rate"),
    ViewSpec("part_accuracy", part_accuracy, "Tasks and dimensions: accuracy per part of multi-part answers"),
    ViewSpec("dialogue", dialogue, "Item inspector: a dialogue turn by turn with every model's answers"),
    ViewSpec("image_attributes", image_attributes, "Images: accuracy by image attribute (genre, figures, indoor, warm/cool)"),
    ViewSpec("dimension_scores", dimension_scores, "Tasks and dimensions: table with marks and heatmap"),
    ViewSpec("task_correlations", task_correlations, "Tasks and dimensions: Spearman matrix between tasks"),
    ViewSpec("family_best", family_best, "Tasks and dimensions: best per family and the best-available envelope"),
    ViewSpec("distractor_choices", distractor_choices, "Tasks and dimensions: distractor types chosen when wrong"),
    ViewSpec("invalid_rates", invalid_rates, "Tasks and dimensions: refused and unreadable answers"),
    ViewSpec("external_correlations", external_correlations,
             "Tasks and dimensions: correlation with imported external benchmarks"),
    ViewSpec("consistency_checks", consistency_checks, "Tasks and dimensions: does the table add up? (checks in words)"),
    ViewSpec("failure_examples", failure_examples, "Report: failure examples (items where the models disagree)"),
    ViewSpec("provenance", provenance, "Report: provenance block (versions, scorer, prompts, API model ids)"),
    ViewSpec("human_accuracy", human_accuracy, "Overview, Models and people: accuracy of models and people per format"),
    ViewSpec("human_gap", human_gap, "Overview and presentation, Models and people: the gaps and their sentences"),
    ViewSpec("human_ranking", human_ranking, "Overview, Models and people: one ability ranking of models and people"),
    ViewSpec("human_wright_map", human_wright_map, "Overview, Models and people: models, people and items on one scale"),
    ViewSpec("exam_sessions", exam_sessions, "Sit the exam, Sessions: the exam sessions of the dataset"),
    ViewSpec("exam_progress", exam_progress, "Sit the exam, Sessions: each respondent's progress (pseudonyms)"),
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
    "VIEWS", "PAGE_RULES", "page_not_applicable", "comparison_selection", "exam_progress", "exam_sessions",
    "human_accuracy", "human_gap", "human_models", "human_ranking", "human_wright_map", "access_map", "audit_log", "analysable_datasets", "answer_key", "answer_marks", "baseline_models",
    "baseline_type_scores", "baselines", "batch_jobs", "chance_levels", "clear_caches", "consistency_checks",
    "dataset_filters", "dataset_flags", "dataset_glance", "DatasetFlags", "datasets", "dialogue", "dif",
    "difficulty_categories", "dimension_scores", "discrimination_by_format", "distractor_choices",
    "distractors", "EmptySelection", "examinee_setting", "explorer_items", "external_correlations",
    "data_label", "failure_examples", "failure_matrix", "family_best", "family_map", "FilterState", "findings_table",
    "format_spread", "image_attributes", "image_effect", "image_sizes", "invalid_rates", "irt_abilities",
    "irt_fit", "irt_information", "irt_item_curve", "irt_items", "irt_wright_map", "item_card",
    "item_changes", "item_detail", "item_flags", "item_lengths", "item_level", "item_list", "item_metadata",
    "item_picture", "item_responses", "item_statistics", "item_texts", "ItemLevelUnavailable", "ItemPicture",
    "items_by_format", "items_by_image", "items_by_language", "key_findings", "languages", "latest_responses",
    "launch_progress",
    "leaderboard", "mcq_by_language", "mcq_vs_macro", "model_comparison", "models", "models_with_data",
    "motivation", "motivation_by_model_type", "motivation_by_type", "numeric_errors", "parallel_contrasts",
    "part_accuracy", "profile_examples", "profile_impact", "provenance", "published_setting", "regression",
    "regression_choices", "reliability", "responses", "review_agreement", "review_queue", "run_view", "runs",
    "scorer_fingerprint", "selected_scores", "setting_words", "Source", "study_features", "StudyFeatures",
    "suspect_keys", "task_correlations", "type_means", "type_scores", "ViewSpec",
]

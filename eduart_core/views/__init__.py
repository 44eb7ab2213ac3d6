"""Named views: the frames behind every table and chart, for the pages, the report and `show`.

A view is a function ``view(source, selection, **options) -> DataFrame`` that loads the rows of a
selection and hands them to one analysis function. `VIEWS` is the explicit registry: a page calls
the function by name (``views.leaderboard(src, sel)``), and ``python -m eduart_core show NAME``
looks it up here, so the CLI prints exactly the numbers the page draws. To add a view: write the
function in the module of its page (``results``, ``items``, ``psychometrics``, ...) and add one
`ViewSpec` line to `_SPECS` below: that line is the only listing of a view. Each registered
function is also reachable as ``views.<function name>`` (made from `_SPECS`, never from an
import side effect). The lookups and plumbing imported below are the helpers pages use besides
the views (which datasets apply, the store's errors, the item card's parts).
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from ..errors import UserError
from ..selection import Selection
from ..store import StoreConflictError, StoreError, StoreLockedError, StoreUnavailableError
from . import (
    adaptive,
    explorer,
    formats,
    humans,
    irt,
    irt_checks,
    item_banks,
    items,
    judges,
    power,
    psychometrics,
    records,
    report,
    results,
    review,
    robustness,
    runs,
    studies,
    team,
)
from . import contamination as contamination_views
from . import errata as errata_views
from . import run_diff as run_diff_views
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
    open_store,
    selected_scores,
    store_name,
    store_path,
)
from .errata import errata_label
from .explorer import latest_responses
from .humans import comparison_selection
from .irt import SUMMARY_ROW, irt_default_model, irt_fit
from .items import dataset_glance, item_detail, item_responses, item_texts
from .judges import corrected_cells, judge_gate, profile_choices, profile_label, profile_warning
from .labels import data_label
from .papers import marked_page_image, paper_notes, paper_question
from .psychometrics import examinee_setting, published_setting, setting_words
from .report import scorer_fingerprint
from .results import key_findings, point_board, regression_choices, type_means
from .review import image_file, page_extractions
from .robustness import robustness_finding_list
from .runs import batch_jobs, launch_items, repeat_scores, run_history, runnable_datasets, unstable_model
from .scope import (
    FilterState,
    analysable_datasets,
    dataset_filters,
    formats_rule,
    images_rule,
    item_level,
    item_level_rule,
    motivation_rule,
    robustness_rule,
    tasks_rule,
    why_not,
)
from .studies import ItemPicture, StudyFeatures, access_map, invalid_warnings, item_picture, study_features


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
        """Keyword options beyond (source, selection), with their defaults. Keyword-only parameters
        are the caller's context (the acting person of a record view), never options of `show`."""
        params = list(inspect.signature(self.fn).parameters.values())[2:]
        return {p.name: p.default for p in params if p.kind != inspect.Parameter.KEYWORD_ONLY}


_SPECS = (
    ViewSpec("leaderboard", results.leaderboard, "Overview: leaderboard chart and table"),
    ViewSpec("scores", results.scores, "Python API and scripts: the long score frame behind every table and chart"),
    ViewSpec("baselines", results.baselines, "Overview: baseline reference lines on the leaderboard"),
    ViewSpec("baseline_type_scores", results.baseline_type_scores, "Formats: baseline reference marks on the format heatmap"),
    ViewSpec("findings", results.findings_table, "Overview: key findings (and the presentation headlines)"),
    ViewSpec("type_scores", results.type_scores, "Formats: model x format heatmap; report Figure 2"),
    ViewSpec("mcq_vs_macro", results.mcq_vs_macro, "Formats: multiple choice vs macro average table"),
    ViewSpec("format_spread", results.format_spread, "Formats: best-minus-worst format chart"),
    ViewSpec("mcq_by_language", results.mcq_by_language, "Formats: multiple choice in Italian and English"),
    ViewSpec("regression", results.regression, "Formats: forest plot and regression table; Images: adjusted odds ratio"),
    ViewSpec("motivation", results.motivation, "Motivation: dumbbell chart and table; report Figure 3"),
    ViewSpec("motivation_by_type", results.motivation_by_type, "Motivation: change per format table (Table 9)"),
    ViewSpec("motivation_by_model_type", results.motivation_by_model_type, "Motivation: model x format change heatmap"),
    ViewSpec("item_changes", results.item_changes, "Motivation: items that changed most for one model"),
    ViewSpec("image_effect", results.image_effect, "Images: dumbbell chart and table; report Figure 4"),
    ViewSpec("profile_impact", results.profile_impact, "Scoring profiles: chart and table"),
    ViewSpec("profile_examples", results.profile_examples, "Scoring profiles: examples where the rules differ"),
    ViewSpec("item_statistics", psychometrics.item_statistics, "Psychometrics: difficulty vs discrimination scatter; report Figure 1"),
    ViewSpec("difficulty_categories", psychometrics.difficulty_categories, "Psychometrics: difficulty categories (Table 6)"),
    ViewSpec("discrimination_by_format", psychometrics.discrimination_by_format, "Psychometrics: discrimination by format (Table 7)"),
    ViewSpec("reliability", psychometrics.reliability, "Psychometrics: mean p, mean r_pb, non-estimable items, KR-20/alpha"),
    ViewSpec("irt_items", irt.irt_items, "Psychometrics, IRT tab: item difficulties (Wright map) and the item table"),
    ViewSpec("irt_abilities", irt.irt_abilities, "Psychometrics, IRT tab: abilities with 95% intervals and ranks"),
    ViewSpec("irt_information", irt.irt_information, "Psychometrics, IRT tab: test information curves per format"),
    ViewSpec("irt_wright_map", irt.irt_wright_map, "Psychometrics, IRT tab: Wright map"),
    ViewSpec("irt_item_curve", irt.irt_item_curve, "Item inspector: item characteristic curve (option item=<id>)"),
    ViewSpec("irt_category_information", irt.irt_category_information, "Psychometrics, IRT tab: information per score level"),
    ViewSpec("bank", item_banks.bank, "`bank` command and `show`: one item bank version's frozen item parameters"),
    ViewSpec("banks", item_banks.banks, "`bank` command and `show`: the item bank versions of a dataset"),
    ViewSpec("adaptive_runs", adaptive.adaptive_runs, "Runs: the adaptive runs (`run --adaptive`) and their abilities"),
    ViewSpec("adaptive_trajectory", adaptive.adaptive_trajectory, "Runs: one adaptive run's trajectory chart and table"),
    ViewSpec("adaptive_ranking", adaptive.adaptive_ranking, "Runs: adaptive runs beside full-run models on a bank's scale"),
    ViewSpec("adaptive_wright_map", adaptive.adaptive_wright_map, "Sit the exam (sessions): respondents and models on a bank's Wright map"),
    ViewSpec("irt_item_fit", irt_checks.irt_item_fit, "Psychometrics, IRT tab: item fit (infit, outfit, S-X2) and misfit flags"),
    ViewSpec("irt_person_fit", irt_checks.irt_person_fit, "Psychometrics, IRT tab: person fit (lz, infit, outfit), invalid answers"),
    ViewSpec("irt_model_comparison", irt_checks.irt_model_comparison, "Psychometrics, IRT tab and report: SE gain over the 0.5 rule"),
    ViewSpec("irt_residuals", irt_checks.irt_residuals, "Item inspector: one examinee's unexpected answers (aberrant filter)"),
    ViewSpec("distractors", irt.distractors, "Psychometrics, Distractors tab: option shares, r_pb and flags"),
    ViewSpec("dif", irt.dif, "Psychometrics, DIF tab: Mantel-Haenszel and logistic-regression DIF between conditions"),
    ViewSpec("parallel_contrasts", irt.parallel_contrasts, "Psychometrics, DIF tab: paired contrasts of parallel forms"),
    ViewSpec("items", items.item_list, "Item inspector: the item list"),
    ViewSpec("item_metadata", items.item_metadata, "Item inspector: task, dimension, tags, parallel form, dialogue turn"),
    ViewSpec("responses", items.responses, "Item inspector: every model's answer (option item=<id> for one item)"),
    ViewSpec("item_flags", explorer.item_flags, "Item inspector: the counts behind the failure filters"),
    ViewSpec("explorer_items", explorer.explorer_items, "Item inspector: the item list, kept by a failure filter and a search"),
    ViewSpec("failure_matrix", explorer.failure_matrix, "Item inspector: the items x (model, condition) matrix"),
    ViewSpec("item_card", explorer.item_card, "Item inspector: the item card (options, statements or blanks with the key)"),
    ViewSpec("answer_marks", explorer.answer_marks, "Item inspector: one response marked under both profiles"),
    ViewSpec("compare_models", explorer.model_comparison, "Item inspector: two models compared item by item"),
    ViewSpec("items_by_format", items.items_by_format, "Overview: items by format"),
    ViewSpec("canary", items.canary, "Python API and scripts: the store's canary line, carried by every item export"),
    ViewSpec("items_by_language", items.items_by_language, "Overview: items by language"),
    ViewSpec("items_by_image", items.items_by_image, "Overview: items with and without an image"),
    ViewSpec("item_lengths", items.item_lengths, "Overview: item length in words and tokens"),
    ViewSpec("image_sizes", items.image_sizes, "Overview: image width, height and file size"),
    ViewSpec("chance_levels", formats.chance_levels, "Formats: chance level per format (reference marks)"),
    ViewSpec("answer_key", formats.answer_key, "Item inspector: the answer key of an item (option item=<id>)"),
    ViewSpec("review_queue", review.review_queue, "Review studio: the extraction review queue"),
    ViewSpec("review_agreement", review.review_agreement,
             "Review studio: reviewer agreement per round, field or format (percent: share of fields on which all "
             "reviewers made the same choice; blind rounds once settled)"),
    ViewSpec("my_record", records.my_record, "Review studio and Grade answers, My record: decisions and marks "
                                             "adjudication overruled"),
    ViewSpec("my_agreement", records.my_agreement, "Review studio and Grade answers, My record: agreement per week"),
    ViewSpec("my_severity", records.my_severity, "Grade answers, My record: severity with its 95% interval"),
    ViewSpec("my_gold", records.my_gold, "Grade answers, My record: accuracy and severity on seeded gold, the flag"),
    ViewSpec("gold_flags", records.gold_flags, "Grade answers (adjudicators, admins): every grader's gold checks "
                                               "and flags"),
    ViewSpec("audit_log", team.audit_log, "Review studio, audit log: who changed rounds, keys, scores, runs and roles"),
    ViewSpec("suspect_keys", review.suspect_keys, "Review studio: the suspect-key queue; Item inspector: key flags"),
    ViewSpec("errata", errata_views.errata, "`errata` command and `show`: errata releases (option release=NAME: its "
                                            "score diff)"),
    ViewSpec("item_history", items.item_history, "Item inspector: version history of an item (option item=<id>)"),
    ViewSpec("overrides", review.score_overrides, "Item inspector and Review studio (audit log): human score overrides"),
    ViewSpec("discrepancies", review.discrepancies, "Review studio: discrepancies per round by category, field or format"),
    ViewSpec("power", power.power, "Runs: plan form (items needed to tell two models apart; a new model's interval)"),
    ViewSpec("reproducibility", runs.reproducibility, "Runs: reproducibility of repeated runs per model and condition"),
    ViewSpec("stability", runs.stability, "Runs: stability over repeats per model and condition (flip rate, "
                                          "run-to-run SD, variance split)"),
    ViewSpec("item_stability", runs.item_stability, "Runs: the items whose answers flip most between repeats"),
    ViewSpec("runs", runs.runs, "Runs: usage per run (by=model: per model and condition; by=job: the batch jobs)"),
    ViewSpec("launch_progress", runs.launch_progress,
             "Runs, running now: a bar per model (by=provider: each provider's rate and limits)"),
    ViewSpec("numeric_errors", formats.numeric_errors, "Tasks and dimensions: counting answers, mean absolute error and "
                                               "off-by-one rate"),
    ViewSpec("part_accuracy", formats.part_accuracy, "Tasks and dimensions: accuracy per part of multi-part answers"),
    ViewSpec("dialogue", studies.dialogue, "Item inspector: a dialogue turn by turn with every model's answers"),
    ViewSpec("image_attributes", studies.image_attributes, "Images: accuracy by image attribute (genre, figures, indoor, warm/cool)"),
    ViewSpec("dimension_scores", studies.dimension_scores, "Tasks and dimensions: table with marks and heatmap"),
    ViewSpec("task_correlations", studies.task_correlations, "Tasks and dimensions: Spearman matrix between tasks"),
    ViewSpec("family_best", studies.family_best, "Tasks and dimensions: best per family and the best-available envelope"),
    ViewSpec("distractor_choices", studies.distractor_choices, "Tasks and dimensions: distractor types chosen when wrong"),
    ViewSpec("invalid_rates", studies.invalid_rates, "Tasks and dimensions: refused and unreadable answers"),
    ViewSpec("invalid_answers", studies.invalid_answers, "Overview, Item inspector, Psychometrics (IRT) and `show`: "
                                                         "invalid answers per model and the IRT leave-out"),
    ViewSpec("external_correlations", studies.external_correlations,
             "Tasks and dimensions: correlation with imported external benchmarks"),
    ViewSpec("consistency_checks", studies.consistency_checks, "Tasks and dimensions: does the table add up? (checks in words)"),
    ViewSpec("failure_examples", report.failure_examples, "Report: failure examples (items where the models disagree)"),
    ViewSpec("provenance", report.provenance, "Report: provenance block (versions, scorer, prompts, API model ids)"),
    ViewSpec("human_accuracy", humans.human_accuracy, "Overview, Models and people: accuracy of models and people per format"),
    ViewSpec("human_gap", humans.human_gap, "Overview and presentation, Models and people: the gaps and their sentences"),
    ViewSpec("human_ranking", humans.human_ranking, "Overview, Models and people: one ability ranking of models and people"),
    ViewSpec("human_wright_map", humans.human_wright_map, "Overview, Models and people: models, people and items on one scale"),
    ViewSpec("exam_sessions", humans.exam_sessions, "Sit the exam, Sessions: the exam sessions of the dataset"),
    ViewSpec("exam_progress", humans.exam_progress, "Sit the exam, Sessions: each respondent's progress (pseudonyms)"),
    ViewSpec("judge_calibration", judges.judge_calibration, "Scoring profiles, Judges: calibration table and alpha chart; report"),
    ViewSpec("judge_confusion", judges.judge_confusion, "Scoring profiles, Judges: human x judge confusion table"),
    ViewSpec("judge_severity", judges.judge_severity, "Scoring profiles, Judges: severity chart of graders and judges; report"),
    ViewSpec("judge_profiles", judges.judge_profiles, "Scoring profiles, Judges: judge profiles with versions and the gate"),
    ViewSpec("grading_progress", judges.grading_progress, "Scoring profiles, Judges: human grading so far (counts)"),
    ViewSpec("judge_corrected", judges.judge_corrected,
             "Scoring profiles, Judges: judge-only vs judge-corrected scores (prediction-powered inference)"),
    ViewSpec("grading_plan", judges.grading_plan,
             "Scoring profiles, Judges: how many answers to grade next per model and format for a target width"),
    ViewSpec("invariance", robustness.invariance,
             "Robustness: flip rate, consistency-adjusted accuracy (CircularEval) and position bias per model and kind"),
    ViewSpec("item_invariance", robustness.item_invariance, "Robustness and item inspector: how many models flip per item"),
    ViewSpec("position_bias", robustness.position_bias, "Robustness: chosen option positions against the key's positions"),
    ViewSpec("image_reliance", robustness.image_reliance,
             "Robustness: accuracy drop without the image and under each image change, per model"),
    ViewSpec("robustness_findings", robustness.robustness_findings, "Robustness and presentation: plain findings"),
    ViewSpec("item_variants", robustness.item_variants,
             "Item inspector: the variants of an item side by side, and which models flip on each"),
    ViewSpec("contamination", contamination_views.contamination,
             "Robustness: contamination probe hit share per model, accuracy on probe hits vs misses"),
    ViewSpec("contamination_items", contamination_views.contamination_items,
             "Robustness: which models hit the contamination probe of each item"),
    ViewSpec("contamination_period", contamination_views.contamination_period,
             "Robustness: accuracy before vs after each model's training cutoff (items with a publication date)"),
    ViewSpec("run_diff", run_diff_views.run_diff,
             "Runs, Compare runs: deltas against a baseline per format and overall, paired intervals"),
    ViewSpec("run_diff_items", run_diff_views.run_diff_items,
             "Runs, Compare runs: per item regressions and improvements against a baseline (option only)"),
)
VIEWS: dict[str, ViewSpec] = {spec.name: spec for spec in _SPECS}
# ``views.leaderboard(src, sel)``: every registered function under its own name, from the one listing above
globals().update({spec.fn.__name__: spec.fn for spec in _SPECS})
if TYPE_CHECKING:  # the type checker cannot follow the update above: a registered name is a view function
    def __getattr__(name: str) -> Callable[..., pd.DataFrame]: ...


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
    "VIEWS", "ViewSpec", "run_view",
    "DatasetFlags", "EmptySelection", "ItemLevelUnavailable", "Source", "StoreConflictError", "StoreError",
    "StoreLockedError", "StoreUnavailableError", "baseline_models", "clear_caches", "dataset_flags", "datasets", "family_map", "human_models",
    "languages", "models", "models_with_data", "open_store", "selected_scores", "store_name", "store_path", "latest_responses",
    "irt_fit", "dataset_glance", "item_detail", "item_responses", "item_texts", "examinee_setting", "published_setting",
    "setting_words", "scorer_fingerprint", "key_findings", "point_board", "regression_choices", "type_means", "image_file",
    "page_extractions", "robustness_finding_list", "batch_jobs", "repeat_scores", "run_history", "runnable_datasets", "unstable_model", "launch_items", "FilterState", "analysable_datasets",
    "dataset_filters", "item_level", "tasks_rule", "formats_rule", "motivation_rule", "images_rule",
    "robustness_rule", "item_level_rule", "why_not", "ItemPicture", "StudyFeatures", "access_map",
    "item_picture", "study_features", "comparison_selection", "data_label", "invalid_warnings",
    "SUMMARY_ROW", "irt_default_model",
    "corrected_cells", "judge_gate", "profile_choices", "profile_label", "profile_warning",
    "errata_label",
]
__all__ += ["paper_question", "marked_page_image", "paper_notes"]
__all__ += [spec.fn.__name__ for spec in _SPECS]

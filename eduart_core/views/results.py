"""Views of the results pages (Overview, Formats, Motivation, Images, Scoring profiles).

Each view loads the frame for a selection and hands it to one analysis function; for an
aggregate-only dataset (the published reference) it hands the stored type means to the matching
aggregate analysis instead. No statistics here.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import analysis, findings
from ..errors import UserError
from ..selection import Selection
from ..vocab import (
    ALL_ITEMS,
    MCQ_TYPE,
    PAPER_PROFILE,
    STRICT_PROFILE,
    WITH_IMAGE,
    WITHOUT_IMAGE,
    is_judge_profile,
    ordered_formats,
)
from ._base import (
    EmptySelection,
    Source,
    baseline_models,
    cached,
    dataset_flags,
    item_keys,
    published_pooled_motivation,
    published_type_means,
    selected_scores,
)


def scores(src: Source, sel: Selection, all_conditions: bool = False) -> pd.DataFrame:
    """The long score frame of the selection: one row per model, condition and item (what every analysis reads).

    The selected condition only, unless ``all_conditions``; plain columns (no pandas categories), so a
    script can filter and join it freely. Reviewed overrides apply as the selection says.
    """
    frame = selected_scores(src, sel, all_conditions)
    plain = {c: frame[c].astype(object) for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)}
    return frame.assign(**plain).reset_index(drop=True)


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


def with_images(src: Source, dataset: str, frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with ``cluster``: the image each item shows (items sharing one picture are one
    cluster of the ranking's intervals; an item without an image is its own)."""
    keys = item_keys(src, dataset)
    if "image_hash" not in keys or frame.empty:
        return frame
    image = pd.Series(keys["image_hash"].to_numpy(), index=keys["item_id"].astype(str))
    image = image[~image.index.duplicated()]
    # looked up once per distinct item, not once per answer (250,000 rows at 50 models x 5,000 items)
    codes, distinct = pd.factorize(frame["item_id"])
    found = np.append(np.asarray(pd.Index(distinct).astype(str).map(image), dtype=object), np.nan)
    return frame.assign(cluster=found[codes])


def judge_correction(src: Source, sel: Selection) -> pd.DataFrame | None:
    """Under a judge profile, the judge's correction per model, condition and format (``type``).

    Prediction-powered inference on the human-graded slice (`views.judges.corrected_cells`): the
    mean human-minus-judge ``shift`` turns the judge's mean into the corrected estimate, and its
    variance (``variance``) is the judge's calibration error, which the leaderboard's interval adds
    (`ranking.ranking`'s ``extra_variance``); ``n_human`` is the graded answers of the cell. None
    outside a judge profile or without a graded slice; a cell with fewer than two graded answers
    is left out (its mean stays the judge's, as the caption says).
    """
    if not is_judge_profile(sel.profile):
        return None
    from .judges import corrected_cells

    try:
        cells = corrected_cells(src, sel, sel.profile)
    except UserError:
        return None
    cells = cells.dropna(subset=["shift", "shift_var"])
    return cells.rename(columns={"shift_var": "variance"})[["model", "condition", "type", "shift", "variance",
                                                            "n_human"]]


@cached()
def leaderboard(src: Source, sel: Selection, variants: str = "exclude") -> pd.DataFrame:
    """Macro average with its 95% interval, rank interval and tie group (paired tests, Holm), micro, and multiple-choice accuracy (Wilson 95%) per model; judge-corrected under a judge profile."""
    if variants not in ("exclude", "include"):
        raise UserError(f"option variants takes exclude or include, not {variants!r}")
    if dataset_flags(src, sel.dataset).aggregate_only:
        board = analysis.leaderboard(type_means(src, sel))
    else:
        frame = with_images(src, sel.dataset, selected_scores(src, sel, variants=variants == "include"))
        correction = judge_correction(src, sel)
        board = analysis.leaderboard(frame, extra_variance=correction)
        if is_judge_profile(sel.profile):
            cells = correction if correction is not None else pd.DataFrame(columns=["model", "n_human"])
            graded = cells.groupby("model")["n_human"].sum()
            board["judge_graded"] = board["model"].map(graded).fillna(0).astype("int64")
    if board.empty:
        raise EmptySelection(f"No scores in condition '{sel.condition}' for the current selection.")
    return board.sort_values(["rank", "model"]).reset_index(drop=True)


BASELINE_COLUMNS = ["model", "condition", "macro", "micro", "mcq", "mcq_ci_low", "mcq_ci_high", "n_items",
                    "n_mcq", "n_types"]


def _baseline_rows(src: Source, sel: Selection) -> pd.DataFrame | None:
    """The long frame of the dataset's baseline models in the selection (any model filter ignored)."""
    if dataset_flags(src, sel.dataset).aggregate_only:
        return None
    names = baseline_models(src, sel.dataset)
    if not names:
        return None
    try:
        return selected_scores(src, sel.with_(models=tuple(names), baselines=True))
    except EmptySelection:
        return None


@cached()
def baselines(src: Source, sel: Selection) -> pd.DataFrame:
    """Baseline models (such as chance): macro, micro and multiple-choice scores, drawn as reference marks, never ranked."""
    frame = _baseline_rows(src, sel)
    if frame is None:
        return pd.DataFrame(columns=BASELINE_COLUMNS)
    board = analysis.leaderboard(frame)
    return board[BASELINE_COLUMNS].sort_values("model").reset_index(drop=True)


@cached()
def baseline_type_scores(src: Source, sel: Selection) -> pd.DataFrame:
    """Baseline models' mean score per format (Wilson 95%): the reference marks of the format heatmap."""
    frame = _baseline_rows(src, sel)
    if frame is None:
        return pd.DataFrame(columns=["model", "condition", "type", "n", "mean", "ci_low", "ci_high"])
    return analysis.type_scores(frame)


#: The leaderboard's columns that need no ranking: the point estimates and the rank they give.
POINT_COLUMNS = ["model", "condition", "rank", "macro", "micro", "mcq", "mcq_ci_low", "mcq_ci_high"]


@cached()
def point_board(src: Source, sel: Selection) -> pd.DataFrame:
    """The leaderboard's point columns (`POINT_COLUMNS`), in its order (rank, then model).

    Why: the Formats page orders its heatmap by the macro average and sets multiple choice against
    it; neither reads the rank intervals and tie groups, whose paired tests over every pair of
    models cost most of the leaderboard. Outside a judge profile the macro average and its rank are
    the leaderboard's own numbers without them (`analysis.leaderboard`); under a judge profile the
    macro carries the judge's correction, and a published aggregate has its own reading, so those
    take the leaderboard itself."""
    if dataset_flags(src, sel.dataset).aggregate_only or is_judge_profile(sel.profile):
        return leaderboard(src, sel)[POINT_COLUMNS]
    macro = analysis.macro_scores(selected_scores(src, sel))
    if macro.empty:
        raise EmptySelection(f"No scores in condition '{sel.condition}' for the current selection.")
    macro["rank"] = analysis.point_ranks(macro)
    return macro.sort_values(["rank", "model"]).reset_index(drop=True)[POINT_COLUMNS]


@cached()
def mcq_vs_macro(src: Source, sel: Selection) -> pd.DataFrame:
    """Multiple-choice accuracy against the macro average per model (published Table 5)."""
    return analysis.mcq_vs_macro(point_board(src, sel))


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
def regression(src: Source, sel: Selection, clustered: bool = True, ref_model: str = "", ref_type: str = "",
               ref_language: str = "", ref_image: str = "") -> pd.DataFrame:
    """Logistic regression correct ~ format + image + language + model (odds ratios; options: clustered, ref_model, ref_type, ref_language, ref_image).

    Empty reference options take the documented defaults (`analysis.regression_references`):
    the published levels where the data have them (the published model by registry key), else
    the first format, image-free items, the first language, the median-ability model.
    ``ref_image`` is `with` or `without`; ``ref_model`` a display name or a model key. Each row
    names its factor's reference level and the rule that chose it.
    """
    frame = selected_scores(src, sel)
    requested = {"model": ref_model, "type": ref_type, "language": ref_language, "has_image": ref_image}
    refs, rules = analysis.regression_references(frame, requested)
    return analysis.logistic_regression(frame, condition=None, cluster="item" if clustered else None,
                                        reference=refs, rules=rules)


@cached()
def regression_choices(src: Source, sel: Selection) -> dict[str, object]:
    """The levels a user may pick as regression references, and the default of each (for the page).

    Keys: ``levels`` (option name -> list of values, as the `regression` options take them) and
    ``default`` (option name -> value), ``rule`` (option name -> why the default).
    """
    frame = selected_scores(src, sel)
    refs, rules = analysis.regression_references(frame)
    image = {True: WITH_IMAGE, False: WITHOUT_IMAGE}
    levels = {"ref_type": ordered_formats(frame["type"].unique()),
              "ref_image": [image[v] for v in sorted(set(frame["has_image"].astype(bool)))],
              "ref_language": sorted(frame["language"].dropna().unique()),
              "ref_model": sorted(frame["model"].unique())}
    default = {"ref_type": refs["type"], "ref_image": image[bool(refs["has_image"])],
               "ref_language": refs["language"], "ref_model": refs["model"]}
    rule = {"ref_type": rules["type"], "ref_image": rules["has_image"], "ref_language": rules["language"],
            "ref_model": rules["model"]}
    return {"levels": levels, "default": default, "rule": rule}


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
def leader_comparison(src: Source, sel: Selection) -> dict | None:
    """Leader minus runner-up (by macro average) on the items both answered, with a paired bootstrap interval.

    None for an aggregate-only dataset (no item-level answers) or with fewer than two models.
    """
    if dataset_flags(src, sel.dataset).aggregate_only:
        return None
    board = leaderboard(src, sel).sort_values("macro", ascending=False, kind="stable")
    if len(board) < 2:
        return None
    first, second = board["model"].iloc[0], board["model"].iloc[1]
    return analysis.paired_macro_difference(selected_scores(src, sel), first, second)


@cached()
def key_findings(src: Source, sel: Selection) -> list[findings.Finding]:
    """The plain-language findings of the Overview and the report, computed from the selection.

    A published per-task table gets the findings its printed numbers allow (leader, hardest column,
    whether the table adds up); with simulated examinees every headline says so (`views.data_label`).
    """
    from .labels import data_label
    from .studies import consistency_checks, dimension_scores, study_features

    if study_features(src, sel.dataset).reference:
        return findings.study_findings(_optional(dimension_scores, src, sel), _optional(consistency_checks, src, sel))
    aggregate = dataset_flags(src, sel.dataset).aggregate_only
    board = leaderboard(src, sel)
    means = type_means(src, sel)
    effect = _optional(motivation, src, sel)
    image = None if aggregate else _optional(image_effect, src, sel)
    reg = None if aggregate else _optional(regression, src, sel, clustered=True)
    # the tie groups carry the leader's sentence; the leader-vs-runner-up bootstrap only where there are none
    paired = None if board["tie_group"].notna().any() else _optional(leader_comparison, src, sel)
    variance = _optional(analysis.format_model_variance, means)
    unstable = None if aggregate else _optional(_unstable_model, src, sel)
    found = findings.key_findings(board, means, effect, reg, image, paired=paired, variance=variance,
                                  prefix=data_label(src, sel).finding_prefix(), unstable=unstable)
    return found + ([] if aggregate else _robustness_finding(src, sel))


def _robustness_finding(src: Source, sel: Selection) -> list[findings.Finding]:
    """On a dataset with variant items: the first robustness finding (position bias first), if the numbers carry one."""
    from .robustness import robustness_finding_list

    catalogue = item_keys(src, sel.dataset)
    if "variant_of" not in catalogue or not catalogue["variant_of"].notna().any():
        return []
    try:
        return robustness_finding_list(src, sel)[:1]
    except UserError:
        return []


def _unstable_model(src: Source, sel: Selection) -> dict | None:
    from .runs import unstable_model

    return unstable_model(src, sel)


def findings_table(src: Source, sel: Selection) -> pd.DataFrame:
    """The key findings as rows: headline, detail, test, n and what n counts (n_unit)."""
    return findings.as_frame(key_findings(src, sel))

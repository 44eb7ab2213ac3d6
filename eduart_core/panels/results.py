"""The panels of the results story: Overview, Formats, Motivation, Images and Scoring profiles.

Each panel is three small functions: what it loads besides its view (``_load_*``), its words
(caption, statistic, test, n and the presentation headline) and its figure. The words say what
every number is: the statistic, the test, n, the condition and the scoring profile.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from .. import findings, views, vocab
from ..analysis import ranking
from ..analysis.intervals import WILSON_WORDS
from ..charts import results as charts
from ..selection import Selection
from ._base import Shown, Words

# ---------------------------------------------------------------- Overview: the leaderboard


def _load_leaderboard(src: views.Source, sel: Selection, frame: pd.DataFrame, options: Mapping[str, Any]) -> dict:
    """Baselines (a dashed line each, unless they count as examinees) and the findings (the headline)."""
    return {"baselines": views.baselines(src, sel) if not sel.baselines else None,
            "findings": views.key_findings(src, sel)}


def leaderboard_words(shown: Shown) -> Words:
    """Macro average with its interval and tie groups, multiple-choice accuracy, baselines as reference lines."""
    board, sel = shown.frame, shown.sel
    n_items = int(board["n_items"].max()) if "n_items" in board else 0
    grouped = "tie_group" in board and board["tie_group"].notna().any()
    n_common = int(board["n_common"].max()) if "n_common" in board and len(board) else 0
    caption = (f"Macro average (bars, labelled: unweighted mean of the format means) with its 95% interval (black "
               f"bars: {ranking.INTERVAL_WORDS}) and multiple-choice accuracy "
               f"(diamonds below each bar, {WILSON_WORDS}) per model; condition {sel.condition}, "
               f"{shown.scoring}, n = {n_items} items. Colours show the model family. ")
    if grouped:
        n_groups = int(board["tie_group"].max())
        caption += (f"Shaded bands and labels: tie groups ({n_groups}); models in one group cannot be told apart "
                    f"({ranking.TEST_WORDS}: "
                    f"{n_common} items; Miller 2024, Holm 1979); within a group the "
                    f"order follows the point estimates only. {ranking.REPEAT_WORDS.capitalize()}.")
    else:
        caption += ranking.AGGREGATE_WORDS.capitalize() + "."
    if "judge_graded" in board and len(board):
        graded = int(board["judge_graded"].sum())
        caption += (" Under this judge profile the macro averages are judge-corrected (micro and multiple choice are "
                    f"not): {ranking.JUDGE_WORDS} "
                    f"({graded} human-graded answers; a format with fewer than two keeps the judge's own mean); "
                    "the judge-only scores are in Judge-corrected scores." if graded else
                    " Under this judge profile the macro averages are the judge's own and the intervals do not hold "
                    "its calibration error: no format has two human-graded answers yet (grade a slice).")
    base = shown.extra["baselines"]
    if base is not None and len(base):
        caption += (" Dashed lines: baseline models (" + ", ".join(base["model"]) + "), macro average; "
                    "references, not ranked.")
    found = shown.extra["findings"]
    test = (f"macro: item-clustered t interval, tie groups by paired t tests with Holm; {WILSON_WORDS} on multiple "
            "choice") if grouped else f"macro: binomial interval per format; {WILSON_WORDS} on multiple choice"
    return Words(caption, "Macro average and multiple-choice accuracy (%)", test=test,
                 n=f"n = {n_items} items", story=found[0].headline if found else None)


def leaderboard_figure(shown: Shown) -> go.Figure:
    fig = charts.figure_leaderboard(shown.frame, families=shown.families)
    base = shown.extra["baselines"]
    if base is not None and len(base):
        charts.add_baseline_lines(fig, base)
    return fig


# ---------------------------------------------------------------- Formats


def _load_heatmap(src: views.Source, sel: Selection, frame: pd.DataFrame, options: Mapping[str, Any]) -> dict:
    """The leaderboard's macro averages (models sorted by them) and the baselines' format means (marks above the grid)."""
    return {"board": views.point_board(src, sel),
            "baselines": views.baseline_type_scores(src, sel) if not sel.baselines else None}


def _items_per_format(type_means: pd.DataFrame) -> str:
    n_by_type = type_means.groupby("type")["n"].max()
    return ", ".join(f"{vocab.format_label(t)} {int(n_by_type[t])}" for t in vocab.ordered_formats(n_by_type.index))


def heatmap_words(shown: Shown) -> Words:
    """Mean score per model and format, models sorted by macro average."""
    type_means, sel = shown.frame, shown.sel
    n_text = _items_per_format(type_means)
    note = ""
    base = shown.extra["baselines"]
    if base is not None and len(base):
        note = (" Grey numbers above the columns: baseline models (" + ", ".join(base["model"].unique())
                + "), references, not examinees.")
    hardest = findings.hardest_format_finding(type_means)
    return Words(f"Mean score per model and format (0-100), models sorted by macro average; condition {sel.condition}, "
                 f"{shown.scoring}; items per format: {n_text}." + note,
                 "Mean item score per model and format (%)", test=f"{WILSON_WORDS} in the table",
                 n=f"items per format: {n_text}", story=hardest.headline if hardest else None)


def heatmap_figure(shown: Shown) -> go.Figure:
    fig = charts.figure_format_heatmap(shown.frame, macro=shown.extra["board"])
    base = shown.extra["baselines"]
    if base is not None and len(base):
        charts.add_baseline_format_marks(fig, base)
    return fig


def _load_spread(src: views.Source, sel: Selection, frame: pd.DataFrame, options: Mapping[str, Any]) -> dict:
    """The format means (the headline names the widest spread)."""
    return {"type_means": views.type_scores(src, sel)}


def spread_words(shown: Shown) -> Words:
    """Distance between each model's best and worst format."""
    story = findings.spread_finding(shown.extra["type_means"])
    return Words("Distance between each model's best and worst format (percentage points); the label names both "
                 "formats.", "Best minus worst format mean (pp)", n=f"{len(shown.frame)} models",
                 story=story.headline if story else None)


def spread_figure(shown: Shown) -> go.Figure:
    return charts.figure_spread(shown.frame, families=shown.families)


def language_words(shown: Shown) -> Words:
    """Multiple-choice accuracy per model in each language."""
    n_lang = shown.frame.groupby("language")["n"].max()
    n_text = ", ".join(f"{vocab.language_label(k)} {int(v)}" for k, v in n_lang.items())
    return Words("Single-answer multiple choice is the one format asked in both languages; bars show accuracy "
                 f"with {WILSON_WORDS} (n = {n_text} items).", "Multiple-choice accuracy (%)", test=WILSON_WORDS,
                 n=f"n = {n_text} items")


def language_figure(shown: Shown) -> go.Figure:
    return charts.figure_language_mcq(shown.frame, families=shown.families)


def _standard_errors(shown: Shown) -> str:
    return "item-clustered" if shown.options.get("clustered", True) else "ordinary (as published)"


def forest_words(shown: Shown) -> Words:
    """Odds ratios of a correct answer from the logistic regression correct ~ format + image + language + model."""
    reg, se_name = shown.frame, _standard_errors(shown)
    n_rows = reg.attrs.get("n_obs") or reg.attrs.get("n")
    caption = (f"Odds ratios of answering correctly (score >= 0.5) from a logistic regression correct ~ format + image + "
               f"language + model, condition {shown.sel.condition}, {se_name} standard errors"
               + (f", n = {n_rows} model x item rows" if n_rows else "")
               + ". Right of the dashed line = more often correct than the reference. "
               + findings.regression_reference_text(reg) + ".")
    return Words(caption, "Odds ratios of a correct answer (score >= 0.5), 95% CI",
                 test=f"logistic regression correct ~ format + image + language + model, {se_name} standard errors",
                 n=f"n = {n_rows} model x item rows" if n_rows else None)


def forest_figure(shown: Shown) -> go.Figure:
    return charts.figure_forest(shown.frame)


# ---------------------------------------------------------------- Motivation

MEASURES = ("macro", "micro")


def _measure(shown: Shown) -> str:
    measure = str(shown.options.get("measure", "macro"))
    if measure not in MEASURES:
        from ..errors import UserError

        raise UserError(f"measure must be one of {', '.join(MEASURES)}, not {measure!r}")
    return measure


def motivation_test_words(effect: pd.DataFrame, measure: str) -> tuple[str, str]:
    """(what the marks and colours mean, the test's name) for the dumbbell: the Holm-corrected test the
    motivation finding counts (`charts.figure_motivation_dumbbell` draws from the same ``p_holm``)."""
    tested = effect["p_holm"].notna() if "p_holm" in effect else pd.Series(False, index=effect.index)
    if not tested.any():
        return ("grey: these data hold no per-item test, so no change is marked", "no test available")
    k = int(tested.sum())
    if "p_wilcoxon" in effect and effect["p_wilcoxon"].notna().any():
        test = "Wilcoxon signed-rank test on the non-zero per-item differences"
    else:
        test = "published paired t-test on the pooled per-item scores"
        if measure == "macro":
            test += " (the published tables test the pooled scores; the macro differences have no test of their own)"
    marks = (f"* and colour (blue higher, red lower): Holm-corrected p < .05 across {k} models, the changes the "
             f"finding counts ({test}); grey: changed within noise")
    return marks, f"{test}, Holm-adjusted across {k} models (p < .05)"


def motivation_words(shown: Shown) -> Words:
    """Default vs motivation per model (macro or micro average), marked with the corrected test the finding counts."""
    effect, measure = shown.frame, _measure(shown)
    marks, test = motivation_test_words(effect, measure)
    n_pairs = effect["n_paired"].max() if "n_paired" in effect else None
    n_text = f"n = {int(n_pairs)} paired items" if n_pairs and not pd.isna(n_pairs) else None
    story = findings.motivation_finding(effect)
    caption = (f"{measure.capitalize()} average per model: open circle = default, filled = with motivation; the label "
               f"is the difference in points; {marks}; {shown.scoring}" + (f", {n_text}" if n_text else "") + ".")
    return Words(caption, f"{measure.capitalize()} average, motivation vs default (%)", test=test, n=n_text,
                 story=story.headline if story else None)


def motivation_figure(shown: Shown) -> go.Figure:
    return charts.figure_motivation_dumbbell(shown.frame, measure=_measure(shown), families=shown.families)


def motivation_heatmap_words(shown: Shown) -> Words:
    """Motivation minus default mean score per model and format."""
    return Words("Motivation minus default mean score per model and format, in percentage points (blue higher, red "
                 "lower).", "Motivation minus default mean score (pp)", n=f"{shown.frame['model'].nunique()} models")


def motivation_heatmap_figure(shown: Shown) -> go.Figure:
    return charts.figure_delta_heatmap(shown.frame)


# ---------------------------------------------------------------- Images


def image_words(shown: Shown) -> Words:
    """Mean score per model on items without and with an image (raw, not adjusted for format and language)."""
    effect, sel = shown.frame, shown.sel
    n_with = int(effect["n_with"].max()) if "n_with" in effect else 0
    n_without = int(effect["n_without"].max()) if "n_without" in effect else 0
    raw = findings.image_raw_finding(effect)
    return Words(f"Mean score without an image (open circle) and with an image (filled; blue higher, red lower), "
                 f"condition {sel.condition}, {shown.scoring}; n = {n_without} items without and {n_with} with an "
                 "image. Raw comparison: the two sets of items also differ in format and language.",
                 "Mean score per model (%)", test="raw means, not adjusted for format and language",
                 n=f"n = {n_without} items without, {n_with} with an image", story=raw.headline if raw else None)


def image_figure(shown: Shown) -> go.Figure:
    return charts.figure_image_dumbbell(shown.frame, families=shown.families)


# ---------------------------------------------------------------- Scoring profiles


def profile_words(shown: Shown) -> Words:
    """Paper minus strict mean score per model and format."""
    impact = shown.frame
    n_changed = int(impact["n_changed"].sum()) if "n_changed" in impact else 0
    return Words(f"Paper minus strict mean score per model and format, percentage points; condition "
                 f"{shown.sel.condition}; {n_changed} model x item scores differ between the profiles.",
                 "Paper minus strict mean score (pp)", n=f"{n_changed} model x item scores differ")


def profile_figure(shown: Shown) -> go.Figure:
    return charts.figure_profile_impact(shown.frame)

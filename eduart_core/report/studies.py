"""Report sections of the VQArt-Bench- and MUSE-style studies, in presentation language.

Why a module of its own: the report tells the same story as the "Tasks and dimensions" page (who
leads which task, whether the table adds up, which tasks rank models alike, what goes wrong) with
the same views and figures, and a published per-task table gets a report of its own (it has no
formats, conditions or items for the EduArt sections). Every sentence comes from the rows of the
views; every text from data is escaped.
"""
from __future__ import annotations

import html
from collections.abc import Callable

import pandas as pd

from .. import views
from ..charts import studies as study_charts
from ..errors import UserError
from ..selection import Selection
from ..studies import words
from ..vocab import OVERALL_COLUMN, VERDICT_FLAG, VERDICT_PROBLEM

Figure = Callable[[object, str, str], None]

STUDY_METHODS = [
    ("Scores per task or dimension", "A model's score in a column is its mean item score over the items of that "
     "task (or reasoning dimension). The <b>overall</b> column states its aggregation: micro (all items pooled), "
     "task-macro or dimension-macro (unweighted mean of the column means); a published table keeps its printed "
     "overall, whose rule the paper does not state."),
    ("Intervals clustered by image", "Several questions share one picture, so their answers are not independent. "
     "The 95% Wilson interval is taken on the effective number of items: n divided by the design effect of a "
     "cluster-robust variance with one cluster per image. Published tables get Wilson intervals on their printed "
     "item counts where they print one."),
    ("Marks and chance", "▲ marks the highest and △ the second-highest score of a column (point estimates, ties "
     "share a mark; not a test of the order); ↓ marks a "
     "score below the column's chance level (the mean chance level of its items, e.g. 1/4 for four options). A "
     "published score counts as below chance only when its rounding cannot lift it to chance."),
    ("Consistency checks", "The printed overall against the item-weighted and the unweighted mean of the columns; "
     "a stated row order against the averages (adjacent inversions and discordant pairs); columns whose median "
     "model is below chance; column names that differ between the table and the text; a model the text calls best "
     "everywhere. Each check allows what the printed rounding can hide (half a unit of the last printed digit per "
     "value)."),
    ("Rank correlations", "Spearman's rho between columns across models (and with imported external benchmarks), "
     "pairwise-complete, with the number of models n and the p value of each cell."),
    ("Invalid answers and distractors", "An answer is invalid when it refuses, cannot be parsed, or names no "
     "option; among wrong option choices, the share per labelled distractor type is compared with the share "
     "uniform guessing among the wrong options would give."),
]


def _list(items: list[tuple[str, str]]) -> str:
    return "<ul class='checks'>" + "".join(
        f"<li><b>{html.escape(verdict)}</b>: {html.escape(sentence)}</li>" for verdict, sentence in items) + "</ul>"


def invalid_sentence(worst: pd.DataFrame) -> str:
    """Who gives the most invalid answers: "the most" only when its 95% interval lies above the next model's."""
    w = worst.iloc[0]
    share = (f"{100 * w['rate']:.1f}% of {int(w['n'])} (95% CI {100 * w['ci_low']:.1f} to "
             f"{100 * w['ci_high']:.1f})")
    if len(worst) < 2 or w["ci_low"] > worst.iloc[1]["ci_high"]:
        return f"{w['model']} gives the most invalid answers: {share}."
    nxt = worst.iloc[1]
    return (f"{w['model']} has the highest share of invalid answers, {share}, but its interval overlaps that of "
            f"{nxt['model']} ({100 * nxt['rate']:.1f}%), so the data do not tell which gives more.")


def study_section(src: views.Source, sel: Selection, figure: Figure, table: Callable[..., str], number: int) -> list[str]:
    """The "Tasks and dimensions" section of a report (item-level or published table)."""
    features = views.study_features(src, sel.dataset)
    scores = views.dimension_scores(src, sel)
    checks = views.consistency_checks(src, sel)
    by = features.grouping or "task"
    parts = [f"<h2>{number}. Tasks and dimensions</h2>"]
    lead = words.leader_sentence(scores)
    if lead:
        parts.append(f"<p class='story'>{html.escape(lead)}</p>")
    figure(study_charts.figure_dimension_heatmap(scores), "fig-study-heatmap",
           f"Score per model and {by} (0-100); ▲ highest, △ second-highest score in the column (point estimates, not a "
           f"test of the order), ↓ below chance; last row: the "
           f"median model. Overall: {scores['aggregation'].iloc[0]}.")
    parts.append("<details><summary>The table with 95% intervals, n and chance levels</summary>"
                 + table(scores.loc[:, ["model", "column", "n", "score", "ci_low", "ci_high", "chance", "mark",
                                        "below_chance"]], percent=("score", "ci_low", "ci_high", "chance"))
                 + "</details>")
    parts.append("<h3>Does the table add up?</h3>")
    parts.append(f"<p class='story'>{html.escape(words.checks_headline(checks))}</p>")
    serious = [(v, s) for v, s in words.checks_in_words(checks, limit=20, summary_only=True) if v in (VERDICT_PROBLEM, VERDICT_FLAG)]
    if serious:
        parts.append(_list(serious))
    parts.append("<details><summary>Every check (check, subject, expected, found, verdict)</summary>"
                 + table(checks[["check", "subject", "expected", "found", "verdict"]]) + "</details>")
    best = views.family_best(src, sel)
    figure(study_charts.figure_family_best(best), "fig-study-family",
           f"Best model of each family per {by}, with the best-available envelope (thick black) and the best open "
           "(dotted) and closed (dashed) models.")
    try:
        corr = views.task_correlations(src, sel)
        figure(study_charts.figure_correlation_matrix(corr), "fig-study-correlations",
               f"Spearman rank correlation between {by}s across models (pairwise-complete, up to "
               f"{int(corr['n'].max())} models).")
    except UserError as exc:  # one column or too few models
        parts.append(f"<p class='na'>{html.escape(str(exc))}</p>")
    if not features.reference:
        rates = views.invalid_rates(src, sel)
        figure(study_charts.figure_invalid_rates(rates), "fig-study-invalid",
               "Share of answers refused, unparseable or naming no option, per model (all tasks).")
        worst = rates.loc[rates["column"] == OVERALL_COLUMN].sort_values("rate", ascending=False).head(2)
        if len(worst):
            parts.append(f"<p class='story'>{html.escape(invalid_sentence(worst))}</p>")
        if features.distractors:
            try:
                choices = views.distractor_choices(src, sel)
                figure(study_charts.figure_distractors(choices), "fig-study-distractors",
                       f"Which kind of wrong option the models chose, per {by} (all models pooled).")
            except UserError as exc:  # no wrong choice in the selection
                parts.append(f"<p class='na'>{html.escape(str(exc))}</p>")
    return parts


def build_study_report(src: views.Source, sel: Selection, title: str, meta: str, banners: list[str],
                       figure_html: Callable[[object, str, bool], str], table: Callable[..., str],
                       methods: list[tuple[str, str]], document: Callable[[str, list[str]], str]) -> str:
    """A whole report for a published per-task table (no formats, conditions or items to report)."""
    parts = [f"<h1>{html.escape(title)}</h1>", meta, *banners]
    first = True

    def figure(fig, div_id: str, caption: str) -> None:
        nonlocal first
        parts.append(f"<figure>{figure_html(fig, div_id, first)}<figcaption>{html.escape(caption)}</figcaption>"
                     "</figure>")
        first = False

    parts.extend(study_section(src, sel, figure, table, 1))
    parts.append("<h2>Methods</h2><dl>" + "".join(f"<dt>{html.escape(name)}</dt><dd>{text}</dd>"
                                                   for name, text in methods + STUDY_METHODS) + "</dl>")
    return document(title, parts)

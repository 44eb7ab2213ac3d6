"""Formats: which question formats separate the models (published Figure 2, Table 5, regression)."""
from __future__ import annotations

import streamlit as st

from eduart_core import analysis, findings, views, vocab
from eduart_core.charts import results as charts
from eduart_core.text import plain
from pages import common

src, sel = common.page_start(
    "Formats", "Models that look equal on multiple choice drift apart on production formats. "
    "Each cell is a model's mean score on one format.")
fam = common.families()
with common.guard():
    type_means = views.type_scores(src, sel)
    board = views.leaderboard(src, sel)

n_by_type = type_means.groupby("type")["n"].max()
hardest = findings.hardest_format_finding(type_means)
n_text = ", ".join(f"{vocab.format_label(t)} {int(n_by_type[t])}" for t in vocab.ordered_formats(n_by_type.index))
heatmap = charts.figure_format_heatmap(type_means, macro=board)
baseline_note = ""
if not sel.baselines:  # baselines are references: their format means sit above the grid, not in it
    with common.guard():
        base_types = views.baseline_type_scores(src, sel)
    if len(base_types):
        charts.add_baseline_format_marks(heatmap, base_types)
        baseline_note = (" Grey numbers above the columns: baseline models (" + ", ".join(base_types["model"].unique())
                         + "), references, not examinees.")
common.chart(
    heatmap,
    "format_heatmap", story=hardest.headline if hardest else None, main=True, caption=
    f"Mean score per model and format (0-100), models sorted by macro average; condition {sel.condition}, "
    f"{common.scoring_label(sel)}; items per format: {n_text}." + baseline_note,
    context=common.context(sel, "Scores by format", "Mean item score per model and format (%)",
                           test=f"{analysis.WILSON_WORDS} in the table", n=f"items per format: {n_text}"))
if common.presentation():
    st.stop()

with common.guard():
    mcq = views.mcq_vs_macro(src, sel)
common.table(mcq, "mcq_vs_macro",
             f"Multiple choice vs macro average (percent, {analysis.WILSON_WORDS} on MCQ; published Table 5)",
             percent=("mcq", "mcq_ci_low", "mcq_ci_high", "macro", "micro", "mcq_minus_macro"))

with common.guard():
    spread = views.format_spread(src, sel)
spread_story = findings.spread_finding(type_means)
common.chart(charts.figure_spread(spread, families=fam), "format_spread",
             story=spread_story.headline if spread_story else None, caption=
             "Distance between each model's best and worst format (percentage points); the label names both formats.",
             context=common.context(sel, "Best minus worst format", "Best minus worst format mean (pp)",
                                    n=f"{len(spread)} models"))

if common.flags(sel).aggregate_only:
    st.info("Language comparison and logistic regression need item-level data, which this dataset does not have.")
    st.stop()

st.subheader("Multiple choice in Italian and English")
try:
    by_lang = views.mcq_by_language(src, sel)
    n_lang = by_lang.groupby("language")["n"].max()
    n_lang_text = ", ".join(f"{vocab.language_label(k)} {int(v)}" for k, v in n_lang.items())
    common.chart(charts.figure_language_mcq(by_lang, families=fam), "mcq_language",
                 "Single-answer multiple choice is the one format asked in both languages; bars show accuracy "
                 f"with {analysis.WILSON_WORDS} (n = {n_lang_text} items).",
                 context=common.context(sel, "Multiple choice by language", "Multiple-choice accuracy (%)",
                                        test=analysis.WILSON_WORDS, n=f"n = {n_lang_text} items"))
except views.EmptySelection as exc:
    st.info(plain(exc))

st.subheader("What predicts a correct answer?")
clustered = True
references: dict[str, str] = {}
with common.guard():
    choices = views.regression_choices(src, sel)
if not common.presentation():
    clustered = st.toggle("Item-clustered standard errors (recommended)", value=True, key="clustered",
                          help="Off reproduces the published ordinary standard errors. Items share format, language "
                               "and image across models, so clustered errors are the honest default.")
    with st.expander("Reference levels (each odds ratio compares with these)", expanded=False):
        labels = {"ref_type": ("Format", vocab.format_label), "ref_image": ("Image", vocab.IMAGE_FILTERS.get),
                  "ref_language": ("Language", vocab.language_label), "ref_model": ("Model", str)}
        cols = st.columns(4)
        for col, (option, (label, show)) in zip(cols, labels.items()):
            levels, default = list(choices["levels"][option]), choices["default"][option]
            key = f"reg_{option}"
            if st.session_state.get(key) not in levels:  # a new selection: back to the documented default
                st.session_state[key] = default
            picked = col.selectbox(label, levels, key=key, format_func=show,
                                   help=f"Default: {show(default)} ({choices['rule'][option]}).")
            if picked != default:
                references[option] = picked
with common.guard():
    reg = views.regression(src, sel, clustered=clustered, **references)
se_name = "item-clustered" if clustered else "ordinary (as published)"
n_rows = reg.attrs.get("n_obs") or reg.attrs.get("n")
common.chart(charts.figure_forest(reg), "forest", context=common.context(
    sel, "What predicts a correct answer?", "Odds ratios of a correct answer (score >= 0.5), 95% CI",
    test=f"logistic regression correct ~ format + image + language + model, {se_name} standard errors",
    n=f"n = {n_rows} model x item rows" if n_rows else None), caption=
             f"Odds ratios of answering correctly (score >= 0.5) from a logistic regression correct ~ format + image + "
             f"language + model, condition {sel.condition}, {se_name} standard errors"
             + (f", n = {n_rows} model x item rows" if n_rows else "")
             + ". Right of the dashed line = more often correct than the reference. "
             + findings.regression_reference_text(reg) + ".")
common.table(reg, "regression", f"Logistic regression ({se_name} standard errors; "
             f"{findings.regression_reference_text(reg, rules=False)})")

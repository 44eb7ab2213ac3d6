"""Formats: which question formats separate the models (published Figure 2, Table 5, regression)."""
from __future__ import annotations

import streamlit as st

from eduart_core import analysis, findings, panels, views, vocab
from eduart_core.text import plain
from pages.ui import failures, header, navigate, plots, query, store_handle, tables

navigate.through_app()  # a server's first run serves this file alone: app.py draws it

src, sel = header.page_start(
    "Formats", "Models that look equal on multiple choice drift apart on production formats. "
    "Each cell is a model's mean score on one format.")
with failures.guard():
    heatmap = panels.draw("format_heatmap", src, sel)  # baselines: their format means sit above the grid
plots.panel(heatmap, main=True)
if query.presentation():
    st.stop()

with failures.guard():
    mcq = views.mcq_vs_macro(src, sel)
tables.table(mcq, "mcq_vs_macro",
             f"Multiple choice vs macro average (percent, {analysis.WILSON_WORDS} on MCQ; published Table 5)",
             percent=("mcq", "mcq_ci_low", "mcq_ci_high", "macro", "micro", "mcq_minus_macro"))

with failures.guard():
    spread = panels.draw("format_spread", src, sel)
plots.panel(spread)

if store_handle.flags(sel).aggregate_only:
    st.info("Language comparison and logistic regression need item-level data, which this dataset does not have.")
    st.stop()

st.subheader("Multiple choice in Italian and English")
try:
    plots.panel(panels.draw("mcq_language", src, sel))
except views.EmptySelection as exc:
    st.info(plain(exc))

st.subheader("What predicts a correct answer?")
clustered = True
references: dict[str, str] = {}
with failures.guard():
    choices = views.regression_choices(src, sel)
if not query.presentation():
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
with failures.guard():
    forest = panels.draw("forest", src, sel, clustered=clustered, **references)
reg = forest.frame
se_name = "item-clustered" if clustered else "ordinary (as published)"
plots.panel(forest)
tables.table(reg, "regression", f"Logistic regression ({se_name} standard errors; "
             f"{findings.regression_reference_text(reg, rules=False)})"
             + (f". {analysis.not_estimable_text(reg)}" if analysis.not_estimable_text(reg) else ""))

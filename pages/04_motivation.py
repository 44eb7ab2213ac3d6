"""Motivation: does asking the model to justify its answer change its score? (published Figure 3, Table 9)."""
from __future__ import annotations

import streamlit as st

from eduart_core import panels, views, vocab
from pages.ui import failures, header, navigate, plots, query, store_handle, tables

navigate.through_app()  # a server's first run serves this file alone: app.py draws it

src, sel = header.page_start(
    "Motivation", "Each model answered every item twice: once plainly (default) and once asked to justify "
    "its answer (motivation). Does the justification help?")
with failures.guard():
    effect = views.motivation(src, sel)

aggregate = store_handle.flags(sel).aggregate_only
measure = "macro"
if not query.presentation():
    measure = st.radio("Difference shown", ["macro", "micro"], horizontal=True, key="mot_measure",
                       format_func={"macro": "Macro average (mean of format means)",
                                    "micro": "Micro average (all items pooled)"}.get)
if measure == "micro" and effect["default_micro"].isna().all():
    st.info("Micro averages are not available for this dataset; showing macro.")
    measure = "macro"
with failures.guard():
    dumbbell = panels.draw("motivation_dumbbell", src, sel, measure=measure)
state = plots.panel(dumbbell, main=True, on_select=None if query.presentation() else "rerun")
if query.presentation():
    st.stop()
clicked = [p.get("y") for p in plots.selected_points(state)]

cols = [c for c in ("model", "default_macro", "motivation_macro", "delta_macro", "default_micro", "motivation_micro",
                    "delta_micro", "delta_micro_ci_low", "delta_micro_ci_high", "p_ttest", "p_wilcoxon", "p_mcnemar",
                    "p_holm", "n_improved", "n_same", "n_degraded") if c in effect]
tables.table(effect[cols], "motivation_effect", "Default vs motivation per model (percent; p-values as fractions)",
             percent=tuple(c for c in cols if c.startswith(("default_", "motivation_", "delta_"))))

st.subheader("By format")
with failures.guard():
    by_type = views.motivation_by_type(src, sel)
    by_model_and_format = panels.draw("motivation_heatmap", src, sel)
plots.panel(by_model_and_format)
tbl = by_type.assign(format=by_type["type"].map(vocab.format_label))
tables.table(tbl[["format", "mean_delta", "min_delta", "max_delta"]], "motivation_by_type",
             "Mean, lowest and highest change over models per format (percentage points; published Table 9)",
             percent=("mean_delta", "min_delta", "max_delta"))

if query.presentation():
    st.stop()
if aggregate:
    st.info("Which items changed most needs item-level data, which this dataset does not have.")
    st.stop()
st.subheader("Which items changed most?")
models = list(effect.sort_values("delta_macro")["model"])
if clicked and clicked[0] in models and clicked[0] != st.session_state.get("_mot_clicked"):
    st.session_state["_mot_clicked"] = clicked[0]
    st.session_state["mot_model"] = clicked[0]
model = st.selectbox("Model", models, key="mot_model")
with failures.guard():
    changes = views.item_changes(src, sel, model=model)
if changes.empty:
    st.caption("No item changed its score for this model.")
else:
    changes = changes.assign(type=changes["type"].map(vocab.format_label),
                             inspect=[navigate.inspector_link(i, sel, model=model) for i in changes["item_id"]])
    tables.table(changes, "item_changes", f"Items whose score changed most for {model} (score in percent)",
                 essential=True, percent=(*vocab.CONDITIONS, "delta"),
                 column_config={"inspect": st.column_config.LinkColumn("open", display_text="open in inspector")})
    pick = st.selectbox("Open an item in the inspector", [""] + list(changes["item_id"]), key="mot_open")
    if pick:
        navigate.open_in_inspector(pick)

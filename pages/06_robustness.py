"""Robustness: does a model know the answer, or the position of the right letter, and does it look at the image?"""
from __future__ import annotations

import streamlit as st

from eduart_core import views
from eduart_core.charts import robustness as charts
from eduart_core.errors import UserError
from eduart_core.text import plain
from pages.ui import failures, header, navigate, plots, query, tables

navigate.through_app()  # a server's first run serves this file alone: app.py draws it

src, sel = header.page_start(
    "Robustness", "Do the answers survive a rotation of the options, a changed image, or no image at all?")

with failures.guard():
    table = views.invariance(src, sel)
found = views.robustness_finding_list(src, sel)
for finding in found:
    st.markdown(f"**{plain(finding.headline)}**")
    with st.expander("How we know"):
        st.caption(plain(finding.how_we_know()))
if query.presentation():
    st.stop()
left, right = st.columns(2)
with left:
    plots.chart(charts.figure_flip_rates(table), "flip_rates",
                 f"Flip rate per model and variant kind (condition {sel.condition}, {header.scoring_label(sel)}): "
                 + table.attrs["caption"])
with right:
    with failures.guard():
        bias = views.position_bias(src, sel)
    plots.chart(charts.figure_position_bias(bias), "position_bias", bias.attrs["caption"])
tables.table(table, "invariance", "Flip rate and consistency-adjusted accuracy (CircularEval) per model and kind",
             percent=("flip_rate", "flip_low", "flip_high", "source_accuracy", "consistent_accuracy",
                      "consistent_low", "consistent_high", "top_position_share", "key_share_at_top"))
st.subheader("Does it look at the image?")
try:
    reliance = views.image_reliance(src, sel)
except views.EmptySelection as exc:
    st.info(plain(exc))
else:
    plots.chart(charts.figure_image_drop(reliance), "image_drop", reliance.attrs["caption"])
    tables.table(reliance, "image_reliance", "Accuracy drop without the image and under each image change",
                 percent=("source_accuracy", "variant_accuracy", "drop", "drop_low", "drop_high"))
st.subheader("Fragile items")
with failures.guard():
    fragile = views.item_invariance(src, sel)
tables.table(fragile, "item_invariance", fragile.attrs["caption"], percent=("flip_share",))
st.subheader("Has it seen the items? (contamination probes)")
try:
    probes = views.contamination(src, sel)
except views.EmptySelection as exc:
    st.info(plain(exc))
else:
    tables.table(probes, "contamination", probes.attrs["caption"],
                 percent=("hit_share", "hit_low", "hit_high", "accuracy_hit", "accuracy_hit_low", "accuracy_hit_high",
                          "accuracy_miss", "accuracy_miss_low", "accuracy_miss_high"))
    hits = views.contamination_items(src, sel)
    tables.table(hits[hits["n_hits"] > 0], "contamination_items", "Items whose probe some model hit: "
                 + hits.attrs["caption"])
cutoff = st.text_input("Training cutoff for the models without one in models.toml (e.g. 2024-06)", key="cutoff",
                       help="Items carry a publication date in tags.published; leave empty to use only the registry's.")
try:
    period = views.contamination_period(src, sel, cutoff=cutoff.strip())
except (views.EmptySelection, UserError) as exc:
    st.caption(plain(exc))
else:
    tables.table(period, "contamination_period", period.attrs["caption"],
                 percent=("accuracy", "accuracy_low", "accuracy_high"))

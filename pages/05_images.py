"""Images: per model accuracy on items with and without an image (published Figure 4)."""
from __future__ import annotations

import streamlit as st

from eduart_core import findings, panels, views, vocab
from eduart_core.charts import studies as study_charts
from eduart_core.errors import UserError
from eduart_core.text import plain
from pages.ui import failures, header, navigate, plots, query, tables

navigate.through_app()  # a server's first run serves this file alone: app.py draws it

src, sel = header.page_start(
    "Images", "Do models do better or worse when the question comes with an artwork image, and with which images?")
features = views.study_features(src, sel.dataset)


def attribute_breakdown() -> None:
    """Accuracy by what the picture shows, for datasets whose images carry attributes (VQArt-style)."""
    st.subheader("By what the image shows")
    with failures.guard():
        by_attribute = views.image_attributes(src, sel)
    names = list(dict.fromkeys(by_attribute["attribute"]))
    columns = st.columns(2)
    for index, name in enumerate(names):
        values = by_attribute[(by_attribute["attribute"] == name) & (by_attribute["model"] == "All models")]
        with columns[index % 2]:
            plots.chart(study_charts.figure_attribute_scores(by_attribute, attribute=name), f"attribute_{name}",
                         f"Mean score by image attribute '{name}' over all models (condition {sel.condition}, "
                         f"{header.scoring_label(sel)}), Wilson 95% intervals on the answers; "
                         + ", ".join(f"{v}: {int(n)} items" for v, n in zip(values["value"], values["n_items"]))
                         + ". Numeric attributes with many values are cut into three equal-count bins.")
    tables.table(by_attribute, "image_attributes", "Mean score per image attribute value and model (percent)",
                 percent=("score", "ci_low", "ci_high"))


if not features.with_and_without_image:
    if features.image_attributes:
        attribute_breakdown()
    else:
        st.info("Every item of this dataset has an image (or none has), so there is no with/without comparison.")
    st.stop()
with failures.guard():
    dumbbell = panels.draw("image_dumbbell", src, sel)
effect = dumbbell.frame

pres = query.presentation()
if not pres:
    st.warning("Caveat: items with and without an image differ in format and language, so the raw difference "
               "mixes the image effect with those differences. The adjusted odds ratio below takes them into account.")
left, right = st.columns([3, 2]) if not pres else (st.container(), None)
with left:
    plots.panel(dumbbell, main=True)
if pres:
    st.stop()
with right:
    try:
        reg = views.regression(src, sel.with_(image=vocab.ALL_ITEMS), clustered=True)
    except (UserError, ValueError) as exc:  # too few rows or levels for the regression
        reg = None
        st.caption(f"No adjusted odds ratio: {plain(exc)}")
    verdict = findings.image_adjusted_verdict(reg)
    if verdict is not None:
        row = reg[reg["predictor"] == "has_image:True"].iloc[0]
        st.metric("Adjusted odds ratio for an image", f"{row['odds_ratio']:.2f}",
                  help="From the logistic regression correct ~ format + image + language + model.")
        st.caption(plain(f"Read as: {findings.odds_words(row['odds_ratio'])} of a right answer with an image as "
                         "without, for comparable items (the estimate; what its interval allows is said below)."))
        st.markdown(f"**{plain(verdict.headline)}**")
        with st.expander("How we know"):
            st.caption(plain(verdict.how_we_know()))
    else:
        st.info("The adjusted odds ratio needs items both with and without an image in the selection.")
tables.table(effect, "image_effect", "Mean score with and without an image per model (percent)",
             percent=tuple(c for c in ("mean_without", "mean_with", "delta") if c in effect))
if features.image_attributes:
    attribute_breakdown()

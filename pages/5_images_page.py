"""Images: per model accuracy on items with and without an image (published Figure 4)."""
from __future__ import annotations

import streamlit as st

from eduart_core import charts
from pages import common

filters = common.page_start(
    "Images", "Do models do better or worse when the question comes with an artwork image?")
fam = common.families()
with common.guard():
    effect = common.view("image_effect", filters)

n_with = int(effect["n_with"].max()) if "n_with" in effect else 0
n_without = int(effect["n_without"].max()) if "n_without" in effect else 0
st.warning("Caveat: items with and without an image differ in format and language, so the raw difference "
           "mixes the image effect with those differences. The adjusted odds ratio below takes them into account.")
left, right = st.columns([3, 2])
with left:
    higher = int((effect["mean_with"] > effect["mean_without"]).sum())
    common.chart(charts.figure_image_dumbbell(effect, families=fam), "image_dumbbell",
                 story=f"{higher} of {len(effect)} models score higher on items with an image (raw comparison).",
                 caption=
                 f"Mean score without an image (open circle) and with an image (filled; blue higher, red lower), "
                 f"condition {filters.condition}, {common.scoring_label(filters)}; n = {n_without} items without and "
                 f"{n_with} with an image.")
with right:
    try:
        reg = common.view("regression", filters.with_(image="all"), clustered=True)
        row = reg[reg["predictor"] == "has_image:True"]
    except Exception:
        row = None
    if row is not None and len(row):
        r = row.iloc[0]
        st.metric("Adjusted odds ratio for an image", f"{r['odds_ratio']:.2f}",
                  help="From the logistic regression correct ~ format + image + language + model.")
        st.markdown(f"95% interval **{r['ci_low']:.2f} to {r['ci_high']:.2f}** (item-clustered standard errors, "
                    f"p = {r['p']:.3f}).")
        if r["ci_high"] < 1:
            st.markdown("Items with an image are answered correctly **less often** than comparable items without one.")
        elif r["ci_low"] > 1:
            st.markdown("Items with an image are answered correctly **more often** than comparable items without one.")
        else:
            st.markdown("The interval includes 1: once format, language and model are accounted for, the data do "
                        "**not clearly show** an image effect.")
    else:
        st.info("The adjusted odds ratio needs items both with and without an image in the selection.")
table = effect.copy()
common.table(table, "image_effect", "Mean score with and without an image per model (percent)",
             percent=tuple(c for c in ("mean_without", "mean_with", "delta") if c in table))

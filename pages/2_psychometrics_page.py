"""Psychometrics: item difficulty and discrimination in the classical test theory sense (published Figure 1)."""
from __future__ import annotations

import streamlit as st

from eduart_core import charts, views, vocab
from pages import common

src, sel = common.page_start(
    "Psychometrics", "Treating each model as an examinee: **difficulty p** is the share of examinees who get an "
    "item right; **discrimination r_pb** says whether strong examinees get it right more often than weak ones "
    "(above .30 good, below .10 poor; negative may mean a wrong key).")

examinees, corrected = vocab.EXAMINEES_MODELS, False
if not common.presentation():
    c1, c2 = st.columns(2)
    examinees = c1.radio("Examinees", list(vocab.EXAMINEE_SETS), horizontal=True, key="psy_examinees",
                         format_func=vocab.EXAMINEE_SETS.get)
    corrected = c2.toggle("Corrected total (exclude the item itself)",
                          value=examinees == vocab.EXAMINEES_MODELS_CONDITIONS, key="psy_corrected")
options = {"examinees": examinees, "corrected": corrected}
with common.guard():
    stats = views.item_statistics(src, sel, **options)
    overall = views.reliability(src, sel, **options).iloc[0]
    texts = views.item_texts(src, sel.dataset)

n_ex = int(overall["n_examinees"])
if n_ex < 30:
    st.warning(f"Only {n_ex} examinees: each r_pb rests on {n_ex} scores, so its 95% interval is wide "
               f"(about ±{overall['r_pb_halfwidth_at_zero']:.2f} around r = 0). Read categories as rough guides.")
total = "corrected (item excluded)" if corrected else "uncorrected (item included)"
state = common.chart(
    charts.figure_difficulty_discrimination(stats, texts=texts), "psychometrics",
    f"Each dot is an item: difficulty p (right = easier) against discrimination r_pb with the {total} total, "
    f"{n_ex} examinees, {common.scoring_label(sel)}. Dashed line r_pb = .30 (good), dotted .10 (poor), dash-dot "
    f"the mean p ({overall['mean_p']:.2f}). The last panel shows each format's centre. Click a dot to open the item.",
    on_select="rerun",
    context=common.context(sel, "Item difficulty and discrimination", f"difficulty p vs r_pb ({total} total)",
                           test="point-biserial correlation, Fisher-z 95% intervals in the table",
                           n=f"{n_ex} examinees, {len(stats)} items"))
for point in common.selected_points(state):
    item = point.get("customdata")
    if isinstance(item, list):
        item = item[0] if item else None
    if item:
        common.open_in_inspector(str(item))

c1, c2, c3, c4 = st.columns(4)
c1.metric("Mean difficulty p", f"{overall['mean_p']:.2f}", help=f"SD {overall['sd_p']:.2f}")
c2.metric("Mean discrimination r_pb", f"{overall['mean_r_pb']:.2f}", help=f"SD {overall['sd_r_pb']:.2f}")
alpha = overall.get("alpha")
has_alpha = alpha is not None and alpha == alpha
c3.metric("Reliability (KR-20 / alpha)", f"{alpha:.2f}" if has_alpha else "—",
          help=(f"95% CI {overall['alpha_ci_low']:.2f} to {overall['alpha_ci_high']:.2f}" if has_alpha else None))
c4.metric("Non-estimable items", int(overall["n_not_estimable"]),
          help=f"{int(overall['n_all_right'])} answered right by all, {int(overall['n_all_wrong'])} by none")
st.caption(f"{int(overall['n_estimable'])} of {int(overall['n_items'])} items have an r_pb; "
           f"{int(overall['n_all_right'])} were answered right by every examinee and {int(overall['n_all_wrong'])} "
           "by none, so they cannot discriminate.")

with common.guard():
    diff = views.difficulty_categories(src, sel, **options)
    disc = views.discrimination_by_format(src, sel, **options)
diff = diff.assign(category=lambda d: d["category"].str.replace("_", " "))
common.table(diff, "difficulty_categories",
             "Difficulty categories (published Table 6): very easy p >= .90, easy .70-.90, medium .30-.70, "
             "hard .10-.30, very hard < .10", percent=("share",))
disc = disc.assign(format=lambda d: d["type"].map(lambda t: "All formats" if t == "all" else vocab.format_label(t)))
common.table(disc[["format", "n", "mean_r_pb", "good", "fair", "poor"]], "discrimination_by_format",
             "Discrimination by format (published Table 7): good r_pb >= .30, fair .10-.30, poor < .10")

if not common.presentation():
    pick = st.selectbox("Open an item in the inspector", [""] + list(stats["item_id"]), key="psy_open")
    if pick:
        common.open_in_inspector(pick)

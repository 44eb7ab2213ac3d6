"""Psychometrics: item difficulty and discrimination in the classical test theory sense (published Figure 1)."""
from __future__ import annotations

import streamlit as st

from eduart_core import charts, views, vocab
from pages import common

src, sel = common.page_start(
    "Psychometrics", "Treating each model as an examinee: **difficulty p** is an item's mean item score over the "
    "examinees (the proportion right when scores are 0/1; higher = easier); **discrimination r_pb** says whether "
    "strong examinees score higher on it than weak ones (above .30 good, below .10 poor; negative may mean a "
    "wrong key).")

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
setting = views.setting_words(sel, examinees, corrected)
published = views.published_setting(sel, examinees, corrected)
state = common.chart(
    charts.figure_difficulty_discrimination(stats, texts=texts), "psychometrics",
    f"Each dot is an item: difficulty p (mean item score; right = easier) against discrimination r_pb; {setting}; "
    f"{n_ex} examinees, {common.scoring_label(sel)}. Dashed line r_pb = .30 (good), dotted .10 (poor), dash-dot "
    f"the mean p ({overall['mean_p']:.2f}). The last panel shows each format's centre. Click a dot to open the item.",
    on_select="rerun")
for point in common.selected_points(state):
    item = point.get("customdata")
    if isinstance(item, list):
        item = item[0] if item else None
    if item:
        common.open_in_inspector(str(item))

c1, c2, c3, c4 = st.columns(4)
c1.metric("Mean difficulty p", f"{overall['mean_p']:.2f}",
          help=f"Mean over items of the mean item score; SD {overall['sd_p']:.2f}")
c2.metric("Mean discrimination r_pb", f"{overall['mean_r_pb']:.2f}", help=f"SD {overall['sd_r_pb']:.2f}")
alpha = overall.get("alpha")
has_alpha = alpha is not None and alpha == alpha
c3.metric("Reliability (KR-20 / alpha)", f"{alpha:.2f}" if has_alpha else "—",
          help=(f"95% CI {overall['alpha_ci_low']:.2f} to {overall['alpha_ci_high']:.2f}" if has_alpha else None))
c4.metric("Non-estimable items", int(overall["n_not_estimable"]),
          help=f"{int(overall['n_all_right'])} with full credit from every examinee, "
               f"{int(overall['n_all_wrong'])} with score 0 from every examinee")
other = int(overall.get("n_constant_other", 0) or 0)
st.caption(f"{int(overall['n_estimable'])} of {int(overall['n_items'])} items have an r_pb; "
           f"{int(overall['n_all_right'])} were answered right (full credit, score = 1) by every one of the {n_ex} "
           f"examinees and {int(overall['n_all_wrong'])} by none of them (score 0 for all)"
           + (f", and {other} got the same partial score from all" if other else "")
           + ", so they cannot discriminate. Right means full credit; the examinees are the same as for p.")

with common.guard():
    diff = views.difficulty_categories(src, sel, **options)
    disc = views.discrimination_by_format(src, sel, **options)
diff = diff.assign(category=lambda d: d["category"].str.replace("_", " "))
where = ("as published" if published == vocab.PUBLISHED_TABLES_SETTING else
         "layout of the published table; its setting is model x condition pairs with the corrected total, "
         "this one differs")
common.table(diff, "difficulty_categories",
             f"Difficulty categories (Table 6, {where}): very easy p >= .90, easy .70-.90, medium .30-.70, "
             "hard .10-.30, very hard < .10", percent=("share",))
disc = disc.assign(format=lambda d: d["type"].map(lambda t: "All formats" if t == "all" else vocab.format_label(t)))
common.table(disc[["format", "n", "mean_r_pb", "good", "fair", "poor"]], "discrimination_by_format",
             f"Discrimination by format (Table 7, {where}): good r_pb >= .30, fair .10-.30, poor < .10")

if not common.presentation():
    pick = st.selectbox("Open an item in the inspector", [""] + list(stats["item_id"]), key="psy_open")
    if pick:
        common.open_in_inspector(pick)

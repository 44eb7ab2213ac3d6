"""Psychometrics: item difficulty and discrimination in the classical test theory sense (published Figure 1)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from eduart_core import panels, views, vocab
from eduart_core.charts import psychometrics as figures
from pages import common

common.through_app()  # a server's first run serves this file alone: app.py draws it

src, sel = common.page_start(
    "Psychometrics", "Treating each model as an examinee: **difficulty p** is an item's mean item score over the "
    "examinees (the proportion right when scores are 0/1; higher = easier); **discrimination r_pb** says whether "
    "strong examinees score higher on it than weak ones (above .30 good, below .10 poor; negative may mean a "
    "wrong key).")

examinees = vocab.EXAMINEES_MODELS
if not common.presentation():
    examinees = st.radio("Examinees", list(vocab.EXAMINEE_SETS), horizontal=True, key="psy_examinees",
                         format_func=vocab.EXAMINEE_SETS.get,
                         help="Who counts as an examinee in every tab (DIF always compares the model x condition "
                              "pairs of the two conditions). Baseline models count only when switched in.")


def ctt_tab() -> None:
    """Classical test theory: difficulty p, discrimination r_pb, Tables 6-7, reliability."""
    corrected = False
    if not common.presentation():
        corrected = st.toggle("Corrected total (exclude the item itself)",
                              value=examinees == vocab.EXAMINEES_MODELS_CONDITIONS, key="psy_corrected")
    options = {"examinees": examinees, "corrected": corrected}
    with common.guard():
        drawn = panels.draw("psychometrics", src, sel, **options)
        overall = views.reliability(src, sel, **options).iloc[0]
    stats = drawn.frame

    n_ex = int(overall["n_examinees"])
    if n_ex < 30:
        st.warning(f"Only {n_ex} examinees: each r_pb rests on {n_ex} scores, so its 95% interval is wide "
                   f"(about ±{overall['r_pb_halfwidth_at_zero']:.2f} around r = 0). Read categories as rough guides.")
    published = views.published_setting(sel, examinees, corrected)
    state = common.panel(drawn, on_select="rerun")
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
    has_alpha = alpha is not None and pd.notna(alpha)
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


def irt_tab() -> None:
    """Rasch / 2PL: Wright map, abilities with intervals and ranks, information curves, the item table."""
    model = vocab.IRT_RASCH
    if not common.presentation():
        model = st.radio("Model", list(vocab.IRT_MODELS), horizontal=True, key="psy_irt_model",
                         format_func=vocab.IRT_MODELS.get)
    options = {"model": model, "examinees": examinees}
    with common.guard():
        items = views.irt_items(src, sel, **options)
        ranking = views.irt_abilities(src, sel, **options)
        wright = views.irt_wright_map(src, sel, **options)
        curves = views.irt_information(src, sel, **options)
    info = items.attrs
    n_ex = int(info["n_examinees"])
    (st.warning if info["exploratory"] else st.info)(info["warning"])
    label = vocab.IRT_MODELS[model]
    panel = (f"{label}, {n_ex} examinees ({vocab.EXAMINEE_SETS[examinees].lower()}), {info['n_items_fitted']} "
             f"informative items, {common.scoring_label(sel)}; {info['rule']}")
    st.caption(f"Fit: {panel}. Ability spread (SD) {info['latent_sd']:.2f} logits; standard errors: "
               f"{info['se_method']}." + (" " + " ".join(info["notes"]) if info["notes"] else ""))
    common.chart(figures.figure_wright_map(wright), "irt_wright_map",
                 f"Wright map: each examinee's ability (EAP, 95% interval) and the items' difficulties on one logit "
                 f"scale; an examinee at an item's level has a 50% chance of a right answer. {panel}.",
                 story="Where the models stand against the items: items far below every model measure nothing.")
    common.chart(figures.figure_abilities(ranking), "irt_abilities",
                 f"Abilities with 95% intervals. Two examinees are told apart only when their abilities differ by more "
                 f"than 1.96 standard errors of the difference (pairwise, no multiplicity correction). {panel}.")
    shown = ranking.assign(plausible_ranks=[f"{b}-{w}" if b != w else str(b)
                                            for b, w in zip(ranking["rank_best"], ranking["rank_worst"])])
    common.table(shown[["rank", "plausible_ranks", "examinee", "ability", "ci_low", "ci_high", "n_right", "n_items",
                        "tied_with"]], "irt_abilities",
                 f"Ranking: plausible ranks and the examinees each cannot be told apart from ({n_ex} examinees)",
                 essential=True)
    per_item = True
    if not common.presentation():
        per_item = st.toggle("Information per item (off: summed over the format's items)", value=True,
                             key="psy_info_per_item")
    common.chart(figures.figure_information(curves, per_item=per_item), "irt_information",
                 "Item information along the ability scale per format (mean per item"
                 + ("" if per_item else ", here summed") + "; the number of items in brackets). A format measures "
                 "where its curve is high: information only at low ability means its items are too easy for strong "
                 f"models. {panel}.")
    uninformative = items[~items["informative"]]
    if len(uninformative):
        counts = uninformative["status"].value_counts()
        st.caption(f"{len(uninformative)} item(s) carry no information and are left out of the fit: "
                   + ", ".join(f"{int(n)} {status.replace('_', ' ')}" for status, n in counts.items())
                   + " (no finite difficulty exists for them).")
    columns = ["item_id", "type", "status", "p", "difficulty", "difficulty_se"]
    columns += ["discrimination", "discrimination_se"] if model == vocab.IRT_2PL else []
    common.table(items[columns + ["information_at_mean", "n_examinees"]], "irt_items",
                 "Items: difficulty (logits) with its standard error"
                 + (", discrimination (exploratory below 50 examinees)" if model == vocab.IRT_2PL else "")
                 + f", information at the mean ability; {n_ex} examinees")
    if not common.presentation():
        pick = st.selectbox("Open an item in the inspector (its curve is there)", [""] + list(items["item_id"]),
                            key="psy_irt_open")
        if pick:
            common.open_in_inspector(pick)


def distractors_tab() -> None:
    """Option items: who chose which option, point-biserials, flags."""
    with common.guard():
        table = views.distractors(src, sel, examinees=examinees)
    n_ex = int(table.attrs["n_examinees"])
    if table.empty:
        st.info("No multiple-choice items with listed options in this selection.")
        return
    n_items = table["item_id"].nunique()
    st.caption(f"{n_items} option item(s), {n_ex} examinees ({vocab.EXAMINEE_SETS[examinees].lower()}); "
               f"examinees ranked by mean score: upper and lower thirds of {table.attrs['n_upper_third']} each, "
               f"upper half of {table.attrs['n_upper_half']}. An option's r_pb correlates choosing it with the "
               "examinee's mean score on the other items: the key should be positive, distractors negative.")
    cols = st.columns(len(vocab.DISTRACTOR_FLAGS))
    for col, (flag, words) in zip(cols, vocab.DISTRACTOR_FLAGS.items()):
        hit = table[table["flags"].str.contains(flag, regex=False, na=False)]
        col.metric(flag.replace("_", " "), f"{hit['item_id'].nunique()} item(s)", help=words)
    priority = {flag: i for i, flag in enumerate(vocab.DISTRACTOR_FLAGS)}
    flagged = table[table["flag"].notna()].sort_values(["flag", "item_id", "option"], kind="stable",
                                                        key=lambda c: c.map(priority) if c.name == "flag" else c)
    common.table(flagged[["item_id", "type", "option", "flag", "flags", "share", "share_upper", "share_lower", "r_pb",
                          "n_examinees"]], "distractor_flags",
                 f"Flagged options ({n_ex} examinees): consensus wrong first (a key error or a trap), then distractors "
                 "stronger examinees prefer, then options nobody uses", essential=True,
                 percent=("share", "share_upper", "share_lower"))
    consensus = flagged[flagged["flag"] == vocab.CONSENSUS_WRONG]["item_id"].drop_duplicates().tolist()
    choices = consensus + [i for i in table["item_id"].drop_duplicates() if i not in consensus]
    item = choices[0]
    if not common.presentation():
        item = st.selectbox("Item", choices, key="psy_distractor_item")
    common.chart(figures.figure_distractor_shares(table, item), "distractor_shares",
                 f"Item {item}: share of the lower third, all examinees and the upper third choosing each option "
                 f"({n_ex} examinees).")
    if not common.presentation():
        st.caption("Every option of every option item (the `show distractors` twin):")
    common.table(table, "distractors", "Every option of every option item", show=False)


def dif_tab() -> None:
    """DIF between the conditions, and paired contrasts of parallel forms."""
    strata = 5
    if not common.presentation():
        strata = int(st.number_input("Score strata (Mantel-Haenszel)", min_value=1, max_value=20, value=5,
                                     key="psy_dif_strata"))
    with common.guard():
        table = views.dif(src, sel, strata=strata)
    att = table.attrs
    ref, foc = vocab.CONDITION_LABELS.get(att["reference"], att["reference"]), \
        vocab.CONDITION_LABELS.get(att["focal"], att["focal"])
    st.caption(f"Which items does asking for a justification hurt or help at equal ability? Groups are the "
               f"conditions: reference '{ref}' ({att['n_reference']} examinees), focal '{foc}' ({att['n_focal']}); "
               f"each examinee is a model in one condition, matched on the total number of items right "
               f"({att['strata']} equal-count strata for Mantel-Haenszel); {common.scoring_label(sel)}.")
    if att.get("warning"):
        st.warning(att["warning"])
    method = vocab.DIF_MANTEL_HAENSZEL
    if not common.presentation():
        method = st.radio("Method", list(vocab.DIF_METHODS), horizontal=True, key="psy_dif_method",
                          format_func=vocab.DIF_METHODS.get)
    common.chart(figures.figure_dif(table, method=method), f"dif_{method}",
                 f"{vocab.DIF_METHODS[method]} per item, coloured by class (A negligible, B moderate, C large; "
                 "ETS classes for Mantel-Haenszel, Jodoin-Gierl for the change in R2, both only when significant at "
                 f".05). {att['n_examinees']} examinees.")
    shown = table[(table["method"] == method) & table["dif_class"].isin(["B", "C"])]
    if shown.empty:
        st.caption(f"No item shows moderate or large DIF by this method ({att['n_examinees']} examinees).")
    else:
        common.table(shown[["item_id", "type", "dif_class", "direction", "effect", "effect_name", "statistic", "p",
                            "p_reference", "p_focal", "note"]], f"dif_items_{method}",
                     f"Items with moderate or large DIF ({vocab.DIF_METHODS[method]}; {att['n_examinees']} "
                     "examinees)", essential=True, percent=("p_reference", "p_focal"))
    if not common.presentation():
        st.caption("Every item and method (the `show dif` twin):")
    common.table(table, "dif", "Every item and method", show=False)

    st.markdown("**Language and image: parallel forms**")
    st.caption("Language and image are properties of items, not of examinees, so they are not DIF groups: their "
               "effects stay in the explanatory regression (Formats page). In EduArt, language is confounded with "
               "source: the Italian items are school items and the English items are AP items, so an Italian vs "
               "English gap mixes the language with the item bank. Only parallel forms (items linked by "
               "parallel_of) separate the two: each model answers both forms, and the difference is a contrast "
               "with the model held fixed.")
    with common.guard():
        pairs = views.parallel_contrasts(src, sel, examinees=examinees)
    if pairs.empty:
        st.info("No item in this selection names a parallel form (the item field parallel_of).")
        return
    common.chart(figures.figure_parallel(pairs), "parallel_contrasts",
                 f"Within-model score difference, item minus its parallel form, with 95% t intervals over "
                 f"{int(pairs['n_examinees'].max())} examinees ({vocab.EXAMINEE_SETS[examinees].lower()}).")
    common.table(pairs, "parallel_contrasts",
                 f"Parallel forms: mean scores, mean difference, models better on each form, exact sign test "
                 f"({pairs.attrs['n_examinees']} examinees)", percent=("mean_item", "mean_parallel", "mean_diff",
                                                                       "ci_low", "ci_high"))


TABS = {"CTT": ctt_tab, "IRT": irt_tab, "Distractors": distractors_tab, "DIF": dif_tab}
# Lazy tabs: only the open tab computes (an IRT fit or DIF on 871 items is not free), and a tab
# whose selection cannot be analysed stops only itself.
for tab, draw in zip(st.tabs(list(TABS), key="psy_tab", on_change="rerun"), TABS.values()):
    if tab.open:
        with tab:
            draw()

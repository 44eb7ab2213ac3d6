"""Psychometrics: item difficulty and discrimination in the classical test theory sense (published Figure 1)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from eduart_core import analysis, panels, views, vocab
from eduart_core.charts import psychometrics as figures
from eduart_core.text import plain
from pages.ui import failures, header, navigate, plots, query, tables

navigate.through_app()  # a server's first run serves this file alone: app.py draws it

src, sel = header.page_start(
    "Psychometrics", "Treating each model as an examinee: **difficulty p** is an item's mean item score over the "
    "examinees (the proportion right when scores are 0/1; higher = easier); **discrimination r_pb** says whether "
    "strong examinees score higher on it than weak ones (above .30 good, below .10 poor; negative may mean a "
    "wrong key).")

examinees = vocab.EXAMINEES_MODELS
if not query.presentation():
    examinees = st.radio("Examinees", list(vocab.EXAMINEE_SETS), horizontal=True, key="psy_examinees",
                         format_func=vocab.EXAMINEE_SETS.get,
                         help="Who counts as an examinee in every tab (DIF always compares the model x condition "
                              "pairs of the two conditions). Baseline models count only when switched in.")


def open_clicked_item(state) -> None:
    """Open the item of a clicked dot (its id is the point's customdata) in the inspector."""
    for point in plots.selected_points(state):
        item = point.get("customdata")
        if isinstance(item, list):
            item = item[0] if item else None
        if item:
            navigate.open_in_inspector(str(item))


def ctt_tab() -> None:
    """Classical test theory: difficulty p, discrimination r_pb, Tables 6-7, reliability."""
    corrected = False
    if not query.presentation():
        corrected = st.toggle("Corrected total (exclude the item itself)",
                              value=examinees == vocab.EXAMINEES_MODELS_CONDITIONS, key="psy_corrected")
    options = {"examinees": examinees, "corrected": corrected}
    with failures.guard():
        drawn = panels.draw("psychometrics", src, sel, **options)
        overall = views.reliability(src, sel, **options).iloc[0]
    stats = drawn.frame

    n_ex = int(overall["n_examinees"])
    if n_ex < 30:
        st.warning(f"Only {n_ex} examinees: each r_pb rests on {n_ex} scores, so its 95% interval is wide "
                   f"(about ±{overall['r_pb_halfwidth_at_zero']:.2f} around r = 0). Read categories as rough guides.")
    published = views.published_setting(sel, examinees, corrected)
    state = plots.panel(drawn, on_select="rerun")
    open_clicked_item(state)

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

    with failures.guard():
        diff = views.difficulty_categories(src, sel, **options)
        disc = views.discrimination_by_format(src, sel, **options)
    diff = diff.assign(category=lambda d: d["category"].str.replace("_", " "))
    where = ("as published" if published == vocab.PUBLISHED_TABLES_SETTING else
             "layout of the published table; its setting is model x condition pairs with the corrected total, "
             "this one differs")
    tables.table(diff, "difficulty_categories",
                 f"Difficulty categories (Table 6, {where}): very easy p >= .90, easy .70-.90, medium .30-.70, "
                 "hard .10-.30, very hard < .10", percent=("share",))
    disc = disc.assign(format=lambda d: d["type"].map(lambda t: "All formats" if t == "all" else vocab.format_label(t)))
    tables.table(disc[["format", "n", "mean_r_pb", "good", "fair", "poor"]], "discrimination_by_format",
                 f"Discrimination by format (Table 7, {where}): good r_pb >= .30, fair .10-.30, poor < .10")

    if not query.presentation():
        pick = st.selectbox("Open an item in the inspector", [""] + list(stats["item_id"]), key="psy_open")
        if pick:
            navigate.open_in_inspector(pick)


def _thresholds_text(row) -> str:
    """'0-1 -0.52 (0.31); 1-2 0.84 (0.40)': each threshold with the levels it separates and its SE."""
    return "; ".join(f"{name} {value:.2f} ({se:.2f})" for name, value, se in
                     zip(row["threshold_levels"], row["thresholds"], row["threshold_se"]))


def _open_aberrant(model: str, condition: str) -> None:
    """Button callback: the failure explorer on one model's unexpected answers (its condition selected)."""
    st.session_state["insp_quick"] = analysis.ABERRANT
    st.session_state["insp_examinee"] = model
    navigate.request_page("inspector", condition=condition)


def irt_tab() -> None:
    """IRT: the partial credit model by default (Rasch, 2PL, GPCM on request): Wright map, abilities, information,
    item fit, person fit, the item table."""
    options = irt_options()
    with failures.guard():
        items = views.irt_items(src, sel, **options)
        ranking = views.irt_abilities(src, sel, **options)
        wright = views.irt_wright_map(src, sel, **options)
        curves = views.irt_information(src, sel, **options)
        levels = views.irt_category_information(src, sel, **options)
        fit_table = views.irt_item_fit(src, sel, **options)
        people = views.irt_person_fit(src, sel, **options)
        comparison = views.irt_model_comparison(src, sel, examinees=examinees, invalid=options["invalid"])
    info = items.attrs
    panel = irt_fit_lines(info, comparison)
    irt_abilities(wright, ranking, info, panel)
    irt_information(curves, levels, items, panel)
    irt_item_fit(fit_table, options, info, panel)
    irt_person_fit(people, info, panel)
    irt_item_table(items, info)


def irt_options() -> dict:
    """The IRT views' options: the model (the default asked for as `auto`) and whether models with
    mostly invalid answers join the fit."""
    with failures.guard():
        default = views.irt_default_model(src, sel)
    model = default
    if not query.presentation():
        names = list(vocab.IRT_MODELS)
        model = st.radio("Model", names, index=names.index(default), horizontal=True, key="psy_irt_model",
                         format_func=vocab.IRT_MODELS.get,
                         help="The partial credit models read each format's score levels (blanks, statements or errors "
                              "right); Rasch and 2PL read every answer as right or wrong (score >= 0.5, the 0.5 rule).")
    invalid = vocab.IRT_INVALID_EXCLUDE
    if not query.presentation() and st.toggle(
            "Include models with mostly invalid answers", key="psy_irt_invalid",
            help="By default a model is left out of the IRT fit when more than half of its answers name no option, "
                 "do not parse or refuse: its ability would measure its output format."):
        invalid = vocab.IRT_INVALID_INCLUDE
    # the default is asked for as `auto`, as `show` does, so the caption can say why this model
    options = {"model": vocab.IRT_AUTO if model == default else model, "examinees": examinees, "invalid": invalid}
    return options


def irt_fit_lines(info: dict, comparison) -> str:
    """The fit's warnings and caption, the score-level rules, and partial credit against the 0.5 rule;
    returns the panel words every caption of the tab ends with."""
    n_ex = int(info["n_examinees"])
    short = vocab.IRT_SHORT_NAMES[info["irt_model"]]
    if info["invalid_note"]:  # which models the fit leaves out (or keeps) for their invalid answers, and the rule
        st.warning(plain(info["invalid_note"]))
    (st.warning if info["exploratory"] else st.info)(info["warning"])
    if info["irt_model"] in vocab.IRT_FREE_SLOPES and info["exploratory"]:
        st.warning(f"The {short} is exploratory here: its slopes rest on {n_ex} examinees. Use the "
                   f"{'PCM' if short == 'GPCM' else 'Rasch model'} for conclusions.")
    rule = ("score levels by format (partial credit)" if info["irt_model"] in vocab.IRT_POLYTOMOUS
            else "the 0.5 rule: " + info["rule"])
    panel = (f"{info['model_label']}, {n_ex} examinees ({info['examinee_note']}), "
             f"{info['n_items_fitted']} informative items, {header.scoring_label(sel)}; {rule}")
    st.caption(f"Fit: {panel}. {info['model_choice']}. Fitted ability spread (SD) {info['latent_sd']:.2f} logits; "
               f"standard errors: {info['se_method']}." + (" " + " ".join(info["notes"]) if info["notes"] else ""))
    if info["irt_model"] in vocab.IRT_POLYTOMOUS and not query.presentation():
        with st.expander("How scores become score levels"):
            for kind, words in info["level_rules"].items():
                st.markdown(f"- **{vocab.format_label(kind)}**: {plain(words)}")
    if len(comparison) == 2 or not query.presentation():
        st.info(comparison.attrs["sentence"])
    tables.table(comparison[["label", "n_examinees", "n_items_fitted", "ability_sd", "mean_ability_se",
                             "mean_se_per_sd", "se_gain", "se_gain_per_sd", "se_method"]], "irt_model_comparison",
                 f"Partial credit against the 0.5 rule on the same {n_ex} examinees: ability SEs (logits and per "
                 "fitted ability SD)", percent=("se_gain", "se_gain_per_sd"))
    return panel


def irt_abilities(wright, ranking, info: dict, panel: str) -> None:
    """The Wright map, the abilities with their intervals, and the ranking table."""
    n_ex, short = int(info["n_examinees"]), vocab.IRT_SHORT_NAMES[info["irt_model"]]
    plots.chart(figures.figure_wright_map(wright), "irt_wright_map",
                 f"Wright map: each examinee's ability (EAP, 95% interval), the items' locations and, for partial-credit "
                 f"items, their thresholds (where a score level and the one below are equally likely) on one logit "
                 f"scale. {panel}.",
                 story="Where the models stand against the items: items far below every model measure nothing.")
    plots.chart(figures.figure_abilities(ranking), "irt_abilities",
                 f"Abilities with 95% intervals. Two examinees are told apart only when their abilities differ by more "
                 f"than 1.96 standard errors of the difference (pairwise, no multiplicity correction). {panel}.")
    shown = ranking.assign(plausible_ranks=[
        "" if r == views.SUMMARY_ROW else (f"{b}-{w}" if b != w else str(b))
        for r, b, w in zip(ranking["row"], ranking["rank_best"], ranking["rank_worst"])])
    tables.table(shown[["rank", "plausible_ranks", "examinee", "ability", "ability_se", "ci_low", "ci_high", "n_right",
                        "n_items", "ability_sd", "tied_with"]], "irt_abilities",
                 f"Ranking: abilities with SEs, plausible ranks and the examinees each cannot be told apart from "
                 f"({short} fit to {n_ex} examinees); the last row gives the means and the fitted ability SD "
                 f"({info['latent_sd']:.2f} logits)", essential=True)


def irt_information(curves, levels, items, panel: str) -> None:
    """Information along the ability scale per format and per score level; the items left out."""
    per_item = True
    if not query.presentation():
        per_item = st.toggle("Information per item (off: summed over the format's items)", value=True,
                             key="psy_info_per_item")
    plots.chart(figures.figure_information(curves, per_item=per_item), "irt_information",
                 "Item information along the ability scale per format (mean per item"
                 + ("" if per_item else ", here summed") + "; the number of items in brackets; every score level "
                 "counts). A format measures where its curve is high: information only at low ability means its "
                 f"items are too easy for strong models. {panel}.")
    kinds = [k for k in vocab.ordered_formats(levels["type"].unique()) if levels[levels["type"] == k]["level"].max() > 1]
    if kinds and not query.presentation():
        kind = st.selectbox("Information per score level for", kinds, format_func=vocab.format_label,
                            key="psy_level_format")
        plots.chart(figures.figure_category_information(levels, kind), "irt_category_information",
                     f"{vocab.format_label(kind)}: the information its items carry through each score level (mean per "
                     "item, stacked: the top edge is the format's curve above). A level informs where examinees are "
                     f"likely to stop at it. {panel}.")
    uninformative = items[~items["informative"]]
    if len(uninformative):
        counts = uninformative["status"].value_counts()
        st.caption(f"{len(uninformative)} item(s) carry no information and are left out of the fit: "
                   + ", ".join(f"{int(n)} {status.replace('_', ' ')}" for status, n in counts.items())
                   + " (every examinee at the same score level: no finite location exists for them).")


def irt_item_fit(fit_table, options: dict, info: dict, panel: str) -> None:
    """Item fit: the rule, the plot (a click opens the item) and the items that do not fit."""
    n_ex, short = int(info["n_examinees"]), vocab.IRT_SHORT_NAMES[info["irt_model"]]
    st.markdown("**Item fit**")
    flagged = fit_table[fit_table["flag"].notna()]
    under = int((fit_table["flag"] == "underfit").sum())
    as_queue = (examinees == vocab.IRT_DEFAULT_EXAMINEES and sel.condition == vocab.DEFAULT_CONDITION
                and options["model"] == vocab.IRT_AUTO)
    queue = ("they are in the suspect-key queue (Review studio) with this reason." if as_queue else
             "the suspect-key queue (Review studio) takes the underfit items of the default model fitted to one "
             f"examinee per model in the {vocab.DEFAULT_CONDITION} condition, not of this fit.")
    st.caption(f"Does each item's answers follow ability as the {short} expects? Rule: {fit_table.attrs['fit_rule']}. "
               f"{fit_table.attrs['sx2_note']}. The abilities come from the same answers, so t values lean toward "
               f"overfit: underfit flags are conservative. {under} item(s) underfit; " + queue)
    state = plots.chart(figures.figure_item_fit(fit_table), "irt_item_fit",
                         f"Each dot is an item: outfit against infit mean square (1 = as the model expects; the grey "
                         f"band is 0.7-1.3). Click a dot to open the item. {panel}.", on_select="rerun")
    open_clicked_item(state)
    tables.table(flagged[["item_id", "type", "family", "flag", "infit", "infit_t", "outfit", "outfit_t",
                          "underfit_q", "overfit_q", "s_x2", "s_x2_p", "reason"]], "irt_item_fit_flagged",
                 f"Items that do not fit the {short} ({len(flagged)}; {n_ex} examinees)", essential=True)
    tables.table(fit_table, "irt_item_fit", f"Item fit of every informative item under the {short} ({n_ex} examinees)",
                 show=False)


def irt_person_fit(people, info: dict, panel: str) -> None:
    """Person fit: aberrant examinees, invalid-answer warnings, and the way to their unexpected answers."""
    short = vocab.IRT_SHORT_NAMES[info["irt_model"]]
    st.markdown("**Person fit**")
    aberrant = people[people["aberrant"]]
    st.caption(f"Does each examinee's pattern of answers fit the {short}? A model that fails easy items and passes "
               "hard ones is usually failing the answer format, refusing, or has seen items before. Rule: "
               f"{people.attrs['fit_rule']}. Invalid answers: {people.attrs['invalid_rule']}.")
    for row in people[people["invalid_warning"]].itertuples():
        st.warning(f"{plain(row.examinee)}: {row.n_invalid} of {row.n_answers} answers ({row.invalid_rate:.0%}) name no "
                   "option, cannot be read or refuse; its ability says as much about its answer format as about "
                   "what it knows.")
    plots.chart(figures.figure_person_fit(people), "irt_person_fit",
                 f"lz per examinee (0 = as the model expects; red: aberrant). {panel}.")
    tables.table(people[["examinee", "lz", "lz_p", "infit", "infit_t", "outfit", "outfit_t", "aberrant",
                         "top_items_text", "n_answers", "n_invalid", "invalid_rate"]], "irt_person_fit",
                 f"Person fit under the {short}: {len(aberrant)} aberrant of {len(people)} examinees; the items that contribute most to "
                 "each one's misfit, with its level and the level the model expected", essential=True,
                 percent=("invalid_rate",))
    if not query.presentation() and len(people):
        order = list(people.sort_values("lz", kind="stable").index)
        pick = st.selectbox("Examinee to open in the failure explorer", order, key="psy_person_open",
                            format_func=lambda i: f"{people.loc[i, 'examinee']} (lz {people.loc[i, 'lz']:.2f})")
        row = people.loc[pick]
        st.button("Show its unexpected answers in the failure explorer", key="psy_person_go", on_click=_open_aberrant,
                  args=(str(row["model"]), str(row["condition"])), icon=":material/troubleshoot:",
                  help="The item inspector lists the items where this model's answer was unexpected under the model "
                       "fitted to the models of its condition (filter 'aberrant for this model').")


def irt_item_table(items, info: dict) -> None:
    """The items' locations, slopes and thresholds, and the way to an item's curve in the inspector."""
    n_ex, short = int(info["n_examinees"]), vocab.IRT_SHORT_NAMES[info["irt_model"]]
    shown = items.assign(thresholds_text=[_thresholds_text(r) if r["informative"] else ""
                                          for _, r in items.iterrows()])
    columns = ["item_id", "type", "family", "status", "p", "difficulty", "difficulty_se"]
    columns += ["discrimination", "discrimination_se"] if info["irt_model"] in vocab.IRT_FREE_SLOPES else []
    columns += ["n_levels", "levels_observed", "thresholds_text", "disordered"] \
        if info["irt_model"] in vocab.IRT_POLYTOMOUS else []
    tables.table(shown[columns + ["information_at_mean", "n_examinees"]], "irt_items",
                 "Items: location (logits; the difficulty of a right/wrong item, the mean threshold of a partial-credit "
                 "item) with its standard error"
                 + (", discrimination (exploratory below 50 examinees)" if info["irt_model"] in vocab.IRT_FREE_SLOPES
                    else "")
                 + (", thresholds as levels, value (SE)" if info["irt_model"] in vocab.IRT_POLYTOMOUS else "")
                 + f", information at the mean ability; {short} fit to {n_ex} examinees")
    if not query.presentation():
        pick = st.selectbox("Open an item in the inspector (its curve is there)", [""] + list(items["item_id"]),
                            key="psy_irt_open")
        if pick:
            navigate.open_in_inspector(pick)


def distractors_tab() -> None:
    """Option items: who chose which option, point-biserials, flags."""
    with failures.guard():
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
    tables.table(flagged[["item_id", "type", "option", "option_text", "flags", "share", "share_upper", "share_lower",
                          "r_pb", "n_examinees"]], "distractor_flags",
                 f"Flagged options ({n_ex} examinees): consensus wrong first (a key error or a trap), then distractors "
                 "stronger examinees prefer, then options nobody uses", essential=True,
                 percent=("share", "share_upper", "share_lower"))
    consensus = flagged[flagged["flag"] == vocab.CONSENSUS_WRONG]["item_id"].drop_duplicates().tolist()
    choices = consensus + [i for i in table["item_id"].drop_duplicates() if i not in consensus]
    item = choices[0]
    if not query.presentation():
        item = st.selectbox("Item", choices, key="psy_distractor_item")
    plots.chart(figures.figure_distractor_shares(table, item), "distractor_shares",
                 f"Item {item}: share of the lower third, all examinees and the upper third choosing each option "
                 f"({n_ex} examinees).")
    if not query.presentation():
        st.caption("Every option of every option item (the `show distractors` twin):")
    tables.table(table, "distractors", "Every option of every option item", show=False)


def dif_tab() -> None:
    """DIF between the conditions, and paired contrasts of parallel forms."""
    strata = 5
    if not query.presentation():
        strata = int(st.number_input("Score strata (Mantel-Haenszel)", min_value=1, max_value=20, value=5,
                                     key="psy_dif_strata"))
    with failures.guard():
        table = views.dif(src, sel, strata=strata)
    att = table.attrs
    ref, foc = vocab.CONDITION_LABELS.get(att["reference"], att["reference"]), \
        vocab.CONDITION_LABELS.get(att["focal"], att["focal"])
    st.caption(f"Which items does asking for a justification hurt or help at equal ability? Groups are the "
               f"conditions: reference '{ref}' ({att['n_reference']} examinees), focal '{foc}' ({att['n_focal']}); "
               f"each examinee is a model in one condition, matched on the total number of items right "
               f"({att['strata']} equal-count strata for Mantel-Haenszel); {header.scoring_label(sel)}.")
    if att.get("warning"):
        st.warning(att["warning"])
    method = vocab.DIF_MANTEL_HAENSZEL
    if not query.presentation():
        method = st.radio("Method", list(vocab.DIF_METHODS), horizontal=True, key="psy_dif_method",
                          format_func=vocab.DIF_METHODS.get)
    plots.chart(figures.figure_dif(table, method=method), f"dif_{method}",
                 f"{vocab.DIF_METHODS[method]} per item, coloured by class (A negligible, B moderate, C large; "
                 "ETS classes for Mantel-Haenszel, Jodoin-Gierl for the change in R2, both only when significant at "
                 f".05). {att['n_examinees']} examinees.")
    shown = table[(table["method"] == method) & table["dif_class"].isin(["B", "C"])]
    if shown.empty:
        st.caption(f"No item shows moderate or large DIF by this method ({att['n_examinees']} examinees).")
    else:
        tables.table(shown[["item_id", "type", "dif_class", "direction", "effect", "effect_name", "statistic", "p",
                            "p_reference", "p_focal", "note"]], f"dif_items_{method}",
                     f"Items with moderate or large DIF ({vocab.DIF_METHODS[method]}; {att['n_examinees']} "
                     "examinees)", essential=True, percent=("p_reference", "p_focal"))
    if not query.presentation():
        st.caption("Every item and method (the `show dif` twin):")
    tables.table(table, "dif", "Every item and method", show=False)

    st.markdown("**Language and image: parallel forms**")
    st.caption("Language and image are properties of items, not of examinees, so they are not DIF groups: their "
               "effects stay in the explanatory regression (Formats page). In EduArt, language is confounded with "
               "source: the Italian items are school items and the English items are AP items, so an Italian vs "
               "English gap mixes the language with the item bank. Only parallel forms (items linked by "
               "parallel_of) separate the two: each model answers both forms, and the difference is a contrast "
               "with the model held fixed.")
    with failures.guard():
        pairs = views.parallel_contrasts(src, sel, examinees=examinees)
    if pairs.empty:
        st.info("No item in this selection names a parallel form (the item field parallel_of).")
        return
    plots.chart(figures.figure_parallel(pairs), "parallel_contrasts",
                 f"Within-model score difference, item minus its parallel form, with 95% t intervals over "
                 f"{int(pairs['n_examinees'].max())} examinees ({vocab.EXAMINEE_SETS[examinees].lower()}).")
    tables.table(pairs, "parallel_contrasts",
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

"""Tasks and dimensions: per-task (or per reasoning dimension) results of VQArt-Bench- and MUSE-style datasets."""
from __future__ import annotations

import streamlit as st

from eduart_core import views, vocab
from eduart_core.charts import studies as study_charts
from eduart_core.errors import UserError
from eduart_core.studies import words
from eduart_core.text import plain
from pages.ui import failures, header, navigate, plots, query, tables

navigate.through_app()  # a server's first run serves this file alone: app.py draws it

src, sel = header.page_start(
    "Tasks and dimensions", "Where does each model succeed or fail, task by task? The table marks the highest "
    "and second-highest score of each column and flags scores below chance; the checks below say whether the "
    "table adds up.")
features = views.study_features(src, sel.dataset)
if not features.groupings:
    examples = (vocab.DEMO_VQA_DATASET, *vocab.STUDY_REFERENCE_DATASETS)
    st.info(f"Dataset '{plain(sel.dataset)}' has no tasks or reasoning dimensions. Choose a VQArt-Bench- or MUSE-style "
            f"dataset (for example {plain(', '.join(examples[:-1]))} or {plain(examples[-1])}) in the sidebar.")
    st.stop()

by, aggregation = features.grouping, ""
if not query.presentation():
    cols = st.columns(2)
    if len(features.groupings) > 1:
        by = cols[0].radio("Columns", list(features.groupings), key="study_by", horizontal=True,
                           format_func=lambda g: {vocab.TASK_COLUMN: "tasks", vocab.DIMENSION_COLUMN: "dimensions"}[g])
    if not features.reference:
        options = [vocab.MICRO_AGGREGATION, vocab.TASK_MACRO_AGGREGATION, vocab.DIMENSION_MACRO_AGGREGATION]
        usable = [a for a in options if a == vocab.MICRO_AGGREGATION
                  or {vocab.TASK_MACRO_AGGREGATION: vocab.TASK_COLUMN,
                      vocab.DIMENSION_MACRO_AGGREGATION: vocab.DIMENSION_COLUMN}[a] in features.groupings]
        aggregation = cols[1].selectbox("Overall column", usable, key="study_aggregation",
                                        format_func=vocab.AGGREGATIONS.get)
with failures.guard():
    scores = views.dimension_scores(src, sel, by=by, aggregation=aggregation)
    checks = views.consistency_checks(src, sel, by=by, aggregation=aggregation)

models_only = scores.loc[~scores["is_median"]]
n_models = models_only["model"].nunique()
agg_words = scores["aggregation"].iloc[0]
interval = ("Wilson 95% on the printed item counts (answers not published)" if features.reference
            else "Wilson 95%, clustered by image where items share a picture")

st.subheader("Does the table add up?")
st.markdown(plain(words.checks_headline(checks)))

#: The page's parts; one is drawn at a time, so opening the page never waits for every analysis.
SECTIONS = {"scores": "Scores", "checks": "All checks", "correlations": "Correlations",
            "families": "Families", "errors": "Wrong answers"}
shown = [k for k in SECTIONS if k != "errors" or not features.reference]
section = st.segmented_control("Show", shown, default="scores", key="study_section", format_func=SECTIONS.get,
                               label_visibility="collapsed") or "scores"


def scores_section() -> None:
    st.subheader("Scores by " + ("task" if by == vocab.TASK_COLUMN else "dimension"))
    plots.chart(study_charts.figure_dimension_heatmap(scores), "study_heatmap", story=words.leader_sentence(scores),
                 caption=f"Score per model and {by} (0-100), {n_models} models, {header.scoring_label(sel)}; "
                         f"{study_charts.BEST_MARK} highest and {study_charts.SECOND_MARK} second-highest score in the "
                         f"column (point estimates, ties share a mark; not a test of the order), {study_charts.BELOW_MARK} below the column's chance level; the last "
                         f"row is the median model. Overall column: {agg_words}.")
    tables.table(study_charts.marked_table(scores), "study_table_marked",
                 f"Scores (percent) with marks; overall: {agg_words}", essential=True)
    tables.table(scores, "study_scores", f"Scores with 95% intervals ({interval}), n, chance level and flags",
                 percent=("score", "ci_low", "ci_high", "chance"))


def checks_section() -> None:
    told = words.checks_in_words(checks, limit=60)
    for verdict, sentence in told:
        icon = {vocab.VERDICT_PROBLEM: ":material/error:", vocab.VERDICT_FLAG: ":material/flag:"}.get(
            verdict, ":material/info:")
        st.markdown(f"{icon} **{verdict}**: {plain(sentence)}")
    if not told:
        st.caption("Every applicable check passes.")
    tables.table(checks, "consistency_checks", "Every consistency check (check, subject, expected, found, verdict)",
                 essential=True)


def correlations_section() -> None:
    try:
        corr = views.task_correlations(src, sel, by=by)
        plots.chart(study_charts.figure_correlation_matrix(corr), "study_correlations",
                     f"Spearman rank correlation between {by}s across models (pairwise-complete; n and p in the "
                     f"hover, up to {int(corr['n'].max())} models). Tasks that rank the models alike measure "
                     "related skills, or share a confound.")
    except UserError as exc:  # one task only, or too few models: no matrix
        st.info(plain(exc))
    st.subheader("Against other benchmarks")
    try:
        external = views.external_correlations(src, sel, by=by)
        plots.chart(study_charts.figure_external_correlations(external), "study_external",
                     "Spearman rank correlation between each column and each imported external benchmark, over the "
                     "models present in both (pairwise-complete; n in each cell).")
        if external.attrs.get("unmatched"):
            st.caption("External models not found here: " + plain(", ".join(external.attrs["unmatched"])))
    except UserError as exc:  # nothing imported yet
        st.caption(plain(f"{exc} The file has the columns model, benchmark, score."))


def families_section() -> None:
    with failures.guard():
        best = views.family_best(src, sel, by=by)
    plots.chart(study_charts.figure_family_best(best), "study_family_best",
                 f"Best model of each family per {by} (lines) and the best-available envelope (thick black: best of "
                 "all models; dotted: best open-weights model; dashed: best closed model).")
    tables.table(best, "family_best", "Best model per family and the envelopes", percent=("score",))


def errors_section() -> None:
    c1, c2 = st.columns(2)
    with c1:
        if features.distractors:
            try:
                choices = views.distractor_choices(src, sel, by=by)
                who = "All models"
                if not query.presentation():
                    who = st.selectbox("Model", ["All models", *sorted(set(choices["model"]) - {"All models"})],
                                       key="study_distractor_model")
                n_wrong = int(choices.loc[choices["model"] == who].drop_duplicates("column")["n_wrong"].sum())
                plots.chart(study_charts.figure_distractors(choices, model=who), "study_distractors",
                             f"Which kind of wrong option was chosen, per {by}: share of the {n_wrong} wrong choices "
                             f"({who}); the hover gives the share uniform guessing among the wrong options "
                             "would give.")
            except views.EmptySelection as exc:
                st.info(plain(exc))
        else:
            st.caption("The options of this dataset carry no distractor labels.")
    with c2:
        with failures.guard():
            rates = views.invalid_rates(src, sel, by=by)
        overall = rates.loc[rates["column"] == vocab.OVERALL_COLUMN]
        plots.chart(study_charts.figure_invalid_rates(rates), "study_invalid",
                     f"Share of answers refused, unparseable or naming no option, per model ({int(overall['n'].max())} "
                     "answers each at most; the per-task rates with Wilson 95% intervals are in the table).")
    tables.table(rates, "invalid_rates", "Invalid answers per model and task", percent=("rate", "ci_low", "ci_high"))
    if vocab.NUMERIC_TYPE in features.types:
        with failures.guard():
            numbers = views.numeric_errors(src, sel)
        tables.table(numbers, "numeric_errors", "Counting answers: share right, mean absolute error (MAE, over the "
                     "answers naming one number) and off-by-one rate per model",
                     percent=("accuracy", "off_by_one_rate", "exact_rate"), essential=True)
    if vocab.MULTI_PART_TYPE in features.types:
        with failures.guard():
            parts = views.part_accuracy(src, sel)
        tables.table(parts, "part_accuracy", "Multi-part answers: share of each part answered right (Wilson 95%)",
                     percent=("accuracy", "ci_low", "ci_high"))


{"scores": scores_section, "checks": checks_section, "correlations": correlations_section,
 "families": families_section, "errors": errors_section}[section]()

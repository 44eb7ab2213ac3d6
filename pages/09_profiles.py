"""Scoring profiles: how much the published (paper) scorer moves each model and format vs strict."""
from __future__ import annotations

import streamlit as st

from eduart_core import formats, panels, views, vocab
from eduart_core.charts import judges as charts_judges
from pages.ui import failures, header, navigate, plots, tables

navigate.through_app()  # a server's first run serves this file alone: app.py draws it

src, sel = header.page_start(
    "Scoring profiles", "The **paper** profile reproduces the published scorer, quirks included (several options "
    "on a single-answer question still earn the point; unparseable true/false answers earn partial credit). "
    "The **strict** profile corrects them. This page shows how much the choice matters.")
with failures.guard():
    drawn = panels.draw("profile_impact", src, sel)
impact = drawn.frame
plots.panel(drawn)
tbl = impact.assign(format=impact["type"].map(vocab.format_label))
cols = [c for c in ("model", "format", "n", "strict_mean", "paper_mean", "delta", "n_changed") if c in tbl]
tables.table(tbl[cols], "profile_impact", "Strict vs paper mean score per model and format (percent)",
             percent=("strict_mean", "paper_mean", "delta"))

st.subheader("Examples where the rules differ")
with failures.guard():
    examples = views.profile_examples(src, sel)
if examples.empty:
    st.caption("No response scores differently under the two profiles in this selection.")
else:
    st.markdown("In every format, **strict** also reads responses the published parser rejects (JSON wrapped in "
                "code fences or prose, doubled braces), so some answers score higher under strict for that reason "
                "alone. The format-specific rules:")
    for t, sub in examples.groupby("type", sort=False):
        st.markdown(f"**{vocab.format_label(t)}**: {(formats.find_format(t) or formats.AnswerFormat()).profile_rules}")
        shown = sub.assign(inspect=[navigate.inspector_link(r.item_id, sel, model=r.model, condition=r.condition)
                                    for r in sub.itertuples()])
        tables.table(shown[["model", "condition", "item_id", "score_strict", "score_paper", "inspect"]],
                     f"examples_{t}", f"Examples ({vocab.format_label(t)})", essential=True,
                     column_config={"inspect": st.column_config.LinkColumn("open", display_text="open in inspector")})

st.subheader("Judges")
judged = [p for p in views.profile_choices(src, sel.dataset) if p.is_judge]
if not judged:
    st.caption("No model judge has scored this dataset yet. A judge marks open answers with a rubric "
               "(`python -m eduart_core judge --judge MODEL --rubric NAME`); its scores become a profile of their "
               "own, used only once it passes calibration against blind human grades.")
else:
    st.markdown("Each judge's scores form a profile named after the judge and the rubric. A judge **passes** only "
                "where its agreement with the adjudicated human grades reaches the gate (Krippendorff's alpha) and "
                "the whole 95% interval of its severity (many-facet Rasch) lies within the gate, so it is shown to "
                "be neither harsher nor more lenient than the graders beyond it; the graders must first agree with "
                "each other.")
    with failures.guard():
        profiles_table = views.judge_profiles(src, sel)
        calibration = views.judge_calibration(src, sel)
        severity = views.judge_severity(src, sel)
    tables.table(profiles_table, "judge_profiles", "Judge profiles, their versions and the gate", essential=True)
    passing = int(calibration["passes"].sum())
    gate = calibration.iloc[0]
    plots.chart(charts_judges.figure_judge_calibration(calibration), "judge_calibration",
                 f"Judge vs adjudicated human marks and the graders' own agreement: Krippendorff's alpha (ordinal) with "
                 f"bootstrap 95% intervals over answers; gate alpha >= {gate['min_alpha']:.2f} and the severity's "
                 f"95% interval within ±{gate['max_severity']:.2f} logit; {passing} of {len(calibration)} judges "
                 "pass; n = answers "
                 "compared per judge.",
                 context=plots.context(sel, "Judge calibration", "Krippendorff's alpha, 95% bootstrap interval",
                                        n=f"{int(calibration['n'].max())} answers"))
    cols = ["judge", "n", "human_alpha", "human_alpha_low", "human_alpha_high", "alpha", "alpha_low", "alpha_high",
            "kappa", "kappa_low", "kappa_high", "severity", "severity_low", "severity_high", "run_sd",
            "position_changed", "verbosity_shift", "passes", "reason"]
    tables.table(calibration[cols], "judge_calibration", "Judge calibration (per judge; by criterion, format or "
                 "language with show judge_calibration --option by=...)")
    plots.chart(charts_judges.figure_judge_severity(severity, max_severity=float(gate["max_severity"])),
                 "judge_severity",
                 "Severity of every grader and judge on one logit scale (many-facet Rasch model, relative to the "
                 "graders' mean, 95% intervals); the grey band is the gate: a judge passes only when its whole "
                 "interval lies inside it.",
                 context=plots.context(sel, "Grader and judge severity", "Severity, logit (many-facet Rasch)"))
    with failures.guard():
        confusion = views.judge_confusion(src, sel)
        progress = views.grading_progress(src, sel)
    tables.table(confusion, "judge_confusion", "Settled human mark x judge mark, per judge and criterion")
    tables.table(progress, "grading_progress", "Human grading so far (counts)")
    st.markdown("**Judge-corrected scores.** A judge's marks on every answer, corrected by the human-graded "
                "answers: what each model's score would be had the graders marked everything, with an interval "
                "that carries the judge's error.")
    with failures.guard():
        corrected = panels.draw("judge_corrected", src, sel)
        plots.panel(corrected)
        tables.table(corrected.frame, "judge_corrected", "Judge only and corrected scores per model and format "
                     "(fractions; macro = mean of the formats)")

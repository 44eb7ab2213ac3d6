"""Scoring profiles: how much the published (paper) scorer moves each model and format vs strict."""
from __future__ import annotations

import streamlit as st

from eduart_core import panels, views, vocab
from pages import common

src, sel = common.page_start(
    "Scoring profiles", "The **paper** profile reproduces the published scorer, quirks included (several options "
    "on a single-answer question still earn the point; unparseable true/false answers earn partial credit). "
    "The **strict** profile corrects them. This page shows how much the choice matters.")
with common.guard():
    drawn = panels.draw("profile_impact", src, sel)
impact = drawn.frame
common.panel(drawn)
tbl = impact.assign(format=impact["type"].map(vocab.format_label))
cols = [c for c in ("model", "format", "n", "strict_mean", "paper_mean", "delta", "n_changed") if c in tbl]
common.table(tbl[cols], "profile_impact", "Strict vs paper mean score per model and format (percent)",
             percent=("strict_mean", "paper_mean", "delta"))

st.subheader("Examples where the rules differ")
with common.guard():
    examples = views.profile_examples(src, sel)
if examples.empty:
    st.caption("No response scores differently under the two profiles in this selection.")
else:
    st.markdown("In every format, **strict** also reads responses the published parser rejects (JSON wrapped in "
                "code fences or prose, doubled braces), so some answers score higher under strict for that reason "
                "alone. The format-specific rules:")
    RULES = {
        "multiple_choice_radio": "Paper gives the point when the right option is one of several selected; "
                                 "strict requires exactly the right option.",
        "multiple_choice_check": "Both use F1 on the selected options; they differ in how unreadable output is handled.",
        "true_false": "Paper credits the statements whose answer is False when the response cannot be parsed; "
                      "strict gives no credit for an unreadable answer.",
        "positioning": "Both require the right term in each blank; they differ in how unreadable output is handled.",
        "completion_closed": "Both require the right alternative in each blank; they differ in how unreadable "
                             "output is handled.",
        "completion_open": "Strict accepts near-miss spellings (fuzzy match); paper requires an exact match.",
        "select_errors": "Strict matches a predicted span to the error it contains; paper compares exact strings "
                         "and treats an unparseable response as one long prediction.",
    }
    for t, sub in examples.groupby("type", sort=False):
        st.markdown(f"**{vocab.format_label(t)}**: {RULES.get(t, 'The two scorers differ on these responses.')}")
        shown = sub.assign(inspect=[common.inspector_link(r.item_id, sel, model=r.model, condition=r.condition)
                                    for r in sub.itertuples()])
        common.table(shown[["model", "condition", "item_id", "score_strict", "score_paper", "inspect"]],
                     f"examples_{t}", f"Examples ({vocab.format_label(t)})", essential=True,
                     column_config={"inspect": st.column_config.LinkColumn("open", display_text="open in inspector")})

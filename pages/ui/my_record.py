"""A rater's record (overruled decisions, agreement, severity, seeded gold), on the review and grading pages."""
from __future__ import annotations

import streamlit as st

from eduart_core import views
from eduart_core.errors import UserError
from eduart_core.text import plain
from pages.ui.sidebar import current_selection
from pages.ui.store_handle import source
from pages.ui.tables import table


def my_record_section(who, key: str) -> None:
    """A rater's record (``views.my_record``, ``my_agreement``, ``my_severity``) as ``who`` may read it:
    their own; an adjudicator or admin may name another rater. The library checks who may read whose."""
    from eduart_core.team import SEE_RECORDS

    if who is None:
        st.caption("Enter your name (or sign in) to see your record.")
        return
    rater = ""
    if who.may(SEE_RECORDS):
        rater = st.text_input("Rater (subject; empty: yourself)", key=f"{key}_rater", max_chars=200,
                              help="Adjudicators and admins may read anyone's record.").strip()
    src, sel = source(), current_selection()
    try:
        overruled = views.my_record(src, sel, rater=rater, who=who)
        agreement = views.my_agreement(src, sel, rater=rater, who=who)
        severity = views.my_severity(src, sel, rater=rater, who=who)
        gold = views.my_gold(src, sel, rater=rater, who=who)
    except UserError as exc:  # another person's record without the role: one line
        st.warning(plain(exc))
        return
    if any(frame.attrs.get("simulated") for frame in (overruled, agreement, severity)):
        st.info("Simulated data: some of these units come from the demo's simulated extractions, graders or answers.",
                icon=":material/science:")
    st.caption("Settled units only: a field or an answer still blind or waiting for an adjudicator shows nothing "
               "here, and another rater's decision is never shown.")
    if overruled.empty:
        st.markdown("**Overruled by adjudication** (`show my_record`)")
        st.caption("No decision or mark of this rater was overruled.")
    else:
        table(overruled, f"{key}_overruled", "Overruled by adjudication (show my_record)", view="my_record")
    if agreement.empty:
        st.markdown("**Agreement with settled outcomes, per week** (`show my_agreement`)")
        st.caption("No settled unit decided by this rater and a colleague (or an adjudicator) yet.")
    else:
        table(agreement, f"{key}_agreement", "Agreement with settled outcomes, per week: the share of settled units "
              "whose outcome kept this rater's decision, with n and its 95% Wilson interval (show my_agreement)",
              view="my_agreement")
    st.markdown("**Severity as a grader** (`show my_severity`)")
    if severity.empty:
        st.caption("No settled graded answer yet.")
    for row in severity.to_dict("records"):
        st.text(f"{row['dataset']} · rubric {row['rubric']}: {row['words']}")
    _gold_section(gold, src, sel, who, key)


def _gold_section(gold, src, sel, who, key: str) -> None:
    """Seeded gold: the rater's accuracy and severity on gold answers (and accuracy on seeded review
    pages) and the flag, with the rules in words; for an adjudicator or admin, everyone's flags (live)."""
    from eduart_core.analysis.gold import FLAG_RULE, REVIEW_FLAG_RULE
    from eduart_core.team import SEE_RECORDS

    st.markdown("**Seeded gold** (`show my_gold`)")
    st.caption(FLAG_RULE + " " + REVIEW_FLAG_RULE + " A grader or reviewer sees their own gold checks once the round "
               "they were seeded in is over; adjudicators and admins see them as they come in.")
    if gold.empty:
        st.caption("No gold answer or page checked yet (or the round is still running).")
    else:
        table(gold.drop(columns=["reason"]), f"{key}_gold", "Gold checks: accuracy on gold with its 95% Wilson "
              "interval, severity against the gold with its 95% interval (show my_gold)", view="my_gold")
        for row in gold.to_dict("records"):
            st.text(f"{row['dataset']} · rubric {row['rubric']}: {row['reason']}")
    if who.may(SEE_RECORDS):
        flags = views.gold_flags(src, sel, who=who)
        if len(flags):
            st.markdown("**Every grader's gold checks and every reviewer's** (`show gold_flags`)")
            table(flags.drop(columns=["reason"]), f"{key}_gold_flags", "Every grader's and reviewer's gold checks and flags "
                  "(show gold_flags)", view="gold_flags")
            for row in flags[flags["flagged"].astype(bool)].to_dict("records"):
                st.text(f"{row['rater']} ({row['dataset']} · {row['rubric']}): {row['reason']}")

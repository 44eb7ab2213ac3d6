"""A page's opening: title, purpose line, the data banners and the line saying what the numbers are.

Why: simulated respondents, aggregate-only data and an uncalibrated judge must be said loudly on every
page that shows numbers, and the same words go into the exports (`data_label`, `profile_warning`)."""
from __future__ import annotations

import streamlit as st

from eduart_core import panels, views
from eduart_core.analysis.answer_quality import INVALID_RULE, INVALID_WORDS
from eduart_core.errors import UserError
from eduart_core.selection import Selection
from eduart_core.text import plain
from pages.ui.query import presentation
from pages.ui.sidebar import current_selection
from pages.ui.store_handle import flags, source


def invalid_warning(src: views.Source, sel: Selection) -> None:
    """One warning naming each model whose answers are often invalid (`views.invalid_warnings`), with the rule."""
    lines = views.invalid_warnings(src, sel)
    if lines:
        st.warning("Invalid answers: these models' scores say more about their output format than about what "
                   "they know.\n\n" + "\n\n".join(plain(line) for line in lines)
                   + f"\n\n{plain(INVALID_WORDS.capitalize())}; {plain(INVALID_RULE)}.")


def simulated_selection(sel: Selection) -> bool:
    """True when the numbers on screen come (partly) from simulated respondents."""
    return views.data_label(source(), sel).any_simulated


def data_label(sel: Selection) -> str | None:
    """The label an exported chart carries: the models' kinds (labels.DataLabel.short), or none."""
    return views.data_label(source(), sel).short()


def profile_warning(sel: Selection) -> str | None:
    """The warning every number under an uncalibrated judge profile carries (None otherwise)."""
    try:
        return views.profile_warning(source(), sel)
    except UserError as exc:  # the calibration cannot be computed: that is a reason to warn too
        return f"Judge not calibrated: {sel.profile} could not be checked against human grades ({exc})."


def banner(sel: Selection) -> None:
    """Say loudly when the numbers come from simulated respondents or published aggregates only,
    or are scored by a judge that has not passed calibration."""
    f = flags(sel)
    warning = profile_warning(sel)
    if warning:
        st.warning(plain(warning), icon=":material/gavel:")
    if simulated_selection(sel):
        st.warning(plain(views.data_label(source(), sel).banner()), icon=":material/science:")
    if f.aggregate_only:
        st.info(f"Published reference (aggregate only): {plain(f.title)}. Item-level views are not available for this "
                "dataset.", icon=":material/menu_book:")


def scoring_label(sel: Selection) -> str:
    """'profile strict' / 'profile paper', or 'published scores' for aggregate-only data."""
    return panels.scoring_label(source(), sel)


def header(title: str, intro: str, sel: Selection) -> None:
    """Page title, a one-line purpose, the data banner and a line saying what the numbers are.

    In presentation mode the purpose line and the scope line give way to the story."""
    st.title(title)
    if not presentation():
        st.markdown(intro)
    banner(sel)
    scoring = ("published scores (the profile does not apply)" if flags(sel).aggregate_only
               else views.profile_label(source(), sel))
    scope = [f"dataset {sel.dataset}", scoring, f"condition {sel.condition}", *sel.scope()]
    if not presentation():
        st.caption("Showing " + " · ".join(plain(s) for s in scope))


def page_start(title: str, intro: str) -> tuple[views.Source, Selection]:
    """The usual opening of a page: the source and selection, header and banners."""
    sel = current_selection()
    header(title, intro, sel)
    return source(), sel

"""Lines that say what a shared link asked for and the store does not hold (`eduart_core.links`).

Why a module: the query string (the sidebar's first run), the menu (a path no page has) and the
inspector raise these lines; each stays on its page until another page is chosen."""
from __future__ import annotations

import streamlit as st

from eduart_core.text import plain

NOTICES = "_link_notices"


def link_notice(line: str, page_key: str | None = None) -> None:
    """Say what a link asked for and the store does not hold, and what is shown instead (`links`).

    The line stays on its page (``page_key``; by default the page being drawn, where it shows at
    once) until another page is chosen: `link_notices` draws it on every run of that page."""
    page, lines = st.session_state.get(NOTICES) or (None, [])
    target = page_key or st.session_state.get("_drawn_page")
    lines = lines if page in (None, target) else []
    if line not in lines:
        st.session_state[NOTICES] = (target, [*lines, line])
        if page_key is None:
            st.info(plain(line), icon=":material/link_off:")


def link_notices(page_key: str | None) -> None:
    """Draw the `link_notice` lines that belong to ``page_key`` (the page this run draws); choosing
    another page drops them. Lines raised before the page was known (the sidebar) belong to it."""
    st.session_state["_drawn_page"] = page_key
    held = st.session_state.get(NOTICES)
    if not held:
        return
    page, lines = held
    if page is None:
        page = page_key
        st.session_state[NOTICES] = (page, lines)
    if page != page_key:
        del st.session_state[NOTICES]
        return
    for line in lines:
        st.info(plain(line), icon=":material/link_off:")

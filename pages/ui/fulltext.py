"""Text from data (an answer, a raw response) shown as plain text, a long one cut with a download."""
from __future__ import annotations

import streamlit as st

from eduart_core.text import plain, truncate


def long_text(value, key: str, *, code: bool = False, limit: int | None = None, name: str = "full text") -> None:
    """Show a text from data (an answer, a justification, a raw response) as plain text.

    Longer than EDUART_MAX_SHOWN_CHARS (or ``limit``): the beginning is shown and the whole text is
    offered as a download, so one huge answer never stalls the page.
    """
    full = "" if value is None else str(value)
    shown, cut = truncate(full, limit)
    if code:
        st.code(shown, language=None, wrap_lines=True)
    else:
        st.markdown(plain(shown))
    if cut:
        c1, c2 = st.columns([3, 1])
        c1.caption(f"Shown: the first {len(shown):,} of {len(full):,} characters.")
        c2.download_button("Download full text", data=full.encode("utf-8"), file_name=f"{key}.txt",
                           mime="text/plain", key=f"full_{key}", on_click="ignore", icon=":material/download:")

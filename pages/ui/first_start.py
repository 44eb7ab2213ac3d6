"""What the app does once: build the demo store on first start, warm slow builds, name unfinished imports."""
from __future__ import annotations

import logging

import streamlit as st

from eduart_core import views
from eduart_core.errors import UserError
from eduart_core.text import plain
from eduart_core.views import StoreError
from pages.ui.store_handle import store_path, store_version

logger = logging.getLogger(__name__)


def ensure_store() -> bool:
    """Build the demo store on first start, with a visible progress message; True when it was built."""
    path = store_path()
    try:
        if views.open_store(path).exists():
            return False
    except StoreError as exc:  # a database store that cannot be reached: say so, build nothing
        st.error(f"Cannot open the store: {plain(exc)}")
        st.stop()
    from eduart_core.demo import ensure_demo

    with st.status("First start: building the demo benchmark (about a minute)...", expanded=True) as status:
        line = st.empty()

        def progress(*args) -> None:
            line.text(" ".join(str(a) for a in args if a is not None))

        try:
            ensure_demo(path, progress)
        except (UserError, StoreError, OSError) as exc:
            status.update(label="Building the demo store failed", state="error")
            st.error(f"Could not build the demo store: {plain(exc)}")
            st.stop()
        except Exception as exc:  # the start page must still say what happened in one line
            logger.exception("building the demo store at %s failed", path)
            status.update(label="Building the demo store failed", state="error")
            st.error(f"Could not build the demo store ({type(exc).__name__}: {plain(exc)}); see the server log.")
            st.stop()
        status.update(label="Demo store ready", state="complete", expanded=False)
    return True


_WARMED = False


def warm_up() -> None:
    """Start slow one-time builds in the background once per server process (the token counter)."""
    global _WARMED
    if not _WARMED:
        _WARMED = True
        from eduart_core.tokens import warm_up as warm_tokens

        warm_tokens()


_IMPORT_NOTICES: dict[tuple[str, int], list[str]] = {}


def import_notices() -> None:
    """One line per import left unfinished (`importers.unfinished`): its runs hold part of their
    answers, so every page says so until the import is run again. Read once per data version."""
    from eduart_core.importers.unfinished import page_notices

    path = store_path()
    try:
        key = (path, store_version(path))
        if key not in _IMPORT_NOTICES:
            _IMPORT_NOTICES.clear()
            _IMPORT_NOTICES[key] = page_notices(views.open_store(path))
    except (UserError, StoreError) as exc:  # the page itself says what is wrong with the store
        logger.info("import notices not read: %s", exc)
        return
    for line in _IMPORT_NOTICES[key]:
        st.warning(plain(line), icon=":material/hourglass_top:")

"""Moving between pages: the app draws every page, a page sends the user to another, links to the inspector.

Why here: app.py registers the pages of this run (`register_pages`) and runs the chosen one inside
`inside_app`; a page Streamlit runs alone hands itself to app.py (`through_app`)."""
from __future__ import annotations

import runpy
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

from eduart_core.selection import Selection
from eduart_core.vocab import CONDITIONS
from pages.ui import menu
from pages.ui.query import WIDGET_KEYS
from pages.ui.sidebar import current_selection

_RUN = threading.local()  # Streamlit runs each session's script in a thread of its own


@contextmanager
def inside_app() -> Iterator[None]:
    """app.py runs the chosen page inside this: the menu, the sign-in gate and the sidebar are drawn."""
    _RUN.depth = getattr(_RUN, "depth", 0) + 1
    try:
        yield
    finally:
        _RUN.depth -= 1


def through_app() -> None:
    """Hand a page that Streamlit runs alone over to app.py, then stop.

    Why: until a process calls ``st.navigation``, Streamlit serves a folder named ``pages`` as its own
    menu (one page per file, named after the file), and would run a deep link such as ``/review`` as
    ``pages/11_review.py`` alone, without app.py's menu, sign-in gate or sidebar. A server leaves that
    mode at start (`app.serve_our_menu_only`); AppTest, and a Streamlit that dropped the switch, do
    not. Each page calls this first: it runs app.py, whose menu opens this same page inside
    `inside_app`. A page run as the main script (a test of one page) is left alone.
    """
    if getattr(_RUN, "depth", 0):
        return
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    main = Path(ctx.pages_manager.main_script_path) if ctx is not None else None
    if main is None or main.name != "app.py":
        return
    runpy.run_path(str(main), run_name="__main__")
    st.stop()


_PAGES: dict = {}


def register_pages(pages: dict) -> None:
    """The app's pages by key (app.py registers them), so a page can send the user to another."""
    _PAGES.clear()
    _PAGES.update(pages)


def page(key: str):
    """The st.Page of this run registered under ``key`` (for st.page_link / st.switch_page)."""
    return _PAGES[key]


def page_key(nav) -> str | None:
    """The key of the registered page ``nav`` (what ``st.navigation`` chose), the home page's included."""
    return next((key for key, p in _PAGES.items() if p.url_path == nav.url_path), None)


def request_page(page: str, **fields) -> None:
    """Button callback: set the sidebar filters (Selection field -> value) and ask for ``page``;
    `follow_page_request` then switches. Filters must change before the sidebar is drawn, which
    only a callback can do."""
    for field, value in fields.items():
        st.session_state[WIDGET_KEYS[field]] = list(value) if isinstance(value, tuple | list) else value
    st.session_state["_go_to_page"] = page


def requested_page_name() -> str:
    """The URL path a person typed or followed (empty for the root or a click in the menu), which
    Streamlit matches against the menu's pages; app.py answers a path no page has itself."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    manager = getattr(ctx, "pages_manager", None)
    return str(getattr(manager, "intended_page_name", None) or "").strip("/")


def follow_page_request() -> None:
    """Switch to the page a `request_page` callback asked for (no-op otherwise)."""
    page = st.session_state.pop("_go_to_page", None)
    if page and page in _PAGES:
        st.switch_page(_PAGES[page])


def inspector_link(item_id: str, sel: Selection | None = None, *, model: str | None = None,
                   condition: str | None = None, where: str | None = None) -> str:
    """Relative URL of the item inspector showing one item, carrying the whole selection.

    The link names dataset, profile and condition explicitly (and the models when some are chosen),
    so it opens the same view in a new tab; with ``model`` it also opens that model's response
    (in ``condition``, by default the selected one); ``where`` carries the page's filter expression.
    """
    from urllib.parse import urlencode

    sel = sel or current_selection()
    query = sel.to_query(full=True)
    query["item"] = str(item_id)
    if model:
        query["open"] = response_param(condition or sel.condition, model)
    if where:
        query["where"] = where
    return "/inspector?" + urlencode(query, doseq=True)


def response_param(condition: str, model: str) -> str:
    """The inspector's ``open`` parameter: one model's response in one condition."""
    return f"{condition}:{model}"


def parse_response_param(value: str | None) -> tuple[str, str] | None:
    """(condition, model) of an ``open`` parameter, or None when it names no valid response."""
    if not value or ":" not in value:
        return None
    condition, model = str(value).split(":", 1)
    return (condition, model) if condition in CONDITIONS and model else None


def open_in_inspector(item_id: str) -> None:
    """Jump to the inspector with an item selected (session_state carries it across pages)."""
    st.session_state["inspect_item"] = str(item_id)
    st.switch_page(menu.PAGES["inspector"].script)

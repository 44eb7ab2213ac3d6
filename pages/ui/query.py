"""The selection in the URL query string, and presentation mode.

Why: every page's view can be shared as a link, so the sidebar's widgets are seeded from the URL once per
session and mirrored back to it on every run; the menu needs the dataset and presentation mode before
the sidebar is drawn, so they are read here from the widgets' state or the link."""
from __future__ import annotations

import logging

import streamlit as st

from eduart_core import links, views
from eduart_core.selection import QUERY_NAMES, Selection
from eduart_core.vocab import CONDITIONS, default_dataset, format_names
from pages.ui.notices import NOTICES

logger = logging.getLogger(__name__)

#: Widget keys of the sidebar, by Selection field (tests and benchmarks set them too).
WIDGET_KEYS = {"dataset": "f_dataset", "profile": "f_profile", "condition": "f_condition", "models": "f_models",
               "types": "f_types", "languages": "f_languages", "image": "f_image", "baselines": "f_baselines",
               "reviewed": "f_reviewed", "humans": "f_humans"}


def load_query_params(datasets: list[str], src: views.Source) -> None:
    """Seed widget state from the URL once per session (deep links); unknown values are ignored."""
    if st.session_state.get("_qp_loaded"):
        return
    qp = st.query_params
    query = {key: qp.get_all(key) for key in qp}
    found = Selection.from_query(query, datasets=datasets)
    dataset = found.get("dataset") or st.session_state.get("f_dataset") or default_dataset(datasets)
    valid = {"models": views.models_with_data(src, dataset, baselines=bool(found.get("baselines")),
                                              humans=bool(found.get("humans"))),
             "types": list(format_names()),
             "languages": views.languages(src, dataset),
             "profile": [p.name for p in views.profile_choices(src, dataset)]}
    found = Selection.from_query(query, datasets=datasets, valid=valid)
    for name, value in found.items():
        st.session_state[WIDGET_KEYS[name]] = list(value) if isinstance(value, tuple) else value
    if qp.get("present") == "1":
        st.session_state["presentation"] = True
    st.session_state["_qp_loaded"] = True
    asked = {name: query[QUERY_NAMES[name]] for name in ("models", "types", "languages", "profile", "condition")
             if QUERY_NAMES[name] in query}
    lines = links.link_notices(asked, {**valid, "condition": list(CONDITIONS)}, dataset=str(qp.get("dataset") or ""),
                               shown_dataset=dataset)
    for line in lines:
        logger.info("shared link: %s", line)
    if lines:
        st.session_state[NOTICES] = (None, lines)


def write_query_params(sel: Selection) -> None:
    """Mirror the current selection in the URL so the view can be shared as a link."""
    wanted = sel.to_query()
    if presentation():
        wanted["present"] = "1"
    qp = st.query_params
    managed = set(wanted) | set(QUERY_NAMES.values()) | {"present"}
    for key in managed:
        if key not in wanted and key in qp:
            del qp[key]
    for key, value in wanted.items():
        target = value if isinstance(value, list) else [value]
        if qp.get_all(key) != target:
            qp[key] = value


def presentation() -> bool:
    """True when presentation mode is on (bigger fonts, no technical controls)."""
    return bool(st.session_state.get("presentation", False))


def requested_dataset() -> str | None:
    """The dataset this run shows, known before the sidebar is drawn (menu building needs it):
    the sidebar's choice, else the shared link's ``dataset`` parameter."""
    chosen = st.session_state.get("f_dataset")
    if chosen:
        return str(chosen)
    return st.query_params.get("dataset") or None


def requested_presentation() -> bool:
    """Presentation mode, known before the sidebar is drawn: the toggle, else the link's ``present=1``."""
    if "presentation" in st.session_state:
        return bool(st.session_state["presentation"])
    return st.query_params.get("present") == "1"

"""The global sidebar: one `Selection` for every page, kept in ``st.session_state["selection"]`` and the URL.

Why one sidebar: every page shows the same dataset, profile, condition and filters, so a view can be
shared as a link; app.py draws it before the page runs and the pages read `current_selection`."""
from __future__ import annotations

import streamlit as st

from eduart_core import profiles, views
from eduart_core.charts.results import family_colour
from eduart_core.selection import Selection
from eduart_core.text import plain
from eduart_core.vocab import (
    ALL_ITEMS,
    CONDITION_HELP,
    CONDITIONS,
    IMAGE_FILTERS,
    default_dataset,
    format_label,
    format_names,
    language_label,
)
from pages.ui.failures import guard
from pages.ui.query import WIDGET_KEYS, load_query_params, presentation, write_query_params
from pages.ui.store_handle import source

PRESENTATION_CSS = """
<style>
html, body, [data-testid="stAppViewContainer"] { font-size: 20px; }
h1 { font-size: 2.6rem !important; } h2, h3 { font-size: 1.9rem !important; }
.story-caption { font-size: 1.35rem; font-weight: 600; margin: .6rem 0 .2rem 0; }
</style>
"""


def _apply_scope(dataset: str, src: views.Source) -> dict[str, views.FilterState]:
    """Put every filter that does not apply to ``dataset`` at the value it must take."""
    scope = views.dataset_filters(src, dataset)
    neutral = {"languages": [], "image": ALL_ITEMS, "types": [], "models": []}
    for field, state in scope.items():
        key = WIDGET_KEYS[field]
        if state.value is not None:
            st.session_state[key] = state.value
        elif field in neutral:
            st.session_state[key] = neutral[field]
    return scope


def _disabled_note(container, state: views.FilterState | None) -> bool:
    """True when the filter is disabled; its one-line reason goes under it."""
    if state is None or state.applies:
        return False
    container.caption(state.reason or "Does not apply to this dataset.")
    return True


def sidebar() -> Selection:
    """Draw the global controls and return the selection (also kept in session_state['selection'])."""
    src = source()
    ds, names = _datasets(src)
    with st.sidebar:
        sel = _controls(src, ds, names)
    write_query_params(sel)
    st.session_state["selection"] = sel
    if presentation():
        st.markdown(PRESENTATION_CSS, unsafe_allow_html=True)
    return sel


def _datasets(src: views.Source):
    """The store's datasets and the analysable names, the dataset widget seeded (from the link once)."""
    with guard():
        ds = views.datasets(src)
        names = views.analysable_datasets(src)
    if ds.empty:
        st.error("The store holds no dataset yet. Import one (`python -m eduart_core import-eduart ...`) "
                 "or build the demo.")
        st.stop()
    load_query_params(names, src)
    if st.session_state.get("f_dataset") not in names:
        st.session_state["f_dataset"] = default_dataset(names)
    return ds, names


def _controls(src: views.Source, ds, names: list[str]) -> Selection:
    """The sidebar's widgets, top to bottom; presenting, the analyst's filters fold away."""
    st.toggle("Presentation mode", key="presentation",
              help="Only the story pages, each with one headline, its chart and a short technical caption.")
    titles = dict(zip(ds["dataset"], ds["title"].fillna(ds["dataset"])))
    dataset = st.selectbox("Dataset", names, key="f_dataset", format_func=lambda d: f"{titles.get(d) or d} ({d})",
                           help="Datasets with results to analyse. Extracted items under review are on the "
                                "Review studio page.")
    with guard():
        scope = _apply_scope(dataset, src)
    fam = views.family_map(src)
    ordered = _ordered_models(src, dataset, fam)
    pres = presentation()
    condition = st.radio("Prompt condition", list(CONDITIONS), key="f_condition", horizontal=True,
                         help=CONDITION_HELP, disabled=_is_off(scope, "condition"))
    _disabled_note(st, scope.get("condition"))
    # presenting: the analyst's controls fold away (kept, so a shared link's filters still apply)
    technical = st.expander("Analyst filters", expanded=False) if pres else st.container()
    who = _examinee_controls(technical, ordered, fam)
    profile = _profile_control(technical, src, dataset, scope)
    items = _item_controls(technical, src, dataset, scope)
    if not pres:
        _legend(fam, ordered)
    return Selection(dataset=dataset, profile=profile, condition=condition, **who, **items)


def _ordered_models(src: views.Source, dataset: str, fam: dict[str, str]) -> list[str]:
    """The dataset's models by family then name; a chosen model without data leaves the choice."""
    with_baselines = bool(st.session_state.get("f_baselines", False))
    with_humans = bool(st.session_state.get("f_humans", False))
    ordered = sorted(views.models_with_data(src, dataset, baselines=with_baselines, humans=with_humans),
                     key=lambda m: (fam.get(m, "Other"), m))
    if "f_models" in st.session_state:
        st.session_state["f_models"] = [m for m in st.session_state["f_models"] if m in ordered]
    return ordered


def _examinee_controls(technical, ordered: list[str], fam: dict[str, str]) -> dict:
    """Which models, and whether baselines and people count as examinees (Selection fields)."""
    chosen = technical.multiselect("Models (empty = all)", ordered, key="f_models",
                                   format_func=lambda m: f"{fam.get(m, 'Other')} · {m}",
                                   help="Grouped by family; each family keeps its colour on every chart.")
    baselines = technical.toggle("Count baselines as examinees", key="f_baselines",
                                 help="Off (default): baseline models such as chance are drawn as reference "
                                      "lines and left out of rankings, findings, item statistics, the regression "
                                      "and the motivation tests. On: they are treated like every other model.")
    humans = technical.toggle("Count people as examinees", key="f_humans",
                              help="Off (default): people who sat the exam (or whose results were imported) are "
                                   "left out of every statistic, which then equals the models-only numbers; the "
                                   "Overview compares them with the models in its own section. On: they count "
                                   "like models.")
    return {"models": tuple(chosen), "baselines": bool(baselines), "humans": bool(humans)}


def _profile_control(technical, src: views.Source, dataset: str, scope: dict[str, views.FilterState]) -> str:
    """The scoring profile: the built-in rules, then the dataset's judges."""
    offered = list(views.profile_choices(src, dataset))  # built-in rules, then the dataset's judges
    names = [p.name for p in offered]
    if st.session_state.get("f_profile") not in names:
        st.session_state["f_profile"] = names[0]
    labels = {p.name: p.label for p in offered}
    profile = technical.radio("Scoring profile", names, key="f_profile", horizontal=len(names) <= 2,
                              format_func=lambda n: labels.get(n, n), help=profiles.help_text(offered),
                              disabled=_is_off(scope, "profile"))
    _disabled_note(technical, scope.get("profile"))
    return profile


def _item_controls(technical, src: views.Source, dataset: str, scope: dict[str, views.FilterState]) -> dict:
    """Formats, languages, images and reviewed overrides (Selection fields)."""
    types = technical.multiselect("Formats (empty = all)", list(format_names()), key="f_types",
                                  format_func=format_label)
    langs = technical.multiselect("Languages (empty = all)", views.languages(src, dataset), key="f_languages",
                                  format_func=language_label, disabled=_is_off(scope, "languages"))
    _disabled_note(technical, scope.get("languages"))
    image = technical.radio("Images", list(IMAGE_FILTERS), key="f_image", format_func=IMAGE_FILTERS.get,
                            horizontal=True, disabled=_is_off(scope, "image"))
    _disabled_note(technical, scope.get("image"))
    st.session_state.setdefault("f_reviewed", True)  # on unless the user or a link turned it off
    reviewed = technical.toggle("With reviewed overrides", key="f_reviewed",
                                help="On (default): where a reviewer re-scored a response by hand (Item "
                                     "inspector, Override a score), every statistic uses that score. Off: the "
                                     "computed scores only.")
    return {"types": tuple(types), "languages": tuple(langs), "image": image, "reviewed": bool(reviewed)}


def _legend(fam: dict[str, str], ordered: list[str]) -> None:
    """The family colours of the chosen dataset's models, and the store's name."""
    legend = " ".join(f"<span style='color:{family_colour(f)}'>■</span> {plain(f)}"
                      for f in sorted({fam.get(m, 'Other') for m in ordered}))
    st.markdown(f"<small>{legend}</small>", unsafe_allow_html=True)
    st.caption(f"Store: {plain(views.store_name())}")


def _is_off(scope: dict[str, views.FilterState], field: str) -> bool:
    state = scope.get(field)
    return state is not None and not state.applies


def current_selection() -> Selection:
    """Selection of this run: drawn by app.py before the page runs, else drawn now."""
    sel = st.session_state.get("selection")
    return sel if sel is not None else sidebar()

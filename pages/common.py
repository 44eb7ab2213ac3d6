"""Shared sidebar and page helpers (the one place besides pages that imports Streamlit).

Why here: every page needs the same global controls kept in the URL query string (so a view can
be shared as a link), the same banners for simulated or aggregate-only data, the same error lines
instead of tracebacks, and the same download buttons under every chart and table.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import streamlit as st

from eduart_core import exports, views
from eduart_core.charts import family_colour
from eduart_core.store import Store, StoreError, StoreLockedError, default_db_path
from eduart_core.views import EmptySelection, Filters, ItemLevelUnavailable
from eduart_core.vocab import (
    ALL_ITEMS,
    BENCHMARK_LANGUAGES,
    CONDITION_HELP,
    CONDITIONS,
    DEFAULT_CONDITION,
    DEFAULT_PROFILE,
    IMAGE_FILTERS,
    PROFILE_HELP,
    PROFILES,
    default_dataset,
    format_label,
    format_names,
    language_label,
)

ROOT = Path(__file__).resolve().parents[1]

PRESENTATION_CSS = """
<style>
html, body, [data-testid="stAppViewContainer"] { font-size: 20px; }
h1 { font-size: 2.6rem !important; } h2, h3 { font-size: 1.9rem !important; }
.story-caption { font-size: 1.35rem; font-weight: 600; margin: .6rem 0 .2rem 0; }
</style>
"""


# ---------------------------------------------------------------- store

def store_path() -> str:
    """Path of the store the app shows ($EDUART_DB or data/eduart.duckdb)."""
    return str(default_db_path())


_VERSION_TTL_S = 1.0
_versions: dict[str, tuple[float, int]] = {}


def data_version() -> int:
    """Cache key of the store; a clear error line (never a traceback) when it cannot be read.

    Reading it opens a connection (~40 ms), and one page run asks a dozen times, so the value
    is reused for one second: a store change shows up on the next interaction.
    """
    path = store_path()
    if not Path(path).exists():
        st.error(f"No store at {path}. Build one with `python -m eduart_core demo` or restart the app.")
        st.stop()
    seen = _versions.get(path)
    now = time.monotonic()
    if seen and now - seen[0] < _VERSION_TTL_S:
        return seen[1]
    with guard():  # a locked or unreadable store: one clear line, then stop
        version = int(Store(path, lock_timeout_s=3.0).data_version())
    _versions[path] = (now, version)
    return version


def ensure_store(progress_factory: Callable | None = None) -> None:
    """Build the demo store on first start, with a visible progress message."""
    path = store_path()
    if Path(path).exists():
        return
    try:
        from eduart_core.demo import ensure_demo
    except ImportError:
        st.error(f"No store at {path} and the demo builder is not available.")
        st.stop()
    with st.status("First start: building the demo benchmark (about a minute)...", expanded=True) as status:
        line = st.empty()

        def progress(*args) -> None:
            line.write(" ".join(str(a) for a in args if a is not None))

        try:
            ensure_demo(path, progress)
        except Exception as exc:  # never a bare traceback on the start page
            status.update(label="Building the demo store failed", state="error")
            st.error(f"Could not build the demo store: {exc}")
            st.stop()
        status.update(label="Demo store ready", state="complete", expanded=False)


@st.cache_data(show_spinner=False, max_entries=512)
def _cached(name: str, path: str, version: int, filters: Filters, options: tuple) -> object:
    return getattr(views, name)(path, version, filters, **dict(options))


def view(name: str, filters: Filters, **options) -> object:
    """Call ``eduart_core.views.<name>`` cached by store version + filters + options."""
    return _cached(name, store_path(), data_version(), filters, tuple(sorted(options.items())))


@st.cache_data(show_spinner=False, max_entries=64)
def _cached_plain(name: str, path: str, version: int, args: tuple) -> object:
    return getattr(views, name)(path, version, *args)


def plain(name: str, *args) -> object:
    """Cached call of a views function that takes (path, version, *args)."""
    return _cached_plain(name, store_path(), data_version(), tuple(args))


@contextmanager
def guard() -> Iterator[None]:
    """Turn the expected failures into one clear line and stop the page (never a traceback)."""
    try:
        yield
    except ItemLevelUnavailable as exc:
        st.info(f"{exc} Switch the dataset in the sidebar to see this page.")
        st.stop()
    except EmptySelection as exc:
        st.warning(str(exc))
        st.stop()
    except StoreLockedError:
        st.error("The store is busy (another process is writing to it). Wait a moment and reload the page.")
        st.stop()
    except StoreError as exc:
        st.error(f"Cannot read the store: {exc}")
        st.stop()


# ---------------------------------------------------------------- sidebar and query string

_SCALARS = {"dataset": "f_dataset", "profile": "f_profile", "condition": "f_condition", "image": "f_image"}
_LISTS = {"models": "f_models", "types": "f_types", "lang": "f_languages"}


def _load_query_params(datasets: list[str], models_of: Callable[[str], list[str]]) -> None:
    """Seed widget state from the URL once per session (deep links); unknown values are ignored."""
    if st.session_state.get("_qp_loaded"):
        return
    qp = st.query_params
    valid = {"f_dataset": datasets, "f_profile": list(PROFILES), "f_condition": list(CONDITIONS),
             "f_image": list(IMAGE_FILTERS)}
    for param, key in _SCALARS.items():
        value = qp.get(param)
        if value is not None and value in valid[key]:
            st.session_state[key] = value
    dataset = st.session_state.get("f_dataset", default_dataset(datasets))
    list_valid = {"f_models": models_of(dataset), "f_types": list(format_names()),
                  "f_languages": languages_of(dataset)}
    for param, key in _LISTS.items():
        values = [v for v in qp.get_all(param) if v in list_valid[key]]
        if values:
            st.session_state[key] = values
    if qp.get("present") == "1":
        st.session_state["presentation"] = True
    st.session_state["_qp_loaded"] = True


def _write_query_params(filters: Filters) -> None:
    """Mirror the current filters in the URL so the view can be shared as a link."""
    wanted: dict[str, str | list[str]] = {"dataset": filters.dataset}
    if filters.profile != DEFAULT_PROFILE:
        wanted["profile"] = filters.profile
    if filters.condition != DEFAULT_CONDITION:
        wanted["condition"] = filters.condition
    if filters.image != ALL_ITEMS:
        wanted["image"] = filters.image
    if filters.models:
        wanted["models"] = list(filters.models)
    if filters.types:
        wanted["types"] = list(filters.types)
    if filters.languages:
        wanted["lang"] = list(filters.languages)
    if presentation():
        wanted["present"] = "1"
    qp = st.query_params
    for key in list(_SCALARS) + list(_LISTS) + ["present"]:
        if key not in wanted and key in qp:
            del qp[key]
    for key, value in wanted.items():
        current = qp.get_all(key)
        target = value if isinstance(value, list) else [value]
        if current != target:
            qp[key] = value


def presentation() -> bool:
    """True when presentation mode is on (bigger fonts, no technical controls)."""
    return bool(st.session_state.get("presentation", False))


def sidebar() -> Filters:
    """Draw the global controls and return the filters (also kept in session_state['filters'])."""
    path, version = store_path(), data_version()
    try:
        ds = views.datasets(path, version)
        model_table = views.models(path, version)
    except StoreError as exc:
        st.error(f"Cannot read the store: {exc}")
        st.stop()
    if ds.empty:
        st.error("The store holds no dataset yet. Import one (`python -m eduart_core import-eduart ...`) or build the demo.")
        st.stop()
    names = list(ds["dataset"])
    default_ds = default_dataset(names)
    _load_query_params(names, lambda d: _models_of(path, version, d, model_table))
    if st.session_state.get("f_dataset") not in names:
        st.session_state["f_dataset"] = default_ds

    with st.sidebar:
        st.toggle("Presentation mode", key="presentation",
                  help="Bigger fonts, captions above charts, technical controls and tables hidden.")
        titles = dict(zip(ds["dataset"], ds["title"].fillna(ds["dataset"])))
        dataset = st.selectbox("Dataset", names, key="f_dataset", format_func=lambda d: f"{titles.get(d) or d} ({d})")
        all_models = _models_of(path, version, dataset, model_table)
        fam = views.family_map(path, version)
        ordered = sorted(all_models, key=lambda m: (fam.get(m, "Other"), m))
        if "f_models" in st.session_state:
            st.session_state["f_models"] = [m for m in st.session_state["f_models"] if m in ordered]
        pres = presentation()
        condition = st.radio("Prompt condition", list(CONDITIONS), key="f_condition", horizontal=True,
                             help=CONDITION_HELP)
        chosen = st.multiselect("Models (empty = all)", ordered, key="f_models",
                                format_func=lambda m: f"{fam.get(m, 'Other')} · {m}",
                                help="Grouped by family; each family keeps its colour on every chart.")
        technical = st.expander("More filters", expanded=False) if pres else st.container()
        profile = technical.radio("Scoring profile", list(PROFILES), key="f_profile", horizontal=True,
                           help=PROFILE_HELP)
        types = technical.multiselect("Formats (empty = all)", list(format_names()), key="f_types",
                                      format_func=format_label,
                               disabled=False)
        langs = technical.multiselect("Languages (empty = all)", languages_of(dataset), key="f_languages",
                               format_func=language_label)
        image = technical.radio("Images", list(IMAGE_FILTERS), key="f_image", format_func=IMAGE_FILTERS.get,
                         horizontal=True)
        if not pres:
            legend = " ".join(f"<span style='color:{family_colour(f)}'>■</span> {f}"
                              for f in sorted({fam.get(m, 'Other') for m in ordered}))
            st.markdown(f"<small>{legend}</small>", unsafe_allow_html=True)
            st.caption(f"Store: `{path}`")
    filters = Filters(dataset=dataset, profile=profile, condition=condition, models=tuple(chosen),
                      types=tuple(types), languages=tuple(langs), image=image)
    _write_query_params(filters)
    st.session_state["filters"] = filters
    if presentation():
        st.markdown(PRESENTATION_CSS, unsafe_allow_html=True)
    return filters


def _models_of(path: str, version: int, dataset: str, model_table: pd.DataFrame) -> list[str]:
    """Display names of the models that have data in a dataset."""
    def has_data(datasets_of_model) -> bool:
        try:
            return dataset in list(datasets_of_model)
        except TypeError:  # missing list (model without runs)
            return False

    rows = model_table
    if "datasets" in model_table:  # a boolean Series: a plain empty list would select no columns
        rows = model_table[model_table["datasets"].map(has_data).astype(bool)]
    names = list(rows["display_name"])
    if not names and views.dataset_flags(path, version, dataset)["aggregate_only"]:
        try:
            names = sorted(views.reference_type_means(path, version, dataset)["model"].unique())
        except Exception:
            names = []
    return names


def languages_of(dataset: str) -> list[str]:
    """Languages of a dataset's items (the benchmark's two when it has no items)."""
    try:
        found = views.items(store_path(), data_version(), dataset)["language"].dropna().unique()
    except (StoreError, KeyError):
        found = []
    return sorted(found) if len(found) else list(BENCHMARK_LANGUAGES)


def current_filters() -> Filters:
    """Filters of this run: drawn by app.py before the page runs, else drawn now."""
    filters = st.session_state.get("filters")
    return filters if filters is not None else sidebar()


def families() -> dict[str, str]:
    """Display name -> family for chart colours."""
    return views.family_map(store_path(), data_version())


def banner(filters: Filters) -> None:
    """Say loudly when the numbers come from simulated respondents or published aggregates only."""
    flags = views.dataset_flags(store_path(), data_version(), filters.dataset)
    fam = families()
    simulated = flags["simulated"] or any(m.startswith("Sim ") or fam.get(m) == "Simulated"
                                          for m in (filters.models or []))
    if simulated:
        st.warning("Simulated respondents: these answers come from simulated models, not real ones. "
                   "The numbers show how the analysis works, not how real models perform.", icon=":material/science:")
    if flags["aggregate_only"]:
        st.info("Published reference (aggregate only): per-model per-format means from the EduArt publication. "
                "Item-level views are not available for this dataset.", icon=":material/menu_book:")


def scoring_label(filters: Filters) -> str:
    """'profile strict' / 'profile paper', or 'published scores' for aggregate-only data."""
    if views.dataset_flags(store_path(), data_version(), filters.dataset)["aggregate_only"]:
        return "published scores"
    return f"profile {filters.profile}"


def header(title: str, intro: str, filters: Filters) -> None:
    """Page title, a one-line purpose, the data banner and a line saying what the numbers are."""
    st.title(title)
    st.markdown(intro)
    banner(filters)
    aggregate = views.dataset_flags(store_path(), data_version(), filters.dataset)["aggregate_only"]
    scoring = "published scores (the profile does not apply)" if aggregate else f"profile **{filters.profile}**"
    scope = [f"dataset **{filters.dataset}**", scoring, f"condition **{filters.condition}**"]
    if filters.models:
        scope.append(f"{len(filters.models)} models")
    if filters.types:
        scope.append(", ".join(format_label(t) for t in filters.types))
    if filters.languages:
        scope.append(", ".join(language_label(x) for x in filters.languages))
    if filters.image != ALL_ITEMS:
        scope.append(IMAGE_FILTERS[filters.image].lower())
    if not presentation():
        st.caption("Showing " + " · ".join(scope))


# ---------------------------------------------------------------- charts and tables

def chart(fig, key: str, caption: str, *, story: str | None = None, on_select: str | None = None,
          height: int | None = None):
    """Draw a figure with its caption and PNG/SVG downloads; returns the selection state.

    In presentation mode the plain-language ``story`` line (or the caption) goes above the chart in
    large type and the technical caption stays below in small type, so every number stays labelled.
    """
    pres = presentation()
    if pres:
        st.markdown(f"<div class='story-caption'>{story or caption}</div>", unsafe_allow_html=True)
        fig.update_layout(font=dict(size=18))
    if height:
        fig.update_layout(height=height)
    config = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "filename": key, "scale": 2}}
    kwargs = dict(key=f"chart_{key}", config=config, width="stretch")
    if on_select:
        state = st.plotly_chart(fig, on_select=on_select, selection_mode=("points",), **kwargs)
    else:
        state = st.plotly_chart(fig, **kwargs)
    if not pres:
        st.caption(caption)
        _chart_downloads(fig, key)
    elif story:
        st.caption(caption)
    return state


def _chart_downloads(fig, key: str) -> None:
    if not exports.static_export_available():
        st.caption(exports.NO_BROWSER_MESSAGE)
        return
    row = st.container(horizontal=True)
    c1 = c2 = row
    fig_json = fig.to_json()
    c1.download_button("PNG", data=lambda: exports._image_from_json(fig_json, "png"), file_name=f"{key}.png",
                       mime="image/png", key=f"png_{key}", on_click="ignore", icon=":material/download:")
    c2.download_button("SVG", data=lambda: exports._image_from_json(fig_json, "svg"), file_name=f"{key}.svg",
                       mime="image/svg+xml", key=f"svg_{key}", on_click="ignore", icon=":material/download:")


def table(frame: pd.DataFrame, key: str, caption: str, *, essential: bool = False, percent: tuple = (),
          column_config: dict | None = None, height: int | None = None, show: bool = True, **kwargs):
    """Show a table with CSV and LaTeX downloads; hidden in presentation mode unless essential.

    ``show=False`` only offers the downloads (for a table the page draws itself)."""
    if presentation() and not essential:
        return None
    shown = frame.copy()
    for col in shown.columns:
        if col in percent:
            shown[col] = (shown[col] * 100).round(1)
        elif pd.api.types.is_float_dtype(shown[col]):
            shown[col] = shown[col].round(3)
    result = None
    if show:
        st.markdown(f"**{caption}**")
        result = st.dataframe(shown, hide_index=True, width="stretch", column_config=column_config,
                              key=f"table_{key}", height=height or "auto", **kwargs)
    if not presentation():
        row = st.container(horizontal=True)
        c1 = c2 = row
        c1.download_button("CSV", data=exports.table_csv(shown), file_name=f"{key}.csv", mime="text/csv",
                           key=f"csv_{key}", on_click="ignore", icon=":material/download:")
        c2.download_button("LaTeX", data=exports.table_latex(shown, caption=caption), file_name=f"{key}.tex",
                           mime="application/x-tex", key=f"tex_{key}", on_click="ignore",
                           icon=":material/download:")
    return result


def pct(x: float | None, digits: int = 1) -> str:
    """A fraction as a percent string ('—' for missing)."""
    if x is None or pd.isna(x):
        return "—"
    return f"{100 * float(x):.{digits}f}%"


def inspector_link(item_id: str) -> str:
    """Relative URL of the item inspector showing one item (deep link ?item=<id>)."""
    return f"/inspector?item={item_id}"


def open_in_inspector(item_id: str) -> None:
    """Jump to the inspector with an item selected (session_state carries it across pages)."""
    st.session_state["inspect_item"] = str(item_id)
    st.switch_page("pages/1_inspector_page.py")


def page_start(title: str, intro: str) -> Filters:
    """The usual opening of a page: filters, header and banners."""
    filters = current_filters()
    header(title, intro, filters)
    return filters


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip() not in ("", "0", "false")

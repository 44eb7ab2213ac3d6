"""Shared sidebar and page helpers (the one place besides pages that imports Streamlit).

Why here: every page needs the same global controls kept in the URL query string (so a view can
be shared as a link), the same banners for simulated or aggregate-only data, the same error lines
instead of tracebacks, and the same download buttons under every chart and table. The sidebar
builds one `Selection`; pages pass it, with `source()`, to the named views of `eduart_core.views`,
which cache their results (keyed by the store's data version and the selection).
"""
from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import streamlit as st

from eduart_core import exports, views
from eduart_core.charts import family_colour
from eduart_core.errors import UserError
from eduart_core.selection import QUERY_NAMES, Selection
from eduart_core.store import Store, StoreError, StoreLockedError, default_db_path
from eduart_core.text import plain, truncate
from eduart_core.views import EmptySelection, ItemLevelUnavailable
from eduart_core.vocab import (
    CONDITION_HELP,
    CONDITIONS,
    IMAGE_FILTERS,
    PROFILE_HELP,
    PROFILES,
    default_dataset,
    format_label,
    format_names,
    language_label,
)

logger = logging.getLogger(__name__)

PRESENTATION_CSS = """
<style>
html, body, [data-testid="stAppViewContainer"] { font-size: 20px; }
h1 { font-size: 2.6rem !important; } h2, h3 { font-size: 1.9rem !important; }
.story-caption { font-size: 1.35rem; font-weight: 600; margin: .6rem 0 .2rem 0; }
</style>
"""
#: Widget keys of the sidebar, by Selection field (tests and benchmarks set them too).
WIDGET_KEYS = {"dataset": "f_dataset", "profile": "f_profile", "condition": "f_condition", "models": "f_models",
               "types": "f_types", "languages": "f_languages", "image": "f_image", "baselines": "f_baselines"}


# ---------------------------------------------------------------- page icon

_ICON = None


def page_icon():
    """The browser-tab icon, drawn here: a ``:material/...:`` or emoji icon makes every page fetch
    the glyph from a font or emoji CDN on the internet, and no page may load anything from outside."""
    global _ICON
    if _ICON is None:
        from PIL import Image, ImageDraw

        icon = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
        draw = ImageDraw.Draw(icon)
        draw.rounded_rectangle((2, 2, 62, 62), radius=14, fill="#f4ede0", outline="#7a5c3a", width=3)
        for (x, y), colour in zip(((20, 22), (42, 20), (22, 43), (43, 42)), ("#D55E00", "#0072B2", "#009E73", "#E69F00")):
            draw.ellipse((x - 8, y - 8, x + 8, y + 8), fill=colour)
        _ICON = icon
    return _ICON


# ---------------------------------------------------------------- store

def store_path() -> str:
    """Path of the store the app shows ($EDUART_DB or data/eduart.duckdb)."""
    return str(default_db_path())


_VERSION_TTL_S = 1.0
_versions: dict[str, tuple[float, int]] = {}


def data_version() -> int:
    """Cache key of the store; a clear error line (never a traceback) when it cannot be read.

    Reading it opens a connection (~40 ms), and one page run asks several times, so the value
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


def source() -> views.Source:
    """The store at its current data version: the first argument of every view."""
    return views.Source(store_path(), data_version())


def dataset_features(dataset: str | None) -> views.StudyFeatures | None:
    """What the dataset offers (tasks, conditions, item-level data) for the menu; None before a store exists
    or when it cannot be read (the menu then shows every page and the page says what is wrong)."""
    path = store_path()
    if not Path(path).exists():
        return None
    try:
        seen = _versions.get(path)
        version = seen[1] if seen and time.monotonic() - seen[0] < _VERSION_TTL_S else \
            int(Store(path, lock_timeout_s=3.0).data_version())
        src = views.Source(path, version)
        names = list(views.datasets(src)["dataset"])
        chosen = dataset if dataset in names else default_dataset(names)
        return views.study_features(src, chosen) if chosen else None
    except (UserError, StoreError) as exc:
        logger.warning("menu shows every page: the features of dataset %s could not be read (%s)", dataset, exc)
        return None


def ensure_store() -> None:
    """Build the demo store on first start, with a visible progress message."""
    path = store_path()
    if Path(path).exists():
        return
    from eduart_core.demo import ensure_demo

    with st.status("First start: building the demo benchmark (about a minute)...", expanded=True) as status:
        line = st.empty()

        def progress(*args) -> None:
            line.text(" ".join(str(a) for a in args if a is not None))

        try:
            ensure_demo(path, progress)
        except (UserError, StoreError, OSError) as exc:
            status.update(label="Building the demo store failed", state="error")
            st.error(f"Could not build the demo store: {exc}")
            st.stop()
        except Exception as exc:  # the start page must still say what happened in one line
            logger.exception("building the demo store at %s failed", path)
            status.update(label="Building the demo store failed", state="error")
            st.error(f"Could not build the demo store ({type(exc).__name__}: {exc}); see the server log.")
            st.stop()
        status.update(label="Demo store ready", state="complete", expanded=False)


@contextmanager
def guard() -> Iterator[None]:
    """Turn the expected failures into one clear line and stop the page (never a traceback)."""
    try:
        yield
    except ItemLevelUnavailable as exc:
        st.info(f"{plain(exc)} Switch the dataset in the sidebar to see this page.")
        st.stop()
    except EmptySelection as exc:
        st.warning(plain(exc))
        st.stop()
    except StoreLockedError:
        st.error("The store is busy (another process is writing to it). Wait a moment and reload the page.")
        st.stop()
    except StoreError as exc:
        st.error(f"Cannot read the store: {plain(exc)}")
        st.stop()
    except UserError as exc:
        st.warning(plain(exc))
        st.stop()


# ---------------------------------------------------------------- sidebar and query string

def _load_query_params(datasets: list[str], src: views.Source) -> None:
    """Seed widget state from the URL once per session (deep links); unknown values are ignored."""
    if st.session_state.get("_qp_loaded"):
        return
    qp = st.query_params
    query = {key: qp.get_all(key) for key in qp}
    found = Selection.from_query(query, datasets=datasets)
    dataset = found.get("dataset") or st.session_state.get("f_dataset") or default_dataset(datasets)
    valid = {"models": views.models_with_data(src, dataset, baselines=bool(found.get("baselines"))),
             "types": list(format_names()),
             "languages": views.languages(src, dataset)}
    found = Selection.from_query(query, datasets=datasets, valid=valid)
    for name, value in found.items():
        st.session_state[WIDGET_KEYS[name]] = list(value) if isinstance(value, tuple) else value
    if qp.get("present") == "1":
        st.session_state["presentation"] = True
    st.session_state["_qp_loaded"] = True


def _write_query_params(sel: Selection) -> None:
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


def sidebar() -> Selection:
    """Draw the global controls and return the selection (also kept in session_state['selection'])."""
    src = source()
    with guard():
        ds = views.datasets(src)
    if ds.empty:
        st.error("The store holds no dataset yet. Import one (`python -m eduart_core import-eduart ...`) "
                 "or build the demo.")
        st.stop()
    names = list(ds["dataset"])
    _load_query_params(names, src)
    if st.session_state.get("f_dataset") not in names:
        st.session_state["f_dataset"] = default_dataset(names)

    with st.sidebar:
        st.toggle("Presentation mode", key="presentation",
                  help="Bigger fonts, captions above charts, technical controls and tables hidden.")
        titles = dict(zip(ds["dataset"], ds["title"].fillna(ds["dataset"])))
        dataset = st.selectbox("Dataset", names, key="f_dataset", format_func=lambda d: f"{titles.get(d) or d} ({d})")
        fam = views.family_map(src)
        with_baselines = bool(st.session_state.get("f_baselines", False))
        ordered = sorted(views.models_with_data(src, dataset, baselines=with_baselines),
                         key=lambda m: (fam.get(m, "Other"), m))
        if "f_models" in st.session_state:
            st.session_state["f_models"] = [m for m in st.session_state["f_models"] if m in ordered]
        pres = presentation()
        condition = st.radio("Prompt condition", list(CONDITIONS), key="f_condition", horizontal=True,
                             help=CONDITION_HELP)
        chosen = st.multiselect("Models (empty = all)", ordered, key="f_models",
                                format_func=lambda m: f"{fam.get(m, 'Other')} · {m}",
                                help="Grouped by family; each family keeps its colour on every chart.")
        baselines = st.toggle("Count baselines as examinees", key="f_baselines",
                              help="Off (default): baseline models such as chance are drawn as reference lines "
                                   "and left out of rankings, findings, item statistics, the regression and the "
                                   "motivation tests. On: they are treated like every other model.")
        technical = st.expander("More filters", expanded=False) if pres else st.container()
        profile = technical.radio("Scoring profile", list(PROFILES), key="f_profile", horizontal=True,
                                  help=PROFILE_HELP)
        types = technical.multiselect("Formats (empty = all)", list(format_names()), key="f_types",
                                      format_func=format_label)
        langs = technical.multiselect("Languages (empty = all)", views.languages(src, dataset), key="f_languages",
                                      format_func=language_label)
        image = technical.radio("Images", list(IMAGE_FILTERS), key="f_image", format_func=IMAGE_FILTERS.get,
                                horizontal=True)
        if not pres:
            legend = " ".join(f"<span style='color:{family_colour(f)}'>■</span> {plain(f)}"
                              for f in sorted({fam.get(m, 'Other') for m in ordered}))
            st.markdown(f"<small>{legend}</small>", unsafe_allow_html=True)
            st.caption(f"Store: {plain(store_path())}")
    sel = Selection(dataset=dataset, profile=profile, condition=condition, models=tuple(chosen),
                    types=tuple(types), languages=tuple(langs), image=image, baselines=bool(baselines))
    _write_query_params(sel)
    st.session_state["selection"] = sel
    if presentation():
        st.markdown(PRESENTATION_CSS, unsafe_allow_html=True)
    return sel


def _inert(text: str) -> str:
    """Text inside an HTML block of our own (the presentation headline), escaped so it stays text.

    Line breaks become spaces: a blank line would end the HTML block and let markdown parse the rest.
    """
    import html

    return " ".join(html.escape(str(text)).split())


def current_selection() -> Selection:
    """Selection of this run: drawn by app.py before the page runs, else drawn now."""
    sel = st.session_state.get("selection")
    return sel if sel is not None else sidebar()


def families() -> dict[str, str]:
    """Display name -> family for chart colours."""
    return views.family_map(source())


def flags(sel: Selection) -> views.DatasetFlags:
    """Kind, simulated and aggregate-only flags of the selected dataset."""
    return views.dataset_flags(source(), sel.dataset)


def banner(sel: Selection) -> None:
    """Say loudly when the numbers come from simulated respondents or published aggregates only."""
    f = flags(sel)
    fam = families()
    simulated = f.simulated or any(fam.get(m) == "Simulated" for m in sel.models)
    if simulated:
        st.warning("Simulated respondents: these answers come from simulated models, not real ones. "
                   "The numbers show how the analysis works, not how real models perform.", icon=":material/science:")
    if f.aggregate_only:
        st.info(f"Published reference (aggregate only): {plain(f.title)}. Item-level views are not available for this "
                "dataset.", icon=":material/menu_book:")


def scoring_label(sel: Selection) -> str:
    """'profile strict' / 'profile paper', or 'published scores' for aggregate-only data."""
    return "published scores" if flags(sel).aggregate_only else f"profile {sel.profile}"


def header(title: str, intro: str, sel: Selection) -> None:
    """Page title, a one-line purpose, the data banner and a line saying what the numbers are."""
    st.title(title)
    st.markdown(intro)
    banner(sel)
    scoring = ("published scores (the profile does not apply)" if flags(sel).aggregate_only
               else f"profile {sel.profile}")
    scope = [f"dataset {sel.dataset}", scoring, f"condition {sel.condition}", *sel.scope()]
    if not presentation():
        st.caption("Showing " + " · ".join(plain(s) for s in scope))


def page_start(title: str, intro: str) -> tuple[views.Source, Selection]:
    """The usual opening of a page: the source and selection, header and banners."""
    sel = current_selection()
    header(title, intro, sel)
    return source(), sel


# ---------------------------------------------------------------- charts and tables

def chart(fig, key: str, caption: str, *, story: str | None = None, on_select: str | None = None,
          height: int | None = None):
    """Draw a figure with its caption and PNG/SVG downloads; returns the selection state.

    In presentation mode the plain-language ``story`` line (or the caption) goes above the chart in
    large type and the technical caption stays below in small type, so every number stays labelled.
    """
    pres = presentation()
    if pres:
        st.markdown(f"<div class='story-caption'>{_inert(story or caption)}</div>", unsafe_allow_html=True)
        fig.update_layout(font=dict(size=18))
    if height:
        fig.update_layout(height=height)
    fig = exports.inert_figure(fig)  # model names, item texts: shown as typed, never as plotly markup
    config = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "filename": key, "scale": 2}}
    kwargs = dict(key=f"chart_{key}", config=config, width="stretch")
    if on_select:
        state = st.plotly_chart(fig, on_select=on_select, selection_mode=("points",), **kwargs)
    else:
        state = st.plotly_chart(fig, **kwargs)
    if not pres:
        st.caption(plain(caption))
        _chart_downloads(fig, key)
    elif story:
        st.caption(plain(caption))
    return state


def selected_points(state) -> list[dict]:
    """The points a user clicked in a chart drawn with ``on_select`` (empty when none)."""
    if not state or not hasattr(state, "get"):
        return []
    return [_uninert(p) for p in (state.get("selection") or {}).get("points") or []]


def _uninert(value):
    """A clicked point's values as the data hold them (`chart` escaped the figure's strings)."""
    import html

    if isinstance(value, str):
        return html.unescape(value)
    if isinstance(value, list):
        return [_uninert(v) for v in value]
    if isinstance(value, dict):
        return {k: _uninert(v) for k, v in value.items()}
    return value


def _chart_downloads(fig, key: str) -> None:
    if not exports.static_export_available():
        st.caption(exports.NO_BROWSER_MESSAGE)
        return
    row = st.container(horizontal=True)
    fig_json = fig.to_json()
    row.download_button("PNG", data=lambda: exports.image_from_json(fig_json, "png"), file_name=f"{key}.png",
                        mime="image/png", key=f"png_{key}", on_click="ignore", icon=":material/download:")
    row.download_button("SVG", data=lambda: exports.image_from_json(fig_json, "svg"), file_name=f"{key}.svg",
                        mime="image/svg+xml", key=f"svg_{key}", on_click="ignore", icon=":material/download:")


def table(frame: pd.DataFrame, key: str, caption: str, *, essential: bool = False, percent: tuple = (),
          column_config: dict | None = None, height: int | None = None, show: bool = True, **kwargs):
    """Show a table with CSV and LaTeX downloads; hidden in presentation mode unless essential.

    ``show=False`` only offers the downloads (for a table the page draws itself)."""
    if presentation() and not essential:
        return None
    shown = exports.display_frame(frame, percent=percent)
    result = None
    if show:
        st.markdown(f"**{plain(caption)}**")
        result = st.dataframe(shown, hide_index=True, width="stretch", column_config=column_config,
                              key=f"table_{key}", height=height or "auto", **kwargs)
    if not presentation():
        row = st.container(horizontal=True)
        row.download_button("CSV", data=exports.table_csv(shown), file_name=f"{key}.csv", mime="text/csv",
                            key=f"csv_{key}", on_click="ignore", icon=":material/download:")
        row.download_button("LaTeX", data=exports.table_latex(shown, caption=caption), file_name=f"{key}.tex",
                            mime="application/x-tex", key=f"tex_{key}", on_click="ignore",
                            icon=":material/download:")
    return result


def pct(x: float | None, digits: int = 1) -> str:
    """A fraction as a percent string ('—' for missing)."""
    if x is None or pd.isna(x):
        return "—"
    return f"{100 * float(x):.{digits}f}%"


def inspector_link(item_id: str, sel: Selection | None = None, *, model: str | None = None,
                   condition: str | None = None) -> str:
    """Relative URL of the item inspector showing one item, carrying the whole selection.

    The link names dataset, profile and condition explicitly (and the models when some are chosen),
    so it opens the same view in a new tab; with ``model`` it also opens that model's response
    (in ``condition``, by default the selected one).
    """
    from urllib.parse import urlencode

    sel = sel or current_selection()
    query = sel.to_query(full=True)
    query["item"] = str(item_id)
    if model:
        query["open"] = response_param(condition or sel.condition, model)
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
    st.switch_page("pages/1_inspector_page.py")


# ---------------------------------------------------------------- data shown as text (issue 18)

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


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip() not in ("", "0", "false")

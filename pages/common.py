"""Shared sidebar and page helpers (the one place besides pages that imports Streamlit).

Why here: every page needs the same global controls kept in the URL query string (so a view can
be shared as a link), the same banners for simulated or aggregate-only data, the same error lines
instead of tracebacks, and the same download buttons under every chart and table. The sidebar
builds one `Selection`; pages pass it, with `source()`, to the named views of `eduart_core.views`,
which cache their results (keyed by the store's data version and the selection).
"""
from __future__ import annotations

import logging
import runpy
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import streamlit as st

from eduart_core import columns, exports, links, panels, profiles, views
from eduart_core.analysis.answer_quality import INVALID_RULE, INVALID_WORDS
from eduart_core.charts.results import family_colour
from eduart_core.errors import UserError
from eduart_core.selection import QUERY_NAMES, Selection
from eduart_core.text import plain, truncate
from eduart_core.views import EmptySelection, ItemLevelUnavailable, StoreError, StoreLockedError, StoreUnavailableError
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
               "types": "f_types", "languages": "f_languages", "image": "f_image", "baselines": "f_baselines",
               "reviewed": "f_reviewed", "humans": "f_humans"}


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
    """The store the app shows: $EDUART_DATABASE_URL (without its password), $EDUART_DB or data/eduart.duckdb."""
    return views.store_path()


def store(lock_timeout_s: float = 10.0):
    """The store handle a page passes to the domain modules that write (runner, review, suspects,
    overrides); reads go through `views` with `source()`."""
    return views.open_store(store_path(), lock_timeout_s=lock_timeout_s)


_VERSION_TTL_S = 1.0
_versions: dict[str, tuple[float, int]] = {}


def data_version() -> int:
    """Cache key of the store; a clear error line (never a traceback) when it cannot be read.

    Reading it opens a connection (~40 ms), and one page run asks several times, so the value
    is reused for one second: a store change shows up on the next interaction.
    """
    path = store_path()
    with guard():  # a locked, unreachable or unreadable store: one clear line, then stop
        if not views.open_store(path).exists():
            st.error(f"No store at {path}. Build one with `python -m eduart_core demo` or restart the app.")
            st.stop()
        return _store_version(path)


def _store_version(path: str) -> int:
    """The data version of the store at ``path``, reused for one second (see `data_version`)."""
    seen = _versions.get(path)
    now = time.monotonic()
    if seen and now - seen[0] < _VERSION_TTL_S:
        return seen[1]
    version = views.Source.of(path, lock_timeout_s=3.0).version
    _versions[path] = (now, version)
    return version


def source() -> views.Source:
    """The store at its current data version: the first argument of every view."""
    return views.Source(store_path(), data_version())


def dataset_features() -> views.StudyFeatures | None:
    """What the dataset this run shows (`requested_dataset`) offers: tasks, conditions, item-level data;
    for the menu, before the sidebar. None before a store exists or when it cannot be read (the menu
    then shows every page and the page says what is wrong)."""
    dataset = requested_dataset()
    path = store_path()
    try:
        if not views.open_store(path).exists():
            return None
        src = views.Source(path, _store_version(path))
        names = views.analysable_datasets(src)
        chosen = dataset if dataset in names else default_dataset(names)
        return views.study_features(src, chosen) if chosen else None
    except (UserError, StoreError) as exc:
        logger.warning("menu shows every page: the features of dataset %s could not be read (%s)", dataset, exc)
        return None


def first_build_pending() -> bool:
    """True before the first start has built the demo store (no store yet at `store_path`); a store
    that cannot be read is not pending (its page says what is wrong)."""
    try:
        return not views.open_store(store_path()).exists()
    except StoreError:
        return False


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
    except StoreUnavailableError as exc:  # the database server is away (restarting): its own line
        st.error(f"{plain(exc)}. Reload the page in a moment.")
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


def invalid_warning(src: views.Source, sel: Selection) -> None:
    """One warning naming each model whose answers are often invalid (`views.invalid_warnings`), with the rule."""
    lines = views.invalid_warnings(src, sel)
    if lines:
        st.warning("Invalid answers: these models' scores say more about their output format than about what "
                   "they know.\n\n" + "\n\n".join(plain(line) for line in lines)
                   + f"\n\n{plain(INVALID_WORDS.capitalize())}; {plain(INVALID_RULE)}.")


# ---------------------------------------------------------------- sidebar and query string

def _load_query_params(datasets: list[str], src: views.Source) -> None:
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
        st.session_state[_NOTICES] = (None, lines)


_NOTICES = "_link_notices"


def link_notice(line: str, page_key: str | None = None) -> None:
    """Say what a link asked for and the store does not hold, and what is shown instead (`links`).

    The line stays on its page (``page_key``; by default the page being drawn, where it shows at
    once) until another page is chosen: `link_notices` draws it on every run of that page."""
    page, lines = st.session_state.get(_NOTICES) or (None, [])
    target = page_key or st.session_state.get("_drawn_page")
    lines = lines if page in (None, target) else []
    if line not in lines:
        st.session_state[_NOTICES] = (target, [*lines, line])
        if page_key is None:
            st.info(plain(line), icon=":material/link_off:")


def link_notices(page_key: str | None) -> None:
    """Draw the `link_notice` lines that belong to ``page_key`` (the page this run draws); choosing
    another page drops them. Lines raised before the page was known (the sidebar) belong to it."""
    st.session_state["_drawn_page"] = page_key
    held = st.session_state.get(_NOTICES)
    if not held:
        return
    page, lines = held
    if page is None:
        page = page_key
        st.session_state[_NOTICES] = (page, lines)
    if page != page_key:
        del st.session_state[_NOTICES]
        return
    for line in lines:
        st.info(plain(line), icon=":material/link_off:")


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
    with guard():
        ds = views.datasets(src)
        names = views.analysable_datasets(src)
    if ds.empty:
        st.error("The store holds no dataset yet. Import one (`python -m eduart_core import-eduart ...`) "
                 "or build the demo.")
        st.stop()
    _load_query_params(names, src)
    if st.session_state.get("f_dataset") not in names:
        st.session_state["f_dataset"] = default_dataset(names)

    with st.sidebar:
        st.toggle("Presentation mode", key="presentation",
                  help="Only the story pages, each with one headline, its chart and a short technical caption.")
        titles = dict(zip(ds["dataset"], ds["title"].fillna(ds["dataset"])))
        dataset = st.selectbox("Dataset", names, key="f_dataset", format_func=lambda d: f"{titles.get(d) or d} ({d})",
                               help="Datasets with results to analyse. Extracted items under review are on the "
                                    "Review studio page.")
        with guard():
            scope = _apply_scope(dataset, src)
        fam = views.family_map(src)
        with_baselines = bool(st.session_state.get("f_baselines", False))
        with_humans = bool(st.session_state.get("f_humans", False))
        ordered = sorted(views.models_with_data(src, dataset, baselines=with_baselines, humans=with_humans),
                         key=lambda m: (fam.get(m, "Other"), m))
        if "f_models" in st.session_state:
            st.session_state["f_models"] = [m for m in st.session_state["f_models"] if m in ordered]
        pres = presentation()
        condition = st.radio("Prompt condition", list(CONDITIONS), key="f_condition", horizontal=True,
                             help=CONDITION_HELP, disabled=_is_off(scope, "condition"))
        _disabled_note(st, scope.get("condition"))
        # presenting: the analyst's controls fold away (kept, so a shared link's filters still apply)
        technical = st.expander("Analyst filters", expanded=False) if pres else st.container()
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
        offered = list(views.profile_choices(src, dataset))  # built-in rules, then the dataset's judges
        names = [p.name for p in offered]
        if st.session_state.get("f_profile") not in names:
            st.session_state["f_profile"] = names[0]
        labels = {p.name: p.label for p in offered}
        profile = technical.radio("Scoring profile", names, key="f_profile", horizontal=len(names) <= 2,
                                  format_func=lambda n: labels.get(n, n), help=profiles.help_text(offered),
                                  disabled=_is_off(scope, "profile"))
        _disabled_note(technical, scope.get("profile"))
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
        if not pres:
            legend = " ".join(f"<span style='color:{family_colour(f)}'>■</span> {plain(f)}"
                              for f in sorted({fam.get(m, 'Other') for m in ordered}))
            st.markdown(f"<small>{legend}</small>", unsafe_allow_html=True)
            st.caption(f"Store: {plain(views.store_name())}")
    sel = Selection(dataset=dataset, profile=profile, condition=condition, models=tuple(chosen),
                    types=tuple(types), languages=tuple(langs), image=image, baselines=bool(baselines),
                    reviewed=bool(reviewed), humans=bool(humans))
    _write_query_params(sel)
    st.session_state["selection"] = sel
    if presentation():
        st.markdown(PRESENTATION_CSS, unsafe_allow_html=True)
    return sel


def _is_off(scope: dict[str, views.FilterState], field: str) -> bool:
    state = scope.get(field)
    return state is not None and not state.applies


_WARMED = False


def warm_up() -> None:
    """Start slow one-time builds in the background once per server process (the token counter)."""
    global _WARMED
    if not _WARMED:
        _WARMED = True
        from eduart_core.tokens import warm_up as warm_tokens

        warm_tokens()


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


# ---------------------------------------------------------------- charts and tables

def context(sel: Selection, title: str, statistic: str, *, test: str | None = None,
            n: str | None = None) -> exports.ChartContext:
    """The context an exported chart carries, with the selection's dataset, profile and condition."""
    return exports.ChartContext(title=title, statistic=statistic, test=test, n=n, dataset=sel.dataset,
                                profile="published scores" if flags(sel).aggregate_only else sel.profile,
                                condition=sel.condition, data_label=data_label(sel),
                                warning=profile_warning(sel))


def file_stem(key: str, sel: Selection | None = None) -> str:
    """Download file name: the element key plus the selection's dataset, profile and condition."""
    sel = sel or current_selection()
    profile = "published" if flags(sel).aggregate_only else sel.profile
    return exports.file_stem(key, sel.dataset, profile, sel.condition)


#: Plotly toolbar buttons that save an image (no title, no n): removed where the titled exports work.
CAMERA_BUTTONS = ("toImage",)


def chart(fig, key: str, caption: str, *, story: str | None = None, main: bool = False,
          context: exports.ChartContext | None = None, on_select: str | None = None, height: int | None = None):
    """Draw a figure with its caption and PNG/SVG downloads; returns the selection state.

    ``main`` marks the page's story chart. In presentation mode only that chart is drawn: the
    plain-language ``story`` headline above it in large type (never the technical caption), the
    chart, and the technical caption one click away under "How we know". PNG/SVG downloads carry ``context``
    (title and subtitle) and file names carry the dataset, profile and condition.
    """
    pres = presentation()
    if pres and not main:
        return None
    if pres:
        headline = story or (context.title if context else None)
        if headline:
            st.markdown(f"<div class='story-caption'>{_inert(headline)}</div>", unsafe_allow_html=True)
        fig.update_layout(font=dict(size=18))
    if height:
        fig.update_layout(height=height)
    fig = exports.inert_figure(fig)  # model names, item texts: shown as typed, never as plotly markup
    stem = file_stem(key)
    # the toolbar's camera saves the bare plot, without title and n: where the titled PNG/SVG buttons
    # below can be made it is removed; without a browser for them it is the one way to save a chart
    config: dict = {"displaylogo": False}
    if exports.static_export_available():
        config["modeBarButtonsToRemove"] = list(CAMERA_BUTTONS)
    else:
        config["toImageButtonOptions"] = {"format": "png", "filename": stem, "scale": 2}
    kwargs = dict(key=f"chart_{key}", config=config, width="stretch")
    if on_select:
        state = st.plotly_chart(fig, on_select=on_select, selection_mode=("points",), **kwargs)
    else:
        state = st.plotly_chart(fig, **kwargs)
    if pres:  # presenting, the statistics are one click away
        with st.expander("How we know"):
            st.caption(plain(caption))
    else:
        st.caption(plain(caption))
    if not pres:
        _chart_downloads(fig, stem, key, context)
    return state


def panel(drawn: panels.Drawn, *, main: bool = False, on_select: str | None = None, height: int | None = None):
    """Draw a story figure (`eduart_core.panels`) with the caption and export context it has everywhere;
    when the figure is clickable here, the caption also says what a click does. Returns the selection state."""
    caption = drawn.caption
    if on_select and drawn.panel.hint:
        caption += " " + drawn.panel.hint
    return chart(drawn.figure, drawn.panel.name, caption, story=drawn.story, main=main, context=drawn.context,
                 on_select=on_select, height=height)


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


def _chart_downloads(fig, stem: str, key: str, context: exports.ChartContext | None) -> None:
    if not exports.static_export_available():
        st.caption(exports.NO_BROWSER_MESSAGE)
        return
    row = st.container(horizontal=True)
    # the files are made when a button is clicked: copying a figure costs more than drawing it
    row.download_button("PNG", data=lambda: exports.figure_file(fig, context, "png"), file_name=f"{stem}.png",
                        mime="image/png", key=f"png_{key}", on_click="ignore", icon=":material/download:")
    row.download_button("SVG", data=lambda: exports.figure_file(fig, context, "svg"), file_name=f"{stem}.svg",
                        mime="image/svg+xml", key=f"svg_{key}", on_click="ignore", icon=":material/download:")


def table(frame: pd.DataFrame, key: str, caption: str, *, essential: bool = False, percent: tuple = (),
          column_config: dict | None = None, height: int | None = None, show: bool = True, view: str | None = None,
          **kwargs):
    """Show a table with CSV and LaTeX downloads; hidden in presentation mode unless essential.

    Headers, decimals and format names follow `eduart_core.columns` (the view is ``view``, else the
    table's ``key``, which names its view), the same rule as the report and the LaTeX download. ``show=False`` only offers
    the downloads (for a table the page draws itself). The files are built when a download is
    clicked, not on every rerun (a 5,000-item list costs a second)."""
    if presentation() and not essential:
        return None
    view = view or key
    shown_table = columns.table(frame, view=view, percent=percent)
    shown = shown_table.frame
    result = None
    if show:
        st.markdown(f"**{plain(caption)}**")
        config = {**display_config(shown_table), **(column_config or {})}
        result = st.dataframe(shown, hide_index=True, width="stretch", column_config=config,
                              key=f"table_{key}", height=height or "auto", **kwargs)
    if not presentation():
        stem = file_stem(key)
        latex_columns = tuple(c for c, spec in shown_table.columns.items() if spec.kind is columns.PERCENT)
        warning = profile_warning(current_selection())
        row = st.container(horizontal=True)
        row.download_button("CSV", data=lambda: exports.table_csv(shown, note=warning), file_name=f"{stem}.csv",
                            mime="text/csv", key=f"csv_{key}", on_click="ignore", icon=":material/download:")
        latex_caption = f"{caption}. {warning}" if warning else caption
        row.download_button("LaTeX", data=lambda: exports.table_latex(shown, caption=latex_caption, label=stem,
                                                                      percent_columns=latex_columns, view=view),
                            file_name=f"{stem}.tex", mime="application/x-tex", key=f"tex_{key}", on_click="ignore",
                            icon=":material/download:")
    return result


def display_config(shown: columns.Table) -> dict:
    """Streamlit's header and number format for each column of a displayed table (`columns.table`), for
    `table` and for a page that draws its own `st.dataframe` (a selectable list)."""
    config = {}
    for name, spec in shown.columns.items():
        numeric = spec.kind.numeric and pd.api.types.is_numeric_dtype(shown.frame[name]) \
            and not pd.api.types.is_bool_dtype(shown.frame[name])
        config[name] = (st.column_config.NumberColumn(spec.label, format=columns.printf(spec.kind)) if numeric
                        else st.column_config.Column(spec.label))
    return config


def pct(x: float | None, digits: int = 1) -> str:
    """A fraction as a percent string ('—' for missing)."""
    if x is None or pd.isna(x):
        return "—"
    return f"{100 * float(x):.{digits}f}%"


# ---------------------------------------------------------------- the app draws every page
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
    ``pages/8_review.py`` alone, without app.py's menu, sign-in gate or sidebar. A server leaves that
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
    st.switch_page("pages/1_inspector.py")


# ---------------------------------------------------------------- data shown as text

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


# ---------------------------------------------------------------- who is acting (team mode)
# Sign-in is Streamlit's own OIDC support (st.login / st.user / st.logout): it is on when the
# secrets Streamlit reads have an [auth] section. Then every page needs a signed-in person with
# a role, and the library's write functions get that person's Identity. Without [auth] the studio
# runs in single-machine mode: a typed name, every role, labelled "not signed in".

_EXTRA_SECRETS_READ = False


def _read_extra_secrets() -> None:
    """Let Streamlit read the secrets file ``$EDUART_SECRETS`` names too (once per process).

    Streamlit reads ``.streamlit/secrets.toml``; a deployment may keep its [auth] section
    elsewhere. The file is added to Streamlit's ``secrets.files`` before any sign-in is asked."""
    global _EXTRA_SECRETS_READ
    if _EXTRA_SECRETS_READ:
        return
    _EXTRA_SECRETS_READ = True
    import os

    extra = os.environ.get("EDUART_SECRETS")
    if not extra:
        return
    from streamlit import config as st_config
    from streamlit.runtime.secrets import secrets_singleton

    files = list(st_config.get_option("secrets.files") or [])
    path = str(Path(extra).expanduser())
    if path not in files:
        st_config.set_option("secrets.files", [*files, path])
        secrets_singleton._reset()  # read again, with the added file


def signin_enabled() -> bool:
    """Whether the studio runs in team mode (an [auth] section in the secrets Streamlit reads)."""
    _read_extra_secrets()
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all, or an unreadable one: single-machine mode
        return False


def _stored_roles(subject: str) -> frozenset[str]:
    """The roles table's grants for ``subject``, read once per store change."""
    from eduart_core.team.roles import stored_roles

    path = store_path()
    try:
        if not views.open_store(path).exists():  # a file or a PostgreSQL database
            return frozenset()
        key = (subject, path, _store_version(path))
    except StoreError as exc:
        logger.warning("roles table not read: %s", exc)
        return frozenset()
    memo = st.session_state.get("_team_roles")
    if memo is not None and memo[0] == key:
        return memo[1]
    try:
        roles = stored_roles(store(lock_timeout_s=3.0), subject)
    except StoreError as exc:
        logger.warning("roles table not read: %s", exc)
        roles = frozenset()
    st.session_state["_team_roles"] = (key, roles)
    return roles


def identity():
    """The acting person: the signed-in identity (team mode) or the typed name (single-machine
    mode); None while nobody is signed in or named."""
    from eduart_core.team import from_claims, local

    if signin_enabled():
        user = st.user
        if not user.get("is_logged_in"):
            return None
        claims = user.to_dict()
        try:
            return from_claims(claims, _stored_roles(str(claims.get("sub") or "")))
        except UserError:
            return None
    name = (st.session_state.get("reviewer") or "").strip()
    return local(name) if name else None


def may_open(page_key: str | None) -> bool:
    """Whether the acting person's roles reach a page (always in single-machine mode)."""
    from eduart_core.team import may_open as allowed

    if not page_key or not signin_enabled():
        return True
    who = identity()
    return who is not None and allowed(who.roles, page_key)


def gate() -> bool:
    """The sign-in gate every page passes (app.py calls it before drawing a page).

    Team mode: a person not signed in sees a sign-in button; a signed-in person without any role
    sees one line. Returns whether the page may be drawn."""
    if not signin_enabled():
        return True
    user = st.user
    if not user.get("is_logged_in"):
        st.title("EduArt Studio")
        st.markdown("Sign in to use the studio: every decision, override and launch is recorded with your name.")
        st.button("Sign in", key="team_sign_in", type="primary", on_click=st.login, icon=":material/login:")
        return False
    who = identity()
    if who is None or not who.roles:
        name = plain(user.get("name") or user.get("email") or user.get("sub") or "you")
        st.info(f"You are signed in as {name} but hold no role in this studio: ask an admin to grant you one "
                f"(`python -m eduart_core roles grant {plain(user.get('sub') or 'SUBJECT')} reviewer`).")
        st.button("Sign out", key="team_sign_out_norole", on_click=st.logout)
        return False
    return True


def who_line() -> None:
    """Who is acting, at the top of the sidebar: the signed-in person and their roles, with a
    sign-out button, or the single-machine label."""
    from eduart_core.team import NOT_SIGNED_IN

    with st.sidebar:
        if signin_enabled():
            who = identity()
            if who is None:
                return
            line = st.container(horizontal=True, vertical_alignment="center")
            line.markdown(f"Signed in as **{plain(who.name)}**")
            line.button("Sign out", key="team_sign_out", on_click=st.logout, type="tertiary")
            st.caption(plain(f"{who.email or who.subject} · roles: {', '.join(sorted(who.roles))}"))
        else:
            st.caption(plain(NOT_SIGNED_IN.capitalize()) + ": names are typed, not verified.")


_IMPORT_NOTICES: dict[tuple[str, int], list[str]] = {}


def import_notices() -> None:
    """One line per import left unfinished (`importers.unfinished`): its runs hold part of their
    answers, so every page says so until the import is run again. Read once per data version."""
    from eduart_core.importers.unfinished import page_notices

    path = store_path()
    try:
        key = (path, _store_version(path))
        if key not in _IMPORT_NOTICES:
            _IMPORT_NOTICES.clear()
            _IMPORT_NOTICES[key] = page_notices(views.open_store(path))
    except (UserError, StoreError) as exc:  # the page itself says what is wrong with the store
        logger.info("import notices not read: %s", exc)
        return
    for line in _IMPORT_NOTICES[key]:
        st.warning(plain(line), icon=":material/hourglass_top:")


_EXPOSURE_CHECKED = False


def warn_if_exposed() -> None:
    """Once per server process: one line on the server console when the studio listens beyond
    this machine without sign-in."""
    global _EXPOSURE_CHECKED
    if _EXPOSURE_CHECKED:
        return
    _EXPOSURE_CHECKED = True
    import sys

    from eduart_core.team.signin import exposure_warning

    warning = exposure_warning(st.get_option("server.address"), signin_enabled())
    if warning:
        print(warning, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- editors and fresh reads

def draw_control(container, control, key: str, row_label: str | None = None) -> None:
    """One primitive control of an `extraction.editors.Editor` (labels are data: shown as text)."""
    label = ("≠ " if control.marked else "") + plain(control.label)
    if row_label:
        label = f"{plain(row_label)}: {label}"
    if control.kind == "text":
        container.text_input(label, value=control.value, key=key)
    elif control.kind == "textarea":
        container.text_area(label, value=control.value, key=key, height=120)
    elif control.kind in ("radio", "select"):
        options = list(control.options)
        index = options.index(control.value) if control.value in options else None
        widget = container.radio if control.kind == "radio" else container.selectbox
        widget(label, options, index=index, key=key)
    elif control.kind == "checkbox":
        container.checkbox(label, value=bool(control.value), key=key)
    elif control.kind == "toggle":
        container.toggle(label, value=bool(control.value), key=key)
    elif control.kind == "number":
        container.number_input(label, value=control.value, key=key, format="%g")


def draw_editor(editor, prefix: str) -> None:
    """Every control of an editor, rows side by side; widget keys are ``prefix + control.key``."""
    groups: dict[str | None, list] = {}
    for control in editor.controls:
        groups.setdefault(control.row, []).append(control)
    for row_label, controls in groups.items():
        if row_label is None:
            for control in controls:
                draw_control(st, control, prefix + control.key)
        else:
            cols = st.columns([1] + [3] * (len(controls) - 1) if len(controls) > 1 else [1])
            for col, control in zip(cols, controls):
                draw_control(col, control, prefix + control.key, row_label if control is controls[0] else None)


def editor_values(editor, prefix: str) -> dict:
    """The values the person set in an editor drawn with `draw_editor` (by control key)."""
    return {c.key: st.session_state[prefix + c.key] for c in editor.controls if prefix + c.key in st.session_state}


def data_changed() -> None:
    """Forget the store's cached data version after a write, so the next read sees the write."""
    _versions.pop(store_path(), None)


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

"""Charts on a page: a figure with its caption, its export context and its downloads; clicked points.

Why one function: in presentation mode only the story chart is drawn, with its headline; elsewhere every
chart has a caption and PNG/SVG downloads, and text from data is drawn as typed (`exports.inert_figure`)."""
from __future__ import annotations

import streamlit as st

from eduart_core import exports, panels
from eduart_core.selection import Selection
from eduart_core.text import plain
from pages.ui.downloads import chart_downloads, file_stem
from pages.ui.header import data_label, profile_warning
from pages.ui.query import presentation
from pages.ui.store_handle import flags


def context(sel: Selection, title: str, statistic: str, *, test: str | None = None,
            n: str | None = None) -> exports.ChartContext:
    """The context an exported chart carries, with the selection's dataset, profile and condition."""
    return exports.ChartContext(title=title, statistic=statistic, test=test, n=n, dataset=sel.dataset,
                                profile="published scores" if flags(sel).aggregate_only else sel.profile,
                                condition=sel.condition, data_label=data_label(sel),
                                warning=profile_warning(sel))


#: Plotly toolbar buttons that save an image (no title, no n): removed where the titled exports work.
CAMERA_BUTTONS = ("toImage",)


def _inert(text: str) -> str:
    """Text inside an HTML block of our own (the presentation headline), escaped so it stays text.

    Line breaks become spaces: a blank line would end the HTML block and let markdown parse the rest.
    """
    import html

    return " ".join(html.escape(str(text)).split())


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
        chart_downloads(fig, stem, key, context)
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

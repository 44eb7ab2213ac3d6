"""Downloads for every chart and table: PNG/SVG through kaleido, CSV and LaTeX for tables.

An exported file travels without the page around it, so it carries its context: a chart image
has the title and a subtitle naming the statistic, the test, n, the scoring profile, the
condition and whether the data are simulated or published (`ChartContext`); a LaTeX table has
readable headers, percentages with one decimal, a caption and a label; every file name carries
the dataset, the profile and the condition (`file_stem`). Numbers are rounded by
`eduart_core.rounding`, exactly as on screen.

kaleido 1.x drives a system Chromium (Debian's ``/usr/bin/chromium`` here). When no browser is
installed the static export cannot work; ``static_export_available`` says so once and the page
falls back to plotly's own client-side PNG button (the camera icon in the chart toolbar).

Text in a download is data, never markup or a formula: ``inert_figure`` escapes the strings in a
figure's data (model names, item ids, labels: plotly would otherwise render ``<b>``, ``<a href>``
and friends in them) before PNG/SVG export and in the HTML report; CSV cells that a spreadsheet
would run as a formula are prefixed with ``'`` (`eduart_core.csvsafe`, shared by every CSV writer);
LaTeX escapes every special character.
"""
from __future__ import annotations

import html
import logging
import os
import re
import shutil
import threading
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from . import columns, csvsafe
from .rounding import percent
from .text import inert_html

logger = logging.getLogger(__name__)

NO_BROWSER_MESSAGE = ("Server-side PNG/SVG export needs a Chromium browser (apt-get install chromium); "
                      "use the camera icon in the chart toolbar to save a PNG instead.")
_LOCK = threading.Lock()
_SERVER_STARTED = False


def browser_path() -> str | None:
    """The Chromium kaleido will use, or None."""
    for candidate in (os.environ.get("BROWSER_PATH"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def static_export_available() -> bool:
    """True when kaleido is importable and a browser exists."""
    try:
        import kaleido  # noqa: F401
    except ImportError:
        return False
    return browser_path() is not None


def _ensure_server() -> None:
    """Keep one kaleido browser alive: the first export costs ~2 s, later ones ~0.1 s."""
    global _SERVER_STARTED
    if _SERVER_STARTED:
        return
    path = browser_path()
    if path and not os.environ.get("BROWSER_PATH"):
        os.environ["BROWSER_PATH"] = path
    try:
        import kaleido

        start = getattr(kaleido, "start_sync_server", None)
        if start:
            start(silence_warnings=True)
    except Exception as exc:  # kaleido's own errors: exports still work, one browser per figure
        logger.warning("kaleido could not keep a browser running (%s); each export starts its own", exc)
    _SERVER_STARTED = True


def figure_image(fig: go.Figure, fmt: str = "png", *, width: int = 1200, height: int | None = None,
                 scale: float = 2.0) -> bytes | None:
    """PNG or SVG bytes of a figure, or None when no browser is available (see NO_BROWSER_MESSAGE)."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"unsupported image format {fmt!r}: use png or svg")
    if not static_export_available():
        return None
    fig = inert_figure(fig)
    with _LOCK:
        _ensure_server()
        try:
            return fig.to_image(format=fmt, width=width, height=height or fig.layout.height or 500,
                                scale=scale if fmt == "png" else 1)
        except Exception as exc:  # kaleido/browser failures: the page falls back to plotly's camera button
            logger.warning("static %s export failed: %s", fmt, exc)
            return None


@lru_cache(maxsize=64)
def image_from_json(fig_json: str, fmt: str) -> bytes | None:
    """PNG/SVG bytes of a figure given as plotly JSON, memoised so reruns of a page cost nothing."""
    import plotly.io as pio

    return figure_image(pio.from_json(fig_json), fmt)


def figure_file(fig: go.Figure, context: ChartContext | None, fmt: str) -> bytes | None:
    """The PNG/SVG file of a chart with its context (built when a download is asked for)."""
    return image_from_json(with_context(fig, context).to_json(), fmt)


def figure_image_cached(fig: go.Figure, fmt: str = "png") -> bytes | None:
    """Same as figure_image, memoised on the figure's JSON so reruns of a page cost nothing."""
    return image_from_json(fig.to_json(), fmt)


def display_frame(frame: pd.DataFrame, percent: tuple = (), view: str | None = None) -> pd.DataFrame:
    """The table as shown and downloaded: the view's column names, fractions as percentages and every
    number rounded by its kind, format ids as the formats' names (`eduart_core.columns`, the one rule)."""
    return columns.table(frame, view=view, percent=percent).frame


# Trace properties that carry data (names, categories, labels, hover values); formatting strings
# built by our chart code (hovertemplate, texttemplate, titles) are left as they are.
_DATA_KEYS = ("x", "y", "z", "text", "hovertext", "customdata", "name", "labels", "ids", "parents",
              "legendgroup", "meta")
_AXIS_KEYS = ("ticktext", "categoryarray")


def _inert(value):
    if isinstance(value, str):
        return inert_html(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "OUS":
            return np.array([_inert(v) for v in value.ravel().tolist()], dtype=object).reshape(value.shape)
        return value
    if isinstance(value, (list, tuple)):
        return [_inert(v) for v in value]
    return value


def inert_figure(fig: go.Figure) -> go.Figure:
    """A copy of ``fig`` whose data strings are HTML-escaped, so plotly shows them as typed.

    Plotly renders a subset of HTML in every label (``<b>``, ``<i>``, ``<a href>``, ``<span
    style>``); a model or folder name holding such markup must appear literally, and plotly turns
    the escaped entities back into the characters for display.
    """
    spec = fig.to_plotly_json()
    for trace in spec.get("data", []):
        for key in _DATA_KEYS:
            if key in trace:
                trace[key] = _inert(trace[key])
    layout = spec.get("layout", {})
    for name, axis in list(layout.items()):
        if (name.startswith(("xaxis", "yaxis"))) and isinstance(axis, dict):
            for key in _AXIS_KEYS:
                if key in axis:
                    axis[key] = _inert(axis[key])
    # the spec comes from a validated figure and only its strings were escaped: validating it again
    # costs most of the copy on a large chart (0.5 s for a 5,000-item failure matrix)
    return go.Figure(spec, _validate=False)


def _percent_column(values: pd.Series):
    return percent(pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=float("nan")))


# ---------------------------------------------------------------- context of an exported chart

@dataclass(frozen=True)
class ChartContext:
    """What a chart image must say about itself once it leaves the page."""

    title: str
    statistic: str
    test: str | None = None
    n: str | None = None
    dataset: str | None = None
    profile: str | None = None
    condition: str | None = None
    #: "simulated respondents", "published aggregates" or None for real item-level data.
    data_label: str | None = None
    #: A warning the numbers must carry (a judge profile whose judge has not passed calibration).
    warning: str | None = None

    def subtitle(self) -> str:
        """One line: statistic · test · n · profile · condition · data label · warning."""
        parts = [self.statistic]
        if self.test:
            parts.append(self.test)
        if self.n:
            parts.append(self.n)
        if self.dataset:
            parts.append(f"dataset {self.dataset}")
        if self.profile:
            parts.append(f"profile {self.profile}")
        if self.condition:
            parts.append(f"condition {self.condition}")
        if self.data_label:
            parts.append(self.data_label.upper())
        if self.warning:
            parts.append(f"WARNING: {self.warning}")
        return " · ".join(p for p in parts if p)


def with_context(fig: go.Figure, context: ChartContext | None) -> go.Figure:
    """A copy of ``fig`` with the context as title and subtitle (for PNG/SVG files).

    Text is escaped: plotly reads a few HTML tags in titles, and a model or dataset name is data.
    """
    out = go.Figure(fig)
    if context is None:
        return out
    subtitle = _wrap(context.subtitle(), 130)
    lines = subtitle.count("<br>") + 1
    old_top = out.layout.margin.t or 0
    top = 70 + 17 * lines + old_top
    out.update_layout(
        title=dict(text=f"<b>{html.escape(context.title)}</b>", x=0.01, xanchor="left",
                   yref="container", y=1.0, yanchor="top", pad=dict(t=14),
                   subtitle=dict(text=subtitle, font=dict(size=12))),
        margin=dict(t=top),
    )
    if out.layout.height:
        out.update_layout(height=out.layout.height + top - old_top)
    legend = out.layout.legend
    if legend is not None and legend.orientation == "h" and (legend.y or 0) > 1:
        out.update_layout(legend=dict(y=1.0, yanchor="bottom"))
    return out


def _wrap(text: str, width: int) -> str:
    """Escaped text broken into lines of at most ``width`` characters (at the separators)."""
    words, lines, line = text.split(" · "), [], ""
    for word in words:
        candidate = f"{line} · {word}" if line else word
        if len(candidate) > width and line:
            lines.append(line)
            line = word
        else:
            line = candidate
    lines.append(line)
    return "<br>".join(html.escape(x) for x in lines)


def file_stem(key: str, dataset: str | None = None, profile: str | None = None,
              condition: str | None = None) -> str:
    """A file name (without extension) that says what it holds: ``<key>_<dataset>_<profile>_<condition>``."""
    parts = [key, dataset, profile, condition]
    return "_".join(re.sub(r"[^A-Za-z0-9.-]+", "-", str(p)).strip("-") for p in parts if p)


# ---------------------------------------------------------------- tables

def table_csv(frame: pd.DataFrame, note: str | None = None) -> bytes:
    """UTF-8 CSV of a table, without the index; text cells never start a formula (`csvsafe`). A
    ``note`` (a warning the numbers must carry) goes first, as a ``# ...`` line."""
    head = f"# {csvsafe.inert_cell(' '.join(str(note).split()))}\r\n" if note else ""
    return (head + csvsafe.to_csv(frame)).encode("utf-8")


def column_label(name: str, *, is_percent: bool = False, view: str | None = None) -> str:
    """The header a reader sees for a column name (``(%)`` marks percentages; `columns.column`)."""
    return columns.column(name, view, percent=is_percent).label


_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                   "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                   "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", "\n": " ", "\r": " "}
_LATEX_TABLE = str.maketrans(_LATEX_SPECIALS)


def _latex_escape(text: str) -> str:
    return str(text).translate(_LATEX_TABLE)


def table_latex(frame: pd.DataFrame, caption: str | None = None, *, label: str | None = None,
                percent_columns: tuple = (), view: str | None = None) -> bytes:
    """A booktabs LaTeX table of a displayed frame (`display_frame`: percentages already x 100): the
    headers and decimals of `eduart_core.columns`, a caption and a ``tab:`` label."""
    cols = list(frame.columns)
    shown = columns.Table(frame, {c: columns.column(c, view, dtype=frame[c].dtype, percent=c in percent_columns)
                                 for c in cols})
    align = "".join("r" if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
                    else "l" for c in cols)
    lines = [r"\begin{table}[ht]", r"\centering"]
    if caption:
        lines.append(r"\caption{" + _latex_escape(caption) + "}")
    if label:
        lines.append(r"\label{tab:" + re.sub(r"[^A-Za-z0-9:._-]+", "-", label) + "}")
    lines += [r"\begin{tabular}{" + align + "}", r"\toprule",
              " & ".join(_latex_escape(shown.columns[c].label) for c in cols) + r" \\", r"\midrule"]
    for row in frame.itertuples(index=False):
        lines.append(" & ".join("" if (text := shown.cell(c, v)) == "—" else _latex_escape(text)
                                for c, v in zip(cols, row)) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines).encode("utf-8")

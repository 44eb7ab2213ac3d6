"""Downloads for every chart and table: PNG/SVG through kaleido, CSV and LaTeX for tables.

kaleido 1.x drives a system Chromium (Debian's ``/usr/bin/chromium`` here). When no browser is
installed the static export cannot work; ``static_export_available`` says so once and the page
falls back to plotly's own client-side PNG button (the camera icon in the chart toolbar).

Text in a download is data, never markup or a formula: ``inert_figure`` escapes the strings in a
figure's data (model names, item ids, labels: plotly would otherwise render ``<b>``, ``<a href>``
and friends in them) before PNG/SVG export and in the HTML report; CSV cells that a spreadsheet
would run as a formula (``=``, ``+``, ``-``, ``@`` first) are prefixed with ``'``; LaTeX escapes
every special character.
"""
from __future__ import annotations

import logging
import os
import shutil
import threading
from functools import lru_cache

import numpy as np
import pandas as pd
import plotly.graph_objects as go

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


def figure_image_cached(fig: go.Figure, fmt: str = "png") -> bytes | None:
    """Same as figure_image, memoised on the figure's JSON so reruns of a page cost nothing."""
    return image_from_json(fig.to_json(), fmt)


def display_frame(frame: pd.DataFrame, percent: tuple = (), digits: int = 3) -> pd.DataFrame:
    """The table as shown and downloaded: ``percent`` columns x 100 to one decimal, other floats rounded."""
    shown = frame.copy()
    for col in shown.columns:
        if col in percent:
            shown[col] = (shown[col] * 100).round(1)
        elif pd.api.types.is_float_dtype(shown[col]):
            shown[col] = shown[col].round(digits)
    return shown


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
    return go.Figure(spec)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_cell(value):
    """A text cell a spreadsheet would run as a formula gets a leading apostrophe."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        try:
            float(value)  # "-0.5" is a number, not a formula
        except ValueError:
            return "'" + value
    return value


def table_csv(frame: pd.DataFrame) -> bytes:
    """UTF-8 CSV of a table, without the index; text cells never start a formula."""
    shown = frame.copy()
    shown.columns = [_csv_cell(str(c)) for c in shown.columns]
    for column in shown.columns:
        if shown[column].dtype == object or pd.api.types.is_string_dtype(shown[column]):
            shown[column] = shown[column].map(_csv_cell)
    return shown.to_csv(index=False).encode("utf-8")


def _latex_escape(text: str) -> str:
    repl = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
            "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", "\n": " ", "\r": " "}
    return "".join(repl.get(ch, ch) for ch in str(text))


def table_latex(frame: pd.DataFrame, caption: str | None = None, digits: int = 3) -> bytes:
    """A booktabs LaTeX tabular of a table (no jinja2 needed), numbers rounded to ``digits``."""
    cols = list(frame.columns)
    align = "".join("r" if pd.api.types.is_numeric_dtype(frame[c]) else "l" for c in cols)
    lines = [r"\begin{table}[ht]", r"\centering"]
    if caption:
        lines.append(r"\caption{" + _latex_escape(caption) + "}")
    lines += [r"\begin{tabular}{" + align + "}", r"\toprule",
              " & ".join(_latex_escape(c) for c in cols) + r" \\", r"\midrule"]
    for row in frame.itertuples(index=False):
        cells = []
        for v in row:
            if isinstance(v, float):
                cells.append("" if pd.isna(v) else f"{v:.{digits}f}")
            else:
                cells.append(_latex_escape("" if v is None else v))
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines).encode("utf-8")

"""Tables on a page: headers, decimals and format names by `eduart_core.columns`, with CSV and LaTeX downloads."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from eduart_core import columns
from eduart_core.text import plain
from pages.ui.downloads import table_downloads
from pages.ui.query import presentation


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
        table_downloads(shown_table, key, caption, view)
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

"""The download buttons under every chart and table, and their file names.

Why: an exported figure or table carries its title, the selection's dataset, profile and condition, and
the judge warning; the files are made when a button is clicked, never on every rerun."""
from __future__ import annotations

import streamlit as st

from eduart_core import columns, exports
from eduart_core.selection import Selection
from pages.ui.header import profile_warning
from pages.ui.sidebar import current_selection
from pages.ui.store_handle import flags


def file_stem(key: str, sel: Selection | None = None) -> str:
    """Download file name: the element key plus the selection's dataset, profile and condition."""
    sel = sel or current_selection()
    profile = "published" if flags(sel).aggregate_only else sel.profile
    return exports.file_stem(key, sel.dataset, profile, sel.condition)


def chart_downloads(fig, stem: str, key: str, context: exports.ChartContext | None) -> None:
    """The PNG and SVG buttons under a chart (titled by ``context``), or the line saying why there are none."""
    if not exports.static_export_available():
        st.caption(exports.NO_BROWSER_MESSAGE)
        return
    row = st.container(horizontal=True)
    # the files are made when a button is clicked: copying a figure costs more than drawing it
    row.download_button("PNG", data=lambda: exports.figure_file(fig, context, "png"), file_name=f"{stem}.png",
                        mime="image/png", key=f"png_{key}", on_click="ignore", icon=":material/download:")
    row.download_button("SVG", data=lambda: exports.figure_file(fig, context, "svg"), file_name=f"{stem}.svg",
                        mime="image/svg+xml", key=f"svg_{key}", on_click="ignore", icon=":material/download:")


def table_downloads(shown_table: columns.Table, key: str, caption: str, view: str) -> None:
    """The CSV and LaTeX buttons of a shown table (`tables.table`), with the judge warning when there is one."""
    shown, stem = shown_table.frame, file_stem(key)
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

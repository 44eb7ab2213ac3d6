"""The failure explorer's matrix: items (rows) x model and condition (columns), one mark per answer.

Why its own module: the other figures are in `charts`; this one belongs to the inspector only and
grows with it. Same rules: takes an analysis frame (`analysis.failure_matrix`), no Streamlit, no
statistics. Each state has a colour AND a symbol (right = green circle, partial = amber diamond,
wrong = red cross, no answer = grey ring), so the matrix reads in greyscale and for colour-blind
readers; the score is in the hover; each point carries (item, model, condition) for a click.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..analysis.explorer import CELL_STATES, MISSING, PARTIAL, RIGHT, WRONG
from ..vocab import CONDITIONS
from .results import FONT, TEMPLATE, named_axes

#: Marker of each cell state: (plotly symbol, colour, symbol shown in the legend).
STATE_MARKS: dict[str, tuple[str, str, str]] = {
    RIGHT: ("circle", "#2b8a3e", "●"),
    PARTIAL: ("diamond", "#e67700", "◆"),
    WRONG: ("x", "#c92a2a", "✕"),
    MISSING: ("circle-open", "#adb5bd", "○"),
}
ROW_PX = 22


def column_label(model: str, condition: str, baseline: bool = False) -> str:
    """The matrix column of one model in one condition (a baseline says so)."""
    return f"{model}{' (baseline)' if baseline else ''} · {condition}"


def figure_failure_matrix(matrix: pd.DataFrame, items: Sequence[str], models: Sequence[str], *,
                          conditions: Sequence[str] = CONDITIONS, texts: Mapping[str, str] | None = None,
                          profile: str = "", baselines: Sequence[str] = (), title: str | None = 'Which model gets which item right') -> go.Figure:
    """One point per item x (model, condition); missing answers drawn as grey rings.

    ``items`` fixes the rows (top to bottom), ``models`` x ``conditions`` the columns (``baselines``
    among them are labelled as such); ``texts`` gives each item a short hover text. customdata per
    point: [item_id, model, condition, score].
    """
    baseline_set = set(baselines)
    texts = texts or {}
    columns = [(m, c) for m in models for c in conditions]
    grid = pd.DataFrame([(i, m, c) for i in items for (m, c) in columns], columns=["item_id", "model", "condition"])
    found = matrix[["item_id", "model", "condition", "score", "state"]] if len(matrix) else None
    if found is not None:
        grid = grid.merge(found, on=["item_id", "model", "condition"], how="left")
    else:
        grid["score"], grid["state"] = np.nan, MISSING
    grid["state"] = grid["state"].fillna(MISSING)
    grid["column"] = [column_label(m, c, m in baseline_set) for m, c in zip(grid["model"], grid["condition"])]
    grid["hover"] = [str(texts.get(i, ""))[:90] for i in grid["item_id"]]
    fig = go.Figure()
    scored = f" ({profile})" if profile else ""
    for state, (symbol, colour, _glyph) in STATE_MARKS.items():
        sub = grid[grid["state"] == state]
        if sub.empty:
            continue
        score_line = ("no answer recorded" if state == MISSING else
                      f"score %{{customdata[3]:.2f}}{scored}: {state}")
        fig.add_scatter(  # arrays, not lists: plotly validates a list element by element (5,000 points a page)
            x=sub["column"].to_numpy(dtype=object), y=sub["item_id"].to_numpy(dtype=object), mode="markers",
            name=CELL_STATES[state],
            marker=dict(symbol=symbol, color=colour, size=13 if state != MISSING else 9,
                        line=dict(width=2 if state in (WRONG, MISSING) else 0, color=colour)),
            selected=dict(marker=dict(size=17)), unselected=dict(marker=dict(opacity=0.7)),
            customdata=np.array(sub[["item_id", "model", "condition", "score"]].astype(object), dtype=object),
            text=sub["hover"].to_numpy(dtype=object),
            hovertemplate="item %{customdata[0]}: %{text}<br>%{customdata[1]}, %{customdata[2]}<br>"
                          + score_line + "<extra></extra>")
    fig.update_yaxes(categoryorder="array", categoryarray=list(items), autorange="reversed", title=None,
                     type="category", showgrid=True, gridcolor="#f1f3f5")
    fig.update_xaxes(categoryorder="array", categoryarray=[column_label(m, c, m in baseline_set) for m, c in columns],
                     side="top",
                     tickangle=-40, title=None, type="category", showgrid=True, gridcolor="#f1f3f5")
    named_axes(fig, x='Model and condition', y='Item')
    fig.update_layout(title=dict(text=title) if title else None, font=FONT, template=TEMPLATE,
                      height=max(260, ROW_PX * len(items) + 60 + 7 * max((len(c) for c, _ in columns), default=10)),
                      margin=dict(l=10, r=10, t=60 if title else 20, b=10), clickmode="event+select", dragmode=False,
                      legend=dict(orientation="h", yanchor="top", y=-0.01, xanchor="left", x=0))
    return fig

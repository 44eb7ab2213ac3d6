"""The adaptive trajectory chart: ability and its 95% interval after each answer, the items chosen, the stop.

Why two rows: the top row is what the run learned (the ability settling, the interval narrowing to the
target), the bottom row what it asked (each item's difficulty on the same logit scale, coloured by
format), so a reader sees the selection following the ability. The frame is `views.adaptive_trajectory`.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..text import inert_html
from ..vocab import format_label
from .results import _layout, named_axes


def figure_adaptive_trajectory(frame: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Ability (EAP) with its 95% interval per step (top) and the chosen items' difficulty by format (bottom)."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.62, 0.38], vertical_spacing=0.06)
    steps = frame["step"].astype(int)
    fig.add_trace(go.Scatter(x=pd.concat([steps, steps[::-1]]), y=pd.concat([frame["ci_high"], frame["ci_low"][::-1]]),
                             fill="toself", line=dict(width=0), fillcolor="rgba(31,119,180,0.18)",
                             name="95% interval", hoverinfo="skip"), row=1, col=1)
    fig.add_trace(go.Scatter(x=steps, y=frame["ability"], mode="lines+markers", name="ability (EAP)",
                             line=dict(color="rgb(31,119,180)"),
                             customdata=[[f"{se:.2f}", inert_html(i)] for se, i in zip(frame["ability_se"], frame["item_id"])],
                             hovertemplate="step %{x}: ability %{y:.2f}, SE %{customdata[0]}<br>after %{customdata[1]}"
                                           "<extra></extra>"), row=1, col=1)
    for fmt, part in frame.groupby("type", sort=True):
        fig.add_trace(go.Scatter(x=part["step"], y=part["difficulty"], mode="markers", name=inert_html(format_label(str(fmt))),
                                 text=[inert_html(i) for i in part["item_id"]],
                                 hovertemplate="step %{x}: %{text}, difficulty %{y:.2f}<extra></extra>"),
                      row=2, col=1)
    if len(frame):
        last = int(steps.max())
        reason = {"target_se": "target SE reached", "max_items": "item cap", "bank_exhausted": "no item left"}.get(
            frame.attrs.get("stop_reason"), "not finished")
        fig.add_vline(x=last, line_dash="dot", line_color="gray")
        fig.add_annotation(x=last, y=1.0, yref="paper", text=f"stop: {reason}", showarrow=False, xanchor="right")
    fig.update_yaxes(title_text="ability (logit, bank scale)", row=1, col=1)
    fig.update_yaxes(title_text="item difficulty (logit)", row=2, col=1)
    fig.update_xaxes(title_text="items answered", row=2, col=1)
    named_axes(fig, x="items answered")
    return _layout(fig, title, height=520)


__all__ = ["figure_adaptive_trajectory"]

"""Figures of the judge calibration: agreement with the graders, and severities on one logit scale.

Each draws the frame of the view of the same name (`judge_calibration`, `judge_severity`), so the
page, the report and ``show`` see the same numbers. The gate's thresholds are drawn from the rows
(a line at ``min_alpha``, a band of ±``max_severity``), never from defaults. Labels from data are
escaped (plotly reads some HTML in labels). No Streamlit, no statistics.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..text import inert_html
from ..vocab import HUMAN_RATER
from .results import FONT, TEMPLATE, named_axes

PASS_COLOUR = "#009E73"
FAIL_COLOUR = "#D55E00"
HUMAN_COLOUR = "#0072B2"
GATE_COLOUR = "#555555"


def _layout(fig: go.Figure, title: str | None, height: int) -> go.Figure:
    fig.update_layout(title=dict(text=title) if title else None, font=FONT, template=TEMPLATE, height=height,
                      margin=dict(l=10, r=10, t=60 if title else 30, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1))
    return fig


def _errors(frame: pd.DataFrame, value: str, low: str, high: str) -> dict:
    v = frame[value].astype(float)
    return dict(type="data", symmetric=False, array=(frame[high].astype(float) - v).fillna(0).to_numpy(),
                arrayminus=(v - frame[low].astype(float)).fillna(0).to_numpy(), color="#777")


def figure_judge_calibration(calibration: pd.DataFrame, *, title: str | None = 'Model judges: agreement with the graders') -> go.Figure:
    """Judge vs adjudicated human alpha (95% interval) per judge, the graders' own alpha beside it,
    and the gate's line; green where the judge passes, orange where it does not."""
    frame = calibration.sort_values("judge", ascending=False).reset_index(drop=True)
    labels = [inert_html(j) + ("" if c in (None, "all") else f" · {inert_html(c)}")
              for j, c in zip(frame["judge"], frame.get("criterion", pd.Series([None] * len(frame))))]
    colours = [PASS_COLOUR if p else FAIL_COLOUR for p in frame["passes"]]
    reasons = [inert_html(r) for r in frame["reason"].fillna("")]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=frame["human_alpha"], y=labels, mode="markers", name="graders with each other",
                             marker=dict(symbol="diamond-open", size=10, color=HUMAN_COLOUR),
                             error_x=_errors(frame, "human_alpha", "human_alpha_low", "human_alpha_high"),
                             hovertemplate="%{y}<br>graders' alpha %{x:.2f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=frame["alpha"], y=labels, mode="markers", name="judge vs adjudicated graders",
                             marker=dict(size=11, color=colours), text=reasons,
                             error_x=_errors(frame, "alpha", "alpha_low", "alpha_high"),
                             hovertemplate="%{y}<br>judge alpha %{x:.2f}<br>%{text}<extra></extra>"))
    gate = frame["min_alpha"].dropna()
    if len(gate):
        fig.add_vline(x=float(gate.iloc[0]), line=dict(color=GATE_COLOUR, dash="dash"),
                      annotation_text=f"gate {float(gate.iloc[0]):.2f}", annotation_position="top")
    fig.update_xaxes(title="Krippendorff's alpha (ordinal), 95% bootstrap interval", range=[min(0.0, float(np.nanmin(
        frame[["alpha", "alpha_low", "human_alpha_low"]].to_numpy(dtype=float), initial=0.0))) - 0.02, 1.02])
    return _layout(named_axes(fig, y='Judge'), title, max(300, 48 * len(frame) + 140))


def figure_judge_severity(severity: pd.DataFrame, *, max_severity: float | None = None,
                          title: str | None = 'Severity of graders and judges') -> go.Figure:
    """Severity of every grader and judge (logit, relative to the graders' mean, 95% interval), with
    the gate's band of ±``max_severity``; judges coloured by whether their whole interval falls inside it
    (the gate's rule)."""
    frame = severity.dropna(subset=["severity"]).sort_values(["kind", "rater"], ascending=False).reset_index(drop=True)
    labels = [inert_html(r) for r in frame["rater"]]
    inside = [max_severity is None or (-max_severity <= lo and hi <= max_severity)
              for lo, hi in zip(frame["severity_low"], frame["severity_high"])]
    colours = [HUMAN_COLOUR if k == HUMAN_RATER else (PASS_COLOUR if ok else FAIL_COLOUR)
               for k, ok in zip(frame["kind"], inside)]
    fig = go.Figure(go.Scatter(x=frame["severity"], y=labels, mode="markers", marker=dict(size=11, color=colours),
                               text=[str(k) for k in frame["kind"]],
                               error_x=_errors(frame, "severity", "severity_low", "severity_high"),
                               hovertemplate="%{y} (%{text})<br>severity %{x:+.2f} logit<extra></extra>",
                               showlegend=False))
    if max_severity is not None:
        fig.add_vrect(x0=-max_severity, x1=max_severity, fillcolor="#CCCCCC", opacity=0.3, line_width=0,
                      annotation_text=f"±{max_severity:.2f}", annotation_position="top left")
    fig.add_vline(x=0, line=dict(color=GATE_COLOUR, width=1))
    fig.update_xaxes(title="severity, logit (many-facet Rasch; positive: marks lower than the graders' mean)")
    return _layout(named_axes(fig, y='Grader or judge'), title, max(300, 36 * len(frame) + 140))


def figure_judge_corrected(corrected: pd.DataFrame, *,
                           title: str | None = 'Judge only and judge-corrected scores') -> go.Figure:
    """Per judge and model (macro rows of `judge_corrected`): the judge-only mean and the corrected
    mean, each with its 95% interval, in percent."""
    frame = corrected[corrected["format"] == "macro"].sort_values(["judge", "model"], ascending=False)
    labels = [f"{inert_html(m)} · {inert_html(j)}" if corrected["judge"].nunique() > 1 else inert_html(m)
              for j, m in zip(frame["judge"], frame["model"])]
    pct = frame[["judge_only", "judge_only_low", "judge_only_high", "corrected", "ci_low", "ci_high"]].astype(float) * 100
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=pct["judge_only"], y=labels, mode="markers", name="judge only",
                             marker=dict(symbol="circle-open", size=10, color=FAIL_COLOUR),
                             error_x=_errors(pct, "judge_only", "judge_only_low", "judge_only_high"),
                             hovertemplate="%{y}<br>judge only %{x:.1f}%<extra></extra>"))
    fig.add_trace(go.Scatter(x=pct["corrected"], y=labels, mode="markers", name="corrected (human-graded slice)",
                             marker=dict(size=11, color=HUMAN_COLOUR),
                             error_x=_errors(pct, "corrected", "ci_low", "ci_high"),
                             hovertemplate="%{y}<br>corrected %{x:.1f}%<extra></extra>"))
    fig.update_xaxes(title="macro score, % (95% interval)")
    return _layout(named_axes(fig, y='Model'), title, max(300, 40 * len(frame) + 140))

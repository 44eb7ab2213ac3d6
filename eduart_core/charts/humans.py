"""Figures of the comparison of models and people: accuracy per format, one ability ranking, one
Wright map.

Names (models, pseudonyms, groups) travel in the traces' data (x, y, customdata, name), never in a
hover template, so `exports.inert_figure` (applied by the page and the report) shows them as typed.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..analysis.humans import ALL, ALL_PEOPLE, MODELS, PEOPLE
from ..analysis.intervals import Z95
from ..vocab import format_label, format_rank
from .results import FONT, TEMPLATE, TYPE_COLOURS, _pct, named_axes

MODEL_COLOUR = "#8c8c8c"
BEST_MODEL_COLOUR = "#333333"
#: Colours of the groups of people, in group order (Okabe-Ito hues not used for families of models).
GROUP_COLOURS = ("#D55E00", "#0072B2", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
ALL_PEOPLE_COLOUR = "#7a5c3a"
ALL_FORMATS = "All formats"


def group_colours(groups) -> dict[str, str]:
    """One colour per group name (every person pooled: brown; models: grey)."""
    named = sorted({str(g) for g in groups} - {ALL_PEOPLE, MODELS})
    out = {g: GROUP_COLOURS[k % len(GROUP_COLOURS)] for k, g in enumerate(named)}
    out[ALL_PEOPLE] = ALL_PEOPLE_COLOUR
    out[MODELS] = MODEL_COLOUR
    return out


def _layout(fig: go.Figure, title: str | None, height: int) -> go.Figure:
    fig.update_layout(title=dict(text=title) if title else None, font=FONT, template=TEMPLATE, height=height,
                      margin=dict(l=10, r=10, t=60 if title else 30, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1))
    return fig


def figure_models_and_people(accuracy: pd.DataFrame, *, title: str | None = 'Models and people: mean item score per format') -> go.Figure:
    """Per format (all languages) and over all formats: each model as a grey dot (the best one dark),
    each group of people as a coloured dot with its 95% interval."""
    rows = accuracy[accuracy["language"] == ALL]
    kinds = sorted({t for t in rows["type"] if t != ALL}, key=format_rank) + ([ALL] if (rows["type"] == ALL).any()
                                                                            else [])
    position = {t: k for k, t in enumerate(kinds)}
    labels = [ALL_FORMATS if t == ALL else format_label(t) for t in kinds]
    fig = go.Figure()
    models = rows[rows["examinee"] == MODELS]
    if len(models):
        best = models.loc[models.groupby("type")["mean"].idxmax()]
        rest = models.drop(index=best.index)
        for frame, colour, size, name in ((rest, MODEL_COLOUR, 8, "models"), (best, BEST_MODEL_COLOUR, 11,
                                                                                "best model of the format")):
            if frame.empty:
                continue
            fig.add_trace(go.Scatter(
                x=frame["type"].map(position) - 0.18, y=_pct(frame["mean"]), mode="markers", name=name,
                marker=dict(color=colour, size=size, symbol="diamond"), customdata=frame[["name"]].to_numpy(),
                error_y=dict(type="data", symmetric=False, array=_pct(frame["ci_high"]) - _pct(frame["mean"]),
                             arrayminus=_pct(frame["mean"]) - _pct(frame["ci_low"]), color=colour, thickness=1,
                             width=2),
                hovertemplate="%{customdata[0]}<br>%{y:.1f}%<extra></extra>"))
    people = rows[rows["examinee"] == PEOPLE]
    groups = list(dict.fromkeys(sorted(set(people["name"]) - {ALL_PEOPLE}) + (
        [ALL_PEOPLE] if (people["name"] == ALL_PEOPLE).any() else [])))
    colours = group_colours(groups)
    for k, group in enumerate(groups):
        frame = people[people["name"] == group]
        offset = 0.06 + 0.12 * k
        fig.add_trace(go.Scatter(
            x=frame["type"].map(position) + offset, y=_pct(frame["mean"]), mode="markers", name=str(group),
            marker=dict(color=colours[group], size=12), customdata=frame[["name", "n_people", "n_answers"]].to_numpy(),
            error_y=dict(type="data", symmetric=False, array=_pct(frame["ci_high"]) - _pct(frame["mean"]),
                         arrayminus=_pct(frame["mean"]) - _pct(frame["ci_low"]), color=colours[group], thickness=2),
            hovertemplate="%{customdata[0]}: %{y:.1f}%<br>%{customdata[1]} people, %{customdata[2]} answers"
                          "<extra></extra>"))
    fig.update_xaxes(tickvals=list(range(len(kinds))), ticktext=labels, range=[-0.6, len(kinds) - 0.3])
    fig.update_yaxes(title_text="mean item score (%)", range=[0, 105])
    return _layout(named_axes(fig, x='Format'), title, 460)


def _examinee_colours(frame: pd.DataFrame) -> list[str]:
    colours = group_colours(frame["group"].dropna())
    return [colours.get(str(g), MODEL_COLOUR) for g in frame["group"]]


def figure_joint_ranking(ranking: pd.DataFrame, *, title: str | None = 'Models and people on one ability scale') -> go.Figure:
    """Models and people on one ability scale, best at the top, each with its 95% interval (people
    coloured by group, models grey)."""
    frame = ranking.sort_values("ability")
    fig = go.Figure()
    for group, part in frame.groupby("group", sort=True):
        colour = group_colours(frame["group"])[str(group)]
        fig.add_trace(go.Scatter(
            x=part["ability"], y=part["examinee"].astype(str), mode="markers", name=str(group),
            marker=dict(size=9, color=colour, symbol="diamond" if group == MODELS else "circle"),
            customdata=np.column_stack([part["rank"], part["rank_best"], part["rank_worst"]]),
            error_x=dict(type="data", symmetric=False, array=part["ci_high"] - part["ability"],
                         arrayminus=part["ability"] - part["ci_low"], color=colour),
            hovertemplate="%{y}<br>ability %{x:.2f}<br>rank %{customdata[0]} (plausible %{customdata[1]}-"
                          "%{customdata[2]})<extra></extra>"))
    fig.update_yaxes(categoryorder="array", categoryarray=list(frame["examinee"].astype(str)),
                     showticklabels=len(frame) <= 60)
    fig.update_xaxes(title_text="ability (logits, EAP with 95% interval)")
    return _layout(named_axes(fig, y='Model or person'), title, max(360, min(1400, 16 * len(frame) + 140)))


def figure_joint_wright_map(wright: pd.DataFrame, *, title: str | None = 'Wright map of models and people') -> go.Figure:
    """Models and people (left, by group, with 95% intervals) and item difficulties (right, counts per
    format) on one logit scale."""
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, column_widths=[0.5, 0.5], horizontal_spacing=0.03,
                        subplot_titles=["Models and people (ability)", "Items (difficulty)"])
    people = wright[wright["kind"] == "examinee"].sort_values("location")
    colours = group_colours(people["group"].dropna())
    order = sorted(set(people["group"].dropna()), key=lambda g: (g == MODELS, g))
    for k, group in enumerate(order):
        part = people[people["group"] == group]
        fig.add_trace(go.Scatter(
            x=np.full(len(part), k) + np.linspace(-0.3, 0.3, len(part)) if len(part) > 1 else np.full(len(part), k),
            y=part["location"], mode="markers", name=str(group), customdata=part[["label"]].to_numpy(),
            marker=dict(size=8, color=colours.get(str(group), MODEL_COLOUR),
                        symbol="diamond" if group == MODELS else "circle"),
            error_y=dict(type="data", array=Z95 * part["se"].fillna(0), color="#bbbbbb", thickness=1, width=0),
            hovertemplate="%{customdata[0]}<br>ability %{y:.2f}<extra></extra>"), row=1, col=1)
    items = wright[wright["kind"] == "item"]
    if len(items):
        lo, hi = float(wright["location"].min()), float(wright["location"].max())
        edges = np.linspace(np.floor(lo * 2) / 2 - 0.25, np.ceil(hi * 2) / 2 + 0.25,
                            max(2, int((np.ceil(hi * 2) - np.floor(lo * 2)) + 2)))
        centres = (edges[:-1] + edges[1:]) / 2
        for kind in sorted(set(items["type"].dropna()), key=format_rank):
            counts, _ = np.histogram(items.loc[items["type"] == kind, "location"], bins=edges)
            fig.add_trace(go.Bar(x=counts, y=centres, orientation="h", name=format_label(kind),
                                 marker_color=TYPE_COLOURS.get(kind, "#999999"), width=(edges[1] - edges[0]) * 0.9,
                                 customdata=np.full(len(centres), format_label(kind), dtype=object),
                                 hovertemplate="%{customdata}<br>difficulty %{y:.1f}: %{x} item(s)<extra></extra>"),
                          row=1, col=2)
    fig.update_layout(barmode="stack")
    fig.update_xaxes(tickvals=list(range(len(order))), ticktext=[str(g) for g in order], col=1)
    fig.update_yaxes(title_text="logits (ability = difficulty: 50% chance of a right answer)", col=1)
    fig.update_xaxes(title_text="items", col=2)
    fig = _layout(named_axes(fig, x='Group'), title, 560)
    fig.update_layout(legend=dict(orientation="v", yanchor="top", y=1, xanchor="left", x=1.01))
    return fig


__all__ = ["ALL_FORMATS", "figure_joint_ranking", "figure_joint_wright_map", "figure_models_and_people",
           "group_colours"]

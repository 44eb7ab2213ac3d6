"""Plotly figures of the psychometrics beyond CTT: Wright map, abilities, information curves (per
format and per score level), item characteristic curves, item fit, person fit, distractor shares,
DIF effects, parallel-form contrasts.

One function ``figure_<name>(frame, **options) -> go.Figure`` per figure, drawing the frame of the
named view of the same name (pages, report and tests see the same numbers). Names from the data
(models, items) are escaped: plotly reads some HTML in labels. No Streamlit, no statistics.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..analysis.intervals import Z95
from ..text import inert_html
from ..vocab import format_label, ordered_formats
from .results import FONT, HIGHER_COLOUR, LOWER_COLOUR, TYPE_COLOURS, log_ticks, named_axes

ALL_ITEMS_COLOUR = "#222222"
LEVEL_COLOURS = ("#bdbdbd", "#fdae61", "#abd9e9", "#2c7bb6", "#d7191c", "#1a9641", "#7b3294", "#636363")
DIF_CLASS_COLOURS = {"A": "#9e9e9e", "B": "#E69F00", "C": "#D55E00"}


def _layout(fig: go.Figure, title: str | None, height: int) -> go.Figure:
    fig.update_layout(title=dict(text=title) if title else None, font=FONT, template="plotly_white", height=height,
                      margin=dict(l=10, r=10, t=60 if title else 30, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1))
    return fig


def _colour(kind: str) -> str:
    return ALL_ITEMS_COLOUR if kind == "all" else TYPE_COLOURS.get(kind, "#0072B2")


def _label(kind: str) -> str:
    return "All items" if kind == "all" else format_label(kind)


def _location_bars(fig: go.Figure, rows: pd.DataFrame, edges: np.ndarray, col: int, what: str,
                   legend: bool) -> None:
    centres = (edges[:-1] + edges[1:]) / 2
    for kind in ordered_formats(rows["type"].dropna()):
        counts, _ = np.histogram(rows.loc[rows["type"] == kind, "location"], bins=edges)
        fig.add_trace(go.Bar(x=counts, y=centres, orientation="h", name=_label(kind), marker_color=_colour(kind),
                             width=(edges[1] - edges[0]) * 0.9, showlegend=legend, legendgroup=kind,
                             hovertemplate=_label(kind) + f"<br>{what} " + "%{y:.1f}: %{x}<extra></extra>"),
                      row=1, col=col)


def figure_wright_map(wright: pd.DataFrame, *, title: str | None = 'Wright map: abilities and item difficulties on one scale') -> go.Figure:
    """Examinees (left, with 95% intervals), item locations and, for partial-credit items, their
    category thresholds (counts per format) on one logit scale."""
    thresholds = wright[wright["kind"] == "threshold"]
    columns = 3 if len(thresholds) else 2
    fig = make_subplots(rows=1, cols=columns, shared_yaxes=True, horizontal_spacing=0.03,
                        column_widths=[0.4, 0.3, 0.3] if columns == 3 else [0.45, 0.55],
                        subplot_titles=["Examinees (ability)", "Items", "Thresholds"][:columns])
    people = wright[wright["kind"] == "examinee"].sort_values("location")
    labels = [inert_html(v) for v in people["label"]]
    fig.add_trace(go.Scatter(
        x=labels, y=people["location"], mode="markers", name="examinee", showlegend=False,
        marker=dict(size=9, color="#333"), error_y=dict(type="data", array=Z95 * people["se"].fillna(0), color="#999"),
        hovertemplate="%{x}<br>ability %{y:.2f}<extra></extra>"), row=1, col=1)
    located = wright[wright["kind"] != "examinee"]
    if len(located):
        lo, hi = float(wright["location"].min()), float(wright["location"].max())
        edges = np.linspace(np.floor(lo * 2) / 2 - 0.25, np.ceil(hi * 2) / 2 + 0.25,
                            max(2, int((np.ceil(hi * 2) - np.floor(lo * 2)) + 2)))
        _location_bars(fig, wright[wright["kind"] == "item"], edges, 2, "location", True)
        if columns == 3:
            _location_bars(fig, thresholds, edges, 3, "threshold", False)
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title_text="logits (ability = difficulty: 50% chance of a right answer)", col=1)
    fig.update_xaxes(showticklabels=len(people) <= 30, tickangle=-45, col=1)
    fig.update_xaxes(title_text="items", col=2)
    if columns == 3:
        fig.update_xaxes(title_text="thresholds", col=3)
    fig = _layout(named_axes(fig, x='examinees'), title, 560)
    fig.update_layout(legend=dict(orientation="v", yanchor="top", y=1, xanchor="left", x=1.01))
    return fig


def _examinee_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The examinees of an abilities frame (without its summary row)."""
    return frame[frame["row"] != "summary"] if "row" in frame else frame


def figure_abilities(ranking: pd.DataFrame, *, title: str | None = 'Abilities of the models') -> go.Figure:
    """Abilities with 95% intervals, best at the top; hover gives the ranks each could hold."""
    frame = _examinee_rows(ranking).sort_values("ability")
    labels = [inert_html(v) for v in frame["examinee"]]
    hover = [f"rank {r} (plausible {b}-{w}); cannot be told apart from {n} other(s)"
             for r, b, w, n in zip(frame["rank"], frame["rank_best"], frame["rank_worst"], frame["n_tied"])]
    fig = go.Figure(go.Scatter(
        x=frame["ability"], y=labels, mode="markers", marker=dict(size=9, color=HIGHER_COLOUR), text=hover,
        error_x=dict(type="data", symmetric=False, array=frame["ci_high"] - frame["ability"],
                     arrayminus=frame["ability"] - frame["ci_low"], color="#777"),
        hovertemplate="%{y}<br>ability %{x:.2f}<br>%{text}<extra></extra>"))
    fig.update_xaxes(title="ability (logits, EAP with 95% interval)")
    return _layout(named_axes(fig, y='Model'), title, max(320, 24 * len(frame) + 120))


def figure_information(curves: pd.DataFrame, *, per_item: bool = True, title: str | None = 'Information across the ability scale') -> go.Figure:
    """Information along the ability scale, one line per format (mean per item, or the sum)."""
    value = "information_per_item" if per_item else "information"
    fig = go.Figure()
    kinds = ordered_formats(k for k in curves["type"].unique() if k != "all")
    for kind in kinds + (["all"] if "all" in set(curves["type"]) else []):
        sub = curves[curves["type"] == kind]
        n = int(sub["n_items"].iloc[0]) if len(sub) else 0
        fig.add_trace(go.Scatter(
            x=sub["theta"], y=sub[value], mode="lines", name=f"{_label(kind)} ({n})",
            line=dict(color=_colour(kind), width=3 if kind == "all" else 2, dash="dot" if kind == "all" else "solid"),
            hovertemplate=_label(kind) + "<br>ability %{x:.1f}: information %{y:.3f}<extra></extra>"))
    fig.update_xaxes(title="ability (logits)")
    fig.update_yaxes(title="information per item" if per_item else "test information (sum over items)")
    return _layout(fig, title, 420)


def figure_item_curve(curve: pd.DataFrame, *, title: str | None = 'Item characteristic curve') -> go.Figure:
    """P(right) along the ability scale (left axis) and the item's information (right axis); a
    partial-credit item shows its expected share of credit and each score level's probability."""
    levels = [c for c in curve.columns if c.startswith("p_level_")]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    main = "expected share of credit" if levels else "P(right)"
    fig.add_trace(go.Scatter(x=curve["theta"], y=curve["p_right"], mode="lines", name=main,
                             line=dict(color=HIGHER_COLOUR, width=3),
                             hovertemplate="ability %{x:.1f}: " + main + " %{y:.2f}<extra></extra>"), secondary_y=False)
    for k, column in enumerate(levels):
        level = column.removeprefix("p_level_")
        fig.add_trace(go.Scatter(x=curve["theta"], y=curve[column], mode="lines", name=f"P(level {level})",
                                 line=dict(color=LEVEL_COLOURS[k % len(LEVEL_COLOURS)], width=1.5, dash="dash"),
                                 hovertemplate=f"ability %{{x:.1f}}: P(level {level}) %{{y:.2f}}<extra></extra>"),
                      secondary_y=False)
    fig.add_trace(go.Scatter(x=curve["theta"], y=curve["information"], mode="lines", name="information",
                             line=dict(color="#999", dash="dot"),
                             hovertemplate="ability %{x:.1f}: information %{y:.3f}<extra></extra>"), secondary_y=True)
    fig.update_yaxes(title_text="probability" if levels else "P(right)", range=[0, 1], secondary_y=False)
    fig.update_yaxes(title_text="information", secondary_y=True, showgrid=False)
    fig.update_xaxes(title_text="ability (logits)")
    return _layout(fig, title, 340)


def figure_category_information(curves: pd.DataFrame, kind: str, *, title: str | None = 'Information per item, by category') -> go.Figure:
    """One format's information split by score level (stacked areas, mean per item): which level informs where."""
    sub = curves[curves["type"] == kind]
    fig = go.Figure()
    for k, (level, part) in enumerate(sub.groupby("level", sort=True)):
        fig.add_trace(go.Scatter(
            x=part["theta"], y=part["information_per_item"], mode="lines", stackgroup="levels", name=f"level {level}",
            line=dict(width=0.5, color=LEVEL_COLOURS[k % len(LEVEL_COLOURS)]),
            hovertemplate=f"level {level}<br>ability %{{x:.1f}}: information %{{y:.3f}}<extra></extra>"))
    fig.update_xaxes(title="ability (logits)")
    fig.update_yaxes(title=f"information per item, {_label(kind)}")
    return _layout(fig, title, 360)


def figure_item_fit(table: pd.DataFrame, *, title: str | None = 'Item fit: infit against outfit') -> go.Figure:
    """Infit against outfit mean square per item, the 0.7-1.3 band shaded, flagged items coloured."""
    fig = go.Figure()
    for flag, colour, name in ((None, "#9e9e9e", "fits"), ("overfit", "#0072B2", "overfit"),
                               ("underfit", LOWER_COLOUR, "underfit (misfit)")):
        part = table[table["flag"].isna()] if flag is None else table[table["flag"] == flag]
        if part.empty:
            continue
        fig.add_trace(go.Scatter(
            x=part["outfit"], y=part["infit"], mode="markers", name=name,
            marker=dict(size=8 if flag is None else 11, color=colour),
            customdata=np.array(part["item_id"], dtype=object), text=[inert_html(v) for v in part["item_id"]],
            hovertemplate="%{text}<br>outfit %{x:.2f}, infit %{y:.2f}<extra></extra>"))
    fig.add_shape(type="rect", x0=0.7, x1=1.3, y0=0.7, y1=1.3, line=dict(width=0), fillcolor="rgba(0,0,0,0.06)")
    ticks = log_ticks(np.r_[table["outfit"].to_numpy(float), table["infit"].to_numpy(float), 0.7, 1.3])
    fig.update_xaxes(title="outfit mean square (unweighted)", **ticks)
    fig.update_yaxes(title="infit mean square (information-weighted)", **ticks)
    return _layout(fig, title, 420)


def figure_person_fit(table: pd.DataFrame, *, limit: float = -2.0, title: str | None = 'Person fit of the models') -> go.Figure:
    """lz per examinee, most aberrant at the bottom, the flag limit dashed."""
    frame = table.sort_values("lz", ascending=False)
    labels = [inert_html(v) for v in frame["examinee"]]
    colours = [LOWER_COLOUR if a else HIGHER_COLOUR for a in frame["aberrant"]]
    fig = go.Figure(go.Scatter(
        x=frame["lz"], y=labels, mode="markers", marker=dict(size=10, color=colours),
        customdata=np.array(frame["model"], dtype=object),
        hovertemplate="%{y}<br>lz %{x:.2f}<extra></extra>"))
    fig.add_vline(x=limit, line_dash="dash", line_color="grey")
    fig.update_xaxes(title="lz (standardised log-likelihood; below the dashed line: aberrant)")
    return _layout(named_axes(fig, y='Model'), title, max(320, 24 * len(frame) + 120))


def figure_distractor_shares(table: pd.DataFrame, item_id: str, *, title: str | None = 'Which options were chosen') -> go.Figure:
    """One item's options: share choosing each in the lower third, overall and the upper third."""
    sub = table[table["item_id"].astype(str) == str(item_id)]
    names = [f"{inert_html(o)} (key)" if k else inert_html(o) for o, k in zip(sub["option"], sub["is_key"])]
    fig = go.Figure()
    for column, label, colour in (("share_lower", "lower third", "#bbbbbb"), ("share", "all examinees", "#777777"),
                                  ("share_upper", "upper third", HIGHER_COLOUR)):
        fig.add_trace(go.Bar(x=names, y=np.round(sub[column].to_numpy(dtype=float) * 100, 1), name=label,
                             marker_color=colour, hovertemplate="option %{x}: %{y:.0f}% (" + label + ")<extra></extra>"))
    fig.update_layout(barmode="group")
    fig.update_yaxes(title="chose the option (%)", range=[0, 100])
    return _layout(named_axes(fig, x='Option'), title, 340)


def figure_dif(table: pd.DataFrame, *, method: str, title: str | None = 'Differential item functioning between the conditions') -> go.Figure:
    """Each item's DIF effect (ETS delta or change in R2) coloured by class; items ordered by effect."""
    sub = table[(table["method"] == method) & table["effect"].notna()].sort_values("effect")
    fig = go.Figure()
    for cls in ("A", "B", "C"):
        part = sub[sub["dif_class"] == cls]
        fig.add_trace(go.Scatter(
            x=[inert_html(v) for v in part["item_id"]], y=part["effect"], mode="markers", name=f"class {cls}",
            marker=dict(size=8 if cls == "A" else 11, color=DIF_CLASS_COLOURS[cls]),
            customdata=np.array(part["item_id"], dtype=object), text=[inert_html(d) for d in part["direction"]],
            hovertemplate="%{x}<br>effect %{y:.3f}<br>%{text}<extra></extra>"))
    delta = (sub["effect_name"] == "ETS delta").any()
    if delta:
        for level, dash in ((1.0, "dot"), (1.5, "dash")):
            for sign in (1, -1):
                fig.add_hline(y=sign * level, line_dash=dash, line_color="#bbb")
    fig.update_xaxes(showticklabels=len(sub) <= 60, title="items (ordered by effect)", categoryorder="array",
                     categoryarray=[inert_html(v) for v in sub["item_id"]])
    fig.update_yaxes(title="ETS delta (negative: harder in the focal condition)" if delta
                     else "change in Nagelkerke R2")
    return _layout(fig, title, 420)


def figure_parallel(table: pd.DataFrame, *, title: str | None = 'Parallel forms: score differences') -> go.Figure:
    """Mean within-model difference (item minus its parallel form) per pair, with 95% t intervals."""
    frame = table.iloc[::-1]
    labels = [f"{inert_html(a)} vs {inert_html(b)}" for a, b in zip(frame["item_id"], frame["parallel_of"])]
    colours = [HIGHER_COLOUR if d >= 0 else LOWER_COLOUR for d in frame["mean_diff"].fillna(0)]
    fig = go.Figure(go.Scatter(
        x=np.round(frame["mean_diff"].to_numpy(dtype=float) * 100, 1), y=labels, mode="markers",
        marker=dict(size=10, color=colours), text=[inert_html(d) for d in frame["differs"]],
        error_x=dict(type="data", symmetric=False, array=np.round((frame["ci_high"] - frame["mean_diff"]) * 100, 1),
                     arrayminus=np.round((frame["mean_diff"] - frame["ci_low"]) * 100, 1), color="#777"),
        hovertemplate="%{y}<br>%{text}<br>mean difference %{x:+.1f} pp<extra></extra>"))
    fig.add_vline(x=0, line_dash="dash", line_color="grey")
    fig.update_xaxes(title="score difference, item minus its parallel form (pp, 95% t interval)")
    return _layout(named_axes(fig, y='Item'), title, max(280, 40 * len(frame) + 140))


__all__ = ["figure_abilities", "figure_category_information", "figure_dif", "figure_distractor_shares",
           "figure_information", "figure_item_curve", "figure_item_fit", "figure_parallel", "figure_person_fit",
           "figure_wright_map"]

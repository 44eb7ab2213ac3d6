"""Plotly figure builders shared by the dashboard pages, the HTML report and the tests.

Every figure is one function ``figure_<name>(frame, **options) -> go.Figure`` that takes the
output of an ``eduart_core.analysis`` function (fractions in [0, 1]) and draws it in percent.
Keeping the drawing here, not in the pages, means the report and the tests see exactly the
numbers a user sees. No Streamlit, no SQL, no statistics beyond sorting and scaling.
"""
from __future__ import annotations

import html
from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..columns import term_label
from ..rounding import fmt, percent
from ..vocab import (
    DEFAULT_CONDITION,
    EDUART_FORMATS,
    MOTIVATION_CONDITION,
    format_label,
    language_label,
    ordered_formats,
)

# One colour per model family, the same on every chart (colour-blind friendly Okabe-Ito hues).
FAMILY_COLOURS: dict[str, str] = {
    "OpenAI": "#009E73",
    "Google": "#0072B2",
    "Anthropic": "#D55E00",
    "Mistral": "#E69F00",
    "Qwen": "#CC79A7",
    "Meta": "#56B4E9",
    "DeepSeek": "#882255",
    "xAI": "#444444",
    "Simulated": "#7F7F7F",
}
OTHER_COLOUR = "#999933"
BASELINE_COLOUR = "#555555"  # reference marks of baseline models (chance): never a family colour
HIGHER_COLOUR = "#1f77b4"  # blue: the second condition scores higher
LOWER_COLOUR = "#d62728"   # red: the second condition scores lower

#: One colour per EduArt format (formats added later share the palette's fallback).
TYPE_COLOURS: dict[str, str] = dict(zip(EDUART_FORMATS, ("#0072B2", "#56B4E9", "#009E73", "#E69F00", "#D55E00",
                                                     "#CC79A7", "#882255")))

FONT = dict(family="Source Sans Pro, Arial, sans-serif", size=14)
_GRID = "#EBF0F8"
#: The few properties of plotly's "plotly_white" our figures use. Setting the full named template
#: deep-copies it (50-70 ms per figure, several figures per page); this one costs ~5 ms.
TEMPLATE = go.layout.Template(layout=dict(
    plot_bgcolor="white", paper_bgcolor="white", font=dict(color="#2a3f5f"),
    xaxis=dict(gridcolor=_GRID, zerolinecolor=_GRID, linecolor=_GRID, automargin=True),
    yaxis=dict(gridcolor=_GRID, zerolinecolor=_GRID, linecolor=_GRID, automargin=True),
    legend=dict(bgcolor="rgba(255,255,255,0.6)")))


def family_colour(family: str | None) -> str:
    """Colour of a model family; unknown families share one neutral colour."""
    if not family:
        return OTHER_COLOUR
    if family in FAMILY_COLOURS:
        return FAMILY_COLOURS[family]
    for name, colour in FAMILY_COLOURS.items():
        if name.lower() == str(family).lower():
            return colour
    return OTHER_COLOUR


def _pct(values) -> np.ndarray:
    """Fractions as percentages, rounded exactly as tables and exports round them."""
    return np.atleast_1d(percent(values))


def _layout(fig: go.Figure, title: str | None, height: int | None = None) -> go.Figure:
    fig.update_layout(
        title=dict(text=title) if title else None,
        font=FONT,
        template=TEMPLATE,
        margin=dict(l=10, r=10, t=60 if title else 20, b=10),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1),
    )
    if height:
        fig.update_layout(height=height)
    return fig


def named_axes(fig: go.Figure, *, x: str | None = None, y: str | None = None) -> go.Figure:
    """Name every cartesian axis that shows values and has no title yet (``x`` for the x axes, ``y``
    for the y axes): a chart copied into a slide says what its axes are without the page around it."""
    def name(axis, words: str) -> None:
        if not (axis.title and axis.title.text) and axis.showticklabels is not False:
            axis.update(title_text=words)

    if x:
        fig.for_each_xaxis(lambda axis: name(axis, x))
    if y:
        fig.for_each_yaxis(lambda axis: name(axis, y))
    return fig


def _families(models, families: Mapping[str, str] | None) -> list[str]:
    families = families or {}
    return [families.get(m, "Other") for m in models]


def figure_leaderboard(macro: pd.DataFrame, *, families: Mapping[str, str] | None = None,
                       title: str | None = 'Leaderboard: macro average per model') -> go.Figure:
    """Macro average per model (bars, family colours) with MCQ accuracy and its 95% Wilson interval.

    Each model gets two lanes: the bar with its value label in the upper lane, the multiple-choice
    diamond with its interval in the lower lane, so a label can never sit under a marker or an
    error bar. The legend shows one swatch per family (the bar colours) and the diamond.
    """
    frame = macro.sort_values("macro", ascending=True).reset_index(drop=True)
    fams = _families(frame["model"], families)
    pos = np.arange(len(frame), dtype=float)
    has_mcq = "mcq" in frame and frame["mcq"].notna().any()
    bar_y = pos + (0.12 if has_mcq else 0.0)
    macro_pct = _pct(frame["macro"])
    has_ci = "macro_ci_low" in frame and frame["macro_ci_low"].notna().any()
    fig = go.Figure()
    fig.add_bar(
        y=bar_y, x=macro_pct, orientation="h", name="Macro average", showlegend=False,
        width=0.5 if has_mcq else 0.7, marker_color=[family_colour(f) for f in fams],
        text=[fmt(v) for v in macro_pct], textposition="inside" if has_ci else "auto", cliponaxis=False,
        insidetextanchor="start" if has_ci else None,  # the interval's whisker sits at the bar's end
        customdata=np.array(list(zip(frame["model"], fams)), dtype=object),
        hovertemplate="%{customdata[0]}<br>family %{customdata[1]}<br>macro average %{x:.1f}%<extra></extra>",
    )
    if has_ci:
        fig.add_scatter(  # the macro average's 95% interval on each bar
            y=bar_y, x=macro_pct, mode="markers", name="Macro average 95% CI", marker=dict(size=1, color="black"),
            error_x=dict(type="data", symmetric=False, thickness=1.5, width=4,
                         array=_pct(frame["macro_ci_high"]) - macro_pct,
                         arrayminus=macro_pct - _pct(frame["macro_ci_low"]), color="black"),
            customdata=np.column_stack([frame["model"].astype(str), _pct(frame["macro_ci_low"]),
                                        _pct(frame["macro_ci_high"])]).astype(object),
            hovertemplate="%{customdata[0]}<br>macro average %{x:.1f}% (95% CI %{customdata[1]:.1f} to "
                          "%{customdata[2]:.1f})<extra></extra>")
    for family in sorted(set(fams)):  # legend only: one swatch per family, coloured like its bars
        fig.add_scatter(x=[None], y=[None], mode="markers", name=family, legendgroup=family,
                        marker=dict(symbol="square", size=12, color=family_colour(family)), hoverinfo="skip")
    if has_mcq:
        mcq = _pct(frame["mcq"])
        fig.add_scatter(
            y=pos - 0.3, x=mcq, mode="markers", name="Multiple choice (95% Wilson CI)",
            marker=dict(symbol="diamond", size=9, color="black"),
            error_x=dict(type="data", symmetric=False, thickness=1.5, width=3,
                         array=_pct(frame["mcq_ci_high"]) - mcq,
                         arrayminus=mcq - _pct(frame["mcq_ci_low"]), color="black"),
            customdata=np.array(frame["model"], dtype=object),
            hovertemplate="%{customdata}<br>multiple choice %{x:.1f}%<extra></extra>",
        )
    # a light band behind every other model ties its bar and its diamond together
    shapes = [dict(type="rect", xref="paper", x0=0, x1=1, yref="y", y0=p - 0.5, y1=p + 0.5,
                   fillcolor="rgba(0,0,0,0.035)", line=dict(width=0), layer="below")
              for p in pos[(len(pos) - 1) % 2::2]] if has_mcq else []
    fig.update_layout(shapes=shapes + _tie_group_bands(frame, pos))
    _tie_group_labels(fig, frame, pos)
    fig.update_xaxes(title="Score (%)", range=[0, 100])
    fig.update_yaxes(title=None, tickmode="array", tickvals=pos, ticktext=list(frame["model"]),
                     range=[-0.6, len(frame) - 0.4], showgrid=False, zeroline=False)
    return _layout(named_axes(fig, y='Model'), title, height=max(300, (48 if has_mcq else 36) * len(frame) + 120))


#: Alternating tints of the tie-group bands (a group of several models is "level").
_TIE_FILLS = ("rgba(70,110,170,0.10)", "rgba(170,120,50,0.10)")


def _groups(frame: pd.DataFrame, pos: np.ndarray) -> list[tuple[int, float, float, list[str]]]:
    """(group, lowest position, highest position, models highest first) per tie group."""
    if "tie_group" not in frame or frame["tie_group"].isna().all():
        return []
    out = []
    for g, part in frame.groupby("tie_group", sort=True):
        at = pos[part.index.to_numpy()]
        out.append((int(g), float(at.min()), float(at.max()), list(part.sort_values("macro", ascending=False)["model"])))
    return out


def _tie_group_bands(frame: pd.DataFrame, pos: np.ndarray) -> list[dict]:
    """A tinted band behind each tie group of two or more models (a model alone gets none)."""
    return [dict(type="rect", xref="paper", x0=0, x1=1, yref="y", y0=low - 0.48, y1=high + 0.48,
                 fillcolor=_TIE_FILLS[k % 2], line=dict(width=1, color="rgba(0,0,0,0.25)", dash="dot"), layer="below")
            for k, (_, low, high, names) in enumerate(_groups(frame, pos)) if len(names) > 1]


def _tie_group_labels(fig: go.Figure, frame: pd.DataFrame, pos: np.ndarray) -> None:
    """'group 1: level' (hover: the models) or 'group 2' for a model alone, at the right edge of each tie group."""
    for g, _low, high, names in _groups(frame, pos):
        text = f"group {g}: level" if len(names) > 1 else f"group {g}"
        fig.add_annotation(xref="paper", x=1.0, xanchor="right", yref="y", y=high + 0.35, yanchor="middle",
                           text=_plain(text), showarrow=False, font=dict(size=11, color="rgba(0,0,0,0.65)"),
                           hovertext=_plain("cannot be told apart: " + ", ".join(names)) if len(names) > 1 else None)


def _plain(text: object) -> str:
    """A name shown in an annotation, escaped so plotly shows it as text (it interprets some tags)."""
    return html.escape(str(text))


def add_baseline_lines(fig: go.Figure, baselines: pd.DataFrame, *, value: str = "macro") -> go.Figure:
    """Dashed reference lines at each baseline model's score on a horizontal-bar chart (the leaderboard).

    Baselines (such as chance) are references, not examinees: they get a line, not a bar or a rank.
    """
    if baselines is None or baselines.empty or value not in baselines:
        return fig
    for i, row in enumerate(baselines.dropna(subset=[value]).itertuples(index=False)):
        x = float(np.round(getattr(row, value) * 100.0, 1))
        fig.add_vline(x=x, line_dash="dash", line_color=BASELINE_COLOUR, line_width=1.5,
                      annotation_text=f"{_plain(row.model)} (reference) {x:.1f}%",
                      annotation_position="top right" if i % 2 == 0 else "bottom right",
                      annotation_font=dict(color=BASELINE_COLOUR, size=12))
    return fig


def add_baseline_format_marks(fig: go.Figure, baseline_type_means: pd.DataFrame) -> go.Figure:
    """Each baseline's format means written in a line above the columns of the format heatmap.

    Above the grid rather than as a row in it, so a baseline is never read as one more examinee;
    the baseline's name starts its line, left of the grid.
    """
    if baseline_type_means is None or baseline_type_means.empty:
        return fig
    heat = next((t for t in fig.data if isinstance(t, go.Heatmap)), None)
    if heat is None:
        return fig
    labels = {format_label(t): t for t in baseline_type_means["type"].unique()}
    names = sorted(baseline_type_means["model"].unique(), key=str)
    font = dict(color=BASELINE_COLOUR, size=12)
    for j, name in enumerate(reversed(names)):  # the first name on the top line
        sub = baseline_type_means[baseline_type_means["model"] == name].set_index("type")["mean"]
        shift = 4 + 18 * j
        fig.add_annotation(x=0, y=1.0, xref="paper", yref="paper", xanchor="right", yanchor="bottom", yshift=shift,
                           showarrow=False, text=f"{_plain(name)} (reference)", font=font)
        for label in list(heat.x):
            t = labels.get(label)
            if t is not None and t in sub.index and pd.notna(sub[t]):
                fig.add_annotation(x=label, y=1.0, xref="x", yref="paper", yanchor="bottom", yshift=shift,
                                   showarrow=False, text=f"{100 * sub[t]:.0f}", font=font)
    top = fig.layout.margin.t or 20
    fig.update_layout(margin=dict(t=top + 18 * len(names) + 10))
    return fig


def figure_format_heatmap(type_means: pd.DataFrame, *, macro: pd.DataFrame | None = None,
                          title: str | None = 'Scores by format: mean item score per model (%)') -> go.Figure:
    """Model x format heatmap of type means (one condition) on a 0-100 scale, models sorted by macro average."""
    grid = type_means.pivot_table(index="model", columns="type", values="mean", aggfunc="mean")
    types = ordered_formats(grid.columns)
    grid = grid[types]
    if macro is not None and len(macro):
        order = macro.set_index("model")["macro"].reindex(grid.index)
    else:
        order = grid.mean(axis=1)
    grid = grid.loc[order.sort_values(ascending=True).index]
    z = percent(grid.to_numpy(dtype=float))
    text = [["" if np.isnan(v) else fmt(v) for v in row] for row in z]
    fig = go.Figure(go.Heatmap(
        z=z, x=[format_label(t) for t in types], y=list(grid.index), zmin=0, zmax=100,
        colorscale="Viridis", text=text, texttemplate="%{text}", colorbar=dict(title="%"),
        hovertemplate="%{y}<br>%{x}: %{z:.1f}%<extra></extra>",
    ))
    fig.update_xaxes(side="bottom", tickangle=-30)
    return _layout(named_axes(fig, x='Format', y='Model'), title, height=max(320, 38 * len(grid) + 160))


def figure_difficulty_discrimination(item_stats: pd.DataFrame, *, texts: Mapping[str, str] | None = None,
                                     title: str | None = 'Item difficulty and discrimination, by format') -> go.Figure:
    """Difficulty p vs discrimination r_pb: one panel per format plus a panel of format centroids."""
    frame = item_stats.dropna(subset=["r_pb"]).copy()
    types = ordered_formats(frame["type"])
    panels = types + ["centroids"]
    cols = 4
    rows = int(np.ceil(len(panels) / cols))
    fig = make_subplots(rows=rows, cols=cols, shared_xaxes=False, shared_yaxes=True,
                        subplot_titles=[format_label(t) if t != "centroids" else "Format centroids" for t in panels],
                        horizontal_spacing=0.04, vertical_spacing=0.12)
    mean_p = float(item_stats["p"].mean()) if len(item_stats) else float("nan")
    texts = texts or {}
    shapes: list[dict] = []
    traces: list[go.Scatter] = []
    for i, t in enumerate(panels):
        n = "" if i == 0 else str(i + 1)
        axes = dict(xaxis=f"x{n}", yaxis=f"y{n}")
        if t == "centroids":
            cen = frame.groupby("type")[["p", "r_pb"]].mean().reindex(types)
            for ctype, crow in cen.iterrows():
                traces.append(go.Scatter(
                    x=[crow["p"]], y=[crow["r_pb"]], mode="markers", name=format_label(ctype), showlegend=True,
                    legendgroup=ctype, marker=dict(size=13, color=TYPE_COLOURS.get(ctype, "#333"),
                                                   line=dict(width=1, color="white")),
                    hovertemplate=format_label(ctype) + "<br>mean p %{x:.2f}<br>mean r_pb %{y:.2f}<extra></extra>",
                    **axes))
        else:
            sub = frame[frame["type"] == t]
            hover = [f"{iid}: {texts.get(iid, '')[:60]}" for iid in sub["item_id"]]
            traces.append(go.Scatter(
                x=sub["p"].to_numpy(), y=sub["r_pb"].to_numpy(), mode="markers", name=format_label(t),
                showlegend=False, customdata=np.array(sub["item_id"], dtype=object), text=hover, legendgroup=t,
                marker=dict(size=7, opacity=0.75, color=TYPE_COLOURS.get(t, "#0072B2")),
                hovertemplate="%{text}<br>p %{x:.2f}, r_pb %{y:.2f}<extra></extra>", **axes))
        n = "" if i == 0 else str(i + 1)
        for level, dash in ((0.30, "dash"), (0.10, "dot")):
            shapes.append(dict(type="line", xref=f"x{n} domain", x0=0, x1=1, yref=f"y{n}", y0=level, y1=level,
                               line=dict(dash=dash, color="grey", width=1)))
        if not np.isnan(mean_p):
            shapes.append(dict(type="line", yref=f"y{n} domain", y0=0, y1=1, xref=f"x{n}", x0=mean_p, x1=mean_p,
                               line=dict(dash="dashdot", color="#999", width=1)))
    # Traces and shapes in one batch each: add_hline/add_scatter per subplot cost ~0.05-0.1 s per call.
    fig.add_traces(traces)
    fig.update_layout(shapes=shapes)
    fig.update_xaxes(range=[-0.02, 1.02])
    fig.update_yaxes(range=[-1.0, 1.0])
    fig.update_xaxes(title_text="difficulty p", row=rows)
    fig.update_yaxes(title_text="r_pb", col=1)
    fig = _layout(named_axes(fig, x='difficulty p (mean score)', y='discrimination r_pb'), title, height=330 * rows + 100)
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.08, xanchor="left", x=0))
    return fig


#: The colour of a change the corrected test does not carry (within noise, or not tested).
NOISE_COLOUR = "#9E9E9E"


def _dumbbell(frame: pd.DataFrame, left: str, right: str, left_name: str, right_name: str,
              families: Mapping[str, str] | None, marks: list[str] | None, title: str | None,
              carried: list[bool] | None = None, noise_name: str = "within noise") -> go.Figure:
    """Open circle = ``left``, filled = ``right`` (blue higher, red lower), delta labelled.

    ``carried`` (one flag per row, in the frame's order) says which changes the corrected test
    carries: the others are drawn grey and named ``noise_name``, so a colour never claims a
    direction the test does not. The legend has one entry per kind of dot actually drawn, so
    every swatch looks like the dots it names. The delta label is the rounded difference of the
    unrounded values, the same number the table shows.
    """
    n = len(frame)
    frame = frame.assign(_l=_pct(frame[left]), _r=_pct(frame[right]),
                         _d=_pct(frame[right].astype(float) - frame[left].astype(float)),
                         _m=marks if marks is not None and len(marks) == n else [""] * n,
                         _c=carried if carried is not None and len(carried) == n else [True] * n
                         ).sort_values("_l", kind="stable")
    fig = go.Figure()
    higher = frame["_d"] >= 0
    told = frame["_c"].astype(bool)
    for (_, row), up, known in zip(frame.iterrows(), higher, told):
        colour = (HIGHER_COLOUR if up else LOWER_COLOUR) if known else NOISE_COLOUR
        fig.add_scatter(x=[row["_l"], row["_r"]], y=[row["model"]] * 2, mode="lines",
                        line=dict(color=colour, width=3), showlegend=False, hoverinfo="skip")
    fig.add_scatter(x=frame["_l"], y=frame["model"], mode="markers", name=left_name,
                    marker=dict(symbol="circle-open", size=13, color="#333", line=dict(width=2)),
                    hovertemplate="%{y}<br>" + left_name + " %{x:.1f}%<extra></extra>")
    kinds = ((higher & told, HIGHER_COLOUR, "higher"), (~higher & told, LOWER_COLOUR, "lower"),
             (~told, NOISE_COLOUR, noise_name))
    for chosen, colour, word in kinds:
        part = frame[chosen]
        if part.empty:
            continue
        fig.add_scatter(x=part["_r"], y=part["model"], mode="markers", name=f"{right_name}, {word}",
                        marker=dict(symbol="circle", size=13, color=colour),
                        hovertemplate="%{y}<br>" + right_name + " %{x:.1f}%<extra></extra>")
    labels = [fmt(d, signed=True) + m for d, m in zip(frame["_d"], frame["_m"])]
    fig.add_scatter(x=np.maximum(frame["_l"], frame["_r"]) + 2.5, y=frame["model"], mode="text", text=labels,
                    textposition="middle right", showlegend=False, hoverinfo="skip", name="delta",
                    cliponaxis=False)
    fig.update_xaxes(title="Score (%)", range=[0, 112], tickvals=list(range(0, 101, 20)))
    if families:
        fig.update_yaxes(tickfont=dict(size=13))
    return _layout(named_axes(fig, y="Model"), title, height=max(300, 40 * len(frame) + 120))


def significance_mark(p: float | None) -> str:
    """The mark of a change the finding counts: * for a Holm-corrected p < .05, nothing otherwise."""
    if p is None or (isinstance(p, float) and np.isnan(p)):
        return ""
    return "*" if p < 0.05 else ""


def figure_motivation_dumbbell(effect: pd.DataFrame, *, measure: str = "macro",
                               families: Mapping[str, str] | None = None,
                               title: str | None = 'Asking for a justification: score per model, default and motivation') -> go.Figure:
    """Default (open circle) vs motivation (filled) per model, delta labelled, for the macro or
    micro average (``measure``).

    Marks and colours follow the test the motivation finding counts: ``p_holm``, the
    Holm-corrected p of the per-item test (Wilcoxon signed-rank on item-level data, the
    published paired t-test on published aggregates). A model with a corrected p < .05 gets a
    * and blue (higher) or red (lower); the rest are grey, "within noise" (or "not tested"
    when the data hold no test).
    """
    frame = effect.copy()
    frame["_sort"] = frame[f"default_{measure}"]
    frame = frame.sort_values("_sort").reset_index(drop=True)
    tested = "p_holm" in frame and frame["p_holm"].notna().any()
    p = frame["p_holm"] if tested else pd.Series(np.nan, index=frame.index)
    marks = [significance_mark(v) for v in p]
    carried = [bool(m) for m in marks]
    return _dumbbell(frame, f"{DEFAULT_CONDITION}_{measure}", f"{MOTIVATION_CONDITION}_{measure}", DEFAULT_CONDITION,
                     MOTIVATION_CONDITION, families, marks, title, carried=carried,
                     noise_name="within noise" if tested else "not tested")


def figure_image_dumbbell(effect: pd.DataFrame, *, families: Mapping[str, str] | None = None,
                          title: str | None = 'Items with and without an image: score per model') -> go.Figure:
    """Accuracy on items without (open circle) vs with an image (filled) per model."""
    frame = effect.sort_values("mean_without")
    return _dumbbell(frame, "mean_without", "mean_with", "without image", "with image", families, None, title)


def figure_forest(regression: pd.DataFrame, *, title: str | None = 'What predicts a correct answer? Odds ratios') -> go.Figure:
    """Odds ratios with 95% intervals on a log axis, intercept left out."""
    frame = regression[regression["predictor"] != "intercept"].iloc[::-1]
    labels = [term_label(p) for p in frame["predictor"]]
    colours = [HIGHER_COLOUR if o >= 1 else LOWER_COLOUR for o in frame["odds_ratio"]]
    fig = go.Figure(go.Scatter(
        x=frame["odds_ratio"], y=labels, mode="markers",
        marker=dict(size=9, color=colours),
        error_x=dict(type="data", symmetric=False, array=frame["ci_high"] - frame["odds_ratio"],
                     arrayminus=frame["odds_ratio"] - frame["ci_low"], color="#555"),
        hovertemplate="%{y}<br>odds ratio %{x:.2f}<extra></extra>",
    ))
    fig.add_vline(x=1.0, line_dash="dash", line_color="grey")
    fig.update_xaxes(title="Odds ratio (log scale, 95% CI)",
                     **log_ticks(np.r_[frame["ci_low"].to_numpy(float), frame["ci_high"].to_numpy(float), 1.0]))
    return _layout(named_axes(fig, y='Predictor'), title, height=max(320, 26 * len(frame) + 120))


#: The values a log axis may label: 1, 2 and 5 in every decade.
_LOG_STEPS = (1.0, 2.0, 5.0)


def log_ticks(values) -> dict:
    """Axis settings of a log axis labelled at 1-2-5 values only (0.5, 1, 2, 5, ...; only decades
    when the data span more than two of them), so plotly draws no small minor-digit labels."""
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite) & (finite > 0)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.1, 10.0)
    first, last = int(np.floor(np.log10(min(low, 1.0)))), int(np.ceil(np.log10(max(high, 1.0))))
    steps = (1.0,) if last - first > 2 else _LOG_STEPS
    ticks = [step * 10.0 ** exp for exp in range(first, last + 1) for step in steps]
    return dict(type="log", tickmode="array", tickvals=ticks, ticktext=[f"{t:g}" for t in ticks],
                minor=dict(showgrid=False, ticks=""))


def figure_delta_heatmap(per_model_type: pd.DataFrame, *, value: str = "delta",
                         title: str | None = 'Motivation minus default, per model and format (percentage points)') -> go.Figure:
    """Model x format heatmap of motivation minus default, in percentage points (diverging scale)."""
    grid = per_model_type.pivot_table(index="model", columns="type", values=value, aggfunc="mean")
    types = ordered_formats(grid.columns)
    grid = grid[types]
    z = percent(grid.to_numpy(dtype=float))
    lim = float(np.nanmax(np.abs(z))) if np.isfinite(z).any() else 1.0
    lim = lim if lim > 0 else 1.0
    text = [["" if np.isnan(v) else fmt(v, signed=True) for v in row] for row in z]
    fig = go.Figure(go.Heatmap(
        z=z, x=[format_label(t) for t in types], y=list(grid.index), zmin=-lim, zmax=lim, zmid=0,
        colorscale="RdBu", text=text, texttemplate="%{text}", colorbar=dict(title="pp"),
        hovertemplate="%{y}<br>%{x}: %{z:+.1f} pp<extra></extra>",
    ))
    fig.update_xaxes(tickangle=-30)
    return _layout(named_axes(fig, x='Format', y='Model'), title, height=max(320, 38 * len(grid) + 160))


def figure_language_mcq(by_language: pd.DataFrame, *, families: Mapping[str, str] | None = None,
                        title: str | None = 'Multiple choice by language') -> go.Figure:
    """Multiple-choice accuracy per model in each language (grouped bars, Wilson intervals)."""
    fig = go.Figure()
    palette = {"it": "#009246", "en": "#012169"}
    for lang, sub in by_language.groupby("language", sort=True):
        mean = _pct(sub["mean"])
        fig.add_bar(x=sub["model"], y=mean, name=language_label(lang),
                    marker_color=palette.get(lang, "#777"),
                    error_y=dict(type="data", symmetric=False, array=_pct(sub["ci_high"]) - mean,
                                 arrayminus=mean - _pct(sub["ci_low"])),
                    hovertemplate="%{x}<br>%{y:.1f}%<extra>" + str(lang) + "</extra>")
    fig.update_layout(barmode="group")
    fig.update_yaxes(title="Multiple-choice accuracy (%)", range=[0, 105])
    fig.update_xaxes(tickangle=-30)
    return _layout(named_axes(fig, x='Model'), title, height=420)


def figure_profile_impact(impact: pd.DataFrame, *, title: str | None = 'Paper minus strict scoring, per model and format (percentage points)') -> go.Figure:
    """How far the paper scorer moves each model and format relative to strict (percentage points)."""
    value = "delta" if "delta" in impact else [c for c in impact.columns if "delta" in c or "diff" in c][0]
    return figure_delta_heatmap(impact.rename(columns={value: "_v"}), value="_v", title=title)


def figure_spread(spread: pd.DataFrame, *, families: Mapping[str, str] | None = None,
                  title: str | None = 'Best minus worst format, per model') -> go.Figure:
    """Per model: best and worst format mean and the spread between them."""
    frame = spread.sort_values("spread")
    fams = _families(frame["model"], families)
    fig = go.Figure(go.Bar(
        y=frame["model"], x=_pct(frame["spread"]), orientation="h",
        marker_color=[family_colour(f) for f in fams],
        text=[f"{format_label(b)} vs {format_label(w)}" for b, w in zip(frame["best_type"], frame["worst_type"])],
        textposition="auto",
        hovertemplate="%{y}<br>spread %{x:.1f} pp<br>%{text}<extra></extra>",
    ))
    fig.update_xaxes(title="Best minus worst format (pp)")
    return _layout(named_axes(fig, y='Model'), title, height=max(300, 40 * len(frame) + 120))


def figure_item_scores(responses: pd.DataFrame, *, title: str | None = 'Score of every model on this item') -> go.Figure:
    """Scores of every model x condition on one item (small bar chart on the item card)."""
    frame = responses.sort_values(["model", "condition"])
    fig = go.Figure()
    for cond, sub in frame.groupby("condition"):
        fig.add_bar(x=sub["model"], y=_pct(sub["score"]), name=cond)
    fig.update_layout(barmode="group")
    fig.update_yaxes(title="Score (%)", range=[0, 100])
    return _layout(named_axes(fig, x='Model'), title, height=320)


def trace_values(fig: go.Figure, trace: int = 0, axis: str = "x") -> list:
    """The plotted values of one trace as plain Python numbers (for tests and exports)."""
    return [float(v) for v in np.asarray(fig.data[trace][axis], dtype=float)]

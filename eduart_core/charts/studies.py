"""Plotly figures of the "Tasks and dimensions" page and the image-attribute breakdown.

One function ``figure_<name>(frame, **options) -> go.Figure`` per figure, drawn from the output of
the study analyses (fractions in [0, 1], shown in percent), used by the page, the report and the
tests alike. No Streamlit, no SQL, no statistics beyond sorting and scaling. Families the shared
palette does not know (study panels name many) get colours from a fixed colour-blind-safe cycle,
in order of first appearance, so a family keeps its colour across the figures of one page.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..vocab import OVERALL_COLUMN
from .results import FONT, OTHER_COLOUR, family_colour, named_axes

BEST_MARK, SECOND_MARK, BELOW_MARK = "▲", "△", "↓"
#: Tol's muted palette: colours for families the shared palette does not name.
CYCLE = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499",
         "#6699CC", "#AA4466", "#4477AA")
ENVELOPE_COLOUR = "#000000"


def _layout(fig: go.Figure, title: str | None, height: int | None = None) -> go.Figure:
    fig.update_layout(title=dict(text=title) if title else None, font=FONT, template="plotly_white",
                      margin=dict(l=10, r=10, t=60 if title else 30, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1))
    if height:
        fig.update_layout(height=height)
    return fig


def family_colours(families: list[str]) -> dict[str, str]:
    """A colour per family: the shared palette where it has one, else the next colour of `CYCLE`."""
    out, spare = {}, iter(CYCLE * 4)
    for fam in dict.fromkeys(families):
        colour = family_colour(fam)
        out[fam] = colour if colour != OTHER_COLOUR else next(spare)
    return out


def _label(column: str) -> str:
    return "Overall" if column == OVERALL_COLUMN else str(column)


def _pct(values) -> np.ndarray:
    return np.round(np.asarray(values, dtype=float) * 100.0, 1)


def figure_dimension_heatmap(scores: pd.DataFrame, *, title: str | None = 'Scores by task or dimension (%)') -> go.Figure:
    """Model x task (or dimension) heatmap, 0-100; ▲ best and △ second per column, ↓ below chance; median last."""
    columns = list(dict.fromkeys(scores["column"]))
    models = list(dict.fromkeys(scores.loc[~scores["is_median"], "model"])) + \
        list(dict.fromkeys(scores.loc[scores["is_median"], "model"]))
    cells = _cell_texts(scores)
    z = np.array([[cells.get((m, c), (np.nan, ""))[0] for c in columns] for m in models], dtype=float)
    text = [[cells.get((m, c), (np.nan, ""))[1] for c in columns] for m in models]
    fig = go.Figure(go.Heatmap(
        z=_pct(z), x=[_label(c) for c in columns], y=models, text=text,
        texttemplate="%{text}", zmin=0, zmax=100, colorscale="Viridis", colorbar=dict(title="Score (%)"),
        hovertemplate="%{y}<br>%{x}: %{z:.1f}%<extra></extra>"))
    fig.update_yaxes(autorange="reversed", title=None)
    fig.update_xaxes(side="top", tickangle=-30, title=None)
    return _layout(named_axes(fig, x='Task or dimension', y='Model'), title, height=max(320, 30 * len(models) + 160))


def _cell_texts(scores: pd.DataFrame) -> dict[tuple[str, str], tuple[float, str]]:
    """(model, column) -> (score, '73.5 ▲ ↓'): the value with its marks, as heatmap and table show it."""
    out = {}
    for model, column, score, mark, below in zip(scores["model"], scores["column"], scores["score"],
                                                 scores["mark"], scores["below_chance"]):
        if pd.isna(score):
            out[(model, column)] = (np.nan, "")
            continue
        sign = {"best": f" {BEST_MARK}", "second": f" {SECOND_MARK}"}.get(str(mark), "")
        out[(model, column)] = (float(score), f"{100 * float(score):.1f}{sign}{f' {BELOW_MARK}' if below else ''}")
    return out


def figure_correlation_matrix(corr: pd.DataFrame, *, title: str | None = "How the tasks' scores correlate across models") -> go.Figure:
    """Spearman rho between tasks (-1 to 1), each cell labelled with rho and its n."""
    columns = list(dict.fromkeys(corr["column_a"]))
    rho = corr.pivot_table(index="column_a", columns="column_b", values="rho", aggfunc="first", sort=False) \
        .reindex(index=columns, columns=columns)
    n = corr.pivot_table(index="column_a", columns="column_b", values="n", aggfunc="first", sort=False) \
        .reindex(index=columns, columns=columns)
    p = corr.pivot_table(index="column_a", columns="column_b", values="p", aggfunc="first", sort=False) \
        .reindex(index=columns, columns=columns)
    text = [["" if pd.isna(rho.iloc[i, j]) else f"{rho.iloc[i, j]:.2f}" for j in range(len(columns))]
            for i in range(len(columns))]
    custom = np.dstack([n.to_numpy(dtype=float), p.to_numpy(dtype=float)])
    fig = go.Figure(go.Heatmap(
        z=rho.to_numpy(dtype=float), x=columns, y=columns, text=text, texttemplate="%{text}", zmin=-1, zmax=1,
        colorscale="RdBu", colorbar=dict(title="rho"), customdata=custom,
        hovertemplate="%{y} vs %{x}<br>rho %{z:.2f}, n %{customdata[0]:.0f}, p %{customdata[1]:.3g}<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickangle=-30)
    return _layout(named_axes(fig, x='Task', y='Task'), title, height=max(360, 34 * len(columns) + 200))


def figure_family_best(best: pd.DataFrame, *, title: str | None = 'Best score in each model family') -> go.Figure:
    """Best model of each family per task (lines), with the best-available envelope (thick black) on top."""
    columns = list(dict.fromkeys(best["column"]))
    labels = [_label(c) for c in columns]
    fams = best.loc[best["group_kind"] == "family"]
    colours = family_colours(list(fams["group"]))
    fig = go.Figure()
    for fam, g in fams.groupby("group", sort=False):
        g = g.set_index("column").reindex(columns)
        fig.add_scatter(x=labels, y=_pct(g["score"]), mode="lines+markers", name=str(fam),
                        line=dict(color=colours[fam], width=1.5), marker=dict(size=7),
                        customdata=g["model"].fillna("").to_numpy(dtype=object),
                        hovertemplate="%{fullData.name}<br>%{x}: %{y:.1f}% (%{customdata})<extra></extra>")
    envelopes = best.loc[best["group_kind"] == "envelope"]
    styles = {"Best available": dict(color=ENVELOPE_COLOUR, width=4), "Best open": dict(color="#555555", width=2,
                                                                                          dash="dot"),
              "Best closed": dict(color="#555555", width=2, dash="dash")}
    for group, g in envelopes.groupby("group", sort=False):
        g = g.set_index("column").reindex(columns)
        fig.add_scatter(x=labels, y=_pct(g["score"]), mode="lines", name=str(group),
                        line=styles.get(str(group), dict(color=ENVELOPE_COLOUR, width=2)),
                        customdata=g["model"].fillna("").to_numpy(dtype=object),
                        hovertemplate="%{fullData.name}<br>%{x}: %{y:.1f}% (%{customdata})<extra></extra>")
    fig.update_yaxes(title="Best score in the family (%)", range=[0, 100])
    fig.update_xaxes(tickangle=-30)
    return _layout(named_axes(fig, x='Task or dimension'), title, height=460)


def figure_distractors(choices: pd.DataFrame, *, model: str = "All models", title: str | None = 'Which wrong choices the models make') -> go.Figure:
    """Share of wrong choices per distractor type in each task (stacked to 100%), for one model or all pooled."""
    d = choices.loc[choices["model"] == model]
    columns = list(dict.fromkeys(d["column"]))
    fig = go.Figure()
    for kind, g in d.groupby("distractor_type", sort=True):
        g = g.set_index("column").reindex(columns)
        fig.add_bar(y=columns, x=_pct(g["share"].fillna(0)), orientation="h", name=str(kind),
                    customdata=np.dstack([_pct(g["expected_share"].fillna(0)), g["n_wrong"].fillna(0)])[0],
                    hovertemplate="%{fullData.name}<br>%{y}: %{x:.1f}% of wrong choices "
                                  "(uniform guessing: %{customdata[0]:.1f}%; n = %{customdata[1]:.0f})<extra></extra>")
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title="Share of wrong choices (%)", range=[0, 100])
    fig.update_yaxes(autorange="reversed", title=None)
    return _layout(named_axes(fig, y='Kind of distractor'), title, height=max(300, 40 * len(columns) + 140))


def figure_invalid_rates(rates: pd.DataFrame, *, families: Mapping[str, str] | None = None,
                         title: str | None = 'Answers that could not be scored, per model') -> go.Figure:
    """Per model, the share of answers refused, unparseable or naming no option (stacked), overall column."""
    d = rates.loc[rates["column"] == OVERALL_COLUMN].sort_values("rate", kind="stable")
    fig = go.Figure()
    for col, name, colour in (("n_refused", "refused", "#CC6677"), ("n_unparseable", "unparseable", "#DDCC77"),
                              ("n_not_an_option", "not an option", "#88CCEE")):
        share = d[col] / d["n"]
        fig.add_bar(y=d["model"], x=_pct(share), orientation="h", name=name, marker_color=colour,
                    customdata=np.dstack([d[col], d["n"]])[0],
                    hovertemplate=f"%{{y}}<br>{name}: %{{x:.1f}}% (%{{customdata[0]}} of %{{customdata[1]}})"
                                  "<extra></extra>")
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title="Answers that could not be scored as an answer (%)", rangemode="tozero")
    fig.update_yaxes(title=None)
    return _layout(named_axes(fig, y='Model'), title, height=max(300, 30 * len(d) + 140))


def figure_attribute_scores(scores: pd.DataFrame, *, attribute: str, title: str | None = 'Scores by image attribute') -> go.Figure:
    """Mean score per value of one image attribute, all models pooled, with Wilson 95% intervals."""
    d = scores.loc[(scores["attribute"] == attribute) & (scores["model"] == "All models")]
    mean = _pct(d["score"])
    fig = go.Figure(go.Bar(
        x=d["value"].astype(str), y=mean, marker_color="#4477AA", text=[f"{v:.1f}" for v in mean],
        textposition="inside", customdata=np.dstack([d["n_items"], d["n"]])[0],
        error_y=dict(type="data", symmetric=False, array=_pct(d["ci_high"]) - mean,
                     arrayminus=mean - _pct(d["ci_low"]), color="black"),
        hovertemplate="%{x}: %{y:.1f}% (%{customdata[0]} items, %{customdata[1]} answers)<extra></extra>"))
    fig.update_yaxes(title="Score (%)", range=[0, 100])
    fig.update_xaxes(title=attribute.replace("_", " "), type="category")
    return _layout(fig, title, height=360)


def figure_external_correlations(corr: pd.DataFrame, *, title: str | None = 'Correlation with published measures') -> go.Figure:
    """Spearman rho between each task and each external benchmark; the label says rho and n."""
    columns = list(dict.fromkeys(corr["column"]))
    benches = list(dict.fromkeys(corr["benchmark"]))
    rho = corr.pivot_table(index="column", columns="benchmark", values="rho", aggfunc="first", sort=False) \
        .reindex(index=columns, columns=benches)
    n = corr.pivot_table(index="column", columns="benchmark", values="n", aggfunc="first", sort=False) \
        .reindex(index=columns, columns=benches)
    text = [["" if pd.isna(rho.iloc[i, j]) else f"{rho.iloc[i, j]:.2f} (n={int(n.iloc[i, j])})"
             for j in range(len(benches))] for i in range(len(columns))]
    fig = go.Figure(go.Heatmap(z=rho.to_numpy(dtype=float), x=benches, y=[_label(c) for c in columns], text=text,
                               texttemplate="%{text}", zmin=-1, zmax=1, colorscale="RdBu",
                               colorbar=dict(title="rho")))
    fig.update_yaxes(autorange="reversed")
    return _layout(named_axes(fig, x='Published measure', y='Task'), title, height=max(300, 34 * len(columns) + 160))


def marked_table(scores: pd.DataFrame) -> pd.DataFrame:
    """The scores as a model x column table of text cells ('73.5 ▲', '12.0 ↓'), median row last.

    The same marks as the heatmap, for readers who copy the table; numbers stay in `show`.
    """
    columns = list(dict.fromkeys(scores["column"]))
    order = list(dict.fromkeys(scores.loc[~scores["is_median"], "model"])) + \
        list(dict.fromkeys(scores.loc[scores["is_median"], "model"]))
    cells = _cell_texts(scores)
    return pd.DataFrame([{"model": m, **{_label(c): cells.get((m, c), (np.nan, ""))[1] for c in columns}}
                         for m in order])

"""Figures of the Robustness page: flip rates under variants, position bias, accuracy drop without the image.

Why plain bars with error bars: each number is a share with a 95% interval, and the reader's
question is which model's bar is far from zero (flip, drop) or from the key's share (position).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .results import FONT, named_axes

_KIND_ORDER = ("rotate", "relabel", "no_image", "grayscale", "crop", "downscale", "mirror", "translate", "paraphrase")


def _pct(values) -> np.ndarray:
    return np.round(np.asarray(values, dtype=float) * 100.0, 1)


def _layout(fig: go.Figure, title: str | None, height: int) -> go.Figure:
    fig.update_layout(title=dict(text=title) if title else None, font=FONT, template="plotly_white", barmode="group",
                      height=height, margin=dict(l=10, r=10, t=60 if title else 30, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1))
    return fig


def _kinds(frame: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(frame["kind"].astype(str)))
    return [k for k in _KIND_ORDER if k in present] + [k for k in present if k not in _KIND_ORDER]


def figure_flip_rates(table: pd.DataFrame, *, title: str | None = "Flip rate under each variant kind (%)") -> go.Figure:
    """One bar per model and variant kind: share of items whose answer flips on a variant, Wilson 95% interval."""
    fig = go.Figure()
    for model, d in table.groupby("model", sort=True):
        d = d.set_index("kind").reindex(_kinds(table)).dropna(subset=["flip_rate"])
        rate = _pct(d["flip_rate"])
        fig.add_trace(go.Bar(
            name=str(model), x=list(d.index), y=rate, customdata=np.dstack([d["n_items"], d["n_flipped"]])[0],
            error_y=dict(type="data", symmetric=False, array=_pct(d["flip_high"]) - rate,
                         arrayminus=rate - _pct(d["flip_low"]), color="black"),
            hovertemplate=f"{model}, %{{x}}: %{{y:.1f}}% (%{{customdata[1]}} of %{{customdata[0]}} items)<extra></extra>"))
    fig.update_yaxes(range=[0, 100])
    return _layout(named_axes(fig, x="Variant kind", y="Items whose answer flips (%)"), title, 380)


def figure_position_bias(bias: pd.DataFrame, *, title: str | None = "Chosen option position against the key (%)"
                         ) -> go.Figure:
    """Per model, the share of answers choosing each option position (Wilson 95%); the key's share as a line."""
    fig = go.Figure()
    for model, d in bias.groupby("model", sort=True):
        share = _pct(d["chosen_share"])
        fig.add_trace(go.Bar(
            name=str(model), x=[f"position {int(p)}" for p in d["position"]], y=share,
            error_y=dict(type="data", symmetric=False, array=_pct(d["chosen_high"]) - share,
                         arrayminus=share - _pct(d["chosen_low"]), color="black"),
            hovertemplate=f"{model}, %{{x}}: %{{y:.1f}}% of its answers<extra></extra>"))
    key = bias.groupby("position", sort=True)["key_share"].mean()
    fig.add_trace(go.Scatter(name="key in this position", x=[f"position {int(p)}" for p in key.index], y=_pct(key),
                             mode="lines+markers", line=dict(color="black", dash="dash")))
    fig.update_yaxes(range=[0, 100])
    return _layout(named_axes(fig, x="Option position (1 = first shown)", y="Answers choosing it (%)"), title, 380)


def figure_image_drop(table: pd.DataFrame, *, title: str | None = "Accuracy drop without or with a changed image "
                                                                  "(points)") -> go.Figure:
    """Per model and image kind: source accuracy minus variant accuracy, Newcombe paired 95% interval."""
    fig = go.Figure()
    for model, d in table.groupby("model", sort=True):
        d = d.set_index("kind").reindex(_kinds(table)).dropna(subset=["drop"])
        drop = _pct(d["drop"])
        fig.add_trace(go.Bar(
            name=str(model), x=list(d.index), y=drop,
            error_y=dict(type="data", symmetric=False, array=_pct(d["drop_high"]) - drop,
                         arrayminus=drop - _pct(d["drop_low"]), color="black"),
            hovertemplate=f"{model}, %{{x}}: %{{y:+.1f}} points<extra></extra>"))
    fig.add_hline(y=0, line_color="grey")
    return _layout(named_axes(fig, x="Image variant", y="Accuracy drop (percentage points)"), title, 380)


__all__ = ["figure_flip_rates", "figure_image_drop", "figure_position_bias"]

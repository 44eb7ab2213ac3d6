"""Panels of the Runs page: stability over repeats (flip rate per model) and the items that flip most.

The captions say what the numbers hold (items with repeats, how many repeats, the interval and the
split's method) and, with no repeats in the selection, say so in one line instead.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from .. import findings, views
from ..analysis.intervals import WILSON_WORDS
from ..analysis.stability import METHOD_WORDS, TEST_WORDS
from ..selection import Selection
from ._base import Shown, Words

#: The one line a panel says when no examinee of the selection has repeats.
NO_REPEATS = ("No examinee in this selection has repeats, so there is no stability to show: ask items again with "
              "`run --repeat K` (or import lines with \"repeat\": k).")


def _load_stability(src: views.Source, sel: Selection, frame, options: Mapping[str, Any]) -> dict:
    return {"unstable": views.unstable_model(src, sel) if not frame.empty else None}


def stability_words(shown: Shown) -> Words:
    """Flip rate per model and condition with its Wilson interval, and the run-to-run spread."""
    table = shown.frame
    if table.empty:
        return Words(NO_REPEATS, "Flip rate between repeats (%)", n="no items with repeats")
    items = int(table["items"].max())
    repeats = int(table["repeats"].max())
    spread = table["macro_sd"].dropna()
    sd_words = (f"; run-to-run SD of the macro average {100 * spread.min():.1f} to {100 * spread.max():.1f} points"
                if len(spread) else "")
    share = table["repeat_share"].dropna()
    split_words = (f"; repeats make {100 * share.min():.0f}-{100 * share.max():.0f}% of the variance of the "
                   "repeat-averaged macro average, the rest is item sampling" if len(share) else "")
    caption = (f"Flip rate = share of items right in some repeats and wrong in others, per model and condition, "
               f"with {WILSON_WORDS}, on the items each answered in at least two repeats (up to {items} items, "
               f"up to {repeats} repeats; {len(table)} model x condition rows){sd_words}{split_words}. "
               f"Methods: {METHOD_WORDS}.")
    story = findings.unstable_model_finding(shown.extra.get("unstable"))
    return Words(caption, "Flip rate between repeats (%)", test=f"{WILSON_WORDS}; difference: {TEST_WORDS}",
                 n=f"up to {items} items with repeats, up to {repeats} repeats",
                 story=story.headline if story else None)


def stability_figure(shown: Shown) -> go.Figure:
    """Flip rate per model x condition with its interval (horizontal bars)."""
    table = shown.frame.sort_values("flip_rate")
    labels = [f"{m} ({c})" for m, c in zip(table["model"], table["condition"])]
    fig = go.Figure(go.Bar(
        x=100 * table["flip_rate"], y=labels, orientation="h",
        error_x={"type": "data", "symmetric": False, "array": 100 * (table["flip_high"] - table["flip_rate"]),
                 "arrayminus": 100 * (table["flip_rate"] - table["flip_low"])},
        customdata=table[["items", "repeats"]].to_numpy(),
        hovertemplate="%{y}: %{x:.1f}% of %{customdata[0]} items flip (up to %{customdata[1]} repeats)<extra></extra>"))
    fig.update_layout(title="Stability over repeats: flip rate per model and condition",
                      xaxis_title="Flip rate between repeats (%)", yaxis_title="Model (condition)",
                      height=max(260, 28 * len(labels) + 120), margin={"l": 10, "r": 10, "t": 30, "b": 40})
    return fig


def item_stability_words(shown: Shown) -> Words:
    """The items whose answers flip most between repeats."""
    table = shown.frame
    if table.empty:
        return Words(NO_REPEATS, "Examinees that flip on the item", n="no items with repeats")
    examinees = int(table["examinees"].max())
    caption = (f"The {len(table)} items that flip most: per item, how many examinees (model x condition, up to "
               f"{examinees} with repeats of the item) were right in some repeats and wrong in others; "
               "most first, descriptive counts (no test).")
    return Words(caption, "Examinees that flip on the item", test="descriptive (counts)",
                 n=f"{len(table)} items, up to {examinees} examinees with repeats")


def item_stability_figure(shown: Shown) -> go.Figure:
    """Flips per item (bars, most first)."""
    table = shown.frame
    fig = go.Figure(go.Bar(x=table["item_id"].astype(str), y=table["flips"], customdata=table[["examinees"]].to_numpy(),
                           hovertemplate="item %{x}: %{y} of %{customdata[0]} examinees flip<extra></extra>"))
    fig.update_layout(title="Items that flip most between repeats", xaxis_title="Item",
                      yaxis_title="Examinees that flip", xaxis_type="category",
                      height=320, margin={"l": 10, "r": 10, "t": 30, "b": 40})
    return fig

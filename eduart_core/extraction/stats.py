"""Agreement statistics per extraction round: how many pages agreed, merged, queued or failed,
and which categories and fields the discrepancies fall in (overall and per format).

Why: after refining the prompt the team runs round 2 and needs to see, side by side, whether the
discrepancies shrank and which kinds remain. Pure functions over the frames that
``store.extraction`` returns (outcomes: page_id, round, merge_status, format; discrepancies:
page_id, round, path, field, category, format).
"""
from __future__ import annotations

import pandas as pd

from .merge import MERGE_STATUSES
from .normalise import CATEGORIES


def round_status_table(outcomes: pd.DataFrame, by_format: bool = False) -> pd.DataFrame:
    """Pages per round (and format) in each merge status, with the total and agreement share."""
    keys = ["round", "format"] if by_format else ["round"]
    if outcomes.empty:
        return pd.DataFrame(columns=keys + ["pages", *MERGE_STATUSES, "agreed_share"])
    table = (outcomes.groupby(keys + ["merge_status"]).size().unstack("merge_status", fill_value=0)
             .reindex(columns=list(MERGE_STATUSES), fill_value=0))
    table.insert(0, "pages", table.sum(axis=1))
    table["agreed_share"] = (table["agreed"] + table["auto_merged"]) / table["pages"]
    return table.reset_index()


def discrepancy_table(discrepancies: pd.DataFrame, by: str = "category") -> pd.DataFrame:
    """Rows = categories (or fields, or formats), one column per round: discrepancy counts.

    For ``by="category"`` every category is listed, zeros included, in ladder order, so two
    rounds can be read side by side.
    """
    rounds = sorted(discrepancies["round"].unique()) if not discrepancies.empty else []
    if discrepancies.empty:
        index = list(CATEGORIES) if by == "category" else []
        return pd.DataFrame(0, index=pd.Index(index, name=by), columns=[])
    table = discrepancies.groupby([by, "round"]).size().unstack("round", fill_value=0)
    if by == "category":
        table = table.reindex(list(CATEGORIES), fill_value=0)
    table = table.reindex(columns=rounds, fill_value=0)
    table.columns = [f"round {r}" for r in table.columns]
    table.index.name = by
    return table


def discrepancy_by_format(discrepancies: pd.DataFrame) -> pd.DataFrame:
    """Counts per round x format x category (long form, for filtering on the page)."""
    if discrepancies.empty:
        return pd.DataFrame(columns=["round", "format", "category", "n"])
    return (discrepancies.groupby(["round", "format", "category"]).size()
            .rename("n").reset_index())


def review_progress(queue: pd.DataFrame) -> tuple[int, int]:
    """(resolved, total) pages of a review queue frame with a ``status`` column."""
    if queue.empty:
        return 0, 0
    return int((queue["status"] == "resolved").sum()), int(len(queue))

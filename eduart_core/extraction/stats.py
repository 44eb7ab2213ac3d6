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


def discrepancy_table(discrepancies: pd.DataFrame, by: str = "category",
                      rounds: list[int] | None = None) -> pd.DataFrame:
    """Rows = categories (or fields, or formats), one column per round: discrepancy counts.

    ``rounds`` lists every round that ran (from the outcomes), so a round without any
    discrepancy still gets its column of zeros. For ``by="category"`` every category is listed,
    zeros included, in ladder order, so two rounds can be read side by side.
    """
    present = set(int(r) for r in discrepancies["round"].unique()) if not discrepancies.empty else set()
    all_rounds = sorted(present | set(int(r) for r in (rounds or [])))
    if discrepancies.empty:
        table = pd.DataFrame(index=pd.Index(list(CATEGORIES) if by == "category" else [], name=by))
    else:
        table = discrepancies.groupby([by, "round"]).size().unstack("round", fill_value=0)
        table.columns = [int(c) for c in table.columns]
    if by == "category":
        table = table.reindex(list(CATEGORIES), fill_value=0)
    table = table.reindex(columns=all_rounds, fill_value=0).fillna(0).astype(int)
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

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


# --- agreement between reviewers ---------------------------------------------------------------

RATING_COLUMNS = ["dataset", "round", "page_id", "path", "field", "format", "unit", "rater", "category", "action"]


def review_ratings(state) -> pd.DataFrame:
    """One row per (queued field, reviewer): the reviewer's latest decision as a category.

    ``state`` is an ``extraction.review.ReviewState``. The category is the chosen value as
    canonical JSON (accepting A, accepting B or typing the same value as A are one category);
    flags and adjudications are not ratings.
    """
    from .consensus import canonical

    rows = []
    for row in state.queued.to_dict("records"):
        st = state.state(row["page_id"], row["round"], row["path"])
        for reviewer, decision in st.votes.items():
            rows.append({"dataset": row["dataset"], "round": int(row["round"]), "page_id": row["page_id"],
                         "path": row["path"], "field": row["field"], "format": row["format"],
                         "unit": f"{row['page_id']}|{int(row['round'])}|{row['path']}", "rater": reviewer,
                         "category": canonical(decision["new_value"]), "action": decision["action"]})
    return pd.DataFrame(rows, columns=RATING_COLUMNS)


def agreement_by(state, by: list[str] | None = None) -> pd.DataFrame:
    """Agreement statistics per group (e.g. ["dataset", "round"], ["field"], ["format"]) with an
    ``all`` row; see ``analysis.agreement.agreement_table``."""
    from ..analysis.agreement import agreement_table

    return agreement_table(review_ratings(state), by or [])


def status_report(state) -> dict:
    """Per dataset and round: pages, queue progress, promotions and agreement; plus every field
    still waiting (the machine-readable twin of the review page; ``review-status --json``).

    ``pages``: pages compared in the round; ``queued``: of them, pages sent to review;
    ``resolved``: queued pages whose every field is settled; ``promoted``: pages of the round
    that became a gold item; ``open_fields``: queued fields not settled and not waiting for
    the adjudicator; ``adjudication_pending``: fields waiting for the adjudicator.
    """
    from ..analysis.agreement import agreement
    from .consensus import ADJUDICATION, RESOLVED

    outcomes = state.outcomes
    ratings = review_ratings(state)
    rounds, open_fields = [], []
    keys = sorted({(str(d), int(r)) for d, r in zip(outcomes["dataset"], outcomes["round"])}) if len(outcomes) else []
    for dataset, rnd in keys:
        o = outcomes[(outcomes["dataset"] == dataset) & (outcomes["round"] == rnd)]
        q = state.queued[(state.queued["dataset"] == dataset) & (state.queued["round"] == rnd)]
        per_page: dict[str, list[str]] = {}
        pending = adjudication = 0
        for row in q.to_dict("records"):
            st = state.state(row["page_id"], rnd, row["path"])
            per_page.setdefault(row["page_id"], []).append(st.state)
            if st.state == ADJUDICATION:
                adjudication += 1
            elif st.state != RESOLVED:
                pending += 1
            if st.state != RESOLVED:
                open_fields.append({"dataset": dataset, "page": row["page_id"], "round": rnd, "field": row["path"],
                                    "category": row["category"], "state": st.state})
        r = ratings[(ratings["dataset"] == dataset) & (ratings["round"] == rnd)]
        stats = agreement(r)
        rounds.append({
            "dataset": dataset, "round": rnd, "pages": int(len(o)), "queued": len(per_page),
            "resolved": sum(all(s == RESOLVED for s in states) for states in per_page.values()),
            "promoted": int(o["promoted_version"].notna().sum()), "open_fields": pending,
            "adjudication_pending": adjudication, "reviewers_needed": state.reviewers_needed(dataset, rnd),
            "agreement": {k: stats[k] for k in ("units", "percent", "cohen_kappa", "fleiss_kappa",
                                                 "krippendorff_alpha", "alpha_ci")}
            | {"reviewers": stats["reviewers"], "fleiss_units": stats["fleiss_units"]},
        })
    return {"rounds": rounds, "open": open_fields}

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

RATING_COLUMNS = ["dataset", "round", "page_id", "path", "field", "format", "unit", "rater", "category", "action",
                  "value"]

#: How a decision is coded for Cohen's kappa, Fleiss' kappa and Krippendorff's alpha, in words (page,
#: report and `show` captions say it): coding by the chosen value would give every field categories of
#: its own, make chance agreement near zero and so overstate agreement beyond chance.
AGREEMENT_CODING = ("Each reviewer's latest decision on a field is coded by choice, among the candidates the "
                    "reviewer faced: extractor A, extractor B (the extractor itself, whichever side it was shown "
                    "on), an edit (two edits agree when their values are equal) or a flag. Percent, Cohen's and "
                    "Fleiss' kappa and Krippendorff's alpha use that coding; agreement on the final value (the "
                    "same value chosen, however: typing A's value agrees with accepting A; a flag chooses no "
                    "value) is reported separately as a percentage.")


def decision_choice(decision: dict) -> str:
    """The category of one decision by choice: ``A``, ``B``, ``edit <value as canonical JSON>`` or ``flag``.

    Actions name the true extractor (pages map the side a blind reviewer clicked), so the order a
    reviewer was shown never changes the category.
    """
    from .consensus import FLAG, canonical
    from .review import ACCEPT_A, ACCEPT_B

    action = decision["action"]
    if action == ACCEPT_A:
        return "A"
    if action == ACCEPT_B:
        return "B"
    if action == FLAG:
        return "flag"
    return "edit " + canonical(decision.get("new_value"))


def unsettled_blind_rounds(state) -> list[tuple[str, int]]:
    """(dataset, round) of the blind rounds (2+ reviewers per page) with a queued field not yet settled.

    Their agreement is withheld from everyone until they are settled: a number computed on an open
    round tells a participant whether the others chose differently."""
    out = set()
    for row in state.queued[["dataset", "page_id", "round", "path"]].itertuples(index=False):
        if (state.reviewers_needed(row.dataset, row.round) > 1
                and not state.state(row.page_id, row.round, row.path).resolved):
            out.add((str(row.dataset), int(row.round)))
    return sorted(out)


def review_ratings(state) -> pd.DataFrame:
    """One row per (queued field, reviewer): the reviewer's latest review decision, flags included;
    the fields of blind rounds not yet settled are left out (``unsettled_blind_rounds``).

    ``state`` is an ``extraction.review.ReviewState``. ``category`` codes the decision by choice
    (`decision_choice`, see `AGREEMENT_CODING`); ``value`` is the chosen value as canonical JSON
    for the agreement on the final value (a flag chose none: it never agrees on a value).
    Adjudications are not ratings, nor are decisions on seeded gold pages (``review_gold``: they are
    gold checks); a seeded page still unsettled withholds its blind round like any other page.
    """
    from .consensus import FLAG, REVIEW_ROLE, canonical

    withheld = set(unsettled_blind_rounds(state))
    rows = []
    for row in state.queued.to_dict("records"):
        if (str(row["dataset"]), int(row["round"])) in withheld or (
                (str(row["page_id"]), int(row["round"])) in getattr(state, "seeded", {})):
            continue
        st = state.state(row["page_id"], row["round"], row["path"])
        latest: dict[str, dict] = dict(st.votes)
        for flag in st.flags:
            reviewer = str(flag["reviewer"])
            if (flag.get("role") or REVIEW_ROLE) != REVIEW_ROLE:
                continue
            if reviewer not in latest or int(flag["decision_id"]) > int(latest[reviewer]["decision_id"]):
                latest[reviewer] = flag
        unit = f"{row['page_id']}|{int(row['round'])}|{row['path']}"
        for reviewer, decision in latest.items():
            flagged = decision["action"] == FLAG
            rows.append({"dataset": row["dataset"], "round": int(row["round"]), "page_id": row["page_id"],
                         "path": row["path"], "field": row["field"], "format": row["format"],
                         "unit": unit, "rater": reviewer, "category": decision_choice(decision),
                         "action": decision["action"],
                         "value": f"flag by {reviewer}" if flagged else canonical(decision["new_value"])})
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
    the adjudicator; ``adjudication_pending``: fields waiting for the adjudicator. A blind round
    not yet settled (``agreement_withheld``) shows no agreement, and its unsettled fields are all
    open (``adjudication_pending`` None): whether its reviewers differ is nobody's to read yet.
    """
    from ..analysis.agreement import agreement
    from .consensus import ADJUDICATION, OPEN, RESOLVED

    outcomes = state.outcomes
    ratings = review_ratings(state)
    withheld = set(unsettled_blind_rounds(state))
    rounds, open_fields = [], []
    keys = sorted({(str(d), int(r)) for d, r in zip(outcomes["dataset"], outcomes["round"])}) if len(outcomes) else []
    for dataset, rnd in keys:
        o = outcomes[(outcomes["dataset"] == dataset) & (outcomes["round"] == rnd)]
        q = state.queued[(state.queued["dataset"] == dataset) & (state.queued["round"] == rnd)]
        per_page: dict[str, list[str]] = {}
        pending = adjudication = 0
        hidden = (dataset, rnd) in withheld  # a blind round under way: no field tells whether reviewers differ
        for row in q.to_dict("records"):
            st = state.state(row["page_id"], rnd, row["path"])
            shown = OPEN if hidden and st.state != RESOLVED else st.state
            per_page.setdefault(row["page_id"], []).append(st.state)
            if shown == ADJUDICATION:
                adjudication += 1
            elif shown != RESOLVED:
                pending += 1
            if shown != RESOLVED:
                open_fields.append({"dataset": dataset, "page": row["page_id"], "round": rnd, "field": row["path"],
                                    "category": row["category"], "state": shown})
        r = ratings[(ratings["dataset"] == dataset) & (ratings["round"] == rnd)]
        stats = agreement(r)
        rounds.append({
            "dataset": dataset, "round": rnd, "pages": int(len(o)), "queued": len(per_page),
            "resolved": sum(all(s == RESOLVED for s in states) for states in per_page.values()),
            "promoted": int(o["promoted_version"].notna().sum()), "open_fields": pending,
            "adjudication_pending": None if hidden else adjudication,
            "reviewers_needed": state.reviewers_needed(dataset, rnd), "agreement_withheld": hidden,
            "agreement": {k: stats[k] for k in ("units", "percent", "value_percent", "cohen_kappa", "fleiss_kappa",
                                                 "krippendorff_alpha", "alpha_ci")}
            | {"reviewers": stats["reviewers"], "fleiss_units": stats["fleiss_units"]},
        })
    return {"rounds": rounds, "open": open_fields}


#: The agreement table's columns in words, in the order a page shows them.
AGREEMENT_WORDS = {"units": "Fields decided by 2+ reviewers", "reviewers": "Reviewers", "ratings": "Decisions",
                   "percent": "Same choice by all reviewers",
                   "value_percent": "Same final value by all reviewers", "cohen_kappa": "Cohen's kappa",
                   "fleiss_kappa": "Fleiss' kappa", "fleiss_units": "Fields in Fleiss' kappa",
                   "krippendorff_alpha": "Krippendorff's alpha", "alpha_ci": "Alpha, 95% interval"}
GROUP_WORDS = {"dataset": ("Dataset", "all datasets"), "round": ("Round", "all rounds"),
               "field": ("Field", "all fields"), "format": ("Format", "all formats")}
NOT_COMPUTED = "—"


def agreement_words(table: pd.DataFrame) -> pd.DataFrame:
    """An ``agreement_by`` table as a page shows it: headers in words, shares as percentages,
    statistics to two decimals, "—" where a statistic is not defined (Cohen's kappa without
    exactly two reviewers, a kappa or alpha without variation), the ``all`` row named. Every
    cell is text, so a column never mixes numbers and words."""
    from ..vocab import format_label
    from .editors import field_label

    def number(x, digits: int = 2) -> str:
        return NOT_COMPUTED if x is None or pd.isna(x) else f"{float(x):.{digits}f}"

    def share(x) -> str:
        return NOT_COMPUTED if x is None or pd.isna(x) else f"{100 * float(x):.1f}%"

    rows = []
    for row in table.to_dict("records"):
        out = {}
        for key, (header, every) in GROUP_WORDS.items():
            if key not in table.columns:
                continue
            value = row[key]
            if value == "all":
                out[header] = every
            elif key == "format":
                out[header] = format_label(str(value))
            elif key == "field":
                out[header] = field_label(str(value), "")
            else:
                out[header] = str(int(value)) if key == "round" else str(value)
        low, high = row.get("alpha_ci_low"), row.get("alpha_ci_high")
        out.update({AGREEMENT_WORDS["units"]: str(int(row["units"])),
                    AGREEMENT_WORDS["reviewers"]: str(int(row["reviewers"])),
                    AGREEMENT_WORDS["ratings"]: str(int(row["ratings"])),
                    AGREEMENT_WORDS["percent"]: share(row["percent"]),
                    AGREEMENT_WORDS["value_percent"]: share(row["value_percent"]),
                    AGREEMENT_WORDS["cohen_kappa"]: number(row["cohen_kappa"]),
                    AGREEMENT_WORDS["fleiss_kappa"]: number(row["fleiss_kappa"]),
                    AGREEMENT_WORDS["fleiss_units"]: str(int(row["fleiss_units"] or 0)),
                    AGREEMENT_WORDS["krippendorff_alpha"]: number(row["krippendorff_alpha"]),
                    AGREEMENT_WORDS["alpha_ci"]: (NOT_COMPUTED if low is None or high is None or pd.isna(low)
                                                  or pd.isna(high) else f"{float(low):.2f} to {float(high):.2f}")})
        rows.append(out)
    headers = [h for k, (h, _) in GROUP_WORDS.items() if k in table.columns] + list(AGREEMENT_WORDS.values())
    return pd.DataFrame(rows, columns=headers, dtype=object)

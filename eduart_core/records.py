"""A rater's record: where adjudication overruled them, how often settled outcomes kept their
decisions week by week, and their severity as a grader.

Why a record of its own: a reviewer of extraction pages or a grader of open answers otherwise never
learns where the adjudicator decided against them, nor whether they mark more harshly than their
colleagues. The record is built from settled units only: a field of a blind round, or an answer of
a grading round, that is not settled yet shows nothing (not even the rater's own decision on it),
so the record never tells whether a colleague agreed before the round does. It never shows another
rater's decision either: of a settled unit it shows the rater's own decision, the settled value and
the adjudicator's note. Who may read it is checked here, not on a page: everyone may read their own
record; another person's needs ``team.SEE_RECORDS`` (adjudicator, admin). A rater is known by the
identity's subject (what decisions and grades store as reviewer and grader).

Units that count: a review field settled by blind agreement or by an adjudicator (a single-review
field settled by the rater's own decision agrees with itself and says nothing), and a graded
criterion of an answer with two or more graders. The severity is the many-facet Rasch estimate of
``analysis.judges.rater_severities`` over every grader's marks on the settled answers of one rubric.
Seeded gold answers (``judges.gold``) are no such units: their marks are gold checks, which the
record's ``gold`` frame summarises (accuracy, severity against the gold, the flag), the rater's own
once the round is over.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .analysis import rater_record as stats
from .store import Store
from .team import Identity, whose

REVIEW, GRADING = "review", "grading"
OVERRULED_COLUMNS = ["source", "dataset", "unit", "field", "decided_at", "yours", "adjudicated", "note",
                     "adjudicated_at", "simulated"]
SEVERITY_COLUMNS = ["dataset", "rubric", "graded_answers", "severity", "ci_low", "ci_high", "n_marks", "words",
                    "simulated"]


@dataclass(frozen=True)
class RaterRecord:
    """One rater's record (every frame holds settled units only)."""

    rater: str
    overruled: pd.DataFrame   # OVERRULED_COLUMNS: their decisions and marks adjudication changed
    agreement: pd.DataFrame   # analysis.rater_record.AGREEMENT_COLUMNS: per source and week
    severity: pd.DataFrame    # SEVERITY_COLUMNS: per dataset and rubric they graded
    simulated: bool           # some of the units come from simulated data (the demo)
    gold: pd.DataFrame = field(default_factory=pd.DataFrame)  # analysis.gold.GOLD_COLUMNS: seeded gold, the flag


def _text(value: Any) -> str | None:
    """A decided value as text (values are data, shown as text, never rendered)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _review_units(store: Store, rater: str) -> tuple[list[dict], list[dict]]:
    """(units for agreement, overruled rows) of the extraction review fields the rater decided."""
    from .extraction import review
    from .extraction.consensus import canonical

    review.ensure_schema(store)
    state = review.load_state(store)
    simulated = dict(zip(state.pages["page_id"], state.pages.get("simulated", pd.Series(dtype=bool))))
    units, overruled = [], []
    for (page_id, round_, path), st in state.states.items():
        vote = st.votes.get(rater)
        if state.is_seeded(page_id, round_):
            continue  # seeded gold: a gold check (``gold`` below), not a unit of agreement
        if vote is None or not st.resolved or st.how not in ("agreement", "adjudication"):
            continue  # unsettled (blind until settled), or settled by one person alone
        agree = canonical(vote.get("new_value")) == canonical(st.value)
        units.append({"source": REVIEW, "at": vote["decided_at"], "agree": agree,
                      "simulated": bool(simulated.get(page_id, False))})
        if st.how == "adjudication" and not agree:
            last = st.adjudications[-1] if st.adjudications else {}
            overruled.append({"source": REVIEW, "dataset": state.dataset_of(page_id), "unit": f"{page_id} round {round_}",
                              "field": path, "decided_at": vote["decided_at"], "yours": _text(vote.get("new_value")),
                              "adjudicated": _text(st.value), "note": last.get("note") or None,
                              "adjudicated_at": last.get("decided_at"),
                              "simulated": bool(simulated.get(page_id, False))})
    return units, overruled


def _grading_units(store: Store, rater: str) -> tuple[list[dict], list[dict], pd.DataFrame]:
    """(units for agreement, overruled rows, severity rows) of the criteria the rater graded."""
    from .analysis.judges import UNIT_KEYS, human_reference
    from .judges.grading import settled_grades
    from .vocab import ADJUDICATE_ROLE, GRADE_ROLE

    settled = settled_grades(store)
    units: list[dict] = []
    overruled: list[dict] = []
    severity: list[dict] = []
    if settled.empty or not (settled["grader"].astype(str) == rater).any():
        return units, overruled, pd.DataFrame(columns=SEVERITY_COLUMNS)
    for (dataset, rubric), part in settled.groupby(["dataset", "rubric"], sort=True):
        blind = part[part["role"] == GRADE_ROLE]
        mine = blind[blind["grader"].astype(str) == rater]
        if mine.empty:
            continue
        reference = human_reference(part)
        adjudications = part[part["role"] == ADJUDICATE_ROLE].sort_values("graded_at").drop_duplicates(
            UNIT_KEYS, keep="last")
        merged = mine.merge(reference[[*UNIT_KEYS, "n_graders", "human", "adjudicated"]], on=UNIT_KEYS)
        merged = merged.merge(adjudications[[*UNIT_KEYS, "note", "graded_at"]].rename(
            columns={"note": "adj_note", "graded_at": "adj_at"}), on=UNIT_KEYS, how="left")
        for row in merged.to_dict("records"):
            if int(row["n_graders"]) < 2:
                continue  # the only grader of this criterion: nothing to agree with
            agree = float(row["points"]) == float(row["human"])
            units.append({"source": GRADING, "at": row["graded_at"], "agree": agree,
                          "simulated": bool(row["simulated"])})
            if bool(row["adjudicated"]) and not agree:
                unit = f"item {row['item_id']}, answer {int(row['position']) + 1} of round {int(row['round_number'])}"
                overruled.append({"source": GRADING, "dataset": dataset, "unit": unit,
                                  "field": row["criterion"], "decided_at": row["graded_at"],
                                  "yours": _text(float(row["points"])), "adjudicated": _text(float(row["human"])),
                                  "note": row["adj_note"] if isinstance(row["adj_note"], str) else None,
                                  "adjudicated_at": row["adj_at"], "simulated": bool(row["simulated"])})
        severity.append(_severity(str(dataset), str(rubric), blind, mine, rater))
    return units, overruled, pd.DataFrame(severity, columns=SEVERITY_COLUMNS)


def _severity(dataset: str, rubric: str, blind: pd.DataFrame, mine: pd.DataFrame, rater: str) -> dict:
    """The rater's severity on one rubric, or why it is not shown yet."""
    from .analysis.judges import ANSWER_KEYS, rater_severities
    from .vocab import HUMAN_RATER

    answers = int(mine[ANSWER_KEYS].drop_duplicates().shape[0])
    row = {"dataset": dataset, "rubric": rubric, "graded_answers": answers, "severity": math.nan,
           "ci_low": math.nan, "ci_high": math.nan, "n_marks": len(mine), "simulated": bool(mine["simulated"].any())}
    if answers < stats.MIN_SEVERITY_ANSWERS:
        return {**row, "words": stats.severity_pending(answers)}
    ratings = pd.DataFrame({"answer": blind["token"].astype(str), "criterion": blind["criterion"].astype(str),
                            "rater": blind["grader"].astype(str), "kind": HUMAN_RATER,
                            "points": blind["points"].astype(float), "max_points": blind["max_points"].astype(float)})
    # a criterion every grader marked the same on every answer says nothing about severity, and the
    # model cannot place it (an extreme item): it is left out
    varied = ratings.groupby("criterion")["points"].transform("nunique") > 1
    table = rater_severities(ratings[varied.to_numpy()])
    found = table[table["rater"] == rater]
    if found.empty or pd.isna(found["severity"].iloc[0]):
        note = found["note"].iloc[0] if len(found) and found["note"].iloc[0] else "not estimable"
        return {**row, "words": f"Severity {note} ({answers} settled graded answers)."}
    est = found.iloc[0]
    return {**row, "severity": float(est["severity"]), "ci_low": float(est["severity_low"]),
            "ci_high": float(est["severity_high"]),
            "words": stats.severity_words(float(est["severity"]), float(est["severity_low"]),
                                          float(est["severity_high"]), answers, len(mine))}


def rater_record(store: Store, who: Identity, rater: str | None = None) -> RaterRecord:
    """The record of ``rater`` (default: ``who`` themself) as ``who`` may read it: their own always,
    anyone's with the adjudicator or admin role (``team.PermissionDenied``, one line, otherwise)."""
    subject = whose(who, rater)
    review_units, review_overruled = _review_units(store, subject)
    grading_units, grading_overruled, severity = _grading_units(store, subject)
    overruled = pd.DataFrame(review_overruled + grading_overruled, columns=OVERRULED_COLUMNS)
    if len(overruled):
        overruled = overruled.sort_values("decided_at", kind="stable").reset_index(drop=True)
    units = pd.DataFrame(review_units + grading_units, columns=["source", "at", "agree", "simulated"])
    agreement = stats.agreement_by_week(units)
    from .extraction.review_gold import gold_table as review_gold_table
    from .judges.gold import gold_table

    gold, review_gold = gold_table(store, who, subject), review_gold_table(store, who, subject)
    if len(review_gold):  # a reviewer's seeded gold pages (rubric "extraction review") beside the graders' rows
        gold = pd.concat([gold, review_gold], ignore_index=True) if len(gold) else review_gold
    simulated = (bool(units["simulated"].any()) or bool(severity["simulated"].astype(bool).any())
                 or bool(gold["simulated"].astype(bool).any()))
    return RaterRecord(subject, overruled, agreement, severity, simulated, gold)

"""Seeded gold in grading rounds: which settled answers may be seeded, and each grader's gold checks.

Why seeded gold: a grader who works alone has no colleague to agree or disagree with, and even in a
team the record only learns from answers two people graded. A round may serve, mixed among its
answers, answers whose marks are already settled (agreed by two or more blind graders, or decided by
an adjudicator): gold. They get fresh random tokens and shuffled positions like every other answer,
the grading task shows nothing more or less, and a grader never gets a gold answer they graded or
adjudicated themselves. A grader's marks on a seeded answer are stored with the role ``gold_check``,
which every reader of grades leaves out (``store.grades.load_grades``): they feed the grader's record
(accuracy and severity against the gold, ``analysis.gold``) and never the gold, a score, an
agreement or a calibration.

Who sees what: a grader sees their own gold results once the round they were seeded in is over (a
newer round of the dataset and rubric started), because a count that moves right after an answer
would tell them that answer was gold; adjudicators and admins (``team.SEE_RECORDS``) see everyone's
as they come in.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from ..errors import UserError
from ..store import Store
from ..vocab import GOLD_CHECK_ROLE, GRADE_ROLES
from .rubric import Rubric

if TYPE_CHECKING:
    from ..team import Identity

CHECK_COLUMNS = ["rater", "dataset", "rubric", "round", "current", "answer", "criterion", "points", "gold",
                 "max_points", "graded_at", "simulated"]


def check_rate(rate) -> float:
    """A seed rate as a float in [0, 1], or one line saying what it must be."""
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not math.isfinite(rate) or not 0 <= rate <= 1:
        raise UserError(f"the gold seed rate is the share of a round's answers that are seeded gold: a number "
                        f"from 0 to 1, not {rate!r}")
    return float(rate)


def _settled_answers(grades: pd.DataFrame, rules: Rubric) -> dict[tuple, dict[str, float]]:
    """Answer key -> {criterion: gold mark} of the answers whose every applicable criterion is settled
    by two or more agreeing graders or by an adjudicator (a single grader's mark is no gold)."""
    from ..analysis.judges import human_reference

    reference = human_reference(grades[grades["role"].isin(GRADE_ROLES)])
    if reference.empty:
        return {}
    good = reference["settled"] & ((reference["n_graders"] >= 2) | reference["adjudicated"])
    out: dict[tuple, dict[str, float]] = {}
    for key, part in reference.groupby(["item_id", "model", "condition"], sort=False):
        wanted = {c.id for c in rules.criteria if rules.applies(c, key[0])}
        rows = part[good.loc[part.index]]
        marks = dict(zip(rows["criterion"].astype(str), rows["human"].astype(float)))
        if wanted and wanted <= set(marks):
            out[key] = {c: marks[c] for c in wanted}
    return out


def seed_pool(store: Store, dataset: str, rules: Rubric, tokens=None) -> list[dict]:
    """The settled answers a new round may seed (token, item_id, model, condition, response_id): the
    answers of earlier rounds (seeded copies excepted) whose marks are settled. ``tokens`` narrows the
    pool to the answers named; a token that is unknown, of another dataset or rubric, or not settled is
    refused with one line, and nothing is written."""
    from ..store.gold import seeds_con
    from ..store.grades import load_grades_con

    with store.connect(read_only=True) as con:
        grades = load_grades_con(con, dataset, rules.name)
        served = con.frame("SELECT token, item_id, model, condition, response_id, round FROM grading_answers "
                           "WHERE dataset = ? AND rubric = ? ORDER BY round DESC, position", [dataset, rules.name]) \
            if _has(con, "grading_answers") else pd.DataFrame(columns=["token", "item_id", "model", "condition",
                                                                       "response_id", "round"])
        seeded = set(seeds_con(con, dataset, rules.name)["token"].astype(str))
    settled = _settled_answers(grades, rules)
    served = served[~served["token"].astype(str).isin(seeded)]
    if tokens:
        by_token = {str(r["token"]): r for r in served.to_dict("records")}
        chosen = []
        for token in dict.fromkeys(str(t).strip() for t in tokens):
            row = by_token.get(token)
            if row is None:
                raise UserError(f"gold answer {token!r}: no answer with this token in a grading round of rubric "
                                f"{rules.name} on dataset {dataset}")
            if (row["item_id"], row["model"], row["condition"]) not in settled:
                raise UserError(f"gold answer {token!r} is not adjudicated: its marks are not settled by two agreeing "
                                "graders or an adjudicator, so it cannot be seeded as gold")
            chosen.append(row)
        rows = chosen
    else:
        rows = [r for r in served.drop_duplicates(["item_id", "model", "condition"]).to_dict("records")
                if (r["item_id"], r["model"], r["condition"]) in settled]
    return [{k: r[k] for k in ("token", "item_id", "model", "condition", "response_id")} for r in rows]


def _has(con, table: str) -> bool:
    from ..store.judges import has_table

    return has_table(con, table)


def gold_checks(store: Store) -> pd.DataFrame:
    """Every gold mark a grader gave on a seeded answer, beside the gold (CHECK_COLUMNS): one row per
    grader, seeded token and criterion (the grader's latest mark). ``current``: the round is still
    the newest of its dataset and rubric. ``answer``: the seeded token (never shown to a grader)."""
    from ..analysis.judges import UNIT_KEYS
    from ..store.gold import seeds_con
    from ..store.grades import load_grades_con
    from .rubric import load_rubric

    with store.connect(read_only=True) as con:
        seeds = seeds_con(con)
        if seeds.empty:
            return pd.DataFrame(columns=CHECK_COLUMNS)
        grades = load_grades_con(con, gold_checks=True)
        served = con.frame("SELECT g.token, g.item_id, g.model, g.condition, g.round FROM grading_answers g "
                           "JOIN gold_seeds s ON s.token = g.token")
        newest = con.frame("SELECT dataset, rubric, max(round) AS newest FROM grading_rounds GROUP BY dataset, rubric")
    parts = []
    for (dataset, rubric), checks in grades[grades["role"] == GOLD_CHECK_ROLE].groupby(["dataset", "rubric"]):
        try:
            rules = load_rubric(str(rubric))
        except UserError:
            continue  # the rubric file is gone: its marks have no scale
        mine = grades[(grades["dataset"] == dataset) & (grades["rubric"] == rubric)]
        gold = _settled_answers(mine, rules)
        checks = checks.sort_values(["graded_at", "grade_id"]).drop_duplicates([*UNIT_KEYS, "grader", "round"],
                                                                                 keep="last")
        checks = checks.assign(round=pd.to_numeric(checks["round"], errors="coerce"))
        merged = checks.merge(served.assign(round=served["round"].astype(float)),
                              on=["item_id", "model", "condition", "round"], how="inner")
        top = newest[(newest["dataset"] == dataset) & (newest["rubric"] == rubric)]["newest"]
        maxima = {c.id: float(c.points) for c in rules.criteria}
        for row in merged.to_dict("records"):
            mark = gold.get((row["item_id"], row["model"], row["condition"]), {}).get(str(row["criterion"]))
            if mark is None:
                continue
            parts.append({"rater": str(row["grader"]), "dataset": str(dataset), "rubric": str(rubric),
                          "round": int(row["round"]), "current": bool(len(top) and int(top.iloc[0]) == int(row["round"])),
                          "answer": str(row["token"]), "criterion": str(row["criterion"]),
                          "points": float(row["points"]), "gold": float(mark),
                          "max_points": maxima.get(str(row["criterion"]), math.nan), "graded_at": row["graded_at"],
                          "simulated": bool(row["simulated"])})
    return pd.DataFrame(parts, columns=CHECK_COLUMNS)


def visible_checks(checks: pd.DataFrame, rater: str, live: bool) -> pd.DataFrame:
    """The gold checks of ``rater`` a reader may see: all when ``live`` (an adjudicator or admin), else
    those of rounds that are over."""
    mine = checks[checks["rater"] == rater]
    return mine if live else mine[~mine["current"].astype(bool)]



def gold_table(store: Store, who: Identity, rater: str | None = None) -> pd.DataFrame:
    """The gold summary (``analysis.gold.GOLD_COLUMNS``, with the flag) as ``who`` may read it: with
    ``rater`` (or without ``team.SEE_RECORDS``) one rater's rows; otherwise every grader's. A rater
    reads their own once the round is over; adjudicators and admins read everyone's live."""
    from ..analysis.gold import gold_summary
    from ..team import SEE_RECORDS, as_identity, whose

    who = as_identity(who)
    live = who.may(SEE_RECORDS)
    checks = gold_checks(store)
    if not live:
        checks = checks[~checks["current"].astype(bool)]
    summary = gold_summary(checks)
    if rater or not live:
        summary = summary[summary["rater"] == whose(who, rater)].reset_index(drop=True)
    return summary

"""Seeded gold in review rounds: adjudicated pages served again, and each reviewer's gold checks.

Why the page itself and not a copy under a new id: a page is one row (its id, exercise, screenshot)
and a round is a comparison of it, so a seeded page is the adjudicated page's comparison (the two
extractions, the queued fields with the same values A and B) copied into the new round under the
page's own id, which the round does not hold otherwise. A reviewer sees the page id, the fields,
the queue position (pages are ordered by id) and the counts exactly as for any page: only
``review_gold_seeds`` says which (page, round) is seeded, and only the promotion, the statistics,
the exports and the gold checks read it. A person who decided the page when it was adjudicated is
never handed it (they would know the answer).

What a seeded page never does: its settled fields are never promoted (the item keeps its gold
version; the outcome records that version, so the queue reads as for a page whose record was the
gold already), and its decisions are left out of the round's status, agreement, exports and the
rater record's agreement. A reviewer's current decision on each of its fields is a gold check:
correct when the chosen value equals the gold version's value of the field (canonical JSON; a
flag is not correct). The checks feed ``analysis.gold.gold_summary`` (accuracy with its Wilson
95% interval and the accuracy test against the other reviewers; no severity: a field has no
scale) and the flag ``REVIEW_FLAG_RULE``.

Who sees what: as on the grading side, a reviewer sees their own gold checks once the round is
over (a newer round of the dataset exists): a count that moved right after deciding would tell
them the page was gold. Adjudicators and admins (``team.SEE_RECORDS``) see everyone's live.
"""
from __future__ import annotations

import random

import pandas as pd

from ..errors import UserError
from ..store import Store
from ..team import SET_ROUND, Identity, as_identity, operator
from .consensus import FLAG, REVIEW_ROLE, canonical
from .paths import get_at

CHECK_COLUMNS = ["rater", "dataset", "rubric", "round", "current", "answer", "criterion", "points", "gold",
                 "max_points", "graded_at", "simulated"]
#: The "rubric" of review gold rows in the gold tables (they share ``analysis.gold.GOLD_COLUMNS``).
REVIEW_RUBRIC = "extraction review"


def seed_pool(state, dataset: str, round_: int) -> list[dict]:
    """The adjudicated pages a round may seed: pages of ``dataset`` whose comparison in another
    round had queued fields, all settled and promoted as a gold version, that the round does not
    hold (and that are not seeds themselves). Each: page_id, source_round, gold_version, gold
    (path -> settled value), excluded (who decided it)."""
    from .review import working_record

    held = {str(p) for p, r in zip(state.outcomes["page_id"], state.outcomes["round"]) if int(r) == int(round_)}
    pool: dict[str, dict] = {}
    for row in state.outcomes.sort_values("round", ascending=False).to_dict("records"):
        page, rnd = str(row["page_id"]), int(row["round"])
        version = row.get("promoted_version")
        if (str(row["dataset"]) != dataset or page in held or page in pool or state.is_seeded(page, rnd)
                or row["merge_status"] != "queued" or version is None or pd.isna(version)):
            continue
        paths = list(state.fields(page, rnd)["path"])
        if not paths or not all(state.state(page, rnd, p).resolved for p in paths):
            continue
        record = working_record(state, page, rnd)
        d = state.decisions
        deciders = set(d[(d["page_id"] == page) & (d["round"] == rnd)]["reviewer"].astype(str)) if len(d) else set()
        pool[page] = {"page_id": page, "source_round": rnd, "gold_version": int(version),
                      "gold": {p: get_at(record, p) for p in paths}, "excluded": sorted(deciders)}
    return list(pool.values())


def plan_seeding(store: Store, dataset: str, round_: int, rate, set_by: Identity | None = None,
                 seed: int | None = None) -> dict:
    """What ``seed_review_round`` would seed, checked and drawn without writing anything (the CLI checks
    it before it changes the round's reviewers): {"rate", "pool", "chosen", "pages"}. One line for a
    rate outside 0-1, a round that does not exist or is seeded already, no adjudicated page to seed."""
    from ..judges.gold import check_rate
    from ..store.review_gold import round_seeded_con
    from .review import load_state

    rate = check_rate(rate)
    actor = operator() if set_by is None else as_identity(set_by)
    actor.require(SET_ROUND)
    state = load_state(store)
    outcomes = state.outcomes
    own = outcomes[(outcomes["dataset"].astype(str) == dataset) & (outcomes["round"].astype(int) == int(round_))] \
        if len(outcomes) else outcomes
    if own.empty:
        raise UserError(f"dataset {dataset!r} has no extraction round {round_}")
    with store.connect(read_only=True) as con:
        if round_seeded_con(con, dataset, round_):
            raise UserError(f"{dataset} round {round_} is seeded with gold already; a round is seeded once")
    pool = seed_pool(state, dataset, round_)
    if rate > 0 and not pool:
        raise UserError(f"no adjudicated page to seed into {dataset} round {round_}: seeded gold needs pages of "
                        "another round, not in this one, whose queued fields were all settled and promoted as a "
                        "gold version")
    pages = int((own["merge_status"] == "queued").sum())
    wanted = len(pool) if rate >= 1 else round(rate * pages / (1 - rate))
    chosen = random.Random(seed).sample(pool, min(wanted, len(pool))) if rate > 0 else []
    return {"rate": rate, "pool": pool, "chosen": chosen, "pages": pages, "actor": actor}


def seed_review_round(store: Store, dataset: str, round_: int, rate, set_by: Identity | None = None,
                      seed: int | None = None) -> dict:
    """Seed review round ``round_`` of ``dataset`` with adjudicated pages (``seed_pool``), about
    ``rate`` of the round's pages to review (seeded / (seeded + the round's queued pages); rate 1:
    the whole pool). Returns {"seeded", "pool", "pages"}. Bad input: ``plan_seeding``'s one line,
    nothing written. ``seed``: the draw's random seed (None: fresh)."""
    from ..store.review_gold import round_seeded_con, save_seeded_round_con

    plan = plan_seeding(store, dataset, round_, rate, set_by, seed)
    with store.transaction() as con:
        con.lock(f"review_gold:{dataset}:{int(round_)}")
        if round_seeded_con(con, dataset, round_):
            raise UserError(f"{dataset} round {round_} is seeded with gold already; a round is seeded once")
        save_seeded_round_con(con, dataset, int(round_), plan["rate"], len(plan["pool"]), plan["chosen"],
                              plan["actor"].columns())
    return {"seeded": len(plan["chosen"]), "pool": len(plan["pool"]), "pages": plan["pages"]}


def gold_checks(store: Store) -> pd.DataFrame:
    """Every reviewer's current decision on each field of a seeded page, beside the gold value
    (CHECK_COLUMNS, the grading side's shape: ``points``/``gold`` are 1/1 when the decision equals
    the gold, 0/1 when not; ``answer`` the seeded page and round, never shown to a reviewer;
    ``current``: no newer round of the dataset exists yet)."""
    from .review import load_state

    state = load_state(store)
    if not state.seeded or state.decisions.empty:
        return pd.DataFrame(columns=CHECK_COLUMNS)
    newest = state.outcomes.groupby("dataset")["round"].max().astype(int).to_dict()
    simulated = dict(zip(state.pages["page_id"], state.pages.get("simulated", pd.Series(dtype=bool))))
    rows = []
    for d in state.decisions.to_dict("records"):
        key = (str(d["page_id"]), int(d["round"]))
        seed = state.seeded.get(key)
        if seed is None or (d.get("role") or REVIEW_ROLE) != REVIEW_ROLE or d["path"] not in seed["gold"]:
            continue
        correct = d["action"] != FLAG and canonical(d.get("new_value")) == canonical(seed["gold"][d["path"]])
        dataset = str(seed["dataset"])
        rows.append({"rater": str(d["reviewer"]), "dataset": dataset, "rubric": REVIEW_RUBRIC, "round": key[1],
                     "current": newest.get(dataset, key[1]) == key[1], "answer": f"{key[0]} round {key[1]}",
                     "criterion": d["path"], "points": float(correct), "gold": 1.0, "max_points": 1.0,
                     "graded_at": d["decided_at"], "simulated": bool(simulated.get(key[0], False))})
    return pd.DataFrame(rows, columns=CHECK_COLUMNS)


def gold_table(store: Store, who: Identity, rater: str | None = None) -> pd.DataFrame:
    """The reviewers' gold summary (``analysis.gold.GOLD_COLUMNS``; severity empty) as ``who`` may
    read it: with ``rater`` (or without ``team.SEE_RECORDS``) one reviewer's rows, their own only
    once the round is over; otherwise every reviewer's, live."""
    from ..analysis.gold import gold_summary
    from ..team import SEE_RECORDS, whose

    who = as_identity(who)
    live = who.may(SEE_RECORDS)
    checks = gold_checks(store)
    if not live:
        checks = checks[~checks["current"].astype(bool)]
    summary = gold_summary(checks, severity=False)
    if rater or not live:
        summary = summary[summary["rater"] == whose(who, rater)].reset_index(drop=True)
    return summary


def set_reviewers_seeded(store: Store, dataset: str, round_: int, reviewers: int,
                         set_by: Identity | None = None, blind_adjudication: bool = False,
                         seed_gold: float | None = None):
    """``review.set_reviewers`` and, with ``seed_gold``, seed the round at that rate in the same step:
    the seeding's bad input is refused before the reviewers change; ``RoundChange.seeded`` says how many
    were seeded. (Here rather than in ``review``, which this module builds on.)"""
    from .review import set_reviewers

    actor = operator() if set_by is None else as_identity(set_by)
    if seed_gold is not None:
        plan_seeding(store, dataset, round_, seed_gold, actor)
    change = set_reviewers(store, dataset, round_, reviewers, actor, blind_adjudication=blind_adjudication)
    if seed_gold is not None:
        change.seeded = seed_review_round(store, dataset, round_, seed_gold, actor)
    return change

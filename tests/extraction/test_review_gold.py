"""Seeded gold in review rounds: adjudicated pages served again, gold checks, the flag, bad input.

The store: the extraction demo (review_fixtures), whose round 1 is settled here by a lead choosing the
true extraction on every queued field (so its 9 queued pages become gold versions); rounds 5 and 6
re-extract two pages (ex01/q01, ex03/q01), so 5 adjudicated pages can be seeded into each.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from eduart_core import team
from eduart_core.errors import UserError
from eduart_core.extraction import review_gold
from eduart_core.extraction.consensus import REVIEW_ROLE
from eduart_core.extraction.review import (
    ACCEPT_A,
    ACCEPT_B,
    LATEST,
    decide,
    load_state,
    page_fields,
    review_queue,
    set_reviewers,
)
from eduart_core.extraction.simulated import (
    DEMO_DATASET,
    ROUND_PLANS,
    _extraction_round,
    _true_side,
    demo_truth,
    page_id_of,
)
from eduart_core.store import Store
from eduart_core.team import local
from tests.review_fixtures import build_template, copy_store

IDP = "https://idp.test"


def person(subject: str) -> team.Identity:
    return team.Identity(subject, IDP, subject.title(), None, frozenset({team.REVIEWER}), signed_in=True)


LEAD = local("gold lead")  # single-machine mode: every role
CAREFUL = [person("careful-one"), person("careful-two")]
CARELESS = person("careless-simulated")
TRUTH = {page_id_of(r): r for r in demo_truth()}
POOL = 5  # round 1's pages whose queued fields the lead settled and that became gold, less ex01/q01 and ex03/q01


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """Round 1 settled by the lead (its queued pages promoted), rounds 5 and 6 re-extracting two pages."""
    path = build_template(tmp_path_factory.mktemp("review-gold-template"))
    settle_and_extend(Store(path))
    return path


def settle_and_extend(store: Store) -> None:
    """The lead settles round 1 on the true values (promoted); rounds 5 and 6 re-extract two pages."""
    state = load_state(store, 1)
    for row in state.fields(round=1).to_dict("records"):
        side = _true_side(row, TRUTH[row["page_id"]])
        decide(store, row["page_id"], 1, row["path"], ACCEPT_A if side == "A" else ACCEPT_B, LEAD, source="cli")
    for rnd in (5, 6):
        _extraction_round(store, rnd, ROUND_PLANS[2], only_planned=True)


@pytest.fixture
def store(template, tmp_path) -> Store:
    return Store(copy_store(template, tmp_path / "store"))


def _items(store: Store) -> dict:
    from eduart_core.store.runs import current_items_con

    with store.connect(read_only=True) as con:
        return {k: v[0] for k, v in current_items_con(con, DEMO_DATASET).items()}


def _decide_page(store: Store, who, page: str, rnd: int, careless: random.Random | None = None) -> None:
    """``who`` decides every field of a page: the true side, or (careless) a coin flip."""
    for row in load_state(store, rnd).fields(page, rnd).to_dict("records"):
        side = _true_side(row, TRUTH[page])
        if careless is not None and careless.random() < 0.5:
            side = "B" if side == "A" else "A"
        decide(store, page, rnd, row["path"], ACCEPT_A if side == "A" else ACCEPT_B, who, based_on=LATEST)


@pytest.mark.slow
def test_seeding_serves_pages_alike_and_never_changes_the_gold(store):
    before = _items(store)
    status_before = _status(store)
    done = review_gold.seed_review_round(store, DEMO_DATASET, 5, 1.0, set_by=LEAD, seed=1)
    assert done["seeded"] == done["pool"] == POOL and done["pages"] == 2
    state = load_state(store, 5)
    seeded = {p for p, r in state.seeded if r == 5}
    real = {"ex01/q01", "ex03/q01"}
    queue = review_queue(state, 5, reviewer=CAREFUL[0].key, role=REVIEW_ROLE)
    assert set(queue["page_id"]) == seeded | real
    # nothing a reviewer sees tells the seeded pages apart: the same columns, states, counts and ids
    assert set(queue["status"]) == {"open"} and queue["promoted_version"].isna().all()
    assert all(p.startswith("ex") and "/" in p for p in queue["page_id"])
    from eduart_core.store.extraction import load_extractions

    prompts = load_extractions(store, round=5).groupby("extractor")["prompt_hash"].nunique()
    assert (prompts == 1).all()  # the copies name the round's own prompt, like its other pages
    for page in seeded | real:
        fields = page_fields(state, page, 5, CAREFUL[0].key)
        assert len(fields) and set(fields["state"]) == {"open"} and fields["decision_id"].isna().all()
    # a wrong decision on every field of a seeded page settles it (single review) but promotes nothing
    wrong = sorted(seeded)[0]
    for row in state.fields(wrong, 5).to_dict("records"):
        side = _true_side(row, TRUTH[wrong])
        result = decide(store, wrong, 5, row["path"], ACCEPT_B if side == "A" else ACCEPT_A, CAREFUL[0])
    assert result.page_resolved and result.promoted_version == before[_item_of(store, wrong)]
    _decide_page(store, CAREFUL[0], "ex01/q01", 5)
    assert _items(store) == {**before, **{k: v for k, v in _items(store).items() if k == _item_of(store, "ex01/q01")}}
    assert _items(store)[_item_of(store, wrong)] == before[_item_of(store, wrong)]
    after = load_state(store, 5)
    row = review_queue(after, 5, reviewer=CAREFUL[0].key).set_index("page_id").loc[wrong]
    assert row["status"] == "resolved" and row["promoted_version"] == before[_item_of(store, wrong)]
    # the round's agreement and ratings and the export leave the seeded decisions out
    from eduart_core.extraction.exchange import export_records
    from eduart_core.extraction.stats import review_ratings

    assert wrong not in set(review_ratings(after)["page_id"])
    assert all(r["page"] != wrong or r["round"] != 5 for r in export_records(store))
    assert any(r["page"] == "ex01/q01" and r["round"] == 5 for r in export_records(store))
    assert _status(store)["rounds"][0] == status_before["rounds"][0]  # round 1 untouched
    # the decisions are gold checks, compared with the gold version's fields
    checks = review_gold.gold_checks(store)
    assert set(checks["answer"]) == {f"{wrong} round 5"} and (checks["points"] == 0).all()


def _item_of(store: Store, page: str) -> str:
    return str(load_state(store).pages.set_index("page_id").loc[page, "item_id"])


def _status(store: Store) -> dict:
    from eduart_core.extraction.stats import status_report

    return status_report(load_state(store))


def test_the_queue_hands_seeded_pages_out_like_others_but_not_to_who_adjudicated_them(store):
    from eduart_core.queues import finish_review_page, next_review_page

    review_gold.seed_review_round(store, DEMO_DATASET, 5, 0.5, set_by=LEAD, seed=2)
    state = load_state(store, 5)
    seeded = {p for p, r in state.seeded if r == 5}
    assert len(seeded) == 2  # 0.5 of the round's pages: as many seeded as its 2 own
    handed = []
    while (unit := next_review_page(store, CAREFUL[0], 5)) is not None:
        page = unit.unit
        handed.append(page)
        _decide_page(store, CAREFUL[0], page, 5)
        finish_review_page(store, CAREFUL[0], 5, page)
        assert len(handed) < 10
    assert set(handed) == seeded | {"ex01/q01", "ex03/q01"}
    lead_queue = review_queue(load_state(store, 5), 5, reviewer=LEAD.key)
    assert (lead_queue.set_index("page_id").loc[sorted(seeded), "mine"] == 0).all()


@pytest.mark.slow
def test_a_careless_reviewer_is_flagged_and_careful_ones_are_not(store):
    rng = random.Random(7)
    for rnd in (5, 6):
        set_reviewers(store, DEMO_DATASET, rnd, 3, set_by=LEAD)
        review_gold.seed_review_round(store, DEMO_DATASET, rnd, 1.0, set_by=LEAD, seed=rnd)
        for page, r in sorted(load_state(store, rnd).seeded):
            if r != rnd:
                continue
            for who in CAREFUL:
                _decide_page(store, who, page, rnd)
            _decide_page(store, CARELESS, page, rnd, careless=rng)
    before = _items(store)
    table = review_gold.gold_table(store, LEAD)
    flags = table.set_index("rater")
    assert bool(flags.loc[CARELESS.key, "flagged"]), flags.loc[CARELESS.key, "reason"]
    assert "below the other reviewers'" in flags.loc[CARELESS.key, "reason"]
    for who in CAREFUL:
        assert not bool(flags.loc[who.key, "flagged"]) and flags.loc[who.key, "accuracy"] == 1.0
    assert flags.loc[CARELESS.key, "gold_answers"] == 2 * POOL and flags["rubric"].eq("extraction review").all()
    assert _items(store) == before
    # a reviewer reads only their own, and only once the round is over (round 6 is the newest)
    mine = review_gold.gold_table(store, CARELESS)
    assert list(mine["rater"]) == [CARELESS.key] and mine["gold_answers"].tolist() == [POOL]
    with pytest.raises(UserError):
        review_gold.gold_table(store, CARELESS, rater=CAREFUL[0].key)


@pytest.mark.parametrize("rate", [-0.1, 1.5, float("nan"), "half"])
def test_a_rate_outside_0_to_1_is_one_line_and_changes_nothing(store, rate):
    with pytest.raises(UserError, match="seed rate"):
        review_gold.seed_review_round(store, DEMO_DATASET, 5, rate, set_by=LEAD)
    assert not load_state(store).seeded


def test_set_reviewers_seeds_with_the_round_or_changes_nothing(store):
    with pytest.raises(UserError, match="seed rate"):
        review_gold.set_reviewers_seeded(store, DEMO_DATASET, 5, 2, set_by=LEAD, seed_gold=1.01)
    assert load_state(store).rounds.empty and not load_state(store).seeded  # the reviewers were not set either
    change = review_gold.set_reviewers_seeded(store, DEMO_DATASET, 5, 2, set_by=LEAD, seed_gold=0.5)
    assert change.seeded == {"seeded": 2, "pool": POOL, "pages": 2}
    assert load_state(store).reviewers_needed(DEMO_DATASET, 5) == 2


def test_no_adjudicated_page_to_seed_is_one_line_and_changes_nothing(tmp_path):
    store = Store(copy_store(build_template(tmp_path / "fresh"), tmp_path / "s"))  # round 1 never settled
    with pytest.raises(UserError, match="no adjudicated page to seed"):
        review_gold.seed_review_round(store, DEMO_DATASET, 2, 0.3, set_by=local("admin"))
    assert not load_state(store).seeded


@pytest.mark.slow
def test_cli_review_round_seed_gold(store):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "eduart_core", "review-round", "--dataset", DEMO_DATASET,
                               "--round", "5", "--reviewers", "1", *args, "--db", str(store.path)],
                              capture_output=True, text=True)

    bad = run("--seed-gold", "2")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    assert load_state(store).rounds.empty  # the round's reviewers were not changed either
    ok = run("--seed-gold", "0.5")
    assert ok.returncode == 0, ok.stderr
    assert f"seeded gold: 2 adjudicated page(s) of {POOL}" in ok.stdout
    again = run("--seed-gold", "0.5")
    assert again.returncode == 2 and "seeded with gold already" in again.stderr
    assert json.loads(json.dumps(sorted(map(list, load_state(store).seeded))))  # two seeds, stored once
    assert len(load_state(store).seeded) == 2


def _simulated_checks(rng, accuracies: dict[str, float], pages: int = 20, fields: int = 2):
    import pandas as pd

    rows = [{"rater": who, "dataset": "sim", "rubric": review_gold.REVIEW_RUBRIC, "answer": f"p{page}",
             "criterion": f"f{field}", "points": float(rng.random() < accuracy), "gold": 1.0, "simulated": True}
            for who, accuracy in accuracies.items() for page in range(pages) for field in range(fields)]
    return pd.DataFrame(rows)


def test_the_review_flag_rates_on_simulated_rounds():
    """100 simulated rounds of 20 gold pages (2 fields each), three reviewers: a careless one (60%
    right against 95%) is flagged in most, an accurate one (95% like the others) almost never."""
    from eduart_core.analysis.gold import gold_summary

    rng = random.Random(11)
    caught = false = 0
    for _ in range(100):
        summary = gold_summary(_simulated_checks(rng, {"careless": 0.6, "a": 0.95, "b": 0.95}), severity=False)
        caught += bool(summary.set_index("rater").loc["careless", "flagged"])
        summary = gold_summary(_simulated_checks(rng, {"c": 0.95, "a": 0.95, "b": 0.95}), severity=False)
        false += bool(summary.set_index("rater").loc["c", "flagged"])
    assert caught >= 90 and false <= 5, (caught, false)
    assert summary["severity"].isna().all()

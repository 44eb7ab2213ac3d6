"""Blind double review on a real store: independent decisions, randomised and recorded A/B order,
merging on agreement, adjudication on disagreement, conflicts never overwrite, promotion."""
from __future__ import annotations

import pytest
from pg_kit import BACKENDS, build_once

from eduart_core.errors import UserError
from eduart_core.extraction import review
from eduart_core.store import Store
from eduart_core.store import extraction as db
from eduart_core.store.items import get_item
from eduart_core.team.identity import local

DATASET = "demo-extraction"


@pytest.fixture(scope="module", params=BACKENDS)
def template(request, tmp_path_factory):
    """The extraction demo, built once per backend (DuckDB file, PostgreSQL database)."""
    from eduart_core.extraction.simulated import build_extraction_demo

    return build_once(request, tmp_path_factory, request.param, build_extraction_demo, "blind")


@pytest.fixture
def store(request, template, tmp_path) -> Store:
    s = Store(template.copy(request, tmp_path / "blind"))
    review.set_reviewers(s, DATASET, 2, 2, set_by=local("lead"))
    return s


def test_round_setting_is_validated_and_kept(store):
    state = review.load_state(store)
    assert state.reviewers_needed(DATASET, 2) == 2 and state.reviewers_needed(DATASET, 1) == 1
    with pytest.raises(UserError, match="between 1 and 9"):
        review.set_reviewers(store, DATASET, 2, 0)
    with pytest.raises(UserError, match="no extraction round 7"):
        review.set_reviewers(store, DATASET, 7, 2)


def test_order_is_randomised_per_page_and_reviewer_and_recorded(store):
    orders = {review.shown_order(p, 2, name, 2) for p in ("ex01/q01", "ex03/q01") for name in
              ("Anna", "Bruno", "Carla", "Dario", "Elena")}
    assert orders == {"AB", "BA"}
    assert review.shown_order("ex01/q01", 1, "Anna", 1) == "AB"  # single review keeps the extractors' order
    order = review.shown_order("ex01/q01", 2, "Anna", 2)
    fields = review.page_fields(store, "ex01/q01", 2, "Anna")
    raw = review.load_state(store).fields("ex01/q01", 2).iloc[0]
    shown_a = fields.iloc[0]["a"]
    assert shown_a == (raw["value_a"] if order == "AB" else raw["value_b"])
    review.decide(store, "ex01/q01", 2, "question_text", review.true_action("A", order), local("Anna"),
                  based_on=fields.iloc[0]["decision_id"])
    log = db.load_decisions(store, "ex01/q01", 2)
    assert list(log["shown_order"]) == [order]
    assert log.iloc[0]["new_value"] == shown_a  # the side the reviewer clicked, whatever the extractor


def test_reviewers_do_not_see_each_other_and_agreement_promotes(store):
    path = "question_text"
    review.decide(store, "ex01/q01", 2, path, "accept_a", local("Anna"), based_on=None)
    bruno = review.page_fields(store, "ex01/q01", 2, "Bruno").iloc[0]
    assert bruno["state"] == "open" and bruno["reviewer"] is None and bruno["value"] is None and bruno["mine"]
    anna = review.page_fields(store, "ex01/q01", 2, "Anna").iloc[0]
    assert anna["state"] == "awaiting" and not anna["mine"] and anna["my_action"] == "accept_a"
    result = review.decide(store, "ex01/q01", 2, path, "accept_a", local("Bruno"), based_on=None)
    assert result.state == "resolved" and result.page_resolved and result.promoted_version is not None
    gold = get_item(store, DATASET, "x0101")["record"]
    assert gold["question_text"] == db.load_discrepancies(store, 2, "ex01/q01").iloc[0]["value_a"]


def test_disagreement_goes_to_the_adjudicator_who_sees_every_decision(store):
    path = "question_text"
    review.decide(store, "ex01/q01", 2, path, "accept_a", local("Anna"), based_on=None)
    result = review.decide(store, "ex01/q01", 2, path, "accept_b", local("Bruno"), based_on=None)
    assert result.state == "adjudication" and not result.page_resolved
    queue = review.review_queue(store, round=2, reviewer="Carla", role=review.ADJUDICATE_ROLE)
    assert queue.set_index("page_id").loc["ex01/q01", "mine"] == 1
    anna = review.page_fields(store, "ex01/q01", 2, "Anna").iloc[0]  # the disagreement is not hers to see
    assert anna["state"] == "awaiting" and anna["votes"] == 1 and anna["value"] is None
    mine = review.review_queue(store, round=2, reviewer="Anna").set_index("page_id").loc["ex01/q01"]
    assert mine["status"] == "open" and mine["adjudication"] == 0 and mine["awaiting"] == 1
    seen = review.page_fields(store, "ex01/q01", 2, "Carla", role=review.ADJUDICATE_ROLE).iloc[0]
    assert seen["votes"] == 2 and seen["order"] == "AB"
    result = review.decide(store, "ex01/q01", 2, path, "accept_b", local("Carla"), based_on=seen["decision_id"],
                           role=review.ADJUDICATE_ROLE)
    assert result.state == "resolved" and result.promoted_version is not None
    log = db.load_decisions(store, "ex01/q01", 2)
    assert list(log["role"]) == ["review", "review", "adjudicate"]  # nothing rewritten


def test_a_late_blind_decision_against_the_merged_value_is_a_conflict(store):
    path = "question_text"
    for name in ("Anna", "Bruno"):
        review.decide(store, "ex01/q01", 2, path, "accept_a", local(name), based_on=None)
    late = review.decide(store, "ex01/q01", 2, path, "accept_b", local("Dario"), based_on=None)
    assert late.conflict and late.state == "adjudication"
    state = review.load_state(store, 2).state("ex01/q01", 2, path)
    assert state.value == db.load_discrepancies(store, 2, "ex01/q01").iloc[0]["value_a"]  # gold kept


def test_a_reviewer_can_revise_until_the_others_decide_but_stale_views_conflict(store):
    path = "question_text"
    first = review.decide(store, "ex01/q01", 2, path, "accept_a", local("Anna"), based_on=None)
    review.decide(store, "ex01/q01", 2, path, "accept_b", local("Anna"), based_on=first.decision_id)
    with pytest.raises(review.ReviewConflict):
        review.decide(store, "ex01/q01", 2, path, "accept_a", local("Anna"), based_on=first.decision_id)
    review.decide(store, "ex01/q01", 2, path, "accept_a", local("Bruno"), based_on=None)  # Bruno never saw Anna
    assert review.load_state(store, 2).state("ex01/q01", 2, path).state == "adjudication"


def test_multi_field_pages_resolve_field_by_field_in_any_order(request, template, tmp_path):
    """Fields of one page resolve one by one: after one field of ex03/q01 is accepted, the other is still
    open to decide (never "open by nan"). Every field is independent; its state is never NaN."""
    store = Store(template.copy(request, tmp_path / "multi"))
    before = review.page_fields(store, "ex03/q01", 1)
    first = review.decide(store, "ex03/q01", 1, "choices", "accept_a", local("Anna"), based_on=None)
    fields = review.page_fields(store, "ex03/q01", 1).set_index("path")
    assert fields.loc["answers", "state"] == "open" and fields.loc["answers", "decision_id"] is None
    assert fields.loc["choices", "decision_id"] == first.decision_id
    assert all(v is None or isinstance(v, (int, str)) for v in fields["reviewer"])  # None, never NaN
    last = review.decide(store, "ex03/q01", 1, "answers", "accept_a", local("Anna"), based_on=None)
    assert last.page_resolved and last.promoted_version is not None
    gold = get_item(store, DATASET, "x0301")["record"]
    assert gold["choices"] == before.set_index("path").loc["choices", "a"]


def test_the_audit_log_shows_a_blind_reviewer_only_their_own_decisions(store):
    from eduart_core.extraction.exchange import export_records

    review.decide(store, "ex01/q01", 2, "question_text", "accept_a", local("Anna"), based_on=None)
    assert [r["reviewer"] for r in export_records(store, viewer=local("Anna"))] == ["Anna"]
    assert export_records(store, viewer=local("Bruno")) == []
    assert len(export_records(store, viewer=local("Carla"), role=review.ADJUDICATE_ROLE)) == 1
    review.decide(store, "ex01/q01", 2, "question_text", "accept_a", local("Bruno"), based_on=None)
    # settled by agreement, but a blind reviewer's log never tells what the others chose
    assert [r["reviewer"] for r in export_records(store, viewer=local("Bruno"))] == ["Bruno"]
    assert [r["reviewer"] for r in export_records(store, viewer=local("Carla"), role=review.ADJUDICATE_ROLE)] == [
        "Anna", "Bruno"]

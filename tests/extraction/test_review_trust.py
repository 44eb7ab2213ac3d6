"""The review studio's library on copies of the extraction demo: a page is checked as a whole
before its last decision is saved, a change of a round's reviewers says what it does to the
decisions made, and history, audit, agreement and the editors speak the item."""
from __future__ import annotations

import re

import pandas as pd
import pytest

from eduart_core.errors import UserError
from eduart_core.extraction import display, editors, exchange, review
from eduart_core.extraction.stats import agreement_by, agreement_words
from eduart_core.store import Store
from eduart_core.store import extraction as db
from eduart_core.store.items import get_item
from eduart_core.team.identity import local
from tests.review_fixtures import build_template, copy_store

DATASET = "demo-extraction"
TF_PAGE = "ex03/q01"  # true/false: A has 3 statements and 3 verdicts, B 2 and 2


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return build_template(tmp_path_factory.mktemp("trust-template"))


@pytest.fixture
def store(template, tmp_path) -> Store:
    return Store(copy_store(template, tmp_path / "trust"))


# ------------------------------------------------------------ a page is checked as a whole

def test_the_last_decision_of_a_contradicting_page_is_refused_and_names_the_field_at_fault(store):
    review.decide(store, TF_PAGE, 1, "answers", "accept_b", local("Anna"))  # 2 verdicts
    with pytest.raises(review.PageRejected) as caught:
        review.decide(store, TF_PAGE, 1, "choices", "accept_a", local("Anna"))  # 3 statements
    assert set(caught.value.at_fault) == {"answers"}
    assert caught.value.at_fault["answers"] == ["statement C has no verdict"]
    assert len(db.load_decisions(store, TF_PAGE, 1)) == 1  # nothing saved
    with pytest.raises(UserError, match="no item x0301"):  # nothing promoted
        get_item(store, DATASET, "x0301")
    message = caught.value.message("true_false", "accepted A")  # one message, naming the field at fault
    assert message.startswith("Not saved: accepted A") and "True or false: statement C has no verdict" in message
    assert set(review.refused_choices(review.load_state(store), TF_PAGE, 1, "choices", "Anna")) == {"accept_a"}
    result = review.decide(store, TF_PAGE, 1, "choices", "accept_b", local("Anna"))  # consistent: promoted
    assert result.page_resolved and result.promoted_version == 1


def test_the_check_follows_the_person_deciding_whatever_the_order(store):
    review.decide(store, TF_PAGE, 1, "choices", "accept_a", local("Anna"))
    with pytest.raises(review.PageRejected) as caught:
        review.decide(store, TF_PAGE, 1, "answers", "accept_b", local("Anna"))
    assert set(caught.value.at_fault) == {"answers"}  # the decided field is the one at fault
    assert review.decide(store, TF_PAGE, 1, "answers", "accept_a", local("Anna")).promoted_version == 1


def test_a_blind_reviewer_is_checked_on_their_own_decisions_only(store):
    review.set_reviewers(store, DATASET, 1, 2, set_by=local("lead"))
    review.decide(store, TF_PAGE, 1, "answers", "accept_b", local("Anna"), based_on=None)
    review.decide(store, TF_PAGE, 1, "choices", "accept_b", local("Anna"), based_on=None)  # consistent
    review.decide(store, TF_PAGE, 1, "choices", "accept_a", local("Bruno"), based_on=None)  # Bruno: only one field yet
    with pytest.raises(review.PageRejected):
        review.decide(store, TF_PAGE, 1, "answers", "accept_b", local("Bruno"), based_on=None)
    assert review.decide(store, TF_PAGE, 1, "answers", "accept_a", local("Bruno"), based_on=None).state == "adjudication"


# ------------------------------------------------------------ a round switched to blind review

def test_switching_a_round_to_blind_review_says_which_decisions_stop_counting(store):
    review.decide(store, "ex01/q02", 1, "answers", "accept_a", local("Anna"))  # promoted
    review.decide(store, "ex01/q01", 1, "question_text", "accept_b", local("Anna"))
    review.decide(store, "ex01/q01", 1, "question_text", "accept_a", local("Bruno"))  # Bruno changes it
    review.decide(store, "ex02/q02", 1, "choices[A].text", "flag", local("Carla"), note="capital M?")
    before = db.load_decisions(store)
    change = review.round_change(store, DATASET, 1, 2)
    assert change.changes and (change.before, change.after) == (1, 2)
    assert [p["page_id"] for p in change.reopened] == ["ex01/q01", "ex01/q02"]
    assert {p["promoted_version"] for p in change.reopened} == {1, 2}
    assert {(d["page_id"], d["reviewer"]) for d in change.uncounted} == {("ex01/q02", "Anna"), ("ex01/q01", "Bruno")}
    assert [d["page_id"] for d in change.adjudication] == ["ex01/q01"]
    assert [d["reviewer"] for d in change.released] == ["Carla"]
    words = " ".join(change.sentences())
    assert "ex01/q02 · Answer key (Anna accepted A)" in words and "vote of 2" in words
    assert "2 settled page(s) reopen" in words and "gold version 1" in words
    assert db.load_decisions(store).equals(before)  # asking writes nothing
    assert review.load_state(store).reviewers_needed(DATASET, 1) == 1
    done = review.set_reviewers(store, DATASET, 1, 2, set_by=local("lead"))
    assert [p["page_id"] for p in done.reopened] == ["ex01/q01", "ex01/q02"]
    assert not review.round_change(store, DATASET, 1, 2).changes  # the same setting again: nothing


def test_back_to_single_review_settles_and_promotes_what_one_decision_settles(store):
    review.set_reviewers(store, DATASET, 2, 2, set_by=local("lead"))
    review.decide(store, "ex01/q01", 2, "question_text", "accept_a", local("Anna"), based_on=None)
    change = review.set_reviewers(store, DATASET, 2, 1, set_by=local("lead"))
    assert [d["reviewer"] for d in change.settling] == ["Anna"] and change.settled == ["ex01/q01"]
    assert get_item(store, DATASET, "x0101") is not None  # promoted on the change


def test_only_who_may_change_a_round_may_ask_what_it_changes(store):
    from eduart_core import team

    bruno = team.Identity("bruno", "https://idp.test", "Bruno", None, frozenset({team.REVIEWER}), signed_in=True)
    with pytest.raises(team.PermissionDenied):
        review.round_change(store, DATASET, 1, 2, viewer=bruno)


# ------------------------------------------------------------ history, audit and agreement in words

def test_history_and_audit_speak_the_item(store):
    review.decide(store, TF_PAGE, 1, "choices", "accept_b", local("Anna"))
    review.decide(store, TF_PAGE, 1, "answers", "accept_b", local("Anna"))
    state = review.load_state(store)
    decisions = review.field_decisions(state, TF_PAGE, 1, "choices") + review.field_decisions(state, TF_PAGE, 1,
                                                                                              "answers")
    table = display.history_table(decisions, "true_false")
    assert list(table["Field"]) == ["Statements", "True or false"]
    assert list(table["Decision"]) == ["accepted B", "accepted B"]
    assert table["Value"].iloc[1] == "A: True\nB: False"
    assert table["Previous value"].iloc[1] == "A: True\nB: False\nC: True"  # the value before the decision
    assert not any(re.search(r"accept_|new_value|decided_at", str(c)) for c in table.columns.tolist()
                   + table.to_numpy().ravel().tolist())
    audit = display.audit_table(exchange.visible_decisions(store))
    assert list(audit["Field"]) == ["Statements", "True or false"] and set(audit["Decision"]) == {"accepted B"}
    assert audit["Previous value"].iloc[0].startswith("A. La cupola")


def test_a_blind_reviewers_history_names_the_sides_as_shown(store):
    review.set_reviewers(store, DATASET, 2, 2, set_by=local("lead"))
    order = next(o for o in ("AB", "BA") for name in ("Anna",) if review.shown_order("ex01/q01", 2, name, 2) == o)
    review.decide(store, "ex01/q01", 2, "question_text", review.true_action("A", order), local("Anna"), based_on=None)
    state = review.load_state(store)
    mine = review.field_decisions(state, "ex01/q01", 2, "question_text", review.REVIEW_ROLE, "Anna")
    assert list(display.history_table(mine, "multiple_choice_radio", as_shown=True)["Decision"]) == ["accepted A"]
    audit = display.audit_table(exchange.visible_decisions(store, viewer=local("Anna")))
    expected = "accepted A" if order == "AB" else "accepted B (shown to you as A)"
    assert list(audit["Decision"]) == [expected]


def test_the_agreement_table_uses_words_and_percentages(store):
    for name in ("Anna", "Bruno"):
        review.decide(store, "ex01/q02", 1, "answers", "accept_a", local(name))
    state = review.load_state(store)
    for by in (["dataset", "round"], ["field"], ["format"]):
        words = agreement_words(agreement_by(state, by))
        cells = words.columns.tolist() + words.to_numpy().ravel().tolist()
        assert not any("_" in str(c) or str(c) in ("None", "nan", "all") for c in cells), cells
        assert words["Same choice by all reviewers"].iloc[0] == "100.0%"
        assert words["Cohen's kappa"].iloc[0] == "—"  # not defined without variation
        assert all(isinstance(c, str) for c in words.to_numpy().ravel())
    rounds = agreement_words(agreement_by(state, ["dataset", "round"]))
    assert list(rounds["Round"]) == ["1", "all rounds"]
    assert list(agreement_words(agreement_by(state, ["field"]))["Field"]) == ["Answer key", "all fields"]


# ------------------------------------------------------------ the statements editor marks only what changed

def test_the_statements_editor_marks_only_what_differs():
    a = [{"id": "A", "text": "La cupola ha un’apertura centrale."}, {"id": "B", "text": "Il pronao è dorico."},
         {"id": "C", "text": "Fu consacrato come chiesa."}]
    b = [{"id": "A", "text": "La cupola ha un'apertura centrale."}, {"id": "B", "text": "Il pronao è dorico."}]
    record = {"type": "true_false", "choices": a}
    marked = {c.subpath: c.marked for c in editors.editor_for("true_false", "choices", a, record, b).controls}
    assert marked["choices[A].id"] is False and marked["choices[B].id"] is False  # identical ids
    assert marked["choices[B].text"] is False  # identical statement
    assert marked["choices[A].text"] is True and marked["choices[C].text"] is True  # changed, and missing in B
    shorter = editors.editor_for("true_false", "choices", b, {"type": "true_false", "choices": b}, a).controls
    assert [c.marked for c in shorter if c.subpath and "[]" in c.subpath] == [True] * 2  # B lacks a statement
    assert pd.Series([c.marked for c in shorter if c.subpath == "choices[B].text"]).tolist() == [False]

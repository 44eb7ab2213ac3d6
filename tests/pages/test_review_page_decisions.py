"""AppTest of the review studio (pages/11_review.py): a choice that would leave the page's fields
contradicting each other is not offered and the card says why before the click (one message, also
when a decision is refused); a blind reviewer's decided field shows their decision and offers a
change instead of another Accept (one row per reviewer and field); the Agreement tab shows no
blind round before it is settled, for every role."""
from __future__ import annotations

import pytest

from eduart_core.extraction import review
from eduart_core.store import Store
from eduart_core.store import extraction as db
from eduart_core.team.identity import local
from tests.pages.test_review_page_trust import card, open_page, session
from tests.reading import as_read
from tests.review_fixtures import build_template, copy_store

pytestmark = pytest.mark.slow

DEMO = "demo-extraction"
TF_PAGE = "ex03/q01"  # true/false: A has 3 statements and 3 verdicts, B 2 and 2
CHOICES, ANSWERS = f"{TF_PAGE}|1|choices", f"{TF_PAGE}|1|answers"


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return build_template(tmp_path_factory.mktemp("page-decisions-template"))


@pytest.fixture
def review_store(template, tmp_path, monkeypatch) -> Store:
    path = copy_store(template, tmp_path / "review")
    monkeypatch.setenv("EDUART_DB", str(path))
    return Store(path)


def said_in(block) -> str:
    return " ".join(as_read(e.value) for kind in ("info", "error", "markdown", "caption") for e in block.get(kind))


def test_a_choice_that_would_contradict_the_page_is_not_offered_and_the_card_says_why(review_store):
    at = open_page(session(), TF_PAGE)
    at.button(key=f"accept_b::{ANSWERS}").click().run()  # 2 verdicts
    assert not at.exception, at.exception
    keys = {b.key for b in at.button}
    assert f"accept_a::{CHOICES}" not in keys and f"accept_b::{CHOICES}" in keys  # 3 statements: not offered
    words = said_in(card(at, CHOICES))
    assert "Accept A is not offered" in words and "statement C has no verdict" in words
    assert not at.error  # said before the click, as information
    at.button(key=f"accept_b::{CHOICES}").click().run()  # the offered one completes the page
    assert any("promoted as gold" in as_read(t.value) for t in at.toast)


def test_a_refused_decision_shows_one_message_on_the_card_decided(review_store):
    at = open_page(session(), TF_PAGE)
    at.button(key=f"accept_b::{ANSWERS}").click().run()
    at.toggle(key=f"edit_open::{CHOICES}").set_value(True).run()
    at.button(key=f"edit::{CHOICES}").click().run()  # an edit equal to A: saved as accepting A, refused
    assert not at.exception, at.exception
    errors = [as_read(e.value) for e in at.error]
    assert len(errors) == 1, errors
    assert errors == [as_read(e.value) for e in card(at, CHOICES).get("error")]
    assert "statement C has no verdict" in errors[0] and errors[0].startswith("Not saved")
    assert len(db.current_decisions(review_store, TF_PAGE, 1)) == 1


def test_a_blind_reviewers_decided_field_offers_a_change_not_another_accept(review_store):
    review.set_reviewers(review_store, DEMO, 2, 2, set_by=local("lead"))
    base = "ex01/q01|2|question_text"
    at = open_page(session(), "ex01/q01", 2)
    at.button(key=f"accept_a::{base}").click().run()
    open_page(at, "ex01/q01", 2)
    assert not at.exception, at.exception
    keys = {b.key for b in at.button}
    assert f"accept_a::{base}" not in keys and f"accept_b::{base}" not in keys
    assert "Your decision: Accept A" in said_in(card(at, base))
    at.toggle(key=f"change::{base}").set_value(True).run()
    at.button(key=f"accept_b::{base}").click().run()  # a change of mind
    assert not at.exception, at.exception
    anna = db.current_decisions(review_store, "ex01/q01", 2)
    assert len(anna) == 1 and anna["reviewer"].iloc[0] == "Anna"
    assert len(db.load_decisions(review_store, "ex01/q01", 2)) == 2  # the audit log keeps both


@pytest.mark.parametrize("role", [review.REVIEW_ROLE, review.ADJUDICATE_ROLE])
def test_the_agreement_tab_shows_no_blind_round_before_it_is_settled(review_store, role):
    for name in ("Anna", "Bruno"):
        review.decide(review_store, "ex01/q02", 1, "answers", "accept_a", local(name))  # round 1: single review
    review.set_reviewers(review_store, DEMO, 2, 2, set_by=local("lead"))
    review.decide(review_store, "ex01/q01", 2, "question_text", "accept_a", local("Anna"), based_on=None)
    review.decide(review_store, "ex01/q01", 2, "question_text", "accept_b", local("Bruno"), based_on=None)
    at = session("Carla")
    at.radio(key="review_role").set_value(role).run()
    at.segmented_control(key="review_section").set_value("agreement").run()
    assert not at.exception, at.exception
    tables = [d.value for d in at.dataframe if "Round" in d.value.columns]
    assert tables and tables[0]["Round"].tolist() == ["1", "all rounds"]
    assert any(f"{DEMO} round 2" in as_read(i.value) and "once every field of the round is settled"
               in as_read(i.value) for i in at.info)
    headers = " ".join(c for d in at.dataframe for c in d.value.columns)
    assert "Same choice by all reviewers" in headers

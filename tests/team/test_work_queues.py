"""Work queues on a DuckDB file: "Next" holds a unit for one person until they finish, skip or the hold
runs out; two people never hold one unit unless the round asks for more reviewers (then at most that
many, never one person twice); a blind unit's decisions never come out of the queue; bad input is one line.
"""
from __future__ import annotations

from datetime import timedelta

import pytest

from benchmarks.team import build_queue_round
from eduart_core import queues, team
from eduart_core.errors import UserError
from eduart_core.extraction import review
from eduart_core.store import Store
from eduart_core.store import extraction as db
from eduart_core.store import holds as hold_db
from eduart_core.team.identity import local

ANN, BOB, CARA, DAN = (team.local(n) for n in ("ann", "bob", "cara", "dan"))


def _round(store_path, pages: int = 4, reviewers: int = 1) -> tuple[Store, list[str]]:
    store = Store(store_path)
    return store, build_queue_round(store, pages, reviewers)


def _decide_all(store: Store, page_id: str, who: str, action: str = "accept_a") -> None:
    for path in ("f0", "f1"):
        db.append_decision(store, page_id, 1, path, action, who, None, action, None, None,
                           check=lambda decisions: {"conflict": False}, role="review", source="page")


def test_two_people_get_different_pages_and_asking_again_gives_your_own_back(store_path):
    store, pages = _round(store_path)
    first = queues.next_review_page(store, ANN, 1)
    second = queues.next_review_page(store, BOB, 1)
    assert first.unit == pages[0] and second.unit == pages[1]
    assert queues.next_review_page(store, ANN, 1).unit == pages[0]  # renewed, not a second page
    held = hold_db.load_holds(store, "review:1")
    assert sorted(zip(held["unit"], held["holder"])) == [(pages[0], "ann"), (pages[1], "bob")]
    assert set(held["actor_provider"]) == {"single-machine"}  # who took it is recorded
    anns = held.loc[held["unit"] == pages[0], "held_until"].iloc[0]
    assert queues.review_holder(store, BOB, 1, pages[0]) == ("another", anns)  # never the other's name
    assert queues.review_holder(store, ANN, 1, pages[0]) == ("you", anns)


def test_a_hold_that_runs_out_gives_the_page_to_the_next_person(store_path):
    store, pages = _round(store_path)
    now = queues.now_utc()
    assert queues.next_review_page(store, ANN, 1, hold_s=60, now=now).unit == pages[0]  # ann's browser closes
    assert queues.next_review_page(store, BOB, 1, now=now + timedelta(seconds=30)).unit == pages[1]
    assert queues.next_review_page(store, CARA, 1, now=now + timedelta(seconds=61)).unit == pages[0]


def test_finishing_releases_and_a_finished_page_is_handed_to_nobody(store_path):
    store, pages = _round(store_path, pages=2)
    assert queues.next_review_page(store, ANN, 1).unit == pages[0]
    _decide_all(store, pages[0], "ann")
    assert queues.finish_review_page(store, ANN, 1, pages[0])
    assert hold_db.load_holds(store, "review:1").empty
    assert queues.next_review_page(store, BOB, 1).unit == pages[1]
    assert queues.next_review_page(store, CARA, 1) is None  # pages[0] is settled, pages[1] is bob's
    waiting = queues.review_waiting(store, CARA, 1)
    assert (waiting.mine, waiting.elsewhere, waiting.held) == (0, 1, None)


def test_a_skipped_page_goes_to_others_and_comes_back_to_the_skipper_last(store_path):
    store, pages = _round(store_path, pages=3)
    assert queues.next_review_page(store, ANN, 1).unit == pages[0]
    assert queues.skip_review_page(store, ANN, 1, pages[0]).unit == pages[1]
    assert queues.next_review_page(store, BOB, 1).unit == pages[0]  # free again for others
    assert queues.next_review_page(store, CARA, 1).unit == pages[2]
    queues.finish_review_page(store, BOB, 1, pages[0])  # bob leaves it undecided
    assert queues.next_review_page(store, ANN, 1, after=pages[1]).unit == pages[1]  # left, not skipped: before it
    assert queues.skip_review_page(store, ANN, 1, pages[1]).unit == pages[0]  # only skipped ones are left
    held = hold_db.load_holds(store, "review:1")
    assert sorted(zip(held["unit"], held["holder"])) == [(pages[0], "ann"), (pages[2], "cara")]


def test_double_review_hands_a_page_to_two_people_at_most_and_never_twice_to_one(store_path):
    store, pages = _round(store_path, pages=2, reviewers=2)
    assert queues.next_review_page(store, ANN, 1).unit == pages[0]
    assert queues.next_review_page(store, BOB, 1).unit == pages[0]   # the second of its two places
    assert queues.next_review_page(store, CARA, 1).unit == pages[1]  # no third place
    assert queues.next_review_page(store, ANN, 1).unit == pages[0]   # ann's own hold, not a second one
    held = hold_db.load_holds(store, "review:1")
    assert sorted(held.loc[held["unit"] == pages[0], "holder"]) == ["ann", "bob"]
    _decide_all(store, pages[0], "ann", "accept_a")  # the two disagree: the page waits for an adjudicator
    _decide_all(store, pages[0], "bob", "accept_b")
    queues.finish_review_page(store, ANN, 1, pages[0])
    queues.finish_review_page(store, BOB, 1, pages[0])
    queues.finish_review_page(store, CARA, 1, pages[1])
    # to dan the unsettled blind page looks open, but it has its two reviewers: never a third
    assert queues.next_review_page(store, DAN, 1).unit == pages[1]
    assert queues.next_review_page(store, team.local("eve"), 1).unit == pages[1]
    assert queues.next_review_page(store, team.local("fay"), 1) is None


def test_the_queue_tells_a_blind_reviewer_nothing_of_the_other_decision(store_path):
    store, pages = _round(store_path, pages=2, reviewers=2)
    _decide_all(store, pages[0], "ann", "accept_a")
    handed = queues.next_review_page(store, BOB, 1)
    assert handed.unit == pages[0] and set(vars(handed)) == {"unit", "round", "held_until"}
    waiting = queues.review_waiting(store, BOB, 1)
    assert set(vars(waiting)) == {"mine", "elsewhere", "held"} and waiting.held == pages[0]
    shown = review.page_fields(review.load_state(store, 1), pages[0], 1, "bob")
    assert set(shown["state"]) == {"open"} and shown["votes"].tolist() == [0, 0]
    assert shown["value"].isna().all() and shown["reviewer"].isna().all()


@pytest.mark.parametrize("hold_s", [0, -5, float("nan"), "10", 10 * 24 * 3600])
def test_a_bad_hold_time_is_one_line_and_holds_nothing(store_path, hold_s):
    store, _ = _round(store_path)
    with pytest.raises(UserError, match="a hold time must be"):
        queues.next_review_page(store, ANN, 1, hold_s=hold_s)
    assert hold_db.load_holds(store, "review:1").empty


def test_only_people_who_may_decide_are_handed_pages(store_path):
    store, _ = _round(store_path)
    presenter = team.Identity("pia", "https://idp.test", "Pia", roles=frozenset({team.PRESENTER}), signed_in=True)
    with pytest.raises(team.PermissionDenied, match="may not decide review fields"):
        queues.next_review_page(store, presenter, 1)
    with pytest.raises(UserError, match="enter your name first"):
        queues.next_review_page(store, local(" "), 1)
    assert hold_db.load_holds(store, "review:1").empty


def test_grading_hands_answers_by_the_rounds_graders_per_answer(tmp_path, monkeypatch):
    from eduart_core.judges import grading
    from tests.judge_fixtures import DATASET, RUBRIC, written_store

    store = written_store(tmp_path, monkeypatch)
    grading.start_round(store, DATASET, RUBRIC, graders=1, set_by=team.operator(), seed=7)
    first = queues.next_grading_answer(store, DATASET, RUBRIC, ANN)
    second = queues.next_grading_answer(store, DATASET, RUBRIC, BOB)
    assert first.unit != second.unit
    task = grading.open_answer(store, first.unit, ANN)
    assert queues.skip_grading_answer(store, ANN, task).unit not in (first.unit, second.unit)
    assert queues.next_grading_answer(store, DATASET, RUBRIC, CARA).unit == first.unit  # skipped: free again
    grading.set_graders(store, DATASET, RUBRIC, 2, team.operator())
    dan = queues.next_grading_answer(store, DATASET, RUBRIC, DAN)
    assert dan.unit == first.unit  # two places per answer now: cara's and dan's
    assert queues.next_grading_answer(store, DATASET, RUBRIC, team.local("eve")).unit != first.unit


def _disputed_round(store_path, pages: int) -> tuple[Store, list[str]]:
    """A double-review round whose two reviewers disagreed on every field of every page but the last (settled)."""
    store, ids = _round(store_path, pages=pages, reviewers=2)
    for k, page in enumerate(ids):
        _decide_all(store, page, "rev-1", "accept_a")
        _decide_all(store, page, "rev-2", "accept_b" if k < pages - 1 else "accept_a")
    return store, ids


def test_adjudicators_are_handed_disputed_pages_one_adjudicator_each(store_path):
    store, pages = _disputed_round(store_path, 4)
    adjudicate = review.ADJUDICATE_ROLE
    first = queues.next_review_page(store, ANN, 1, role=adjudicate)
    second = queues.next_review_page(store, BOB, 1, role=adjudicate)
    assert (first.unit, second.unit) == (pages[0], pages[1])  # never the same page to two adjudicators
    assert queues.next_review_page(store, ANN, 1, role=adjudicate).unit == pages[0]  # renewed, not a second page
    third = queues.next_review_page(store, CARA, 1, role=adjudicate)
    assert third.unit == pages[2]
    assert queues.next_review_page(store, DAN, 1, role=adjudicate) is None  # the settled page needs no adjudicator
    waiting = queues.review_waiting(store, DAN, 1, role=adjudicate)
    assert (waiting.mine, waiting.elsewhere) == (0, 3)
    assert queues.review_holder(store, DAN, 1, pages[0], role=adjudicate)[0] == "another"
    # the adjudicators' holds are their own queue's: reviewers' holds neither block them nor are blocked
    held = hold_db.load_holds(store, "adjudicate:1")
    assert sorted(zip(held["unit"], held["holder"])) == [(pages[0], "ann"), (pages[1], "bob"), (pages[2], "cara")]
    assert hold_db.load_holds(store, "review:1").empty
    # finishing releases the page to the next adjudicator
    assert queues.finish_review_page(store, ANN, 1, pages[0], role=adjudicate)
    assert queues.next_review_page(store, DAN, 1, role=adjudicate).unit == pages[0]
    # bob skips: every other disputed page is held, so the skipped one comes back to him, last and only
    assert queues.skip_review_page(store, BOB, 1, pages[1], role=adjudicate).unit == pages[1]
    assert queues.next_review_page(store, ANN, 1, role=adjudicate) is None
    assert queues.finish_review_page(store, BOB, 1, pages[1], role=adjudicate)
    assert queues.next_review_page(store, ANN, 1, role=adjudicate).unit == pages[1]


def test_only_adjudicators_are_handed_adjudication_pages(store_path):
    store, pages = _disputed_round(store_path, 2)
    rev = team.Identity("rev", "https://idp.test", "Rev Person", "rev@example.org", frozenset({team.REVIEWER}),
                        signed_in=True)
    with pytest.raises(team.PermissionDenied):
        queues.next_review_page(store, rev, 1, role=review.ADJUDICATE_ROLE)
    with pytest.raises(UserError, match="unknown review role 'judge'"):
        queues.next_review_page(store, ANN, 1, role="judge")
    assert hold_db.load_holds(store, "adjudicate:1").empty

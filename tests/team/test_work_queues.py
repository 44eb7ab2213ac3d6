"""Work queues on a DuckDB file: "Next" holds a unit for one person until they finish, skip or the hold
runs out; two people never hold one unit unless the round asks for more reviewers (then at most that
many, never one person twice); a blind unit's decisions never come out of the queue; bad input is one line.
"""
from __future__ import annotations

import os
from datetime import timedelta

import pytest
from demo_kit import copy_store

from benchmarks.team import build_queue_round
from eduart_core import queues, team
from eduart_core.errors import UserError
from eduart_core.extraction import review
from eduart_core.store import Store
from eduart_core.store import extraction as db
from eduart_core.store import holds as hold_db
from eduart_core.team.identity import local
from eduart_core.vocab import ADJUDICATE_ROLE as ADJUDICATE_GRADES_ROLE

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


# ---------------------------------------------------------------- adjudicating grades

@pytest.fixture(scope="module")
def _disputed_template(tmp_path_factory):
    """The disputed round built once for the module (a store file and its rubric folder): each test
    takes a copy, so a test's holds and decisions never reach another test."""
    from tests.judge_fixtures import disputed_round, written_store

    with pytest.MonkeyPatch.context() as patch:
        store = written_store(tmp_path_factory.mktemp("disputed"), patch)
        rubrics = os.environ["EDUART_RUBRICS"]
        with store.held():  # a fixture's build: one open of the file, not one per write
            tokens = disputed_round(store, disputed=4, agreed=1)
    return store.path, rubrics, tokens


@pytest.fixture
def disputed(_disputed_template, tmp_path, monkeypatch):
    """A grading round whose two graders dispute its first four answers and agree on the fifth
    (a copy of the module's template)."""
    path, rubrics, tokens = _disputed_template
    monkeypatch.setenv("EDUART_RUBRICS", rubrics)
    return Store(copy_store(path, tmp_path / "store" / "eduart.duckdb")), list(tokens)


def _adjudicate_next(store, who, **kw):
    from tests.judge_fixtures import DATASET, RUBRIC

    return queues.next_grading_answer(store, DATASET, RUBRIC, who, role=ADJUDICATE_GRADES_ROLE, **kw)


GRADING_ADJUDICATORS = queues.grading_queue_name("written", "test-v1", 1, ADJUDICATE_GRADES_ROLE)


def test_adjudicators_are_handed_disputed_answers_one_adjudicator_each(disputed):
    from eduart_core.judges import grading
    from tests.judge_fixtures import DATASET, RUBRIC

    store, tokens = disputed
    handed = [_adjudicate_next(store, p) for p in (ANN, BOB, CARA, DAN)]
    assert [h.unit for h in handed] == tokens[:4]  # four disputed answers, four adjudicators, none shared
    assert _adjudicate_next(store, ANN).unit == tokens[0]  # her own hold renewed, not a second answer
    eve = team.local("eve")
    assert _adjudicate_next(store, eve) is None  # the agreed answer and the ungraded ones need no adjudicator
    waiting = queues.grading_waiting(store, DATASET, RUBRIC, eve, role=ADJUDICATE_GRADES_ROLE)
    assert (waiting.mine, waiting.elsewhere, waiting.held) == (0, 4, None)
    held = hold_db.load_holds(store, GRADING_ADJUDICATORS)
    assert sorted(zip(held["unit"], held["holder"])) == sorted(zip(tokens[:4], ["ann", "bob", "cara", "dan"]))
    assert set(held["actor_provider"]) == {"single-machine"}  # who took each is recorded
    task = grading.open_disputed(store, tokens[0], eve)
    anns = held.loc[held["holder"] == "ann", "held_until"].iloc[0]
    assert queues.grading_holder(store, eve, task) == ("another", anns)  # never the other's name
    assert queues.grading_holder(store, ANN, task)[0] == "you"
    # the graders' own queue is another: an adjudicator's hold keeps no grader from an answer
    assert hold_db.load_holds(store, queues.grading_queue_name(DATASET, RUBRIC, 1)).empty
    assert _adjudicate_next(store, team.local("gia")) is None  # a grader of every disputed answer adjudicates none


def test_finishing_skipping_and_running_out_release_a_disputed_answer(disputed):
    from eduart_core.judges import grading

    store, tokens = disputed
    now = queues.now_utc()
    assert _adjudicate_next(store, ANN, hold_s=60, now=now).unit == tokens[0]  # ann's browser closes
    assert _adjudicate_next(store, BOB, now=now + timedelta(seconds=30)).unit == tokens[1]
    later = now + timedelta(seconds=61)
    assert _adjudicate_next(store, CARA, now=later).unit == tokens[0]  # ann's hold ran out
    assert queues.finish_grading_answer(store, CARA, grading.open_disputed(store, tokens[0], CARA), now=later)
    assert _adjudicate_next(store, DAN, now=later).unit == tokens[0]  # finished (undecided): free for the next one
    skipped = queues.skip_grading_answer(store, BOB, grading.open_disputed(store, tokens[1], BOB), now=later)
    assert skipped.unit == tokens[2]
    assert _adjudicate_next(store, CARA, now=later).unit == tokens[1]  # the skipped answer is free for others
    assert _adjudicate_next(store, ANN, now=later).unit == tokens[3]
    assert _adjudicate_next(store, team.local("eve"), now=later) is None
    held = hold_db.load_holds(store, GRADING_ADJUDICATORS, later)
    assert sorted(zip(held["unit"], held["holder"])) == sorted(
        [(tokens[0], "dan"), (tokens[2], "bob"), (tokens[1], "cara"), (tokens[3], "ann")])


def test_settling_a_disputed_answer_takes_it_out_of_the_queue(disputed):
    from eduart_core.judges import grading
    from eduart_core.store.grades import load_grades
    from tests.judge_fixtures import DATASET, RUBRIC

    store, tokens = disputed
    assert _adjudicate_next(store, ANN).unit == tokens[0]
    task = grading.open_disputed(store, tokens[0], ANN)
    assert task.disputed == ("evidence",) and task.marks == {"evidence": (0.0, 1.0)}
    assert grading.adjudicate(store, tokens[0], ANN, {"evidence": 1}).settled
    assert queues.finish_grading_answer(store, ANN, task)
    decided = load_grades(store, DATASET).iloc[-1]
    assert (decided["grader"], decided["role"], decided["recorded_by"]) == ("ann", "adjudicate", "ann")
    handed = {_adjudicate_next(store, p).unit for p in (BOB, CARA, DAN)}
    assert handed == set(tokens[1:4])  # the settled answer goes to nobody
    assert _adjudicate_next(store, team.local("eve")) is None
    with pytest.raises(grading.BlindGradingError, match="no disputed criterion"):
        grading.open_disputed(store, tokens[0], team.local("eve"))
    assert queues.grading_waiting(store, DATASET, RUBRIC, ANN, role=ADJUDICATE_GRADES_ROLE).elsewhere == 3


def test_a_reviewer_or_a_grader_is_refused_the_adjudicators_queue_with_one_line_and_nothing_written(disputed):
    from eduart_core.judges import grading
    from tests.judge_fixtures import DATASET, RUBRIC

    store, tokens = disputed
    task = grading.open_disputed(store, tokens[0], ANN)
    before = store.data_version()
    rev = team.Identity("rev", "https://idp.test", "Rev Person", "rev@example.org", frozenset({team.REVIEWER}),
                        signed_in=True)
    for call in (lambda: _adjudicate_next(store, rev),
                 lambda: queues.grading_waiting(store, DATASET, RUBRIC, rev, role=ADJUDICATE_GRADES_ROLE),
                 lambda: queues.skip_grading_answer(store, rev, task),
                 lambda: queues.finish_grading_answer(store, rev, task),
                 lambda: queues.grading_holder(store, rev, task),
                 lambda: grading.open_disputed(store, tokens[0], rev)):
        with pytest.raises(team.PermissionDenied, match="adjudicate the grades") as refused:
            call()
        assert "\n" not in str(refused.value)
    with pytest.raises(UserError, match="unknown grading role 'judge'"):
        queues.next_grading_answer(store, DATASET, RUBRIC, ANN, role="judge")
    with pytest.raises(TypeError, match="must be an Identity"):
        _adjudicate_next(store, "ann")  # a plain name holds no role
    assert hold_db.load_holds(store, GRADING_ADJUDICATORS).empty and store.data_version() == before


def test_the_adjudicators_queue_tells_nobody_the_graders_marks(disputed):
    from eduart_core.judges import grading
    from tests.judge_fixtures import DATASET, RUBRIC

    store, tokens = disputed
    handed = _adjudicate_next(store, ANN)
    assert set(vars(handed)) == {"unit", "round", "held_until"}
    waiting = queues.grading_waiting(store, DATASET, RUBRIC, ANN, role=ADJUDICATE_GRADES_ROLE)
    assert set(vars(waiting)) == {"mine", "elsewhere", "held"}
    task = grading.open_disputed(store, handed.unit, ANN)  # an adjudicator: the marks, unnamed
    assert "gia" not in repr(task) and "gus" not in repr(task)
    with pytest.raises(grading.BlindGradingError, match="you graded this answer"):
        grading.open_disputed(store, handed.unit, team.local("gia"))  # a grader of it: never the other's marks
    theirs = grading.answer_grades(store, handed.unit, team.local("gia"))
    assert set(theirs["grader"]) == {"gia"} and not theirs.attrs["settled"]

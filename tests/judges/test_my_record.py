"""A rater's record on real stores: the decisions and marks adjudication overruled (with the settled
value and the adjudicator's note), agreement week by week, severity from 30 graded answers; a
reviewer reads only their own record (one line otherwise), an adjudicator anyone's; a unit still
blind shows nothing, not even the other reviewer's decision."""
from __future__ import annotations

import json

import pytest
from pg_kit import BACKENDS, build_once

from eduart_core import records, team, views
from eduart_core.extraction import review
from eduart_core.judges import grading
from eduart_core.selection import Selection
from eduart_core.store import Store
from tests.judge_fixtures import DATASET as WRITTEN
from tests.judge_fixtures import RUBRIC, build_written_store, deserved, write_rubric

DEMO = "demo-extraction"
SEL = Selection(dataset=DEMO)  # the record spans every dataset: the selection does not narrow it
IDP = "https://idp.test"
ADJ_NOTE = "the screenshot has the accent on citta"
GRADE_NOTE = "the answer names the light"


def person(subject: str, *roles: str) -> team.Identity:
    return team.Identity(subject, IDP, subject.title(), None, frozenset(roles), signed_in=True)


ANNA, BRUNO = person("anna", team.REVIEWER), person("bruno", team.REVIEWER)
CARLA, PRESENTER = person("carla", team.ADJUDICATOR), person("pia", team.PRESENTER)


@pytest.fixture(scope="module", autouse=True)
def _rubrics(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EDUART_RUBRICS", str(write_rubric(tmp_path_factory.mktemp("rubrics"))))
        yield


def _marks(task) -> dict:
    from eduart_core.judges.checks import run_check
    from eduart_core.judges.rubric import load_rubric

    rubric = load_rubric(RUBRIC)
    out = {}
    for c in task.criteria:
        criterion = rubric.criterion(c.id)
        out[c.id] = (run_check(criterion, rubric.expected(criterion, task.item_id), task.answer) if criterion.check
                     else deserved(task.answer))
    return out


def build_team_store(store: Store) -> None:
    """Blind round 2 (two reviewers per page): on ex01/q01 Anna and Bruno disagree and Carla settles it for
    Bruno's side with a note; on ex03/q01 they disagree and nobody has adjudicated yet (still blind).
    A grading round of two graders: Bruno marks one answer's evidence wrongly and Carla settles it with a
    note; on a second answer they disagree and nobody has adjudicated; the rest they agree on."""
    from eduart_core.extraction.simulated import build_extraction_demo

    build_extraction_demo(store)
    review.set_reviewers(store, DEMO, 2, 2, set_by=team.operator())
    review.decide(store, "ex01/q01", 2, "question_text", "accept_a", ANNA, based_on=None)
    review.decide(store, "ex01/q01", 2, "question_text", "accept_b", BRUNO, based_on=None)
    seen = review.page_fields(store, "ex01/q01", 2, "carla", role=review.ADJUDICATE_ROLE).iloc[0]
    review.decide(store, "ex01/q01", 2, "question_text", "accept_b", CARLA, based_on=seen["decision_id"],
                  role=review.ADJUDICATE_ROLE, note=ADJ_NOTE)
    review.decide(store, "ex03/q01", 2, "choices[B].text", "accept_a", ANNA, based_on=None)
    review.decide(store, "ex03/q01", 2, "choices[B].text", "accept_b", BRUNO, based_on=None)

    build_written_store(store)
    grading.start_round(store, WRITTEN, RUBRIC, graders=2, set_by=team.operator(), seed=7)
    done = 0
    while (task := grading.next_answer(store, WRITTEN, RUBRIC, ANNA)) is not None:
        right = _marks(task)
        grading.submit_grades(store, task.token, ANNA, right)
        if done < 2:  # Bruno flips the evidence of the first two answers
            grading.submit_grades(store, task.token, BRUNO, {**right, "evidence": 1 - right["evidence"]})
            if done == 0:
                grading.adjudicate(store, task.token, CARLA, {"evidence": right["evidence"]}, note=GRADE_NOTE)
        else:
            grading.submit_grades(store, task.token, BRUNO, right)
        done += 1


@pytest.fixture(scope="module", params=BACKENDS)
def built(request, tmp_path_factory, _rubrics):
    return build_once(request, tmp_path_factory, request.param, build_team_store, "record")


@pytest.fixture
def store(request, built, tmp_path) -> Store:
    return Store(built.copy(request, tmp_path / "record"))


def _discrepancy(store: Store, page: str, path: str) -> tuple:
    row = review.load_state(store).fields(page, 2).set_index("path").loc[path]
    return row["value_a"], row["value_b"]


def test_a_reviewer_sees_exactly_their_overruled_decisions_with_the_adjudicated_value_and_note(store):
    a, b = _discrepancy(store, "ex01/q01", "question_text")
    mine = records.rater_record(store, ANNA)
    reviewed = mine.overruled[mine.overruled["source"] == "review"]
    assert list(zip(reviewed["unit"], reviewed["field"])) == [("ex01/q01 round 2", "question_text")]
    row = reviewed.iloc[0]
    assert (row["yours"], row["adjudicated"], row["note"]) == (a, b, ADJ_NOTE)
    assert mine.overruled[mine.overruled["source"] == "grading"].empty  # Anna graded right
    # Bruno was kept on the field and overruled on one mark (the adjudicated answer), not on the disputed one
    his = records.rater_record(store, BRUNO)
    assert his.overruled["source"].tolist() == ["grading"]
    mark = his.overruled.iloc[0]
    assert mark["field"] == "evidence" and mark["note"] == GRADE_NOTE and mark["yours"] != mark["adjudicated"]
    assert "model" not in " ".join(his.overruled.columns) and "zeta" not in his.overruled.to_json()


def test_agreement_counts_settled_units_with_n_and_interval(store):
    anna = records.rater_record(store, ANNA).agreement.set_index("source")
    # review: one settled field, overruled; grading: 11 settled answers x their criteria, all agreed
    assert (anna.loc["review", "n"], anna.loc["review", "agreed"]) == (1, 0)
    grading_row = anna.loc["grading"]
    assert grading_row["agreed"] == grading_row["n"] > 10 and grading_row["ci_low"] < 1 == grading_row["share"]
    bruno = records.rater_record(store, BRUNO).agreement.set_index("source")
    assert (bruno.loc["review", "n"], bruno.loc["review", "agreed"]) == (1, 1)
    assert bruno.loc["grading", "agreed"] == bruno.loc["grading", "n"] - 1


def test_a_blind_unit_shows_nothing_until_settled(store):
    _, bruno_side = _discrepancy(store, "ex03/q01", "choices[B].text")
    anna = records.rater_record(store, ANNA)
    everything = json.dumps([anna.overruled.astype(str).to_dict("records"),
                             anna.agreement.astype(str).to_dict("records")], ensure_ascii=False)
    assert "ex03/q01" not in everything and bruno_side not in everything
    assert anna.agreement.set_index("source").loc["review", "n"] == 1  # the unsettled field is not counted
    # the view the page and `show` read says the same
    src = views.Source.of(store)
    frame = views.my_record(src, SEL, who=ANNA)
    assert "ex03/q01" not in frame.to_json() and bruno_side not in frame.to_json(force_ascii=False)


def test_another_reviewers_record_is_refused_for_a_reviewer_and_read_by_an_adjudicator(store):
    for asker in (ANNA, PRESENTER):
        with pytest.raises(team.PermissionDenied) as refused:
            records.rater_record(store, asker, rater="bruno")
        assert "\n" not in str(refused.value) and "may not see another rater's record" in str(refused.value)
    assert records.rater_record(store, ANNA, rater="anna").rater == "anna"  # one's own, named: fine
    read = records.rater_record(store, CARLA, rater="bruno")
    assert read.rater == "bruno" and read.overruled["note"].tolist() == [GRADE_NOTE]
    admin = person("ada", team.ADMIN)
    assert records.rater_record(store, admin, rater="anna").overruled["note"].tolist() == [ADJ_NOTE]
    src = views.Source.of(store)
    with pytest.raises(team.PermissionDenied):
        views.my_record(src, SEL, rater="bruno", who=ANNA)


def test_severity_waits_for_30_graded_answers(store):
    severity = records.rater_record(store, ANNA).severity
    row = severity.set_index("rubric").loc[RUBRIC]
    assert row["graded_answers"] == 11 and row["severity"] != row["severity"]  # NaN: not shown (1 answer disputed)
    assert row["words"] == "Severity is shown from 30 settled graded answers; 11 so far, 19 more needed."


# ---------------------------------------------------------------- severity from 30 answers

EXTRA = 9  # items w5..w13: with w1..w4, 13 items x 3 examinees = 39 answers


def build_many_answers(store: Store) -> None:
    """The written store plus items w5..w13 (the evidence criterion only), answered by the three examinees."""
    from eduart_core.scoring.item_writes import upsert_items
    from eduart_core.scoring.responses import add_responses
    from tests.judge_fixtures import FEATURE, MODELS

    build_written_store(store)
    items = [{"item_id": f"w{k}", "type": "completion_open", "question_text": f"Chi dipinse l'opera {k}? [A]",
              "choices": None, "answers": [{"id": "A", "description": "Anonimo"}], "language": "it",
              "has_image": False, "image": None, "source": "test/written"} for k in range(5, 5 + EXTRA)]
    upsert_items(store, items, WRITTEN, "test")
    for n, key in enumerate(MODELS):
        words = [f"Anonimo; lo mostra {FEATURE}" if (k + n) % 2 else "Anonimo; è un'opera famosa"
                 for k in range(EXTRA)]
        add_responses(store, f"answers-{key}", [
            {"item_id": item["item_id"], "request_key": item["item_id"],
             "raw_text": json.dumps({"Answers": [{"id": "A", "text": text}]})} for item, text in zip(items, words)])


@pytest.mark.slow
def test_severity_appears_with_its_interval_from_30_graded_answers(tmp_path):
    store = Store(tmp_path / "many.duckdb")
    build_many_answers(store)
    grading.start_round(store, WRITTEN, RUBRIC, graders=2, set_by=team.operator(), seed=11)
    n = 0
    while (task := grading.next_answer(store, WRITTEN, RUBRIC, ANNA)) is not None:
        right = _marks(task)
        grading.submit_grades(store, task.token, ANNA, right)
        lenient = {**right, "evidence": 1 if n % 3 else right["evidence"]}  # Bruno gives the point 2 times in 3
        if grading.submit_grades(store, task.token, BRUNO, lenient).disputed:
            grading.adjudicate(store, task.token, CARLA, {"evidence": right["evidence"]}, note="no visual feature")
        n += 1
    assert n == 39
    row = records.rater_record(store, BRUNO).severity.set_index("rubric").loc[RUBRIC]
    assert row["graded_answers"] == 39
    assert row["ci_low"] < row["severity"] < row["ci_high"]
    assert row["words"].startswith(f"Severity {row['severity']:+.2f} logit, 95% interval")
    assert row["severity"] < 0  # lenient: higher marks than the graders' mean
    overruled = records.rater_record(store, CARLA, rater="bruno").overruled
    assert len(overruled) > 5 and set(overruled["adjudicated"]) == {"0"} and set(overruled["yours"]) == {"1"}


# ---------------------------------------------------------------- the page (AppTest)

def _grading_page(user: dict):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from tests.pages.test_grading_page import AUTH

    views.clear_caches()
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120)
    at.secrets["auth"] = dict(AUTH)
    at.user = user
    at.session_state["f_dataset"] = WRITTEN
    at.run()
    assert not at.exception, at.exception
    at.switch_page("pages/12_grading.py").run()
    assert not at.exception, at.exception
    return at


def _signed_in(subject: str, role: str) -> dict:
    return {"is_logged_in": True, "sub": subject, "name": subject.title(), "iss": IDP, "groups": [role]}


@pytest.mark.slow
def test_the_grading_page_shows_my_record_and_only_an_adjudicator_names_another_rater(request, built, tmp_path,
                                                                                      monkeypatch):
    if built.backend != "duckdb":
        pytest.skip("the page test runs on the DuckDB file")
    store = Store(built.copy(request, tmp_path / "page"))
    monkeypatch.setenv("EDUART_DB", str(store.path))
    _, bruno_side = _discrepancy(store, "ex03/q01", "choices[B].text")
    at = _grading_page(_signed_in("anna", team.REVIEWER))
    shown = " ".join(frame.value.to_json(force_ascii=False) for frame in at.dataframe)
    assert ADJ_NOTE in shown and "ex03/q01" not in shown and bruno_side not in shown
    assert not [t for t in at.text_input if t.key == "grading_record_rater"]  # a reviewer names nobody else
    assert any("19 more needed" in t.value for t in at.text)
    at = _grading_page(_signed_in("carla", team.ADJUDICATOR))
    at.text_input(key="grading_record_rater").set_value("bruno").run()
    assert not at.exception, at.exception
    shown = " ".join(frame.value.to_json(force_ascii=False) for frame in at.dataframe)
    assert GRADE_NOTE in shown and ADJ_NOTE not in shown

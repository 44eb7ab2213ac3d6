"""The grading page under AppTest: an art historian grades an open answer blind, criterion by
criterion, and every grade names who made it.

What a grader relies on: the answer comes with its item, key and rubric as plain text, without the
model that wrote it and without the other graders' marks; a second grader of the same answer starts
from empty marks. What a lead relies on: only reviewers grade and only adjudicators adjudicate, and
the library refuses the others whatever the page shows; a disagreement reaches an adjudicator
with the marks unnamed."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from eduart_core import team
from eduart_core.judges import grading
from eduart_core.store.grades import load_grades
from eduart_core.team.identity import local
from tests.judge_fixtures import DATASET, MODELS, RUBRIC, written_store
from tests.reading import as_read

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PAGE = "pages/12_grading.py"
AUTH = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "x" * 32, "client_id": "studio",
        "client_secret": "s", "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}
CRITERIA = ("artist", "date", "evidence")


@pytest.fixture
def written(tmp_path, monkeypatch):
    store = written_store(tmp_path, monkeypatch)
    grading.start_round(store, DATASET, RUBRIC, graders=2, set_by=team.operator(), seed=7)
    monkeypatch.setenv("EDUART_DB", str(store.path))
    return store


def person(*roles: str, subject: str) -> dict:
    return {"is_logged_in": True, "sub": subject, "name": f"{subject.title()} Person", "email": f"{subject}@example.org",
            "iss": "https://idp.test", "groups": list(roles)}


def app(user: dict | None = None):
    """A fresh browser session on the grading page of the written dataset (signed in when ``user``)."""
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    if user is not None:
        at.secrets["auth"] = dict(AUTH)
        at.user = user
    at.session_state["f_dataset"] = DATASET
    at.run()  # app.py first (navigation, the sign-in gate, the page's roles), then the page
    assert not at.exception, at.exception
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def page_text(at) -> str:
    """Everything the page shows as text, read as a person reads it (widget labels and options too)."""
    parts = [str(x.value) for kind in ("markdown", "caption", "info", "success", "warning", "error", "title",
                                       "subheader") for x in at.get(kind)]
    for radio in at.main.radio:
        parts += [str(radio.label), *map(str, radio.options)]
    return as_read(" ".join(parts))


def marks(at) -> dict:
    """The page's mark inputs by criterion (the sidebar has radios of its own)."""
    return {r.key.rsplit("::", 1)[1]: r for r in at.main.radio if (r.key or "").startswith("grade::")}


def mark(at, points: dict[str, int]) -> None:
    for criterion, value in points.items():
        radio = marks(at)[criterion]
        radio.set_value(value)
    at.button(key="grading_submit").click().run()
    assert not at.exception, at.exception


def test_a_grader_sees_item_key_answer_and_rubric_but_no_model_and_a_second_grader_sees_no_marks(written):
    at = app()
    at.text_input(key="grading_name").input("Ann").run()
    shown = page_text(at)
    assert "Grading as **Ann**" in " ".join(str(m.value) for m in at.markdown)
    assert "Chi dipinse l'opera" in shown and "Answer to grade" in shown  # the item and the answer
    assert "Visual evidence" in shown and "A visual feature." in shown    # the rubric's criteria and levels
    for key, name in MODELS.items():                                      # never the examinee
        assert key not in shown and name not in shown
    radios = marks(at)
    assert set(radios) == set(CRITERIA) and all(r.value is None for r in radios.values())
    token = radios["artist"].key.split("::")[1]
    mark(at, {"artist": 1, "date": 1, "evidence": 0})
    assert "Grades saved" in page_text(at)
    stored = load_grades(written, DATASET)
    assert set(stored["grader"]) == {"Ann"} and len(stored) == 3
    assert set(stored["actor_provider"]) == {"single-machine"} and set(stored["recorded_by"]) == {"Ann"}

    bob = app()  # another person, another browser session: the same answer, none of Ann's marks
    bob.text_input(key="grading_name").input("Bob").run()
    radios = marks(bob)
    assert {r.key.split("::")[1] for r in radios.values()} == {token}
    assert all(r.value is None for r in radios.values())
    assert "Ann" not in page_text(bob)
    mark(bob, {"artist": 1, "date": 1, "evidence": 1})  # Bob disagrees on the evidence


def test_signed_in_reviewer_grades_blind_and_is_recorded_by_subject(written):
    grading.submit_grades(written, grading.next_answer(written, DATASET, RUBRIC, local("ann")).token, local("ann"),
                          {"artist": 1, "date": 1, "evidence": 1})
    at = app(person(team.REVIEWER, subject="rita"))
    assert "grading_role" not in [r.key for r in at.main.radio]  # a reviewer only grades: no choice of capacity
    shown = page_text(at)
    assert "Grading as Rita Person" in shown and not re.search(r"\bann\b", shown)
    assert marks(at) and all(r.value is None for r in marks(at).values())  # ann's marks on the same answer are not shown
    mark(at, {"artist": 1, "date": 0, "evidence": 1})
    rows = load_grades(written, DATASET)
    rita = rows[rows["grader"] == "rita"]
    assert len(rita) == 3 and set(rita["actor_provider"]) == {"https://idp.test"}
    assert set(rita["actor_name"]) == {"Rita Person"}
    assert "Adjudicator" not in page_text(at) and not any(b.key == "grading_start" for b in at.button)


def test_an_adjudicator_sees_the_disputed_criterion_with_unnamed_marks_and_decides(written):
    token = grading.next_answer(written, DATASET, RUBRIC, local("ann")).token
    grading.submit_grades(written, token, local("ann"), {"artist": 1, "date": 1, "evidence": 0})
    grading.submit_grades(written, token, local("bob"), {"artist": 1, "date": 1, "evidence": 1})
    at = app(person(team.ADJUDICATOR, subject="ada"))
    shown = page_text(at)
    assert "Disputed answer" in shown and "The graders gave: 0, 1 (unnamed)" in shown
    assert "ann" not in shown and "bob" not in shown
    assert list(marks(at)) == ["evidence"] and marks(at)["evidence"].key == f"grade::{token}::evidence"
    at.radio(key=f"grade::{token}::evidence").set_value(1)
    at.button(key="grading_decide").click().run()
    assert not at.exception, at.exception
    decided = load_grades(written, DATASET).iloc[-1]
    assert (decided["grader"], decided["role"], decided["actor_name"]) == ("ada", "adjudicate", "Ada Person")
    assert grading.round_progress(written, DATASET, RUBRIC).iloc[0]["settled"] == 1


def test_roles_without_permission_are_refused_by_the_library_and_the_page(written):
    presenter = team.Identity("pia", "https://idp.test", "Pia Person", roles=frozenset({team.PRESENTER}),
                              signed_in=True)
    reviewer = team.Identity("rita", "https://idp.test", "Rita Person", roles=frozenset({team.REVIEWER}),
                             signed_in=True)
    token = grading.next_answer(written, DATASET, RUBRIC, reviewer).token
    before = written.data_version()
    with pytest.raises(team.PermissionDenied, match="may not grade open answers"):
        grading.submit_grades(written, token, presenter, {"artist": 1})
    with pytest.raises(team.PermissionDenied, match="may not grade open answers"):
        grading.next_answer(written, DATASET, RUBRIC, presenter)
    with pytest.raises(team.PermissionDenied, match="adjudicate the grades"):
        grading.adjudicate(written, token, reviewer, {"evidence": 1})
    with pytest.raises(team.PermissionDenied, match="start a grading round"):
        grading.start_round(written, DATASET, RUBRIC, 3, reviewer)
    assert written.data_version() == before and load_grades(written, DATASET).empty

    refused = app(person(team.PRESENTER, subject="pia"))  # the page is not in a presenter's reach either
    assert "Your roles do not include this page." in page_text(refused) and not marks(refused)

    lead = app(person(team.RESEARCHER, subject="lena"))  # a researcher sets rounds, grades nothing
    assert any(b.key == "grading_start" for b in lead.button)
    assert not marks(lead) and "neither grading nor adjudicating" in page_text(lead)
    lead.number_input(key="grading_k").set_value(3)
    lead.button(key="grading_set_k").click().run()
    assert grading.round_progress(written, DATASET, RUBRIC).iloc[0]["graders_per_answer"] == 3


@pytest.fixture
def disputes(tmp_path, monkeypatch):
    """A round whose two graders dispute two answers (and graded nothing else)."""
    from tests.judge_fixtures import disputed_round

    store = written_store(tmp_path, monkeypatch)
    tokens = disputed_round(store, disputed=2, agreed=0)
    monkeypatch.setenv("EDUART_DB", str(store.path))
    return store, tokens


def test_two_adjudicators_are_shown_different_disputed_answers_each_held_for_them(disputes):
    from eduart_core import queues
    from eduart_core.store import holds

    store, tokens = disputes
    ada, abe = app(person(team.ADJUDICATOR, subject="ada")), app(person(team.ADJUDICATOR, subject="abe"))
    shown = {name: marks(at)["evidence"].key.split("::")[1] for name, at in (("ada", ada), ("abe", abe))}
    assert set(shown.values()) == set(tokens)  # one disputed answer each, never the same one
    assert "Held for you until" in page_text(ada) and "Keys: N next · S skip" in page_text(ada)
    cal = app(person(team.ADJUDICATOR, subject="cal"))
    assert not marks(cal) and "2 are held by other adjudicators" in page_text(cal)

    ada.radio(key=f"grade::{shown['ada']}::evidence").set_value(1)
    ada.button(key="grading_decide").click().run()
    assert not ada.exception, ada.exception
    assert "Decision saved." in page_text(ada) and "1 disputed answer(s) are held by other adjudicators" in page_text(ada)
    queue = queues.grading_queue_name(DATASET, RUBRIC, 1, "adjudicate")
    held = holds.load_holds(store, queue)
    assert list(zip(held["unit"], held["holder"])) == [(shown["abe"], "abe")]  # ada's hold ended with her decision

    abe.button(key="grading_adjudicate_skip").click().run()  # nothing else is disputed: his answer comes back
    assert not abe.exception, abe.exception
    assert marks(abe)["evidence"].key == f"grade::{shown['abe']}::evidence" and "Skipped." in page_text(abe)
    abe.button(key="grading_adjudicate_next").click().run()
    assert "Nothing else waits for you in this round." in page_text(abe)

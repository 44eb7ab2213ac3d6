"""Team mode in the library: every guarded write refuses a person whose roles do not allow it
(one line, nothing written), and records who made it when allowed; identities from token claims;
the roles table and its command; blind rounds that tell a reviewer nothing of the others.

The role x action matrix reads ``team.ACTIONS`` and ``team.ROLES`` (a new action must bring its
write here, or the coverage test fails)."""
from __future__ import annotations

import json

import pytest

from eduart_core import overrides, records, suspects, team
from eduart_core.cli import main
from eduart_core.errors import UserError
from eduart_core.extraction import exchange, review
from eduart_core.humans import sessions as exams
from eduart_core.judges import exchange as grade_exchange
from eduart_core.judges import grading
from eduart_core.runner import background
from eduart_core.store import Store
from eduart_core.store import extraction as db
from eduart_core.store import team as team_db
from eduart_core.store.grades import load_grades
from eduart_core.store.scores import load_responses
from eduart_core.team import roles as team_roles
from eduart_core.team.identity import local
from tests.judge_fixtures import DATASET as WRITTEN
from tests.judge_fixtures import RUBRIC, build_written_store, write_rubric
from tests.review_fixtures import build_template, copy_store
from tests.scoring.test_review_keys import DATASET as KEYS
from tests.scoring.test_review_keys import (
    keyed_store,  # noqa: F401 - fixture
    plant_keys,
)

DEMO = "demo-extraction"


def person(*roles: str, subject: str | None = None) -> team.Identity:
    subject = subject or "-".join(roles) or "nobody"
    return team.Identity(subject, "https://idp.test", f"{subject.title()} Person", f"{subject}@example.org",
                         frozenset(roles), signed_in=True)


@pytest.fixture(scope="module", autouse=True)
def _rubrics(tmp_path_factory):
    """The written answers' test rubric, for the grading writes of the matrix."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EDUART_RUBRICS", str(write_rubric(tmp_path_factory.mktemp("rubrics"))))
        yield


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return build_template(tmp_path_factory.mktemp("team-template"))


@pytest.fixture(scope="module")
def prepared(template, tmp_path_factory):
    """The extraction demo plus the keys dataset of the suspect-key tests; round 2 is blind and its
    first field waits for the adjudicator (two reviewers disagree)."""
    store = Store(copy_store(template, tmp_path_factory.mktemp("team-prepared")))
    plant_keys(store)
    review.set_reviewers(store, DEMO, 2, 2)
    review.decide(store, "ex01/q01", 2, "question_text", "accept_a", local("Anna"), based_on=None)
    review.decide(store, "ex01/q01", 2, "question_text", "accept_b", local("Bruno"), based_on=None)
    exams.create_session(store, KEYS, group="student", per_cell=1, actor=team.operator(), title=EXAM)
    build_written_store(store)  # a grading round of two graders, whose first answer they dispute
    grading.start_round(store, WRITTEN, RUBRIC, graders=2, set_by=team.operator(), seed=5)
    first = grading.next_answer(store, WRITTEN, RUBRIC, local("Anna"))
    grading.submit_grades(store, first.token, local("Anna"), {"artist": 1, "date": 1, "evidence": 0})
    grading.submit_grades(store, first.token, local("Bruno"), {"artist": 1, "date": 1, "evidence": 1})
    return store.path


EXAM = "team-matrix exam"


def exam_session(store) -> str:
    from eduart_core.store.humans import load_sessions

    sessions = load_sessions(store)
    return str(sessions.loc[sessions["title"] == EXAM, "session_id"].iloc[0])


GRADE_LINE = ("test:1", {"dataset": WRITTEN, "item_id": "w1", "model": "zeta-model-x", "condition": "default",
                         "grader": "Carla", "criterion": "evidence", "points": 1})


def disputed(store) -> str:
    return grading.adjudication_queue(store, WRITTEN, RUBRIC, team.operator())[0].token


IMPORT_LINE = json.dumps({"dataset": DEMO, "page": "ex01/q02", "round": 1, "field": "answers", "reviewer": "Dario",
                          "decision": "A"})

def freeze_small_bank(store, who) -> None:
    """`banks.freeze_bank` on the keys dataset: past the permission it fits the 12 items and refuses the
    bank (a bank needs 20 usable items), storing nothing; the refusal is the allowed roles' outcome."""
    from eduart_core.banks import freeze_bank
    from eduart_core.selection import Selection

    try:
        freeze_bank(store, Selection(dataset=KEYS), "rasch", who)
    except team.PermissionDenied:
        raise
    except UserError as exc:
        assert "usable items" in str(exc)


#: One write per guarded action, as ``who``: what each action guards.
WRITES = {
    team.DECIDE: lambda s, who: review.decide(s, "ex01/q02", 1, "answers", "accept_a", who),
    team.ADJUDICATE: lambda s, who: review.decide(s, "ex01/q01", 2, "question_text", "accept_b", who,
                                                  role=review.ADJUDICATE_ROLE),
    team.BULK_ACCEPT: lambda s, who: review.bulk_accept(s, who, "accents", round=1),
    team.IMPORT_DECISIONS: lambda s, who: exchange.import_lines(s, [IMPORT_LINE], actor=who),
    team.SET_ROUND: lambda s, who: review.set_reviewers(s, DEMO, 1, 1, set_by=who),
    team.REPAIR_PROMOTIONS: lambda s, who: review.repair_promotions(s, actor=who),
    team.SEE_BLIND: lambda s, who: exchange.export_records(s, viewer=who, role=review.ADJUDICATE_ROLE),
    team.KEY_REVIEW: lambda s, who: suspects.confirm_key(s, KEYS, "k12", who, ["ctt|all_fail"]),
    team.OVERRIDE_SCORE: lambda s, who: overrides.add_override(
        s, int(load_responses(s, KEYS, "k07").iloc[0]["response_id"]), 1.0, "the key is wrong", who),
    team.LAUNCH_RUN: lambda s, who: background.cancel_launch(s, "no-such-launch", who),
    team.CHANGE_ROLES: lambda s, who: team_roles.grant(s, "someone-else", team.REVIEWER, who),
    team.SIT_EXAM: lambda s, who: exams.begin(s, exam_session(s), who),
    team.RUN_EXAMS: lambda s, who: exams.create_session(s, KEYS, group="expert", per_cell=1, actor=who),
    team.GRADE: lambda s, who: grading.submit_grades(
        s, grading.next_answer(s, WRITTEN, RUBRIC, who).token, who, {"evidence": 1}),
    team.ADJUDICATE_GRADES: lambda s, who: grading.adjudicate(s, disputed(s), who, {"evidence": 1}),
    team.SET_GRADING_ROUND: lambda s, who: grading.set_graders(s, WRITTEN, RUBRIC, 3, who),
    team.IMPORT_GRADES: lambda s, who: grade_exchange.import_lines(s, [GRADE_LINE], who),
    team.FREEZE_BANK: lambda s, who: freeze_small_bank(s, who),
    team.SEE_RECORDS: lambda s, who: records.rater_record(s, who, rater="Anna"),
}


def test_every_guarded_action_has_a_write_in_the_matrix():
    assert set(WRITES) == set(team.ACTIONS)


@pytest.fixture(scope="module")
def role_stores(prepared, tmp_path_factory):
    """One copy of the prepared store per role."""
    out = {}
    for role in team.ROLES:
        out[role] = Store(copy_store(prepared, tmp_path_factory.mktemp(f"role-{role}")))
    return out


@pytest.mark.parametrize("role", list(team.ROLES))
def test_role_by_action_matrix_at_the_library(role, role_stores):
    store = role_stores[role]
    who = person(role)
    for action, write in WRITES.items():
        before = store.data_version()
        if role in team.ACTIONS[action].roles:
            write(store, who)
        else:
            with pytest.raises(team.PermissionDenied) as refused:
                write(store, who)
            assert str(refused.value).count("\n") == 0 and "may not" in str(refused.value)
            assert store.data_version() == before, f"{role} refused {action} but something was written"
    if role == team.REVIEWER:  # allowed writes carry the identity
        mine = db.load_decisions(store, "ex01/q02", 1).iloc[-1]
        assert (mine["reviewer"], mine["actor_subject"], mine["actor_provider"]) == (
            "reviewer", "reviewer", "https://idp.test")
        grade = load_grades(store, WRITTEN).iloc[-1]
        assert (grade["grader"], grade["recorded_by"], grade["actor_provider"], grade["actor_name"]) == (
            "reviewer", "reviewer", "https://idp.test", "Reviewer Person")


def test_a_plain_string_never_acts_with_a_role(role_stores):
    """A name is no identity: every guarded write given a plain string is refused before it reads or
    writes (a name would otherwise gain every role); a reviewer cannot act as adjudicator; a single-machine
    identity is an explicit object, and only it holds every role (nobody is signed in there)."""
    store = role_stores[team.REVIEWER]
    before = store.data_version()
    for action, write in WRITES.items():
        with pytest.raises(TypeError, match="Identity"):
            write(store, "Anna")
            pytest.fail(f"{action}: a plain name was not refused")
    assert store.data_version() == before
    reviewer = person(team.REVIEWER)
    with pytest.raises(team.PermissionDenied):
        review.decide(store, "ex01/q01", 2, "question_text", "accept_b", reviewer, role=review.ADJUDICATE_ROLE)
    with pytest.raises(team.PermissionDenied):
        grading.adjudicate(store, disputed(store), reviewer, {"evidence": 1})
    assert store.data_version() == before
    assert local("Anna").roles == frozenset(team.ROLES) and not local("Anna").signed_in


def test_a_launch_is_refused_before_anything_starts(role_stores, tmp_path):
    store = role_stores[team.PRESENTER]
    with pytest.raises(team.PermissionDenied, match="launch, resume or cancel"):
        background.start_launch(store, ["run", "--model", "chance"], "refused-launch", person(team.REVIEWER))
    assert not (store.runs_dir / "_launches" / "refused-launch.spawn.json").exists()
    assert team_db.load_events(store).empty


def test_every_record_names_who_made_it(keyed_store):  # noqa: F811
    researcher, adjudicator = person(team.RESEARCHER, subject="rita"), person(team.ADJUDICATOR, subject="ada")
    target = int(load_responses(keyed_store, KEYS, "k07").iloc[0]["response_id"])
    overrides.add_override(keyed_store, target, 1.0, "A is right", researcher)
    suspects.correct_key(keyed_store, KEYS, "k07", [{"id": "A", "description": "un affresco"}], adjudicator, [])
    row = overrides.load_overrides(keyed_store, KEYS).iloc[0]
    assert (row["actor_subject"], row["actor_name"], row["reviewer"]) == ("rita", "Rita Person", "Rita Person")
    from eduart_core.store.suspects import load_key_reviews

    key = load_key_reviews(keyed_store, KEYS).iloc[-1]
    assert (key["actor_subject"], key["actor_provider"]) == ("ada", "https://idp.test")


def test_identity_from_claims_uses_the_roles_claim_and_the_table(monkeypatch):
    claims = {"sub": "u1", "iss": "https://idp", "name": "Una", "groups": ["reviewer", "staff", "ADMIN"]}
    who = team.from_claims(claims)
    assert who.roles == {"reviewer", "admin"} and who.provider == "https://idp" and who.signed_in
    monkeypatch.setenv("EDUART_ROLES_CLAIM", "eduart_roles")
    assert team.from_claims({**claims, "eduart_roles": "presenter, researcher"}).roles == {"presenter", "researcher"}
    assert team.from_claims(claims, stored_roles={"adjudicator"}).roles == {"adjudicator"}
    assert "not signed in (single-machine mode)" in team.local("Anna").label()
    assert team.operator().may(team.CHANGE_ROLES) and team.local("Anna").may(team.ADJUDICATE)


def test_roles_command_grants_revokes_and_lists(template, tmp_path, capsys):
    path = copy_store(template, tmp_path / "roles")
    assert main(["roles", "grant", "anna-sub", "reviewer", "--db", str(path)]) == 0
    assert main(["roles", "grant", "anna-sub", "reviewer", "--db", str(path)]) == 0  # already: nothing added
    assert main(["roles", "grant", "anna-sub", "conductor", "--db", str(path)]) == 2
    err = capsys.readouterr().err
    assert "unknown role 'conductor'" in err and len(err.strip().splitlines()) == 1
    assert main(["roles", "list", "--json", "--db", str(path)]) == 0
    listed = json.loads(capsys.readouterr().out)
    import getpass

    assert [(r["subject"], r["role"], r["granted_by"]) for r in listed] == [("anna-sub", "reviewer", getpass.getuser())]
    assert team_roles.stored_roles(Store(path), "anna-sub") == {"reviewer"}
    assert main(["roles", "revoke", "anna-sub", "reviewer", "--db", str(path)]) == 0
    assert team_roles.stored_roles(Store(path), "anna-sub") == frozenset()
    assert list(team_roles.role_history(Store(path))["granted"]) == [True, False]


def test_blind_round_tells_a_reviewer_nothing_and_refuses_bulk(template, tmp_path, capsys):
    store = Store(copy_store(template, tmp_path / "blind"))
    review.set_reviewers(store, DEMO, 2, 2, blind_adjudication=True)
    review.decide(store, "ex01/q01", 2, "question_text", "accept_a", local("Anna"), based_on=None)
    result = review.decide(store, "ex01/q01", 2, "question_text", "accept_b", local("Bruno"), based_on=None)
    assert result.state == "adjudication"
    message = review.decision_message(result, blind=True)
    assert "disagree" not in message and "adjudicator" not in message and "promoted" not in message
    bruno = review.page_fields(result.after, "ex01/q01", 2, "Bruno").iloc[0]
    assert bruno["state"] == "awaiting" and bruno["value"] is None and bruno["votes"] == 1
    with pytest.raises(UserError, match="unavailable in blind rounds"):
        review.bulk_accept(store, local("Anna"), "accents", round=2)
    # the adjudicator sees every decision, without names (blind adjudication)
    seen = review.field_decisions(review.load_state(store), "ex01/q01", 2, "question_text")
    assert [d["reviewer"] for d in seen] == ["reviewer 1", "reviewer 2"]
    carla = exchange.export_records(store, viewer=person(team.ADJUDICATOR), role=review.ADJUDICATE_ROLE)
    assert {r["reviewer"] for r in carla} == {"reviewer 1", "reviewer 2"} and {r["subject"] for r in carla} == {None}
    # the view behind `show review_queue` says nothing of who is still awaited
    queue = review.review_queue(store, round=2).set_index("page_id").loc["ex01/q01"]
    assert queue["status"] == "open" and queue["awaiting"] == 0 and queue["adjudication"] == 0
    # the command-line export leaves the round out unless asked by name, and then says so on its first line
    out = tmp_path / "d.jsonl"
    assert main(["review-export", "--out", str(out), "--db", str(store.path)]) == 0
    assert "--include-unsettled-blind" in capsys.readouterr().out and not out.read_text(encoding="utf-8")
    assert main(["review-export", "--out", str(out), "--db", str(store.path), "--include-unsettled-blind"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("warning: this export contains blind decisions") and f"{DEMO} round 2" in first


def test_the_server_warns_when_it_listens_beyond_this_machine_without_sign_in():
    from eduart_core.team.signin import exposure_warning

    assert exposure_warning("127.0.0.1", False) is None and exposure_warning("::1", False) is None
    assert exposure_warning("0.0.0.0", True) is None
    line = exposure_warning("0.0.0.0", False)
    assert line.startswith("warning:") and "\n" not in line and "without sign-in" in line
    assert exposure_warning(None, False) is not None  # no address: every interface


def test_the_studio_listens_on_loopback_unless_told_otherwise():
    import tomllib
    from pathlib import Path

    config = tomllib.loads((Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"


def test_the_audit_log_names_who_changed_rounds_roles_and_launched_runs(prepared, tmp_path, capsys):
    import getpass

    path = copy_store(prepared, tmp_path / "audit")
    assert main(["review-round", "--dataset", DEMO, "--round", "1", "--reviewers", "2", "--db", str(path)]) == 0
    assert main(["roles", "grant", "anna-sub", "reviewer", "--db", str(path)]) == 0
    assert main(["run", "--db", str(path), "--model", "chance", "--condition", "default", "--dataset", KEYS,
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["show", "audit_log", "--dataset", KEYS, "--db", str(path)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {"round setting", "role granted", "launch"} <= {r["act"] for r in rows}
    mine = [r for r in rows if r["act"] in ("launch", "role granted") or r["target"] == f"{DEMO} round 1"]
    assert mine and all((r["subject"], r["provider"]) == (getpass.getuser(), "os") for r in mine)

"""A reviewer's decision on a field is one row (a change of mind replaces it, the audit log keeps every
version), also when two processes decide at once and on PostgreSQL; a decision and the promotion it
completes commit together, and `review-repair` promotes the pages an interrupted write left behind;
the agreement of a blind round waits until it is settled, and `review-export` leaves its decisions out
unless asked by name (recorded in the audit log)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pg_kit import BACKENDS, build_once

from eduart_core.cli import main
from eduart_core.extraction import display, exchange, review
from eduart_core.extraction.stats import agreement_by, status_report
from eduart_core.store import Store, release_readers
from eduart_core.store import extraction as db
from eduart_core.store import team as audit
from eduart_core.store.items import get_item
from eduart_core.team.identity import local
from tests.review_fixtures import build_template, copy_store

ROOT = Path(__file__).resolve().parents[2]
DATASET = "demo-extraction"
ONE_FIELD_PAGE = "ex01/q02"  # round 1: only its answer key is queued


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return build_template(tmp_path_factory.mktemp("one-decision-template"))


@pytest.fixture
def store(template, tmp_path) -> Store:
    return Store(copy_store(template, tmp_path / "one"))


def rows_of(store: Store, page_id: str, round_: int, reviewer: str) -> list[dict]:
    current = db.current_decisions(store, page_id, round_)
    return current[current["reviewer"] == reviewer].to_dict("records")


# ------------------------------------------------------------ one row per reviewer and field

def test_deciding_a_field_three_times_leaves_one_row_and_the_history_in_the_audit_log(store):
    for action in ("accept_a", "accept_b", "accept_a"):
        review.decide(store, "ex01/q01", 1, "question_text", action, local("Anna"))
    again = review.decide(store, "ex01/q01", 1, "question_text", "accept_a", local("Anna"))  # a second click
    mine = rows_of(store, "ex01/q01", 1, "Anna")
    assert len(mine) == 1 and mine[0]["action"] == "accept_a" and int(mine[0]["decision_id"]) == again.decision_id
    log = db.load_decisions(store, "ex01/q01", 1)
    assert list(log["action"]) == ["accept_a", "accept_b", "accept_a"]  # every change of mind, the repeat not
    assert list(display.audit_table(exchange.visible_decisions(store))["Decision"]) == [
        "accepted A", "accepted B", "accepted A"]


def test_agreement_and_settlement_count_one_decision_per_reviewer(store):
    review.set_reviewers(store, DATASET, 2, 2, set_by=local("lead"))
    for action in ("accept_b", "accept_a", "accept_b", "accept_a"):
        review.decide(store, "ex01/q01", 2, "question_text", action, local("Anna"), based_on=review.LATEST)
    result = review.decide(store, "ex01/q01", 2, "question_text", "accept_a", local("Bruno"), based_on=None)
    assert result.state == "resolved"
    st = result.after.state("ex01/q01", 2, "question_text")
    assert sorted(st.votes) == ["Anna", "Bruno"] and st.how == "agreement"
    assert len(db.current_decisions(store, "ex01/q01", 2)) == 2 and len(db.load_decisions(store, "ex01/q01", 2)) == 5


def test_the_migration_keeps_the_latest_decision_per_reviewer_and_field(store):
    """A store written before one decision per reviewer held duplicates: the latest of each stays current,
    every row goes to the audit log, and the unique key holds from then on."""
    review.decide(store, "ex01/q01", 1, "question_text", "accept_b", local("Bruno"))
    release_readers(store.path)
    import duckdb

    con = duckdb.connect(str(store.path))  # the store as an older version left it (statements of their own)
    try:
        con.execute("DROP INDEX review_decisions_one")
        con.execute("DROP TABLE review_decision_log")
        con.execute("DELETE FROM schema_version WHERE version IN (16, 17)")
        for action in ("accept_a", "accept_b", "accept_a", "accept_b"):
            con.execute("INSERT INTO review_decisions (page_id, round, path, action, reviewer, role, source, conflict) "
                        "VALUES ('ex01/q01', 1, 'question_text', ?, 'Anna', 'review', 'page', FALSE)", [action])
    finally:
        con.close()
    release_readers(store.path)
    db._CURRENT_SCHEMA.discard(str(store.path))
    reopened = Store(store.path)
    db.ensure_schema(reopened)
    anna = rows_of(reopened, "ex01/q01", 1, "Anna")
    assert len(anna) == 1 and anna[0]["action"] == "accept_b"  # the latest
    assert len(rows_of(reopened, "ex01/q01", 1, "Bruno")) == 1
    assert len(db.load_decisions(reopened, "ex01/q01", 1)) == 5
    review.decide(reopened, "ex01/q01", 1, "question_text", "accept_a", local("Anna"))
    assert len(rows_of(reopened, "ex01/q01", 1, "Anna")) == 1


_DECIDE_AT = """
import sys, time
from eduart_core.extraction import review
from eduart_core.store import Store
from eduart_core.team.identity import local
store, action, start = Store(sys.argv[1]), sys.argv[2], float(sys.argv[3])
store.data_version()
state = review.load_state(store, 1)
while time.time() < start:
    time.sleep(0.0005)
review.decide(store, "ex01/q01", 1, "question_text", action, local("Anna"), state=state)
print("saved", flush=True)
"""


@pytest.fixture(scope="module", params=BACKENDS)
def both(request, tmp_path_factory):
    from eduart_core.extraction.simulated import build_extraction_demo

    return build_once(request, tmp_path_factory, request.param, build_extraction_demo, "one-decision")


@pytest.mark.slow
def test_two_processes_deciding_one_field_at_once_keep_one_row(request, both, tmp_path):
    location = both.copy(request, tmp_path / "race")
    start = str(time.time() + 8)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", _DECIDE_AT, location, action, start], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for action in ("accept_a", "accept_b")]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [o[0].strip() for o in outs] == ["saved", "saved"], [o[1][-600:] for o in outs]
    store = Store(location)
    assert len(rows_of(store, "ex01/q01", 1, "Anna")) == 1
    assert sorted(db.load_decisions(store, "ex01/q01", 1)["action"]) == ["accept_a", "accept_b"]
    with pytest.raises(Exception, match="(?i)duplicate|unique"), store.transaction() as con:  # the key itself holds
        con.execute("INSERT INTO review_decisions (page_id, round, path, action, reviewer, role) "
                    "VALUES ('ex01/q01', 1, 'question_text', 'accept_a', 'Anna', 'review')")


# ------------------------------------------------------------ a decision and its promotion commit together

def test_a_decision_that_completes_a_page_commits_with_its_promotion(store, monkeypatch):
    from eduart_core.store import runs as store_runs

    real = store_runs.current_items_con

    def fails(*args, **kwargs):  # the promotion breaks off after the decision was written
        raise RuntimeError("interrupted")

    monkeypatch.setattr(store_runs, "current_items_con", fails)
    with pytest.raises(RuntimeError):
        review.decide(store, ONE_FIELD_PAGE, 1, "answers", "accept_a", local("Anna"))
    assert db.current_decisions(store, ONE_FIELD_PAGE, 1).empty and db.load_decisions(store, ONE_FIELD_PAGE, 1).empty
    monkeypatch.setattr(store_runs, "current_items_con", real)
    result = review.decide(store, ONE_FIELD_PAGE, 1, "answers", "accept_a", local("Anna"))
    assert result.page_resolved and result.promoted_version is not None
    assert db.get_outcome(store, ONE_FIELD_PAGE, 1)["promoted_version"] == result.promoted_version


def test_review_repair_promotes_a_resolved_page_left_without_its_version(store, capsys):
    state = review.load_state(store, 1)
    row = state.fields(ONE_FIELD_PAGE, 1).iloc[0]
    db.append_decision(store, ONE_FIELD_PAGE, 1, "answers", "accept_a", "Anna", None, row["value_a"], None, None,
                       check=lambda decisions: {}, role="review", source="page")  # the decision, not its promotion
    assert review.review_queue(store, round=1).set_index("page_id").loc[ONE_FIELD_PAGE, "status"] == "resolved"
    assert db.get_outcome(store, ONE_FIELD_PAGE, 1)["promoted_version"] is None
    attention = review.attention_pages(store)
    assert "review-repair" in " ".join(attention.loc[attention["page_id"] == ONE_FIELD_PAGE, "problem"])
    assert main(["review-repair", "--db", str(store.path)]) == 0
    out = capsys.readouterr().out
    assert f"{ONE_FIELD_PAGE} round 1: promoted as gold version" in out
    assert db.get_outcome(store, ONE_FIELD_PAGE, 1)["promoted_version"] is not None
    assert get_item(store, DATASET, "x0102") is not None
    assert "review repair" in set(audit.load_events(store)["action"])
    assert main(["review-repair", "--db", str(store.path)]) == 0
    assert "nothing to repair" in capsys.readouterr().out


# ------------------------------------------------------------ a blind round under way shows no agreement

def blind_round_under_way(store: Store) -> None:
    """Round 2 blind: Anna and Bruno disagree on one field; every other field is still open."""
    review.set_reviewers(store, DATASET, 2, 2, set_by=local("lead"))
    review.decide(store, "ex01/q01", 2, "question_text", "accept_a", local("Anna"), based_on=None)
    review.decide(store, "ex01/q01", 2, "question_text", "accept_b", local("Bruno"), based_on=None)


def settle_round_two(store: Store) -> None:
    state = review.load_state(store, 2)
    for row in state.fields(round=2).to_dict("records"):
        if (row["page_id"], row["path"]) == ("ex01/q01", "question_text"):
            review.decide(store, row["page_id"], 2, row["path"], "accept_b", local("Carla"), role=review.ADJUDICATE_ROLE)
            continue
        for name in ("Anna", "Bruno"):
            review.decide(store, row["page_id"], 2, row["path"], "accept_a", local(name))


def test_the_agreement_of_a_blind_round_waits_until_it_is_settled(store, capsys):
    review.decide(store, ONE_FIELD_PAGE, 1, "answers", "accept_a", local("Anna"))  # round 1: single review, shown
    review.decide(store, ONE_FIELD_PAGE, 1, "answers", "accept_a", local("Bruno"))
    blind_round_under_way(store)
    state = review.load_state(store)
    assert list(agreement_by(state, ["dataset", "round"])["round"]) == [1, "all"]
    report = {r["round"]: r for r in status_report(state)["rounds"]}
    assert report[2]["agreement_withheld"] and report[2]["agreement"]["units"] == 0
    assert report[2]["agreement"]["cohen_kappa"] is None and report[2]["adjudication_pending"] is None
    assert {f["state"] for f in status_report(state)["open"] if f["round"] == 2} == {"open"}
    assert main(["review-status", "--db", str(store.path)]) == 0
    assert "blind round under way" in capsys.readouterr().out
    assert main(["show", "review_agreement", "--db", str(store.path), "--format", "json"]) == 0
    assert [r["round"] for r in json.loads(capsys.readouterr().out)] == [1, "all"]
    settle_round_two(store)
    settled = review.load_state(store)
    rounds = agreement_by(settled, ["dataset", "round"]).set_index("round")
    assert rounds.loc[2, "units"] >= 2 and rounds.loc[2, "percent"] < 1
    assert not {r["round"]: r for r in status_report(settled)["rounds"]}[2]["agreement_withheld"]


def test_review_export_leaves_an_unsettled_blind_round_out_unless_asked_and_records_who(store, tmp_path, capsys):
    review.decide(store, ONE_FIELD_PAGE, 1, "answers", "accept_a", local("Anna"))
    blind_round_under_way(store)
    out = tmp_path / "d.jsonl"
    assert main(["review-export", "--out", str(out), "--db", str(store.path)]) == 0
    said = capsys.readouterr().out
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert {x["round"] for x in lines} == {1}
    assert f"{DATASET} round 2 (2)" in said and "--include-unsettled-blind" in said
    assert "review export of unsettled blind rounds" not in set(audit.load_events(store)["action"])
    assert main(["review-export", "--out", str(out), "--db", str(store.path), "--include-unsettled-blind"]) == 0
    said = capsys.readouterr().out
    assert said.startswith("warning: this export contains blind decisions") and "audit log" in said
    assert {x["round"] for x in map(json.loads, out.read_text(encoding="utf-8").splitlines())} == {1, 2}
    events = audit.load_events(store)
    event = events[events["action"] == "review export of unsettled blind rounds"].iloc[0]
    assert event["target"] == f"{DATASET} round 2" and event["actor_name"]
    assert json.loads(event["detail"])["decisions"] == 3


# ------------------------------------------------------------ the demo ships reviewed rounds

def test_the_demo_shows_agreement_of_a_settled_blind_round_and_withholds_the_one_in_progress(demo_db, capsys):
    assert main(["show", "review_agreement", "--db", str(demo_db), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["round"] for r in rows] == [2, "all"] and rows[0]["units"] >= 2 and rows[0]["reviewers"] == 2
    state = review.load_state(Store(demo_db))
    report = {r["round"]: r for r in status_report(state)["rounds"]}
    assert not report[2]["agreement_withheld"] and report[2]["resolved"] == report[2]["queued"]
    assert report[3]["agreement_withheld"] and report[3]["reviewers_needed"] == 2
    reviewers = set(state.decisions["reviewer"])
    assert reviewers and all("(simulated)" in name for name in reviewers)
    assert main(["review-status", "--db", str(demo_db)]) == 0
    assert "all reviewers made the same choice" in capsys.readouterr().out


@pytest.mark.slow
def test_the_simulated_reviewers_decide_once_on_either_backend(request, both, tmp_path):
    from eduart_core.extraction.simulated import BLIND_ROUND, simulate_review

    store = Store(both.copy(request, tmp_path / "simulated"))
    first = simulate_review(store)["simulated_review_decisions"]
    assert first >= 5 and simulate_review(store)["simulated_review_decisions"] == 0  # a second build adds nothing
    report = {r["round"]: r for r in status_report(review.load_state(store))["rounds"]}
    assert report[2]["resolved"] == report[2]["queued"] and report[2]["agreement"]["units"] >= 2
    assert report[BLIND_ROUND]["agreement_withheld"] and report[BLIND_ROUND]["open_fields"] >= 1
    assert len(db.load_decisions(store)) == first

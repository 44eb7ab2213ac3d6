"""Who acts on the command line: on a team store (PostgreSQL) only the operator, never a typed name.

What a team relies on: whoever holds the database credentials cannot record a grade, a role or a
round as somebody else. A write from the command line on a team store records the operator
($EDUART_USER or the login name); `--for NAME` records whom the operator acted for, beside the
operator; `--by NAME` (a bare name that would look like that person's own record) is refused. On a
single-machine DuckDB store `--by` stays a typed name, as on a studio without sign-in.
Real stores (DuckDB file, PostgreSQL server through tests/pg_kit.py), the real CLI.
"""
from __future__ import annotations

import json

import pg_kit
import pytest

from eduart_core.cli import main
from eduart_core.errors import UserError
from eduart_core.store.grades import load_grades
from eduart_core.store.team import load_role_changes
from eduart_core.team import cli_identity
from tests.judge_fixtures import DATASET, RUBRIC, build_written_store, write_rubric

backend, store = pg_kit.backend, pg_kit.store  # the library-level test runs on DuckDB and PostgreSQL


def test_cli_identity_refuses_a_bare_name_on_a_team_store_and_records_the_operator(store, monkeypatch):
    monkeypatch.setenv("EDUART_USER", "ops")
    helper = cli_identity(store, acting_for="lead")
    assert (helper.subject, helper.provider, helper.acting_for) == ("ops", "os", "lead")
    assert helper.columns() == {"actor_subject": "ops", "actor_provider": "os", "actor_name": "ops (for lead)"}
    assert cli_identity(store).columns()["actor_name"] == "ops"
    with pytest.raises(UserError, match="not both"):
        cli_identity(store, by="lead", acting_for="lead")
    if store.shared:
        with pytest.raises(UserError, match="--by cannot name who acts on a team store.*--for 'lead'"):
            cli_identity(store, by="lead")
    else:  # a single-machine store: a typed name, labelled as not signed in
        typed = cli_identity(store, by="lead")
        assert (typed.subject, typed.provider) == ("lead", "single-machine")


def _grade_line() -> str:
    return json.dumps({"dataset": DATASET, "item_id": "w1", "model": "zeta-model-x", "condition": "default",
                       "grader": "ann", "criterion": "evidence", "points": 1})


@pytest.mark.postgres
def test_cli_writes_on_postgres_record_the_operator_never_a_typed_name(pg_url, tmp_path, monkeypatch, capsys):
    from eduart_core.store import Store

    monkeypatch.setenv("EDUART_RUBRICS", str(write_rubric(tmp_path / "rubrics")))
    monkeypatch.setenv("EDUART_USER", "ops")
    team_store = Store(pg_url)
    build_written_store(team_store)
    grades = tmp_path / "grades.jsonl"
    grades.write_text(_grade_line() + "\n", encoding="utf-8")

    assert main(["grades-import", str(grades), "--db", pg_url, "--by", "lead"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --by cannot name who acts on a team store") and "--for 'lead'" in err
    assert load_grades(team_store, DATASET).empty  # nothing recorded as "lead"

    assert main(["grades-import", str(grades), "--db", pg_url, "--for", "lead"]) == 0
    stored = load_grades(team_store, DATASET)
    assert stored[["recorded_by", "actor_subject", "actor_provider", "actor_name"]].values.tolist() == [
        ["ops", "ops", "os", "ops (for lead)"]]

    for argv in (["grading-round", "--dataset", DATASET, "--rubric", RUBRIC, "--graders", "2", "--by", "lead"],
                 ["judge-gate", "--dataset", DATASET, "--min-alpha", "0.7", "--by", "lead"]):
        assert main([*argv, "--db", pg_url]) == 2
        assert "--by cannot name who acts on a team store" in capsys.readouterr().err

    assert main(["roles", "grant", "anna", "reviewer", "--for", "lead", "--db", pg_url]) == 0
    assert main(["roles", "grant", "bruno", "reviewer", "--db", pg_url]) == 0
    changes = load_role_changes(team_store)
    assert changes[["subject", "actor_subject", "actor_provider", "actor_name"]].values.tolist() == [
        ["anna", "ops", "os", "ops (for lead)"], ["bruno", "ops", "os", "ops"]]

"""Seeded gold in grading rounds, on real stores: settled answers served again under fresh tokens,
indistinguishable from the rest for the grader; marks on them are gold checks that never change the
gold; the grader's accuracy and severity on gold and the flag reach the record (their own once the
round is over, everyone's live for an adjudicator); bad rates and gold that is not adjudicated are
refused with one line and nothing changed."""
from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from pg_kit import BACKENDS, build_once

from eduart_core import records, team, views
from eduart_core.analysis import gold as gold_stats
from eduart_core.errors import UserError
from eduart_core.judges import gold, grading
from eduart_core.selection import Selection
from eduart_core.simulate.gold_checks import flag_rates
from eduart_core.store import Store
from eduart_core.store.grades import load_grades
from tests.judge_fixtures import DATASET, RUBRIC, build_written_store, deserved, write_rubric

IDP = "https://idp.test"


def person(subject: str, *roles: str) -> team.Identity:
    return team.Identity(subject, IDP, subject.title(), None, frozenset(roles), signed_in=True)


ANNA, BRUNO, DORA = person("anna", team.REVIEWER), person("bruno", team.REVIEWER), person("dora", team.REVIEWER)
CARLA = person("carla", team.ADJUDICATOR)
FIRST = ["zeta-model-x", "omega-model-y"]  # round 1 grades these; their settled answers are the gold


@pytest.fixture(scope="module", autouse=True)
def _rubrics(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EDUART_RUBRICS", str(write_rubric(tmp_path_factory.mktemp("rubrics"))))
        yield


def _right(task) -> dict:
    from eduart_core.judges.checks import run_check
    from eduart_core.judges.rubric import load_rubric

    rubric = load_rubric(RUBRIC)
    out = {}
    for c in task.criteria:
        criterion = rubric.criterion(c.id)
        out[c.id] = (run_check(criterion, rubric.expected(criterion, task.item_id), task.answer) if criterion.check
                     else deserved(task.answer))
    return out


def build_gold_store(store: Store) -> None:
    """Round 1 (two models, two graders who agree): every answer settled, the gold. Round 2 (all three
    models, one grader each, half the answers seeded gold): Dora grades everything, and gives 1 point
    where the gold has 0 (lenient)."""
    build_written_store(store)
    grading.start_round(store, DATASET, RUBRIC, graders=2, set_by=team.operator(), models=FIRST, seed=3)
    while (task := grading.next_answer(store, DATASET, RUBRIC, ANNA)) is not None:
        grading.submit_grades(store, task.token, ANNA, _right(task))
        grading.submit_grades(store, task.token, BRUNO, _right(task))
    grading.start_round(store, DATASET, RUBRIC, graders=1, set_by=team.operator(), seed=4, seed_gold=0.5)
    while (task := grading.next_answer(store, DATASET, RUBRIC, DORA)) is not None:
        grading.submit_grades(store, task.token, DORA, {c: 1 for c in _right(task)})


@pytest.fixture(scope="module", params=BACKENDS)
def built(request, tmp_path_factory, _rubrics):
    return build_once(request, tmp_path_factory, request.param, build_gold_store, "gold")


@pytest.fixture
def store(request, built, tmp_path) -> Store:
    return Store(built.copy(request, tmp_path / "gold"))


def _round(store: Store, number: int) -> pd.DataFrame:
    with store.connect(read_only=True) as con:
        return con.frame("SELECT token, item_id, model, condition, position FROM grading_answers "
                         "WHERE dataset = ? AND round = ? ORDER BY position", [DATASET, number])


def _seeds(store: Store) -> pd.DataFrame:
    from eduart_core.store.gold import load_seeds

    return load_seeds(store)


def test_a_round_seeds_settled_answers_under_fresh_tokens_shuffled_among_the_rest(store):
    first, second = _round(store, 1), _round(store, 2)
    seeds = _seeds(store)
    assert len(seeds) > 0 and set(seeds["round"]) == {2}
    assert set(seeds["token"]) <= set(second["token"]) and not set(seeds["token"]) & set(first["token"])
    assert set(seeds["source_token"]) <= set(first["token"])  # copies of round-1 answers, not the same token
    assert sorted(second["position"]) == list(range(len(second)))
    # about half the round (as many as the 12 answers of round 2 allow from a pool of 8)
    normal = len(second) - len(seeds)
    assert len(seeds) == min(8, normal)
    # the tokens look alike (16 hex characters), and seeded answers are not bunched at one end
    assert second["token"].str.fullmatch(r"[0-9a-f]{16}").all()
    positions = second.set_index("token").loc[seeds["token"], "position"]
    assert positions.min() < len(second) // 2 <= positions.max()


def test_the_task_of_a_seeded_answer_looks_like_any_other(store):
    # Dora graded every answer of round 2: the tasks she can open again differ only in their content
    seeded = set(_seeds(store)["token"])
    served = _round(store, 2)
    # (round 2 also lists the round-1 answers themselves: settled already, they are served to nobody)
    served = served[served["token"].isin(seeded) | ~served["model"].isin(FIRST)]
    tasks = {row["token"]: grading.open_answer(store, row["token"], DORA) for row in served.to_dict("records")}
    assert seeded and set(tasks) - seeded
    shapes = {tuple((f.name, type(getattr(t, f.name)).__name__) for f in dataclasses.fields(t)
                    if f.name not in ("token", "item_id", "question", "key", "answer", "criteria", "language",
                                      "item_type", "image_hash")) for t in tasks.values()}
    assert len(shapes) == 1  # role, round, mine, disputed, marks: of one shape for gold and the rest
    for t in tasks.values():
        assert (t.round, t.role, t.disputed, t.marks) == (2, "grade", (), {})
        assert t.mine == {c.id: 1.0 for c in t.criteria}  # her own marks only, on gold as elsewhere
    # what she is told after a mark, and the round's progress, say nothing of gold either
    progress = grading.round_progress(store, DATASET, RUBRIC, DORA)
    assert "gold" not in " ".join(progress.columns) and int(progress["answers"].iloc[0]) == len(_round(store, 2))
    assert int(progress["mine"].iloc[0]) == len(tasks)


def test_a_grader_never_gets_gold_they_graded_themselves(store):
    grading.start_round(store, DATASET, RUBRIC, graders=1, set_by=team.operator(), seed=6, seed_gold=0.5)
    seeded = set(_seeds(store).query("round == 3")["token"])
    served = set()
    while (task := grading.next_answer(store, DATASET, RUBRIC, ANNA)) is not None:
        served.add(task.token)
        grading.submit_grades(store, task.token, ANNA, _right(task))
    assert seeded and not served & seeded  # Anna made all the gold: none of it goes to her
    task = grading.next_answer(store, DATASET, RUBRIC, DORA)  # the others' answers are settled: only gold is left
    assert task is not None and task.token in seeded
    with pytest.raises(grading.BlindGradingError, match="all its graders already"):
        grading.open_answer(store, sorted(seeded)[0], ANNA)


def test_marks_on_gold_are_checks_that_never_change_the_gold(store):
    grades = load_grades(store, DATASET, RUBRIC)
    checks = load_grades(store, DATASET, RUBRIC, gold_checks=True)
    assert "gold_check" not in set(grades["role"]) and "gold_check" in set(checks["role"])
    assert set(checks.loc[checks["role"] == "gold_check", "grader"]) == {"dora"}
    # Dora's all-ones marks on gold are not in the settled marks of any answer, nor in her record's agreement
    settled = grading.settled_grades(store)
    assert set(settled["role"]) <= {"grade", "adjudicate"}
    assert set(settled.loc[settled["grader"] == "dora", "model"]) == {"kappa-model-z"}  # her own answers only
    from eduart_core.analysis.judges import human_reference

    reference = human_reference(grades)
    gold_part = reference[reference["model"].isin(FIRST)]
    assert gold_part["settled"].all() and (gold_part["n_graders"] == 2).all()  # round 1's gold: Anna and Bruno only
    assert set(grades.loc[grades["model"].isin(FIRST), "grader"]) == {"anna", "bruno"}
    dora = records.rater_record(store, CARLA, "dora")
    assert dora.agreement.empty  # a single grader's answers and her gold checks are no agreement units
    # an export of the grades (what a lead hands on) carries no gold check either
    from eduart_core.judges.exchange import export_grades

    text, _ = export_grades(store, dataset=DATASET, rubric=RUBRIC)
    assert "gold_check" not in text and text.count('"grader": "dora"') == len(
        grades[grades["grader"] == "dora"].drop_duplicates(["item_id", "model", "condition", "criterion"]))


def test_the_lenient_grader_is_measured_on_gold_live_for_an_adjudicator(store):
    table = gold.gold_table(store, CARLA)
    row = table.set_index("rater").loc["dora"]
    assert row["n_marks"] > 0 and row["correct"] < row["n_marks"] and row["severity"] < 0  # lenient: below 0
    assert row["acc_low"] <= row["accuracy"] <= row["acc_high"]
    assert set(table["rater"]) == {"dora"}
    frame = views.gold_flags(views.Source.of(store), Selection(dataset=DATASET), who=CARLA)
    assert "dora" in set(frame["rater"]) and "Flagged from 10 gold answers" in frame.attrs["caption"]


def test_a_graders_own_gold_appears_once_the_round_is_over_and_only_theirs(store):
    assert records.rater_record(store, DORA).gold.empty  # round 2 still runs: a moving count would tell
    grading.start_round(store, DATASET, RUBRIC, graders=1, set_by=team.operator(), seed=7)
    mine = records.rater_record(store, DORA).gold
    assert list(mine["rater"]) == ["dora"] and mine["n_marks"].iloc[0] > 0
    frame = views.my_gold(views.Source.of(store), Selection(dataset=DATASET), who=DORA)
    assert list(frame["rater"]) == ["dora"] and "Flagged from 10 gold answers" in frame.attrs["caption"]
    with pytest.raises(team.PermissionDenied):
        records.rater_record(store, ANNA, "dora")
    with pytest.raises(team.PermissionDenied):
        views.gold_flags(views.Source.of(store), Selection(dataset=DATASET), who=DORA)


@pytest.mark.parametrize("rate", [-0.1, 1.5, float("nan"), "0.3", True])
def test_a_seed_rate_outside_0_1_is_one_line_and_nothing_changes(store, rate):
    before = _round(store, 3)
    with pytest.raises(UserError, match="a number from 0 to 1"):
        grading.start_round(store, DATASET, RUBRIC, graders=1, set_by=team.operator(), seed_gold=rate)
    assert _round(store, 3).equals(before) and before.empty


def test_gold_that_is_not_adjudicated_is_one_line_and_nothing_changes(store):
    unsettled = _round(store, 2)
    unsettled = unsettled[~unsettled["token"].isin(_seeds(store)["token"])]
    token = unsettled["token"].iloc[0]  # graded by Dora alone: no gold
    for bad, words in ((token, "is not adjudicated"), ("feedfacefeedface", "no answer with this token")):
        with pytest.raises(UserError, match=words):
            grading.start_round(store, DATASET, RUBRIC, graders=1, set_by=team.operator(), seed_gold=0.2, gold=[bad])
    assert _round(store, 3).empty and set(_seeds(store)["round"]) == {2}


def test_the_cli_refuses_a_bad_rate_in_one_line(store):
    out = subprocess.run([sys.executable, "-m", "eduart_core", "grading-round", "--db", str(store.path),
                          "--dataset", DATASET, "--rubric", RUBRIC, "--graders", "1", "--seed-gold", "1.5"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len((out.stdout + out.stderr).strip().splitlines()) == 1 and "0 to 1" in out.stderr + out.stdout


# ---------------------------------------------------------------- the statistics


def test_severity_against_gold_has_the_studios_sign():
    gold_marks = np.array([0, 1, 2, 1, 0, 2, 1, 1] * 10, dtype=float)
    lenient = np.minimum(gold_marks + (np.arange(80) % 3 == 0), 2)
    severity, se, n = gold_stats.severity_against_gold(lenient, gold_marks)
    assert severity < 0 and se > 0 and n > 0
    strict, _, _ = gold_stats.severity_against_gold(np.maximum(gold_marks - (np.arange(80) % 3 == 0), 0), gold_marks)
    assert strict > 0
    same, _, n_same = gold_stats.severity_against_gold(gold_marks, gold_marks)
    assert same == 0 and n_same == 0


def test_few_gold_answers_decide_no_flag():
    checks = pd.DataFrame({"rater": "r", "dataset": "d", "rubric": "x", "answer": [0, 1, 2], "criterion": "c",
                           "points": [2.0, 2, 2], "gold": [0.0, 0, 0], "simulated": False})
    row = gold_stats.gold_summary(checks).iloc[0]
    assert not row["flagged"] and "7 more needed" in row["reason"]


def test_a_lenient_grader_is_flagged_and_an_accurate_one_rarely_small():
    rates = flag_rates(rounds=20, seed=11)
    assert rates.lenient >= 0.8 and rates.accurate <= 0.15


@pytest.mark.slow
def test_the_flag_meets_the_issue_targets_over_100_rounds():
    rates = flag_rates(rounds=100, seed=42)
    assert rates.lenient >= 0.90 and rates.accurate <= 0.05



def test_seeding_without_any_settled_answer_is_one_line(tmp_path, _rubrics):
    fresh = Store(tmp_path / "fresh.duckdb")
    build_written_store(fresh)
    with pytest.raises(UserError, match="no settled answer"):
        grading.start_round(fresh, DATASET, RUBRIC, graders=1, set_by=team.operator(), seed_gold=0.3)
    with fresh.connect(read_only=True) as con:
        assert con.execute("SELECT count(*) FROM grading_rounds").fetchone()[0] == 0


# ---------------------------------------------------------------- the page (AppTest)

def _grading_page(user: dict):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from tests.pages.test_grading_page import AUTH

    views.clear_caches()
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120)
    at.secrets["auth"] = dict(AUTH)
    at.user = user
    at.session_state["f_dataset"] = DATASET
    at.run()
    assert not at.exception, at.exception
    at.switch_page("pages/12_grading.py").run()
    assert not at.exception, at.exception
    return at


def _signed_in(subject: str, role: str) -> dict:
    return {"is_logged_in": True, "sub": subject, "name": subject.title(), "iss": IDP, "groups": [role]}


@pytest.mark.slow
def test_the_grading_page_states_the_flag_rule_and_shows_flags_to_an_adjudicator_only(request, built, tmp_path,
                                                                                      monkeypatch):
    if built.backend != "duckdb":
        pytest.skip("the page test runs on the DuckDB file")
    store = Store(built.copy(request, tmp_path / "page"))
    monkeypatch.setenv("EDUART_DB", str(store.path))
    at = _grading_page(_signed_in("dora", team.REVIEWER))  # her round is still running: nothing yet
    texts = " ".join(c.value for c in at.caption)
    assert "Flagged from 10 gold answers" in texts and "or the round is still running" in texts
    assert not any("Every grader" in m.value for m in at.markdown)
    at = _grading_page(_signed_in("carla", team.ADJUDICATOR))
    assert any("Every grader's gold checks" in m.value for m in at.markdown)
    shown = " ".join(frame.value.to_json(force_ascii=False) for frame in at.dataframe)
    assert "dora" in shown

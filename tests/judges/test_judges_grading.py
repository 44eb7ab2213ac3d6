"""Blind human grading: what a grader may see, k graders per answer, adjudication, grades in and out.

What a grader relies on: the answer comes without the model that wrote it, without a judge's
score and without a colleague's marks; a colleague's marks become visible only once the answer is
settled; a disagreement goes to someone who graded none of it. What a lead relies on: grades
import and export as JSON Lines, bad lines named and skipped (exit 2), importing twice changes
nothing.
"""
from __future__ import annotations

import dataclasses
import json

import pytest

from eduart_core.cli import main
from eduart_core.judges import grading
from eduart_core.judges.exchange import export_grades, import_grades
from eduart_core.store import Store
from eduart_core.store.grades import load_grades
from eduart_core.team.identity import local
from tests.judge_fixtures import DATASET, MODELS, RUBRIC, deserved, written_store


@pytest.fixture
def written(tmp_path, monkeypatch) -> Store:
    return written_store(tmp_path, monkeypatch)


def _visible_text(task) -> str:
    return json.dumps(dataclasses.asdict(task), ensure_ascii=False, default=str)


def _marks(task, evidence: int | None = None) -> dict:
    """Right marks for every criterion (the checks by the words; evidence by the words unless given)."""
    from eduart_core.judges.checks import run_check
    from eduart_core.judges.rubric import load_rubric

    rubric = load_rubric(RUBRIC)
    out = {}
    for c in task.criteria:
        criterion = rubric.criterion(c.id)
        if criterion.check:
            out[c.id] = run_check(criterion, rubric.expected(criterion, task.item_id), task.answer)
        else:
            out[c.id] = deserved(task.answer) if evidence is None else evidence
    return out


def test_a_grader_sees_neither_the_model_nor_a_judge_nor_other_graders(written):
    from eduart_core.store.judges import register_profile_con

    # a judge profile with a score exists for these answers: the task must still not carry it
    with written.transaction() as con:
        register_profile_con(con, {"profile": "judge:secret-judge/test-v1", "dataset": DATASET, "judge": "secret-judge",
                                   "rubric": RUBRIC, "rubric_hash": "x", "prompt_hash": "y", "version": "v"})
    grading.start_round(written, DATASET, RUBRIC, graders=2, set_by=local("lead"), seed=1)
    ann = grading.next_answer(written, DATASET, RUBRIC, local("ann"))
    assert ann is not None and ann.answer and ann.question and ann.key
    fields = {f.name for f in dataclasses.fields(ann)}
    assert not fields & {"model", "model_key", "condition", "response_id", "score", "judge"}
    text = _visible_text(ann)
    for key, name in MODELS.items():
        assert key not in text and name not in text
    assert "secret-judge" not in text and "default" not in text
    done = grading.submit_grades(written, ann.token, local("ann"), _marks(ann))
    assert done.complete and not done.settled
    # the second grader gets the same answer, blind to ann's marks (the first unfinished answer needing one)
    bob = grading.next_answer(written, DATASET, RUBRIC, local("bob"))
    assert bob.token == ann.token and bob.mine == {}
    assert "ann" not in _visible_text(bob)
    seen = grading.answer_grades(written, ann.token, local("bob"))
    assert seen.empty and seen.attrs["settled"] is False
    own = grading.answer_grades(written, ann.token, local("ann"))
    assert set(own["grader"]) == {"ann"}  # before settlement only one's own marks
    grading.submit_grades(written, bob.token, local("bob"), _marks(bob))
    after = grading.answer_grades(written, ann.token, local("bob"))
    assert after.attrs["settled"] and set(after["grader"]) == {"ann", "bob"}  # agreed: now visible


def test_k_graders_per_answer_and_a_full_answer_is_refused(written):
    grading.start_round(written, DATASET, RUBRIC, graders=1, set_by=local("lead"), seed=2)
    task = grading.next_answer(written, DATASET, RUBRIC, local("ann"))
    grading.submit_grades(written, task.token, local("ann"), _marks(task))
    other = grading.next_answer(written, DATASET, RUBRIC, local("bob"))
    assert other.token != task.token  # k = 1: the graded answer is nobody else's
    with pytest.raises(grading.BlindGradingError, match="all its graders"):
        grading.submit_grades(written, task.token, local("bob"), _marks(task))
    with pytest.raises(grading.BlindGradingError, match="settled"):
        grading.submit_grades(written, task.token, local("ann"), {"evidence": 0})
    with pytest.raises(Exception, match="not one of"):
        grading.submit_grades(written, other.token, local("bob"), {"evidence": 3})
    grading.set_graders(written, DATASET, RUBRIC, 2, local("lead"))
    assert grading.next_answer(written, DATASET, RUBRIC, local("cara")).token == task.token  # k = 2 now: one more needed


def test_graders_per_answer_outside_1_to_9_are_refused_with_the_value(written):
    from eduart_core.errors import UserError

    for graders in (0, -1, 10, 99999999999):
        with pytest.raises(UserError, match=f"from 1 to 9, not {graders}"):
            grading.start_round(written, DATASET, RUBRIC, graders, set_by=local("lead"))
    grading.start_round(written, DATASET, RUBRIC, graders=9, set_by=local("lead"), seed=3)
    with pytest.raises(UserError, match="from 1 to 9, not 10"):
        grading.set_graders(written, DATASET, RUBRIC, 10, local("lead"))


def test_a_disagreement_goes_to_an_adjudicator_who_graded_none_of_it(written):
    grading.start_round(written, DATASET, RUBRIC, graders=2, set_by=local("lead"), seed=3)
    task = grading.next_answer(written, DATASET, RUBRIC, local("ann"))
    right = _marks(task)
    grading.submit_grades(written, task.token, local("ann"), right)
    flipped = {**right, "evidence": 1 - right["evidence"]}
    result = grading.submit_grades(written, task.token, local("bob"), flipped)
    assert result.disputed == ("evidence",) and not result.settled
    assert grading.adjudication_queue(written, DATASET, RUBRIC, local("ann")) == []  # a grader of it cannot
    queue = grading.adjudication_queue(written, DATASET, RUBRIC, local("dan"))
    assert [t.token for t in queue] == [task.token]
    assert queue[0].disputed == ("evidence",) and queue[0].marks == {"evidence": (0.0, 1.0)}
    assert "ann" not in _visible_text(queue[0]) and "bob" not in _visible_text(queue[0])
    with pytest.raises(grading.BlindGradingError, match="graded this answer"):
        grading.adjudicate(written, task.token, local("ann"), {"evidence": 1})
    with pytest.raises(grading.BlindGradingError, match="not disputed"):
        grading.adjudicate(written, task.token, local("dan"), {"artist": 1})
    assert grading.adjudicate(written, task.token, local("dan"), {"evidence": right["evidence"]}).settled
    progress = grading.round_progress(written, DATASET, RUBRIC).iloc[0]
    assert progress["settled"] == 1 and progress["disputed"] == 0
    roles = load_grades(written, DATASET)[["grader", "role", "recorded_by"]]
    assert set(roles.itertuples(index=False, name=None)) >= {("dan", "adjudicate", "dan"), ("ann", "grade", "ann")}


def _line(**fields) -> str:
    base = {"dataset": DATASET, "item_id": "w1", "model": "zeta-model-x", "condition": "default", "grader": "ann",
            "criterion": "evidence", "points": 1}
    return json.dumps({**base, **fields})


def test_grades_import_names_bad_lines_skips_them_and_is_idempotent(written, tmp_path, capsys):
    path = tmp_path / "grades.jsonl"
    path.write_text("\n".join([
        _line(), _line(grader="bob", model="Omega Examinee Beta"),  # a display name works too
        _line(criterion="nope"), _line(points=2), _line(item_id="w9"), "{not json", _line(model="ghost"),
        _line(grader="bob", role="judge"), _line(grader="cara", condition="motivation"),
    ]) + "\n", encoding="utf-8")
    code = main(["grades-import", str(path), "--db", str(written.path), "--by", "lead"])
    out = capsys.readouterr().out
    assert code == 2
    for number, words in [(3, "no criterion"), (4, "not one of"), (5, "no item"), (6, "JSON"), (7, "unknown model"),
                          (8, "role"), (9, "no answer")]:
        assert f"grades.jsonl:{number}: skipped" in out and words in out.split(f"grades.jsonl:{number}:")[1]
    stored = load_grades(written, DATASET)
    assert len(stored) == 2 and set(stored["recorded_by"]) == {"lead"} and set(stored["model"]) == {
        "zeta-model-x", "omega-model-y"}
    again = import_grades(written, path, recorded_by=local("lead"))
    assert again.added == 0 and again.unchanged == 2 and len(load_grades(written, DATASET)) == 2
    text, n = export_grades(written)
    assert n == 2
    out_file = tmp_path / "export.jsonl"
    out_file.write_text(text, encoding="utf-8")
    assert import_grades(written, out_file, recorded_by=local("lead")).added == 0  # an export re-imported changes nothing
    first = json.loads(text.splitlines()[0])
    assert {"dataset", "item_id", "model", "condition", "grader", "criterion", "points", "graded_at",
            "recorded_by"} <= set(first)


def test_a_line_that_is_not_utf8_is_named_and_the_rest_imported(written, tmp_path, capsys):
    path = tmp_path / "grades.jsonl"
    path.write_bytes(b"\n".join([
        _line().encode(), _line(grader="bob").replace('"bob"', '"caf\xe9"').encode("latin-1"),  # 2: Latin-1

        _line(grader="bob").encode(), _line(criterion="nope").encode(), _line(grader="cara").encode(),
    ]) + b"\n")
    code = main(["grades-import", str(path), "--db", str(written.path)])
    out, err = capsys.readouterr()
    assert code == 2 and "error" not in err
    assert "grades.jsonl:2: skipped: not UTF-8 text" in out and "grades.jsonl:4: skipped:" in out
    assert "5 line(s): 3 grade(s) added, 0 unchanged, 2 skipped" in out
    assert set(load_grades(written, DATASET)["grader"]) == {"ann", "bob", "cara"}


def test_a_changed_mark_is_a_new_row_and_the_latest_counts(written, tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(_line(points=1) + "\n" + _line(points=0) + "\n", encoding="utf-8")
    report = import_grades(written, path, recorded_by=local("lead"))
    assert report.added == 2
    text, n = export_grades(written)
    assert n == 1 and json.loads(text)["points"] == 0.0

"""Adaptive exam sessions for people: the same engine and bank as `run --adaptive`, a form that grows by
one item per answer, "about N questions left", resumable (the form is in the store), the respondent's
final ability on the models' scale (the organiser's ranking), bad input refused with one line."""
from __future__ import annotations

import pytest

from eduart_core import team, views
from eduart_core.cli import main
from eduart_core.errors import UserError
from eduart_core.extraction.editors import editor_for
from eduart_core.extraction.paths import get_at
from eduart_core.humans import adaptive_exam, forms, sessions
from eduart_core.selection import Selection
from eduart_core.store import Store
from eduart_core.store.adaptive import load_adaptive_runs, load_trajectory
from eduart_core.store.humans import load_sessions
from eduart_core.store.items import load_items


def person(*roles: str, subject: str) -> team.Identity:
    return team.Identity(subject, "https://idp.test", subject.title(), None, frozenset(roles), signed_in=True)


def _right(record: dict) -> dict:
    spec = forms.respondent_spec(record["type"])
    return editor_for(record["type"], spec["path"], get_at(record, spec["path"]), record,
                      widget=spec.get("widget")).initial()


@pytest.mark.slow
def test_an_adaptive_form_grows_item_by_item_resumes_and_ends_on_the_models_scale(demo_copy):
    store = Store(demo_copy)
    assert main(["bank", "--db", str(demo_copy), "--dataset", "demo"]) == 0
    rita, anna = person(team.RESEARCHER, subject="rita"), person(team.RESPONDENT, subject="anna")
    sid = adaptive_exam.create_adaptive_session(store, "demo", group="Student", bank=1, actor=rita, target_se=0.30)
    start = sessions.begin(store, sid, anna, now=1000.0)
    me = start.respondent
    assert start.n_items == 1 and start.answered == 0  # one item at a time
    records = {str(i): r for i, r in zip(*[load_items(store, "demo")[c] for c in ("item_id", "record")])}
    lefts, asked = [], []
    for k in range(80):
        q = sessions.current_question(store, sid, me, now=1000.0 + 10 * k)
        if q is None:
            break
        lefts.append(adaptive_exam.about_left(store, sid, me))
        asked.append(q.item_id)
        values = _right(records[q.item_id]) if k % 2 == 0 else {}  # right, then skipped (scored 0), in turn
        sessions.answer(store, sid, me, q.item_id, values, anna, now=1005.0 + 10 * k)
        if k == 3:  # the browser closes; the same link finds the respondent and the same next item
            again = sessions.begin(store, sid, anna, now=2000.0)
            assert again.respondent == me and again.answered == 4
    assert len(asked) == len(set(asked)) and 4 < len(asked) < 67
    # an estimate (the session id seeds the exposure draws, so the items differ between runs): never below 1
    # while a question is on screen, and close to 1 at the last one
    assert all(n >= 1 for n in lefts) and lefts[-1] <= 3
    runs = load_adaptive_runs(store, "demo")
    run_id = sessions.run_id_for(sid, me)
    row = runs[runs["run_id"] == run_id].iloc[0]
    assert row["stop_reason"] == "target_se" and row["ability_se"] <= 0.30 and int(row["n_items"]) == len(asked)
    assert list(load_trajectory(store, run_id)["item_id"]) == asked
    assert sessions.sitting(store, sid, me).status == sessions.FINISHED
    assert adaptive_exam.result_for(store, sid, me) is None  # the organiser did not allow it
    shown = adaptive_exam.create_adaptive_session(store, "demo", group="Student", bank=1, actor=rita, target_se=0.6,
                                                  show_result=True)
    bea = person(team.RESPONDENT, subject="bea")
    other = sessions.begin(store, shown, bea, now=3000.0).respondent
    assert adaptive_exam.result_for(store, shown, other) is None  # not finished yet
    while (q := sessions.current_question(store, shown, other)) is not None:
        sessions.answer(store, shown, other, q.item_id, _right(records[q.item_id]), bea)
    assert "Your ability on the item bank's scale (version 1)" in adaptive_exam.result_for(store, shown, other)
    board = views.adaptive_ranking(views.Source.of(str(demo_copy)), Selection(dataset="demo"))
    assert f"adaptive, {len(asked)} items" in set(board.loc[board["examinee"] == run_id, "kind"])
    assert (board["kind"] == "full, 67 items").sum() == 8  # beside the 8 models on the same bank version


def test_bad_adaptive_sessions_are_one_line_and_store_nothing(demo_copy):
    store = Store(demo_copy)
    rita = person(team.RESEARCHER, subject="rita")
    with pytest.raises(UserError, match="no item bank yet"):
        adaptive_exam.create_adaptive_session(store, "demo", group="x", bank=1, actor=rita)
    assert main(["bank", "--db", str(demo_copy), "--dataset", "demo"]) == 0
    for kwargs, words in (({"bank": 9}, "no bank version 9"), ({"bank": 1, "target_se": 0}, "positive number")):
        with pytest.raises(UserError, match=words):
            adaptive_exam.create_adaptive_session(store, "demo", group="x", actor=rita, **kwargs)
    with pytest.raises(team.PermissionDenied):
        adaptive_exam.create_adaptive_session(store, "demo", group="x", bank=1,
                                              actor=person(team.RESPONDENT, subject="anna"))
    assert load_sessions(store).empty

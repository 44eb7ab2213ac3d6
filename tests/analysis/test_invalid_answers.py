"""Invalid answers are never silent: a model whose every answer names no option (free-string ids) is
counted per model by one view, warned about on the Overview, the inspector and in `show`, and left
out of the IRT fit by default with the reason, which a switch (page) and an option (CLI) undo.

A real store in a tmp dir: simulated Rasch data imported through the real CLI, plus one model
that answers every item with an id that is no option of it.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from irt_data import DATASET, simulate

from eduart_core import views
from eduart_core.cli import main
from eduart_core.selection import Selection
from eduart_core.store import Store
from eduart_core.text import plain
from eduart_core.vocab import IRT_INVALID_INCLUDE

ROOT = Path(__file__).resolve().parents[2]
FREE = "sim-free-text"
N_ITEMS = 16


@pytest.fixture(scope="module")
def free_db(tmp_path_factory) -> Path:
    """12 Rasch examinees x 16 multiple-choice items, and `FREE`, whose every answer names no option."""
    folder = tmp_path_factory.mktemp("invalid")
    store = Store(folder / "eduart.duckdb")
    truth = simulate(store, folder, n_models=12, n_items=N_ITEMS, seed=3)
    lines = [json.dumps({"dataset": DATASET, "item_id": item, "model": FREE, "condition": "default",
                         "raw_response": json.dumps({"Answers": [{"id": "the fresco by Giotto"}]})})
             for item in truth.items]
    path = folder / "free.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["import-responses", str(path), "--db", str(store.path)]) == 0
    return store.path


def _src_sel(db: Path):
    views.clear_caches()
    return views.Source.of(Store(db)), Selection(dataset=DATASET)


def test_the_view_counts_answers_that_name_no_option_per_model(free_db):
    src, sel = _src_sel(free_db)
    table = views.run_view("invalid_answers", src, sel).set_index("model")
    free = table.loc[FREE]
    assert (free["n_answers"], free["n_not_an_option"], free["n_invalid"]) == (N_ITEMS, N_ITEMS, N_ITEMS)
    assert free["invalid_rate"] == 1.0 and free["warning"] and free["irt_left_out"]
    assert f"{N_ITEMS} of {N_ITEMS} answers name no option" in free["sentence"]
    others = table.drop(index=FREE)
    assert (others["n_invalid"] == 0).all() and not others["warning"].any() and not others["irt_left_out"].any()
    assert "left out of the IRT fit" in table.attrs["rule"]


def test_a_change_of_filter_or_profile_reads_and_classifies_no_answer_again(free_db, monkeypatch):
    """The Overview and the inspector ask for the warnings on every rerun: after the first read a
    change of models or profile picks rows of the statuses already known (same counts as
    classifying the selected answers afresh); the first switch to the other condition reads that
    condition alone (a first render reads only the condition it shows), and a write to the store
    reads them again."""
    from eduart_core import analysis
    from eduart_core.store import studies as store_studies

    src, sel = _src_sel(free_db)
    views.invalid_answers(src, sel)
    reads = []
    real = store_studies.load_distinct_answers
    monkeypatch.setattr(store_studies, "load_distinct_answers",
                        lambda *a, **k: reads.append((a[1:], k)) or real(*a, **k))
    fewer = tuple(sorted(views.models_with_data(src, DATASET))[1:])
    changed = [sel.with_(models=fewer), sel.with_(profile="paper"), sel.with_(condition="motivation"),
               sel.with_(models=fewer, profile="paper")]
    got = [views.invalid_answers(src, s) for s in changed]
    assert [(r, k) for r, k in reads] == [((DATASET, "motivation"), {})]
    reads.clear()
    assert [views.invalid_answers(src, s) for s in changed] and reads == []
    for s, table in zip(changed, got):
        answers = s.apply(store_studies.load_answer_rows(Store(free_db), DATASET, s.profile).merge(
            views._base.items(src, DATASET)[["item_id", "type", "language", "has_image"]], on="item_id", how="left"))
        fresh = analysis.invalid_by_model(analysis.answer_statuses(answers, views._base.items(src, DATASET)))
        pd.testing.assert_frame_equal(table, fresh)
    assert FREE not in set(got[0]["model"]) or FREE in fewer
    with Store(free_db).transaction() as con:  # any write bumps the data version
        con.execute("SELECT 1")
    views.invalid_answers(views.Source.of(Store(free_db)), changed[0])
    assert len(reads) == 1


def test_a_small_share_of_answers_naming_no_option_warns_without_leaving_the_fit():
    import pandas as pd

    from eduart_core.analysis.answer_quality import invalid_by_model

    statuses = [{"model": "m", "status": "not an option"}] * 2 + [{"model": "m", "status": "ok"}] * 8
    row = invalid_by_model(pd.DataFrame(statuses)).iloc[0]
    assert row["warning"] and not row["irt_left_out"]  # 20%: warned, kept in the fit


def test_true_false_answers_naming_no_statement_are_invalid():
    from eduart_core.analysis import answer_status

    record = {"type": "true_false", "choices": [{"id": "A", "text": "s1"}, {"id": "B", "text": "s2"}],
              "answers": [{"id": "A", "text": "True"}, {"id": "B", "text": "False"}]}
    assert answer_status(record, [{"id": "Giotto", "text": "True"}], "raw")[0] == "not an option"
    assert answer_status(record, [{"id": "A", "text": "True"}], "raw")[0] == "ok"


def test_show_prints_the_warning_line(free_db, capsys):
    assert main(["show", "leaderboard", "--dataset", DATASET, "--db", str(free_db)]) == 0
    out, err = capsys.readouterr()
    assert f"warning: {FREE}: {N_ITEMS} of {N_ITEMS} answers name no option" in err
    assert "left out of the IRT fit by default" in err
    assert isinstance(json.loads(out), list)  # stdout stays clean JSON


def test_irt_leaves_the_model_out_by_default_with_the_reason_and_the_option_brings_it_back(free_db, capsys):
    src, sel = _src_sel(free_db)
    default = views.irt_abilities(src, sel)
    assert FREE not in set(default["model"].dropna())
    assert default.attrs["left_out"] == [FREE]
    assert f"Left out of the fit for mostly invalid answers: {FREE}" in default.attrs["invalid_note"]
    assert "above 50%" in default.attrs["invalid_note"] and "invalid=include" in default.attrs["invalid_note"]
    included = views.irt_abilities(src, sel, invalid=IRT_INVALID_INCLUDE)
    assert FREE in set(included["model"].dropna()) and included.attrs["left_out"] == []
    assert "Kept in the fit" in included.attrs["invalid_note"]
    # the CLI twin: the same option
    assert main(["show", "irt_abilities", "--dataset", DATASET, "--db", str(free_db),
                 "--option", "invalid=include"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert FREE in {r["model"] for r in rows}
    assert main(["show", "irt_abilities", "--dataset", DATASET, "--db", str(free_db)]) == 0
    assert FREE not in {r["model"] for r in json.loads(capsys.readouterr().out)}
    assert main(["show", "irt_abilities", "--dataset", DATASET, "--db", str(free_db),
                 "--option", "invalid=maybe"]) == 2
    assert "unknown invalid 'maybe'" in capsys.readouterr().err


@pytest.fixture
def app(free_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EDUART_DB", str(free_db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    assert not at.exception, at.exception[0].value
    return at


def _warned(at, words: str = f"{FREE}: {N_ITEMS} of {N_ITEMS} answers name no option") -> bool:
    """A warning box holds ``words`` (drawn as inert text: markdown characters escaped)."""
    return any(plain(words) in w.value for w in at.warning)


@pytest.mark.slow
def test_overview_and_inspector_warn_about_the_model(app):
    assert _warned(app)
    app.switch_page("pages/07_inspector.py").run()
    assert not app.exception, app.exception[0].value
    assert _warned(app)


@pytest.mark.slow
def test_psychometrics_states_who_is_left_out_and_the_switch_brings_it_back(app):
    app.switch_page("pages/08_psychometrics.py").run()
    app.session_state["psy_tab"] = "IRT"
    app.run()
    assert not app.exception, app.exception[0].value
    assert _warned(app, f"Left out of the fit for mostly invalid answers: {FREE}")
    app.toggle(key="psy_irt_invalid").set_value(True).run()
    assert not app.exception, app.exception[0].value
    assert _warned(app, "Kept in the fit although their answers are mostly invalid")
    assert not _warned(app, "Left out of the fit")

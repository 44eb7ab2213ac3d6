"""Baselines are references, not examinees.

What a user relies on: after running the offline chance model, every statistic about the models
and the items is exactly what it was (the chance model is not an examinee), the chance model is
still visible as a reference mark, one switch (sidebar, URL, `--baselines`) counts it in, and an
older store without model kinds still opens.
"""
from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pandas as pd
import pytest

from eduart_core import views
from eduart_core.charts import results as charts
from eduart_core.cli import main
from eduart_core.selection import Selection
from eduart_core.text import plain
from eduart_core.vocab import BASELINE_KIND, MODEL_KIND, SIMULATED_KIND

CHANCE = "Chance baseline"


def show(db: Path, *args: str) -> list[dict]:
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        assert main(["show", *args, "--db", str(db)]) == 0
    return json.loads(buffer.getvalue())


# ---------------------------------------------------------------- the store and the registry

def test_chance_is_a_baseline_in_the_registry_and_the_store(chance_db):
    from eduart_core.providers.registry import load_registry
    from eduart_core.store import Store
    from eduart_core.store.scores import list_models, load_scores

    assert load_registry()["chance"].kind == BASELINE_KIND
    assert load_registry()["gpt-5.5"].kind == MODEL_KIND
    kinds = dict(zip(list_models(Store(chance_db))["display_name"], list_models(Store(chance_db))["kind"]))
    assert kinds[CHANCE] == BASELINE_KIND
    assert {k for m, k in kinds.items() if m.startswith("Sim ")} == {SIMULATED_KIND}
    frame = load_scores(Store(chance_db), dataset="demo")
    assert set(frame.loc[frame["model"] == CHANCE, "kind"]) == {BASELINE_KIND}


def test_a_bad_kind_in_a_user_registry_is_one_line(tmp_path):
    from eduart_core.errors import UserError
    from eduart_core.providers.registry import load_registry

    path = tmp_path / "models.toml"
    path.write_text('[models."coin"]\ndisplay_name = "Coin"\nprovider = "offline"\napi_model_id = "chance"\n'
                    'kind = "referee"\n', encoding="utf-8")
    with pytest.raises(UserError, match="models.coin: kind must be one of"):
        load_registry(path)


def test_a_store_without_model_kinds_still_reads_and_is_migrated_on_the_next_write(store):
    from eduart_core.store.core import migrate
    from eduart_core.store.runs import ensure_dataset, ensure_model
    from eduart_core.store.schema import MIGRATIONS
    from eduart_core.store.scores import list_models

    number = next(n for n, name, _ in MIGRATIONS if name == "model kinds")

    ensure_dataset(store, "d", "D", "benchmark")
    ensure_model(store, "coin", "Coin", "Baseline", "offline", "chance")
    ensure_model(store, "gpt-x", "GPT X", "OpenAI", "openai", "gpt-x")
    with store.connect() as con:  # make it look like a store written before the model-kinds migration
        con.execute("ALTER TABLE models DROP COLUMN kind")
        con.execute("DELETE FROM schema_version WHERE version >= ?", [number])  # nor any later one
    kinds = dict(zip(list_models(store)["model"], list_models(store)["kind"]))  # read-only: derived
    assert kinds == {"coin": BASELINE_KIND, "gpt-x": MODEL_KIND}
    with store.connect() as con:
        assert migrate(con) >= number
        stored = dict(con.execute("SELECT model, kind FROM models").fetchall())
    assert stored == {"coin": BASELINE_KIND, "gpt-x": MODEL_KIND}


# ---------------------------------------------------------------- the selection

def test_selection_leaves_baselines_out_unless_switched_in():
    frame = pd.DataFrame({"model": ["A", "Chance"], "condition": ["default"] * 2,
                          "kind": [MODEL_KIND, BASELINE_KIND]})
    assert list(Selection().apply(frame)["model"]) == ["A"]
    assert list(Selection(baselines=True).apply(frame)["model"]) == ["A", "Chance"]
    assert "baselines counted as examinees" in Selection(baselines=True).scope()


def test_the_switch_lives_in_the_url_and_the_flags():
    import argparse

    on = Selection(dataset="demo", baselines=True)
    query = on.to_query()
    assert query["baselines"] == "1"
    assert "baselines" not in Selection(dataset="demo").to_query()
    assert Selection.from_query({"baselines": ["1"]})["baselines"] is True
    assert Selection.from_query({"baselines": ["0"]})["baselines"] is False
    parser = argparse.ArgumentParser()
    Selection.add_arguments(parser)
    assert Selection.from_args(parser.parse_args(["--baselines"]), dataset="demo").baselines is True
    assert Selection.from_args(parser.parse_args([]), dataset="demo").baselines is False


# ---------------------------------------------------------------- a baseline run changes no statistic

def test_after_a_chance_run_item_statistics_and_findings_are_unchanged(demo_db, chance_db):
    for view in ("item_statistics", "reliability", "difficulty_categories", "discrimination_by_format",
                 "leaderboard", "motivation", "regression", "findings"):
        assert show(chance_db, view) == show(demo_db, view), view
    assert CHANCE not in json.dumps(show(chance_db, "findings"))
    assert CHANCE not in {r["model"] for r in show(chance_db, "leaderboard")}
    assert not any(CHANCE in r["predictor"] for r in show(chance_db, "regression"))
    src = views.Source.of(str(chance_db))
    assert CHANCE not in views.models_with_data(src, "demo")
    assert CHANCE in views.models_with_data(src, "demo", baselines=True)


def test_the_switch_counts_the_baseline_in(chance_db, demo_db):
    board = show(chance_db, "leaderboard", "--baselines")
    assert CHANCE in {r["model"] for r in board}
    reliability = show(chance_db, "reliability", "--baselines", "--option", "examinees=models")
    assert reliability[0]["n_examinees"] == show(demo_db, "reliability", "--option", "examinees=models")[0][
        "n_examinees"] + 1
    assert show(chance_db, "item_statistics", "--baselines") != show(demo_db, "item_statistics")


def test_the_baseline_is_still_there_as_a_reference(chance_db, demo_db):
    rows = show(chance_db, "baselines")
    assert [r["model"] for r in rows] == [CHANCE]
    assert "rank" not in rows[0]  # a reference is not ranked
    board = {r["model"]: r for r in show(chance_db, "leaderboard", "--baselines")}
    assert rows[0]["macro"] == pytest.approx(board[CHANCE]["macro"])  # the same number as when counted in
    per_format = show(chance_db, "baseline_type_scores")
    assert {r["model"] for r in per_format} == {CHANCE} and len(per_format) == 7
    assert show(demo_db, "baselines") == []  # no baseline run: no marks


# ---------------------------------------------------------------- reference marks on the charts

def test_leaderboard_draws_a_baseline_as_a_line_not_a_bar(chance_db):
    src, sel = views.Source.of(str(chance_db)), Selection()
    board, base = views.leaderboard(src, sel), views.baselines(src, sel)
    fig = charts.add_baseline_lines(charts.figure_leaderboard(board), base)
    assert CHANCE not in list(fig.data[0].y)
    lines = [s for s in fig.layout.shapes if s.line.dash == "dash"]
    assert len(lines) == 1 and lines[0].x0 == pytest.approx(round(100 * base["macro"].iloc[0], 1))
    assert any(CHANCE in a.text for a in fig.layout.annotations)


def test_format_heatmap_writes_baseline_means_above_the_columns(chance_db):
    src, sel = views.Source.of(str(chance_db)), Selection()
    base = views.baseline_type_scores(src, sel)
    fig = charts.add_baseline_format_marks(charts.figure_format_heatmap(views.type_scores(src, sel)), base)
    assert CHANCE not in list(fig.data[0].y)
    assert [a.text for a in fig.layout.annotations if CHANCE in a.text] == [f"{CHANCE} (reference)"]
    numbers = {a.x: a.text for a in fig.layout.annotations if a.xref == "x"}
    assert len(numbers) == 7  # one per format column, above the grid
    mcq = base.set_index("type").loc["multiple_choice_radio", "mean"]
    assert numbers["Multiple choice (one)"] == f"{100 * mcq:.0f}"


def test_a_name_with_markup_stays_text_in_the_marks():
    base = pd.DataFrame({"model": ["<b>Coin</b>"], "macro": [0.25]})
    fig = charts.add_baseline_lines(charts.figure_leaderboard(pd.DataFrame(
        {"model": ["A"], "macro": [0.5], "mcq": [None]})), base)
    assert "&lt;b&gt;Coin&lt;/b&gt;" in fig.layout.annotations[0].text


@pytest.mark.slow
def test_overview_and_sidebar_switch(chance_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.pages.test_app_pages import ROOT, assert_clean, leaderboard_bars, qp, specs

    monkeypatch.setenv("EDUART_DB", str(chance_db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    assert_clean(at)
    assert CHANCE not in leaderboard_bars(at)
    shapes = specs(at)[0]["layout"].get("shapes", [])
    assert any(s.get("line", {}).get("dash") == "dash" for s in shapes)
    assert any(plain("Dashed lines: baseline models") in c.value for c in at.caption)  # captions are text
    assert at.toggle(key="f_baselines").value is False
    at.toggle(key="f_baselines").set_value(True).run()
    assert_clean(at)
    assert CHANCE in leaderboard_bars(at)
    assert qp(at, "baselines") == ["1"]

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("pages/03_formats.py").run()
    assert_clean(at)
    heatmap = specs(at)[0]
    assert CHANCE not in list(heatmap["data"][0]["y"])
    assert f"{CHANCE} (reference)" in [a.get("text") for a in heatmap["layout"].get("annotations", [])]


def test_a_dataset_answered_only_by_a_baseline_says_how_to_count_it(store, capsys):
    from runner_items import fill_store

    fill_store(store, dataset="fresh")
    assert main(["run", "--db", str(store.path), "--model", "chance", "--dataset", "fresh", "--quiet"]) == 0
    capsys.readouterr()
    views.clear_caches()
    assert main(["show", "leaderboard", "--dataset", "fresh", "--db", str(store.path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Only baseline models" in err and "--baselines" in err
    board = show(store.path, "leaderboard", "--dataset", "fresh", "--baselines")
    assert [r["model"] for r in board] == [CHANCE]

"""The study datasets in a real store: published references, the demo-vqa benchmark, external scores, `show`.

What a researcher relies on: the published tables load as printed (and twice changes nothing);
`show consistency_checks` reports the papers' own discrepancies and `show task_correlations`
equals scipy; the VQArt-style demo has what its description promises (7 dimensions, image
attributes, labelled distractors, a panel of simulated models whose invalid answers are invalid
because the real parser cannot read them); external scores import row by row.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from eduart_core import views
from eduart_core.selection import Selection
from eduart_core.store import Store

ROOT = Path(__file__).resolve().parents[2]


def show(db: Path, *args: str) -> list[dict]:
    from eduart_core.cli import main

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        assert main(["show", *args, "--db", str(db)]) == 0
    return json.loads(buffer.getvalue())


@pytest.fixture(scope="module")
def study_db(tmp_path_factory) -> Path:
    """A store with the study references, demo-vqa and demo-muse only (the demo builders themselves)."""
    from eduart_core.demo import build_demo, build_muse_study, build_study_references, build_vqa_study

    path = tmp_path_factory.mktemp("studies") / "eduart.duckdb"
    build_demo(Store(path), force=True, builders=(build_study_references, build_vqa_study, build_muse_study))
    return path


def test_references_load_as_printed_and_idempotently(study_db):
    from eduart_core.store.studies import read_reference_cells, read_reference_columns
    from eduart_core.studies.references import load_study_references

    store = Store(study_db)
    cells = read_reference_cells(store, "vqart2025")
    assert len(cells) == 14 * 8 and set(cells["unit"]) == {"fraction"}
    gemini = cells[(cells["model"] == "Gemini 2.5") & (cells["column_name"] == "Visual-Inspired Reasoning")].iloc[0]
    assert gemini["printed"] == "0.80" and gemini["score"] == pytest.approx(0.80) and gemini["access"] == "closed"
    muse = read_reference_cells(store, "muse2026")
    assert len(muse) == 360 and muse["score"].max() <= 1.0
    assert muse[muse["model"] == "GPT-4o"]["access"].iloc[0] == "closed"  # 'proprietary' as printed
    columns = read_reference_columns(store, "muse2026")
    assert columns.set_index("column_name").loc["Jigsaw Puzzle", "chance"] == pytest.approx(0.25)
    before = store.data_version()
    load_study_references(store)
    assert len(read_reference_cells(store, "vqart2025")) == 112 and store.data_version() != before
    flags = views.dataset_flags(views.Source.of(store), "vqart2025")
    assert flags.aggregate_only and not flags.simulated


def test_show_consistency_checks_reports_the_published_discrepancies(study_db):
    rows = show(study_db, "consistency_checks", "--dataset", "vqart2025")
    assert list(rows[0]) == ["check", "subject", "expected", "found", "verdict", "detail"]
    overall = [r for r in rows if r["check"] == "overall column vs mean of the columns"
               and not r["subject"].startswith("all ")]
    assert sum(r["verdict"] == "inconsistent" for r in overall) == 13 and len(overall) == 14
    assert all(r["found"].count("below") == 2 for r in overall)
    muse = show(study_db, "consistency_checks", "--dataset", "muse2026")
    inversions = [r for r in muse if r["check"] == "stated row order vs average" and r["subject"].startswith("rows ")]
    assert len(inversions) == 8


def test_show_task_correlations_on_muse_equals_scipy(study_db):
    rows = pd.DataFrame(show(study_db, "task_correlations", "--dataset", "muse2026"))
    table = pd.read_csv(ROOT / "data" / "reference" / "muse2026_task_scores.csv")
    wide = table.pivot(index="model", columns="task", values="score")
    tasks = list(dict.fromkeys(table["task"]))
    expected = stats.spearmanr(wide[tasks].to_numpy())
    rho = rows.pivot(index="column_a", columns="column_b", values="rho").loc[tasks, tasks].to_numpy()
    np.testing.assert_allclose(rho, expected.statistic, atol=1e-12)
    assert set(rows["n"]) == {30}


def test_demo_vqa_is_what_its_description_says(study_db):
    from eduart_core.store.items import load_items
    from eduart_core.store.scores import list_models

    store = Store(study_db)
    items = load_items(store, "demo-vqa")
    counts = items["dimension"].value_counts()
    assert len(counts) == 7 and counts.min() >= 6
    records = list(items["record"])
    assert all(r["type"] == "multiple_choice_radio" and len(r["choices"]) == 4 for r in records)
    assert all(sum(1 for c in r["choices"] if c.get("distractor_type")) == 3 for r in records)
    attrs = pd.DataFrame([r["image_attributes"] for r in records])
    assert {"genre", "figures", "setting", "warm_ratio"} <= set(attrs.columns)
    assert set(attrs["setting"]) == {"indoor", "outdoor"} and attrs["warm_ratio"].between(0, 1).all()
    assert items["image_hash"].nunique() < len(items)  # questions share pictures
    models = list_models(store)
    panel = models[models["datasets"].map(lambda d: isinstance(d, list | np.ndarray) and "demo-vqa" in list(d))]
    assert len(panel) >= 10 and panel["family"].nunique() >= 3 and set(panel["access"]) == {"open", "closed"}
    assert panel["simulated"].all() and panel["display_name"].str.startswith("Sim ").all()
    assert views.dataset_flags(views.Source.of(store), "demo-vqa").simulated


def test_demo_vqa_answers_are_scored_by_the_real_parser_including_invalid_ones(study_db):
    src = views.Source.of(study_db)
    sel = Selection(dataset="demo-vqa")
    rates = views.invalid_rates(src, sel)
    overall = rates[rates["column"] == "overall"]
    assert overall["n_refused"].sum() > 0 and overall["n_unparseable"].sum() > 0
    assert overall["n_not_an_option"].sum() > 0
    answers = views.studies._answers(src, "demo-vqa", "strict")
    prose = answers[answers["parse_error"].notna()]
    assert len(prose) == overall["n_refused"].sum() + overall["n_unparseable"].sum()
    assert (prose["score"] == 0).all()  # an unreadable answer scores 0, it is not left out
    scores = views.dimension_scores(src, sel)
    assert scores["aggregation"].iloc[0].startswith("micro")
    overall_scores = scores[(scores["column"] == "overall") & ~scores["is_median"]]
    assert overall_scores["score"].max() > overall_scores["score"].min() + 0.2  # the panel is spread out
    assert "clustered by image" in overall_scores["interval"].iloc[0]
    choices = views.distractor_choices(src, sel)
    pooled = choices[choices["model"] == "All models"]
    off_by_one = pooled[(pooled["column"] == "Instance Counting") & (pooled["distractor_type"] == "off by one")]
    assert off_by_one["share"].iloc[0] > off_by_one["expected_share"].iloc[0]  # the lure works


def test_study_views_refuse_what_does_not_apply(study_db):
    from eduart_core.errors import UserError

    src = views.Source.of(study_db)
    with pytest.raises(views.ItemLevelUnavailable):
        views.invalid_rates(src, Selection(dataset="vqart2025"))
    with pytest.raises(UserError, match="task"):
        views.dimension_scores(src, Selection(dataset="vqart2025"), by="task")
    with pytest.raises(UserError, match="aggregation"):
        views.dimension_scores(src, Selection(dataset="demo-vqa"), aggregation="median")


@pytest.mark.slow
def test_import_external_names_bad_rows_keeps_good_ones_and_correlates(study_db, tmp_path):
    csv = tmp_path / "external.csv"
    csv.write_text("model,benchmark,score\nSim Aurora Pro,Bench A,61.5\nsim-basalt-72b,Bench A,58\n"
                   "Sim Cirrus 2B,Bench A,not a number\n,Bench A,3\nSim Dune Mini,Bench A,40\n"
                   "Sim Aurora Flash,Bench A,55\nSim Cirrus 8B,Bench A,44\nSomebody Else,Bench A,12\n",
                   encoding="utf-8")
    run = lambda: subprocess.run([sys.executable, "-m", "eduart_core", "import-external", str(csv),  # noqa: E731
                                  "--db", str(study_db)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    out = run()
    assert out.returncode == 2
    assert "external.csv row 4: score 'not a number' is not a number" in out.stderr
    assert "external.csv row 5: model and benchmark must not be empty" in out.stderr
    assert "6 added" in out.stdout
    again = run()
    assert "0 added, 6 replaced" in again.stdout
    views.clear_caches()
    rows = show(study_db, "external_correlations", "--dataset", "demo-vqa")
    overall = [r for r in rows if r["column"] == "overall" and r["benchmark"] == "Bench A"][0]
    assert {r["benchmark"] for r in rows} >= {"Bench A", "Sim general VQA (simulated)"}  # the demo's own
    assert overall["n"] == 5 and "Sim Basalt 72B" in overall["models"]  # the key matched its display name
    assert -1 <= overall["rho"] <= 1


def test_import_external_rejects_a_file_without_the_columns(study_db, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("name,value\nx,1\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "eduart_core", "import-external", str(bad), "--db", str(study_db)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and out.stderr.strip().count("\n") == 0 and "model, benchmark" in out.stderr


def test_report_has_the_study_sections(study_db, tmp_path):
    from eduart_core.report import write_report

    out = tmp_path / "vqart.html"
    write_report(str(study_db), str(out), dataset="vqart2025")
    text = out.read_text(encoding="utf-8")
    assert "Tasks and dimensions" in text and "13 of 14 models" in text and "Instance Localization" in text
    assert "stated row order" not in text or "no row order stated" in text  # VQArt states no order
    demo = tmp_path / "vqa.html"
    write_report(str(study_db), str(demo), dataset="demo-vqa")
    assert "Simulated respondents" in demo.read_text(encoding="utf-8")
    assert "Intervals clustered by image" in demo.read_text(encoding="utf-8")


def test_demo_muse_is_what_its_description_says(study_db):
    from eduart_core.store.items import load_items

    items = load_items(Store(study_db), "demo-muse")
    assert items["data_issue"].sum() == 0
    per_task = items["task"].value_counts()
    assert len(per_task) >= 10 and per_task.min() >= 4
    records = {r["item_id"]: r for r in items["record"]}
    by_task = {t: [r for r in records.values() if r["task"] == t] for t in per_task.index}
    assert all(r["type"] == "numeric" and isinstance(r["answers"][0]["value"], int) for r in by_task["Object Count"])
    assert all(all(c.get("bbox") for c in r["choices"] if c["text"] != "None of the above")
               for r in by_task["Activity Localization"])
    position = by_task["Relative Position"][0]
    assert [c["label"] for c in position["choices"]] == ["lateral", "depth", "vertical"]
    assert [c["label"] for c in by_task["Remote Interaction"][0]["choices"]] == ["entity", "evidence"]
    jigsaw = items[items["task"] == "Jigsaw Puzzle"]
    assert all(len(o) == 4 for o in jigsaw["option_images"])  # the four pieces are stored images
    assert all(r["type"] == "open_text" and len(r["answers"][0]["references"]) >= 2
               for r in by_task["Emotion Cause Inference"])
    turns = items[items["dialogue_id"].notna()].sort_values("turn")
    assert turns["turn"].tolist() == [1, 2, 3, 4] and turns["dialogue_id"].nunique() == 1
    labelled = [c for r in records.values() if r["type"] == "multiple_choice_radio" for c in r["choices"]
                if c.get("distractor_type")]
    assert len({c["distractor_type"] for c in labelled}) >= 8


def test_demo_muse_answers_go_through_every_scorer(study_db):
    src = views.Source.of(study_db)
    sel = Selection(dataset="demo-muse")
    scores = views.dimension_scores(src, sel)
    chance = scores.drop_duplicates("column").set_index("column")["chance"]
    assert chance["Relative Position"] == pytest.approx(1 / 27) and chance["Jigsaw Puzzle"] == pytest.approx(0.25)
    assert np.isnan(chance["Visual Clue Identification"])  # free text has no chance level
    open_text = scores[(scores["column"] == "Emotion Cause Inference") & ~scores["is_median"]]["score"]
    assert ((open_text > 0) & (open_text < 1)).all()  # similarities, not 0/1
    numbers = views.numeric_errors(src, sel)
    assert len(numbers) == 11 and (numbers["off_by_one_rate"] > 0).any() and numbers["mae"].notna().all()
    rates = views.invalid_rates(src, sel)
    counting = rates[rates["column"] == "Object Count"]
    assert counting["n_unparseable"].sum() + counting["n_refused"].sum() > 0  # "two or three" names no one count
    turns = views.dialogue(src, sel)
    assert sorted(turns["turn"].unique()) == [1, 2, 3, 4] and turns["model"].nunique() == 11
    parts = views.part_accuracy(src, sel)
    assert {"lateral", "depth", "vertical", "entity", "evidence"} <= set(parts["part"])
    by_dimension = views.dimension_scores(src, sel, by="dimension", aggregation="task_macro")
    assert set(by_dimension["column"]) == {"Visual Perception", "Semantic Understanding", "Affective Interpretation",
                                           "Compositional Reasoning", "Cultural Understanding", "overall"}


def test_a_store_older_than_the_study_tables_reads_as_holding_no_study_data(tmp_path, monkeypatch):
    """The app opens stores read-only, and a read-only connection does not migrate."""
    from eduart_core.store import core, schema
    from eduart_core.store.runs import ensure_dataset, ensure_model
    from eduart_core.store.scores import list_models
    from eduart_core.store.studies import read_external_scores, read_reference_cells

    older = [m for m in schema.MIGRATIONS if m[1] != "study tables, external scores, model access"]
    monkeypatch.setattr(core, "MIGRATIONS", older)
    store = Store(tmp_path / "old.duckdb")
    ensure_dataset(store, "items", "Imported items", "benchmark")
    ensure_model(store, "m1", "Model One", "Fam", "openai", "x")
    monkeypatch.undo()
    assert read_reference_cells(store, "items").empty and read_external_scores(store).empty
    assert list_models(store).set_index("display_name").loc["Model One", "access"] is None
    features = views.study_features(views.Source.of(store), "items")
    assert features.groupings == () and not features.reference

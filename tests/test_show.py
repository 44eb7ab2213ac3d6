"""`python -m eduart_core show`: the machine-readable twin of every table and chart.

What a researcher relies on: every view the pages draw is listed and runs; the numbers equal the
ones on the page for the same selection (unrounded in JSON); the sidebar's filters exist as flags
and change the numbers; mistakes give one line and exit 2.
"""
from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from eduart_core import views
from eduart_core.selection import Selection

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

#: Options a view needs before it can run on the demo store.
NEEDS = {"item_changes": ["--option", "model=Sim A (strong recogniser)"],
         "item_card": ["--option", "item=demo-0007"],
         "answer_marks": ["--option", "item=demo-0007", "--option", "model=Sim H (format-fragile)"],
         "compare_models": ["--option", "a=Sim A (strong recogniser)", "--option", "b=Sim H (format-fragile)"]}
#: Views of datasets with tasks or dimensions, run on the VQArt-style demo built with the demo.
STUDY_VIEWS = {"dimension_scores", "task_correlations", "family_best", "distractor_choices", "invalid_rates",
               "consistency_checks", "image_attributes", "external_correlations"}
#: Views of the formats beyond EduArt's, run on the MUSE-style demo.
MUSE_VIEWS = {"numeric_errors", "part_accuracy", "dialogue"}


def show(db: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eduart_core", "show", *args, "--db", str(db)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def records(db: Path, *args: str) -> list[dict]:
    """`show` in this process (the CLI's own entry point), parsed: quicker than a subprocess per call."""
    from contextlib import redirect_stdout

    from eduart_core.cli import main

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        code = main(["show", *args, "--db", str(db)])
    assert code == 0
    return json.loads(buffer.getvalue())


def test_list_names_every_registered_view_once(demo_db):
    out = show(demo_db, "--list")
    assert out.returncode == 0
    names = [line.split()[0] for line in out.stdout.splitlines()]
    assert names == list(views.VIEWS)
    required = {"leaderboard", "type_scores", "item_statistics", "reliability", "regression", "motivation",
                "motivation_by_type", "image_effect", "format_spread", "profile_impact", "findings", "items",
                "responses"}
    assert required <= set(names)
    assert all("<-" in line for line in out.stdout.splitlines())  # each says which page element it backs


def test_leaderboard_json_equals_the_overview_page(demo_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    rows = records(demo_db, "leaderboard")
    monkeypatch.setenv("EDUART_DB", str(demo_db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception
    bar = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]
    from tests.test_app_pages import decode

    names = [row[0] for row in bar["customdata"]]  # the bars sit on numeric lanes; names ride along
    drawn = dict(zip(names, decode(bar["x"]).astype(float).tolist()))
    assert {r["model"] for r in rows} == set(drawn)
    for r in rows:
        assert drawn[r["model"]] == pytest.approx(round(100 * r["macro"], 1), abs=0.051)
        assert r["macro"] != round(r["macro"], 3) or r["macro"] in (0.0, 1.0)  # JSON keeps every digit
    assert [r["rank"] for r in rows] == sorted(r["rank"] for r in rows)


#: Views whose rows come from baseline models: run on the demo store after a chance run.
BASELINE_VIEWS = {"baselines", "baseline_type_scores"}
#: Views of the launches next to a store: the chance store has one (its `run --model chance`).
LAUNCH_VIEWS = {"launch_progress"}
#: Views of acts people did (the audit log): the chance run's launch is the first such act.
ACT_VIEWS = {"audit_log"}


@pytest.mark.parametrize("name", list(views.VIEWS))
def test_every_view_runs_on_the_demo_and_matches_the_library(demo_db, chance_db, name):
    db = chance_db if name in BASELINE_VIEWS | LAUNCH_VIEWS | ACT_VIEWS else demo_db
    dataset = "demo-vqa" if name in STUDY_VIEWS else ("demo-muse" if name in MUSE_VIEWS else "demo")
    rows = records(db, name, "--dataset", dataset, *NEEDS.get(name, []))
    assert rows, f"{name} returned no rows on the demo store"
    spec = views.VIEWS[name]
    options = dict(o.split("=", 1) for o in NEEDS.get(name, [])[1::2])
    frame = spec.fn(views.Source.of(str(db)), Selection(dataset=dataset), **options)
    assert len(rows) == len(frame) and list(rows[0]) == [str(c) for c in frame.columns]


def test_selection_flags_change_the_numbers(demo_db):
    base = {r["model"]: r["macro"] for r in records(demo_db, "leaderboard")}
    for flags in (["--condition", "motivation"], ["--profile", "paper"], ["--languages", "it"],
                  ["--image", "with"], ["--types", "true_false,completion_open"]):
        changed = {r["model"]: r["macro"] for r in records(demo_db, "leaderboard", *flags)}
        assert changed != base, flags
    one = records(demo_db, "leaderboard", "--models", "Sim A (strong recogniser),Sim H (format-fragile)")
    assert {r["model"] for r in one} == {"Sim A (strong recogniser)", "Sim H (format-fragile)"}
    stats = records(demo_db, "reliability", "--option", "examinees=models", "--option", "corrected=false")
    assert stats[0]["n_examinees"] == 8  # the models of one condition, as in the published Figure 1


def test_csv_and_missing_values(demo_db):
    out = show(demo_db, "item_statistics", "--format", "csv")
    assert out.returncode == 0
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert rows and {"item_id", "p", "r_pb"} <= set(rows[0])
    as_json = records(demo_db, "item_statistics")
    constant = [r for r in as_json if r["p"] in (0.0, 1.0)]
    assert constant and all(r["r_pb"] is None for r in constant)  # NaN becomes null, not a string


def test_mistakes_are_one_line_with_exit_2(demo_db):
    for args, words in [(["nothing"], "unknown view"), (["leaderboard", "--option", "colour=red"], "unknown option"),
                        (["leaderboard", "--dataset", "nope"], "no dataset"),
                        (["item_statistics", "--dataset", "eduart2026"], "published aggregates"),
                        (["item_changes"], "Choose a model")]:
        out = show(demo_db, *args)
        assert out.returncode == 2, (args, out.stdout)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], (args, out.stderr)


def test_published_reference_gives_its_leaderboard(demo_db):
    rows = records(demo_db, "leaderboard", "--dataset", "eduart2026")
    assert len(rows) == 12 and rows[0]["macro"] == pytest.approx(0.828, abs=0.002)


def test_pages_only_call_registered_views():
    """Every table or chart a page draws comes from a registered view (or one of its parts)."""
    registered = {spec.fn.__name__ for spec in views.VIEWS.values()}
    helpers = {  # not tables: lookups for widgets, the item card, and the parts of registered views
        "Source", "datasets", "dataset_flags", "family_map", "models_with_data", "languages", "item_detail",
        "item_texts", "item_responses",  # the card of `responses`
        "baseline_models",  # the names behind the explorer's baseline filter
        "dataset_glance",  # the parts of items_by_* / item_lengths / image_sizes
        "key_findings",  # the rows of `findings`
        "regression_choices",  # the levels of the reference pickers of `regression`
        "published_setting", "setting_words",  # caption words for the psychometrics views' setting
        "EmptySelection", "ItemLevelUnavailable", "DatasetFlags", "clear_caches",
        "study_features", "StudyFeatures",  # what a dataset offers: which pages and sections apply
        "item_picture", "ItemPicture",  # the inspector's drawn image and image options
        # which datasets and filters apply (sidebar and menu), and the model names of a launch summary
        "analysable_datasets", "dataset_filters", "item_level", "FilterState", "models",
        "page_not_applicable", "PAGE_RULES",  # which pages apply to a dataset, and why not
        "data_label",  # the kinds of model behind a selection (banner and export subtitles)
    }
    called = set()
    for path in [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]:
        called |= set(re.findall(r"\bviews\.(\w+)", path.read_text(encoding="utf-8")))
    assert called - registered - helpers == set()

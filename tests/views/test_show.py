"""`python -m eduart_core show`: the machine-readable twin of every table and chart.

What a researcher relies on: every view the pages draw is listed and runs; the numbers equal the
ones on the page for the same selection (unrounded in JSON); the sidebar's filters exist as flags
and change the numbers; mistakes give one line and exit 2.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from eduart_core import views
from eduart_core.errors import UserError
from eduart_core.rerun_demo import DEMO_RERUN_DATASET
from eduart_core.robustness_demo import DEMO_ROBUST_DATASET
from eduart_core.selection import Selection
from eduart_core.team.identity import local
from eduart_core.vocab import DEFAULT_DATASET, DEMO_OPEN_DATASET, STUDY_DEMO_DATASETS

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

#: Options a view needs before it can run on the demo store.
NEEDS = {"item_changes": ["--option", "model=Sim A (strong recogniser)"],
         "item_card": ["--option", "item=demo-0007"],
         "item_history": ["--option", "item=demo-0007"],
         "answer_marks": ["--option", "item=demo-0007", "--option", "model=Sim H (format-fragile)"],
         "compare_models": ["--option", "a=Sim A (strong recogniser)", "--option", "b=Sim H (format-fragile)"],
         "adaptive_trajectory": ["--option", "run=adaptive-check__chance__default"],
         # a rater's record: `show` reads as the operator (every role), who may name a simulated grader
         **{name: ["--option", "rater=Sim grader B (simulated)"] for name in ("my_record", "my_agreement",
                                                                          "my_severity")},
         "my_gold": ["--option", "rater=Sim lenient grader (simulated)"],
         "item_variants": ["--option", "item=vqa-005"],
         **{name: ["--option", "baseline=Sim Atlas (simulated)"] for name in ("run_diff", "run_diff_items")},
         "contamination_period": ["--option", "cutoff=2021"]}
#: The datasets the demo builds, in the order a view is tried on them: the benchmark, the studies, the written answers.
DEMO_DATASETS = (DEFAULT_DATASET, *STUDY_DEMO_DATASETS, DEMO_OPEN_DATASET, DEMO_ROBUST_DATASET, DEMO_RERUN_DATASET)


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
    from tests.pages.test_app_pages import decode

    names = [row[0] for row in bar["customdata"]]  # the bars sit on numeric lanes; names ride along
    drawn = dict(zip(names, decode(bar["x"]).astype(float).tolist()))
    assert {r["model"] for r in rows} == set(drawn)
    for r in rows:
        assert drawn[r["model"]] == pytest.approx(round(100 * r["macro"], 1), abs=0.051)
        assert r["macro"] != round(r["macro"], 3) or r["macro"] in (0.0, 1.0)  # JSON keeps every digit
    assert [r["rank"] for r in rows] == sorted(r["rank"] for r in rows)


@pytest.fixture(scope="module")
def worked_db(chance_db, tmp_path_factory) -> Path:
    """The demo after some work: a chance run (baselines), a repeated run (reproducibility) and a
    reviewer's score override and an item bank, so every view has rows somewhere."""
    import shutil

    from eduart_core.cli import main
    from eduart_core.overrides import add_override
    from eduart_core.store import Store

    path = tmp_path_factory.mktemp("worked") / "eduart.duckdb"
    shutil.copy(chance_db, path)
    shutil.copytree(Store(chance_db).images_dir, Store(path).images_dir)
    assert main(["run", "--db", str(path), "--model", "chance", "--repeat", "2", "--sample", "4",
                 "--run-id", "repeat-check", "--quiet"]) == 0
    response = views.item_responses(views.Source.of(str(path)), DEFAULT_DATASET, "demo-0007").iloc[0]
    add_override(Store(path), int(response["response_id"]), 1.0, "a synonym the scorer missed", local("Carla"))
    assert main(["bank", "--db", str(path), "--dataset", DEFAULT_DATASET]) == 0  # an item bank (`bank`, `banks`)
    assert main(["run", "--db", str(path), "--model", "chance", "--adaptive", "--bank", "1", "--run-id",
                 "adaptive-check", "--quiet"]) == 0  # an adaptive run (`adaptive_runs`, `adaptive_trajectory`)
    from eduart_core import suspects  # an applied errata release (`errata`): demo-0001's key moved to A

    suspects.correct_key(Store(path), DEFAULT_DATASET, "demo-0001", [{"id": "A", "description": "Firenze"}],
                         local("Carla"), [], note="a check of the errata view")
    for verb in ([], ["apply"]):
        assert main(["errata", *verb, "--dataset", DEFAULT_DATASET, "--name", "e1", "--by", "Carla",
                     "--db", str(path)]) == 0
    return path


def _dataset_with_rows(db: Path, name: str) -> str | None:
    """The first demo dataset on which a view has rows (the views of tasks or of the formats beyond
    EduArt's only have rows on the study demos)."""
    options = dict(o.split("=", 1) for o in NEEDS.get(name, [])[1::2])
    for dataset in DEMO_DATASETS:
        try:
            if len(views.run_view(name, views.Source.of(str(db)), Selection(dataset=dataset), **options)):
                return dataset
        except UserError:
            continue
    return None


@pytest.mark.parametrize("name", list(views.VIEWS))
def test_every_view_runs_on_the_demo_and_matches_the_library(worked_db, name):
    dataset = _dataset_with_rows(worked_db, name)
    assert dataset, f"{name} returned no rows on any demo dataset ({', '.join(DEMO_DATASETS)})"
    rows = records(worked_db, name, "--dataset", dataset, *NEEDS.get(name, []))
    assert rows, f"{name} returned no rows through show"
    spec = views.VIEWS[name]
    options = dict(o.split("=", 1) for o in NEEDS.get(name, [])[1::2])
    frame = spec.fn(views.Source.of(str(worked_db)), Selection(dataset=dataset), **options)
    assert len(rows) == len(frame) and list(rows[0]) == [str(c) for c in frame.columns]
    _check_documented_columns(name, [str(c) for c in frame.columns])


#: The manual's record of each view's columns (its views reference is generated from the registry and this file).
VIEW_COLUMNS = ROOT / "docs" / "tools" / "view_columns.json"


def _check_documented_columns(name: str, columns: list[str]) -> None:
    """The columns the manual lists for a view are the ones it returns; ``EDUART_WRITE_VIEW_COLUMNS=1``
    records them instead (after a view gains or changes a column)."""
    documented = json.loads(VIEW_COLUMNS.read_text(encoding="utf-8")) if VIEW_COLUMNS.exists() else {}
    if os.environ.get("EDUART_WRITE_VIEW_COLUMNS") == "1":
        documented[name] = columns
        ordered = {view: documented[view] for view in views.VIEWS if view in documented}
        VIEW_COLUMNS.write_text(json.dumps(ordered, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return
    assert documented.get(name) == columns, (
        f"the manual's columns of {name} are out of date: run `EDUART_WRITE_VIEW_COLUMNS=1 pytest -n 0 "
        f"tests/views/test_show.py -k test_every_view_runs` and commit {VIEW_COLUMNS.relative_to(ROOT)}")


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
        "robustness_finding_list",  # the rows of `robustness_findings`
        "regression_choices",  # the levels of the reference pickers of `regression`
        "published_setting", "setting_words",  # caption words for the psychometrics views' setting
        "store_name",  # the store's name for the sidebar (no path of this machine)
        "EmptySelection", "ItemLevelUnavailable", "DatasetFlags", "clear_caches",
        "study_features", "StudyFeatures",  # what a dataset offers: which pages and sections apply
        "item_picture", "ItemPicture",  # the inspector's drawn image and image options
        # which datasets and filters apply (sidebar and menu), and the model names of a launch summary
        "analysable_datasets", "dataset_filters", "item_level", "FilterState", "models",
        "why_not", "tasks_rule", "formats_rule", "motivation_rule", "images_rule", "robustness_rule",
        "item_level_rule",  # which pages apply to a dataset, and why not (the rules the page registry names)
        "irt_default_model", "SUMMARY_ROW",  # the IRT model `auto` stands for; the abilities' summary row
        "profile_choices", "profile_label", "profile_warning",  # the profiles a dataset offers, their labels, warnings
        "data_label",  # the kinds of model behind a selection (banner and export subtitles)
        "invalid_warnings",  # the warning lines of `invalid_answers` (Overview, inspector, `show`)
        "store_path", "open_store",  # the store handle pages pass to the domain modules that write
        "StoreError", "StoreLockedError", "StoreConflictError",  # the store's one-line errors
        "image_file", "page_extractions",  # the review workbench's screenshot and both extractions
        "runnable_datasets",  # the datasets a launch can ask
        "run_history",  # the runner's live statuses over the run list (drawn from the runner before it was cached)
        "launch_items",  # the items a launch plans from (the Runs page's cached read)
        "errata_label",  # the errata release the scores are computed under, in words (a caption)
        "paper_question", "marked_page_image", "paper_notes",  # the review workbench's exam paper page and notes
    }
    called = set()
    for path in [ROOT / "app.py", *sorted((ROOT / "pages").rglob("*.py"))]:
        called |= set(re.findall(r"\bviews\.(\w+)", path.read_text(encoding="utf-8")))
    assert called - registered - helpers == set()


def _page_sources() -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8")
            for path in [ROOT / "app.py", *sorted((ROOT / "pages").rglob("*.py"))]}


def test_pages_never_import_the_store_nor_catch_database_errors():
    """Pages read through views and write through domain modules; the library turns database
    errors into one-line errors, so no page names the store or the database driver."""
    import ast

    offenders = []
    for name, text in _page_sources().items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom):
                modules = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            else:
                continue
            offenders += [f"{name}: {m}" for m in modules
                          if m == "eduart_core.store" or m.startswith("eduart_core.store.") or m.split(".")[0] == "duckdb"]
        offenders += [f"{name}: {m}" for m in re.findall(r"eduart_core\.store\b|\bduckdb\.\w+", text)]
    assert offenders == []


def test_each_view_is_listed_once_and_reachable_by_its_function_name():
    """One listing: a view is one `ViewSpec` line in views/__init__.py, not an import, a spec and an
    `__all__` entry; pages still call it as ``views.<function name>``."""
    import ast

    tree = ast.parse((ROOT / "eduart_core" / "views" / "__init__.py").read_text(encoding="utf-8"))
    imported = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
                for a in node.names}  # names, not the submodules (``from . import results``)
    listed = [node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)]
    literal_all = {elt.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                   and any(getattr(t, "id", None) == "__all__" for t in node.targets)
                   for elt in getattr(node.value, "elts", []) if isinstance(elt, ast.Constant)}
    for spec in views.VIEWS.values():
        name = spec.fn.__name__
        assert listed.count(name) == 1 and name not in imported and name not in literal_all, spec.name
        assert getattr(views, name) is spec.fn
        assert spec.fn.__name__ in views.__all__


def _show_here(db: Path, *args: str) -> tuple[int, str, str]:
    """`show` in this process: (exit code, stdout, stderr)."""
    from contextlib import redirect_stderr, redirect_stdout

    from eduart_core.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["show", *args, "--db", str(db)])
    return code, out.getvalue(), err.getvalue()


def test_show_caption_prints_the_caption_of_the_panel_drawn_from_the_view(demo_db):
    """`show VIEW --caption` prints the words the page and the report put under that figure."""
    from eduart_core import panels
    from pages.ui import menu

    src = views.Source.of(str(demo_db))
    assert len({p.view for p in panels.PANELS.values()}) == len(panels.PANELS)  # one panel per view
    for panel in panels.PANELS.values():
        assert panel.view in views.VIEWS and panel.page in menu.PAGES
        # a panel with nothing to draw on the benchmark demo (the judges' need judged answers) is read
        # on the written-answers demo, after one line that names it
        code, out, err = _show_here(demo_db, panel.view, "--caption")
        dataset = DEFAULT_DATASET
        if code == 2 and "--dataset" in err:
            assert DEMO_OPEN_DATASET in err.strip().splitlines()[0], err
            dataset = DEMO_OPEN_DATASET
            code, out, err = _show_here(demo_db, panel.view, "--caption", "--dataset", dataset)
        assert code == 0, err
        assert out == panel.describe(src, Selection(dataset=dataset)).caption + "\n"
    code, out, _ = _show_here(demo_db, "motivation", "--caption", "--option", "measure=micro", "--profile", "paper")
    assert out.startswith("Simulated respondents: Micro average per model") and "profile paper" in out
    assert "Holm-corrected p < .05 across" in out and "Wilcoxon signed-rank" in out  # the test the finding counts
    for args, words in [(["items", "--caption"], "no caption"),
                        (["motivation", "--caption", "--option", "measure=median"], "measure must be one of")]:
        code, _, err = _show_here(demo_db, *args)
        assert code == 2 and words in err.strip().splitlines()[0], err

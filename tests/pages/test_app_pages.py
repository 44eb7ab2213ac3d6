"""Dashboard pages under streamlit's AppTest on a demo store built once in a tmp dir.

What a user relies on: every page renders without an exception or error box, the expected charts
are there, the numbers drawn equal what ``eduart_core.analysis`` returns for the same filters,
the sidebar filters and the scoring profile change the numbers, the URL keeps the view, and the
aggregate-only reference dataset works where it can and says so where it cannot.
"""
from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

from eduart_core.robustness_demo import DEMO_ROBUST_DATASET
from eduart_core.text import plain
from eduart_core.vocab import DEFAULT_DATASET, STUDY_DEMO_DATASETS
from pages.ui import menu

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
#: The analysis pages drawn by a script (the Overview is app.py itself; the Work pages have their own tests).
PAGES = [key for key, spec in menu.PAGES.items() if spec.script and spec.group != menu.WORK]
SCRIPTS = [menu.PAGES[key].script for key in PAGES]
#: The datasets the demo builds: each page is drawn on the first one it applies to.
DEMO_DATASETS = (DEFAULT_DATASET, *STUDY_DEMO_DATASETS, DEMO_ROBUST_DATASET)


@pytest.fixture
def app(demo_db, monkeypatch):
    """A fresh AppTest session on the demo store, the view caches emptied."""
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    monkeypatch.setenv("EDUART_DB", str(demo_db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    return at


def decode(value):
    """Plotly arrays in the proto spec may be base64 with a dtype."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        if "shape" in value:
            shape = [int(x) for x in str(value["shape"]).split(",")]
            arr = arr.reshape(shape)
        return arr.astype(float)
    return np.asarray(value, dtype=object)


def specs(at) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def qp(at, key: str) -> list[str]:
    value = at.query_params.get(key)
    return [] if value is None else (list(value) if isinstance(value, (list, tuple)) else [value])


def assert_clean(at) -> None:
    assert not at.exception, at.exception[0].value
    assert not at.error, at.error[0].value


def scores(db, profile="strict", dataset="demo"):
    """The models' scores as the pages read them by default: people who sat the exam left out."""
    from eduart_core.store import Store
    from eduart_core.store.scores import load_scores
    from eduart_core.vocab import HUMAN_KIND

    frame = load_scores(Store(db), profile=profile, dataset=dataset)
    return frame[frame["kind"] != HUMAN_KIND].reset_index(drop=True)


def leaderboard_bars(at) -> dict[str, float]:
    bar = specs(at)[0]["data"][0]
    names = [row[0] for row in bar["customdata"]]
    return dict(zip(names, decode(bar["x"]).astype(float).tolist()))


def test_overview_leaderboard_equals_analysis_and_findings_name_tests(app, demo_db):
    from eduart_core import analysis

    app.run()
    assert_clean(app)
    expected = analysis.macro_scores(scores(demo_db))
    expected = expected[expected["condition"] == "default"].set_index("model")["macro"]
    bars = leaderboard_bars(app)
    assert set(bars) == set(expected.index)
    for model, value in bars.items():
        assert value == pytest.approx(round(100 * expected[model], 1), abs=0.051)
    tests = " ".join(c.value for c in app.caption)  # each finding names its test in a caption under it
    assert "Wilson" in tests or "Wilcoxon" in tests
    assert "Test:" not in " ".join(m.value for m in app.markdown)
    assert any("Simulated respondents" in w.value for w in app.warning)  # the demo is labelled


def test_profile_switch_changes_the_leaderboard_and_the_url(app, demo_db):
    from eduart_core import analysis

    app.run()
    strict = leaderboard_bars(app)
    app.radio(key="f_profile").set_value("paper").run()
    assert_clean(app)
    paper = leaderboard_bars(app)
    expected = analysis.macro_scores(scores(demo_db, "paper"))
    expected = expected[expected["condition"] == "default"].set_index("model")["macro"]
    assert paper == pytest.approx({m: round(100 * v, 1) for m, v in expected.items()}, abs=0.051)
    assert paper != strict
    assert qp(app, "profile") == ["paper"]


def test_model_filter_limits_every_chart(app, demo_db):
    app.run()
    models = sorted(leaderboard_bars(app))[:2]
    app.multiselect(key="f_models").set_value(models).run()
    assert_clean(app)
    assert set(leaderboard_bars(app)) == set(models)
    app.switch_page("pages/03_formats.py").run()
    assert_clean(app)
    heat = specs(app)[0]["data"][0]
    assert set(decode(heat["y"]).tolist()) == set(models)


def _drawable(panel, src, dataset: str) -> bool:
    """Whether the panel has something to draw on the dataset (a judge's panel needs judged answers)."""
    from eduart_core import views
    from eduart_core.errors import UserError
    from eduart_core.selection import Selection

    try:
        panel.describe(src, Selection(dataset=dataset))
    except (views.EmptySelection, UserError):
        return False
    return True


@pytest.mark.parametrize("key", PAGES)
def test_every_page_renders_with_its_charts(app, demo_db, key):
    """Each page on the first demo dataset it applies to: its story panels drawn (at least one chart)."""
    from eduart_core import panels, views

    src = views.Source.of(str(demo_db))
    dataset = next(d for d in DEMO_DATASETS if not menu.PAGES[key].not_applicable(views.study_features(src, d)))
    app.run()
    if dataset != DEFAULT_DATASET:
        app.selectbox(key="f_dataset").set_value(dataset).run()
    app.switch_page(menu.PAGES[key].script).run()
    assert_clean(app)
    assert len(app.get("plotly_chart")) >= max(1, sum(p.page == key and _drawable(p, src, dataset)
                                                      for p in panels.PANELS.values()))
    assert app.title[0].value  # every page says what it is
    from tests.views.test_charts import missing_titles

    untitled = {i: missing_titles(spec) for i, spec in enumerate(specs(app)) if missing_titles(spec)}
    assert not untitled, untitled  # every chart names itself and its axes


def test_format_heatmap_cells_equal_type_means(app, demo_db):
    from eduart_core import analysis
    from eduart_core.vocab import format_label as type_label

    app.run()
    app.switch_page("pages/03_formats.py").run()
    assert_clean(app)
    heat = specs(app)[0]["data"][0]
    z = decode(heat["z"])
    ys, xs = decode(heat["y"]).tolist(), decode(heat["x"]).tolist()
    ts = analysis.type_scores(scores(demo_db))
    ts = ts[ts["condition"] == "default"]
    for _, row in ts.iterrows():
        cell = z[ys.index(row["model"])][xs.index(type_label(row["type"]))]
        assert cell == pytest.approx(round(100 * row["mean"], 1), abs=0.051)


def test_motivation_dumbbell_equals_motivation_effect(app, demo_db):
    from eduart_core import analysis

    app.run()
    app.switch_page("pages/04_motivation.py").run()
    assert_clean(app)
    effect = analysis.motivation_effect(scores(demo_db)).set_index("model")
    traces = specs(app)[0]["data"]
    default = next(t for t in traces if t.get("name") == "default")
    motiv = [t for t in traces if str(t.get("name", "")).startswith("motivation, ")]
    assert motiv
    for model, d in zip(decode(default["y"]).tolist(), decode(default["x"])):
        assert d == pytest.approx(round(100 * effect.loc[model, "default_macro"], 1), abs=0.051)
    for trace in motiv:
        for model, m in zip(decode(trace["y"]).tolist(), decode(trace["x"])):
            assert m == pytest.approx(round(100 * effect.loc[model, "motivation_macro"], 1), abs=0.051)
    assert any("Wilcoxon" in c.value for c in app.caption)


def test_image_filter_and_language_filter_change_numbers(app):
    app.run()
    before = leaderboard_bars(app)
    app.multiselect(key="f_languages").set_value(["it"]).run()
    assert_clean(app)
    assert leaderboard_bars(app) != before
    assert qp(app, "lang") == ["it"]


def test_reference_dataset_shows_aggregates_and_says_what_is_missing(app):
    app.run()
    app.selectbox(key="f_dataset").set_value("eduart2026").run()
    assert_clean(app)
    bars = leaderboard_bars(app)
    assert len(bars) == 12
    assert max(bars.values()) == pytest.approx(82.8, abs=0.2)  # published leaderboard top macro
    assert any("aggregate only" in i.value for i in app.info)
    for page in ("pages/03_formats.py", "pages/04_motivation.py"):
        app.switch_page(page).run()
        assert_clean(app)
        assert app.get("plotly_chart")
    # item-level pages leave the menu for published aggregates (browser test); a link to one says why
    for page in ("pages/07_inspector.py", "pages/08_psychometrics.py", "pages/05_images.py",
                 "pages/09_profiles.py"):
        app.switch_page(page).run()
        assert_clean(app)
        assert any("not available" in i.value for i in app.info)


def test_filters_that_do_not_apply_are_disabled_with_a_reason(app):
    app.run()
    for key in ("f_languages", "f_image", "f_profile"):
        assert not _widget(app, key).disabled
    app.selectbox(key="f_dataset").set_value("eduart2026").run()
    assert_clean(app)
    for key in ("f_languages", "f_image", "f_profile"):
        assert _widget(app, key).disabled, key
    notes = " ".join(c.value for c in app.sidebar.caption)
    assert "profile does not apply" in notes and "no item languages" in notes and "no item images" in notes
    assert not _widget(app, "f_models").disabled and not _widget(app, "f_types").disabled
    app.selectbox(key="f_dataset").set_value("demo").run()
    assert_clean(app)
    assert not _widget(app, "f_languages").disabled


def test_the_sidebar_names_the_store_not_its_folder(app, demo_db):
    """Stakeholders see the store's name; the folders of this machine stay with the operator (`stats`)."""
    app.run()
    assert_clean(app)
    texts = [e.value for kind in ("caption", "markdown", "text", "info", "warning") for e in getattr(app.sidebar, kind)]
    assert any(t == f"Store: {plain('eduart.duckdb')}" for t in texts), texts
    assert not any(str(demo_db.parent) in t or plain(str(demo_db.parent)) in t for t in texts)


def _widget(app, key):
    for kind in ("multiselect", "radio", "selectbox", "toggle"):
        found = [w for w in getattr(app, kind) if w.key == key]
        if found:
            return found[0]
    raise AssertionError(f"no widget {key}")


def test_extraction_only_datasets_are_not_offered_for_analysis(app):
    app.run()
    assert_clean(app)
    options = " ".join(app.selectbox(key="f_dataset").options)  # shown as "Title (name)"
    assert "(demo-extraction)" not in options  # extracted items under review live on the review page
    assert "(demo)" in options and "(eduart2026)" in options


@pytest.mark.parametrize("dataset", ["demo", "eduart2026"])
def test_a_present_link_offers_only_the_story_pages(app, dataset):
    app.query_params["present"] = "1"
    app.query_params["dataset"] = dataset
    app.run()
    assert_clean(app)
    assert app.session_state["presentation"] is True
    folded = [e for e in app.sidebar.expander if e.label == "Analyst filters"]
    assert len(folded) == 1  # the analyst's controls fold away while presenting
    assert folded[0].multiselect(key="f_models") and folded[0].toggle(key="f_baselines")
    assert folded[0].toggle(key="f_humans") and folded[0].radio(key="f_profile")
    app.switch_page("pages/03_formats.py").run()  # a story page
    assert_clean(app)
    assert len(app.get("plotly_chart")) == 1  # one story chart, its headline above it
    assert not app.dataframe
    assert not any("Test:" in m.value for m in app.markdown)
    # pages outside the story keep their URL but show a notice while presenting: see the browser test


def test_deep_link_opens_item_in_inspector(app, demo_db):
    from eduart_core.store import Store
    from eduart_core.store.items import load_items

    item_id = str(load_items(Store(demo_db), "demo")["item_id"].iloc[2])
    app.query_params["item"] = item_id
    app.run()
    app.switch_page("pages/07_inspector.py").run()
    assert_clean(app)
    assert any(f"Item **{plain(item_id)}**" in m.value for m in app.markdown)
    app.button(key="insp_next").click().run()
    assert_clean(app)
    assert not any(f"Item **{plain(item_id)}**" in m.value for m in app.markdown)


def test_psychometrics_opens_the_inspector_for_a_chosen_item(app):
    app.run()
    app.switch_page("pages/08_psychometrics.py").run()
    assert_clean(app)
    points = specs(app)[0]["data"][0]
    item_id = str(decode(points["customdata"]).tolist()[0])
    app.selectbox(key="psy_open").set_value(item_id).run()
    assert_clean(app)
    assert any(f"Item **{plain(item_id)}**" in m.value for m in app.markdown)


def test_presentation_mode_hides_tables_and_keeps_story_pages(app):
    app.run()
    tables_before = len(app.dataframe)
    app.toggle(key="presentation").set_value(True).run()
    assert_clean(app)
    assert len(app.dataframe) < tables_before
    assert qp(app, "present") == ["1"]


def test_empty_selection_is_one_clear_line(app, demo_db):
    app.run()
    frame = scores(demo_db)
    present = set(map(tuple, frame[["type", "language", "has_image"]].drop_duplicates().to_numpy().tolist()))
    missing = [(t, lang, img) for t in sorted(frame["type"].unique()) for lang in ("it", "en")
               for img in (True, False) if (t, lang, img) not in present]
    assert missing, "the demo should not hold every format x language x image combination"
    t, lang, img = missing[0]
    app.multiselect(key="f_types").set_value([t]).run()
    app.multiselect(key="f_languages").set_value([lang]).run()
    app.radio(key="f_image").set_value("with" if img else "without").run()
    assert not app.exception
    assert any("widen the filters" in w.value for w in app.warning)
    for page in SCRIPTS:
        app.switch_page(page).run()
        assert not app.exception, page


def test_unbuildable_store_fails_with_one_line_not_a_traceback(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store folder should be")
    monkeypatch.setenv("EDUART_DB", str(blocker / "eduart.duckdb"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert any("Could not build the demo store" in e.value for e in at.error)


def test_first_start_builds_the_demo_store_and_shows_the_overview(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    db = tmp_path / "fresh" / "eduart.duckdb"
    monkeypatch.setenv("EDUART_DB", str(db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    assert_clean(at)
    assert db.exists()
    assert at.get("plotly_chart")  # the leaderboard of the freshly built demo


def test_every_page_works_on_a_small_import_eduart_store(tmp_path, monkeypatch):
    """A user's own import (published folder layout): tiny, with a defective item and a corrupt file."""
    from streamlit.testing.v1 import AppTest

    from eduart_core import views
    from eduart_core.importers.records import import_eduart
    from eduart_core.store import Store
    from tests.importers.test_ingest import build_published_folder, models_csv

    db = tmp_path / "imported" / "eduart.duckdb"
    import_eduart(Store(db), build_published_folder(tmp_path / "eduart"), models_csv=models_csv(tmp_path / "m.csv"))
    monkeypatch.setenv("EDUART_DB", str(db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert_clean(at)
    assert at.selectbox(key="f_dataset").value == "eduart"
    assert not any("Simulated respondents" in w.value for w in at.warning)  # real answers are not labelled simulated
    for page in SCRIPTS:
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception[0].value if at.exception else None)
        assert not at.error, (page, at.error[0].value if at.error else None)


def test_items_imported_before_any_run_render_every_page(tmp_path, monkeypatch):
    """Right after `import-items` the store has items but no models or runs: no page may crash."""
    from streamlit.testing.v1 import AppTest

    from eduart_core import views
    from eduart_core.scoring.item_writes import upsert_items
    from eduart_core.store import Store

    record = {"item_id": "q1", "type": "multiple_choice_radio", "question_text": "Who painted the Primavera?",
              "choices": [{"id": "A", "text": "Botticelli"}, {"id": "B", "text": "Titian"}],
              "answers": [{"id": "A", "description": "Botticelli"}], "language": "en", "has_image": False,
              "image": None}
    db = tmp_path / "fresh" / "eduart.duckdb"
    upsert_items(Store(db), [record], dataset="items", origin="import-items")
    monkeypatch.setenv("EDUART_DB", str(db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert_clean(at)
    for page in [spec.script for spec in menu.PAGES.values() if spec.script]:
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception[0].value if at.exception else None)


def test_locked_store_is_one_clear_line(demo_db, tmp_path, monkeypatch):
    """Another process writing to the store: the page says so instead of a traceback."""
    import shutil
    import subprocess
    import sys

    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    db = tmp_path / "locked" / "eduart.duckdb"
    db.parent.mkdir()
    shutil.copy(demo_db, db)
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time\n"
                               f"con = duckdb.connect({str(db)!r})\nprint('locked', flush=True)\ntime.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        monkeypatch.setenv("EDUART_DB", str(db))
        views.clear_caches()
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.run()
        assert not at.exception
        assert any("busy" in e.value for e in at.error)
    finally:
        holder.kill()
        holder.wait(timeout=10)


def test_no_chart_toolbar_saves_an_image_without_its_title(app):
    """The toolbar's camera would save the bare plot under the export's file name, without title,
    subtitle and n: with a browser for the titled PNG/SVG downloads, every chart leaves it out."""
    from eduart_core import exports

    if not exports.static_export_available():
        pytest.skip("no Chromium for the titled exports here: the camera stays as the one way to save")
    app.run()
    assert_clean(app)
    charts = app.get("plotly_chart")
    assert charts
    for chart in charts:
        config = json.loads(chart.proto.config)
        assert "toImage" in config.get("modeBarButtonsToRemove", []), config
        assert "toImageButtonOptions" not in config
    labels = [b.proto.label for b in app.get("download_button")]
    assert any("PNG" in label for label in labels), labels


def _notices(at) -> list[str]:
    """The info lines of the page, as text (they are drawn through `plain`)."""
    return [i.value.replace("\\", "") for i in at.info]


def test_a_link_to_an_unknown_dataset_and_item_names_both_and_what_it_shows(app, demo_db):
    app.query_params["dataset"] = "nosuchdata"
    app.query_params["item"] = "zzz"
    app.switch_page("pages/07_inspector.py").run()
    assert_clean(app)
    shown = qp(app, "item")[0]
    notices = _notices(app)
    assert "No dataset 'nosuchdata' in this store: showing dataset demo instead." in notices, notices
    assert f"No item 'zzz' in dataset demo: showing item {shown} instead." in notices, notices
    assert any(f"Item **{plain(shown)}**" in m.value for m in app.markdown)
    app.button(key="insp_next").click().run()  # the lines stay on their page
    assert "No dataset 'nosuchdata' in this store: showing dataset demo instead." in _notices(app)
    app.switch_page("pages/03_formats.py").run()  # and go when another page is chosen
    assert not [n for n in _notices(app) if "nosuchdata" in n or "'zzz'" in n]


@pytest.mark.parametrize("param,value,line", [
    ("models", "nosuchmodel", "No model 'nosuchmodel' in dataset demo: showing every model instead."),
    ("profile", "nosuchprofile", "No scoring profile 'nosuchprofile' in dataset demo: showing the default profile "
                                 "instead."),
    ("condition", "nosuchcondition", "No prompt condition 'nosuchcondition' in dataset demo: showing the default "
                                     "condition instead."),
    ("types", "nosuchformat", "No format 'nosuchformat' in dataset demo: showing every format instead."),
])
def test_a_link_to_an_unknown_value_names_it_and_what_it_shows(app, param, value, line):
    app.query_params[param] = value
    app.run()
    assert_clean(app)
    assert line in _notices(app), _notices(app)


def test_a_link_with_known_values_shows_no_notice(app, demo_db):
    from eduart_core.store import Store
    from eduart_core.store.items import load_items

    app.query_params["dataset"] = "demo"
    app.query_params["item"] = str(load_items(Store(demo_db), "demo")["item_id"].iloc[2])
    app.switch_page("pages/07_inspector.py").run()
    assert_clean(app)
    assert not [n for n in _notices(app) if n.startswith("No ")], _notices(app)


@pytest.mark.parametrize("key,purpose", [("grading", "Art historians mark the open answers"),
                                         ("exam", "People sit the benchmark themselves")])
def test_work_pages_say_what_they_are_for_and_show_commands_as_code(app, key, purpose):
    app.run()
    app.switch_page(menu.PAGES[key].script).run()
    assert_clean(app)
    assert any(m.value.startswith(purpose) for m in app.markdown), [m.value[:80] for m in app.markdown][:5]
    texts = [e.value for e in (*app.markdown, *app.info, *app.caption, *app.warning)]
    assert not [t for t in texts if "\\`" in t], [t for t in texts if "\\`" in t]  # no literal backticks
    if any("No grading round" in i.value for i in app.info):  # the command to start one, as code
        assert any("grading-round --dataset" in c.value for c in app.code)

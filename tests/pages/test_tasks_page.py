"""The Tasks and dimensions page (and the pages that adapt to a study dataset) under AppTest.

What a user relies on: the page draws the same numbers `show dimension_scores` prints, every section
renders for the demo and both published references, the consistency checks are told in words, the
overall's aggregation is stated and switchable, and the menu offers only the pages that apply.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.pages.test_app_pages import assert_clean, decode
from tests.reading import as_read

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TASKS = "pages/02_tasks.py"
SECTIONS = ("scores", "checks", "correlations", "families", "errors")


@pytest.fixture
def app(demo_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    monkeypatch.setenv("EDUART_DB", str(demo_db))
    views.clear_caches()
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)


def open_dataset(app, dataset: str):
    app.session_state["f_dataset"] = dataset
    app.run()
    assert_clean(app)
    return app


def heatmap(app) -> dict:
    specs = [json.loads(el.proto.spec) for el in app.get("plotly_chart")]
    return next(s["data"][0] for s in specs if s["data"][0].get("type") == "heatmap")


def test_heatmap_equals_the_dimension_scores_view(app, demo_db):
    from eduart_core import views
    from eduart_core.selection import Selection

    open_dataset(app, "demo-vqa").switch_page(TASKS).run()
    assert_clean(app)
    trace = heatmap(app)
    z = decode(trace["z"])
    expected = views.dimension_scores(views.Source.of(str(demo_db)), Selection(dataset="demo-vqa"))
    models = list(trace["y"]) if isinstance(trace["y"], list) else decode(trace["y"]).tolist()
    assert models[-1] == "Median of models" and len(models) == expected["model"].nunique()
    columns = list(dict.fromkeys(expected["column"]))
    for i, model in enumerate(models):
        for j, column in enumerate(columns):
            row = expected[(expected["model"] == model) & (expected["column"] == column)].iloc[0]
            assert z[i][j] == pytest.approx(round(100 * row["score"], 1), abs=0.051)
    texts = [t for row in trace["text"] for t in row]
    assert any("▲" in t for t in texts) and any("△" in t for t in texts)
    assert any("Overall column: micro" in as_read(c.value) for c in app.caption)


@pytest.mark.parametrize("dataset", ["demo-vqa", "demo-muse", "vqart2025", "muse2026"])
def test_every_section_renders(app, dataset):
    open_dataset(app, dataset).switch_page(TASKS).run()
    assert_clean(app)
    for section in SECTIONS:
        if section == "errors" and dataset not in ("demo-vqa", "demo-muse"):
            continue
        app.session_state["study_section"] = section
        app.run()
        assert_clean(app)
        assert not app.error, (dataset, section, app.error[0].value)
        if section != "checks":
            assert app.get("plotly_chart"), (dataset, section)


def test_checks_are_told_in_plain_words(app):
    open_dataset(app, "vqart2025").switch_page(TASKS).run()
    assert any("13 of 14 models" in m.value for m in app.markdown)
    app.session_state["study_section"] = "checks"
    app.run()
    assert_clean(app)
    text = " ".join(m.value for m in app.markdown)
    assert "Instance Localization" in text and "inconsistent" in text and "Kimi" in text
    open_dataset(app, "muse2026").switch_page(TASKS).run()
    app.session_state["study_section"] = "checks"
    app.run()
    text = " ".join(m.value for m in app.markdown)
    assert "8 places" in text and "Jigsaw Puzzle" in text


def test_the_overall_aggregation_is_stated_and_switchable(app):
    def rows() -> dict[str, list[float]]:
        trace = heatmap(app)
        return dict(zip(list(trace["y"]), decode(trace["z"]).tolist()))

    open_dataset(app, "demo-vqa").switch_page(TASKS).run()
    micro = rows()
    app.selectbox(key="study_aggregation").set_value("dimension_macro").run()
    assert_clean(app)
    assert any("unweighted mean of the dimension means" in c.value for c in app.caption)
    macro = rows()
    assert {m: r[:-1] for m, r in micro.items()} == {m: r[:-1] for m, r in macro.items()}  # columns unchanged
    assert {m: r[-1] for m, r in micro.items()} != {m: r[-1] for m, r in macro.items()}  # the overall moves


def test_the_overview_of_a_published_table_links_to_the_tasks_page(app):
    open_dataset(app, "vqart2025")
    links = [el.proto for el in app.get("page_link")]
    assert any(link.label == "Open Tasks and dimensions" and link.page.endswith("tasks") for link in links), links


def test_pages_that_do_not_apply_say_why_when_opened_by_link(app):
    """The menu hides them (the page's rule in pages.ui.menu.PAGES); a link still opens them, with the reason."""
    cases = [("demo", TASKS, "no tasks or reasoning dimensions"),
             ("demo-vqa", "pages/04_motivation.py", "one prompt condition only"),
             ("vqart2025", "pages/07_inspector.py", "not available"),
             ("vqart2025", "pages/05_images.py", "not available"),
             ("vqart2025", "pages/03_formats.py", "Tasks and dimensions page")]
    for dataset, page, why in cases:
        open_dataset(app, dataset).switch_page(page).run()
        assert_clean(app)
        assert any(why in as_read(i.value) for i in app.info), (dataset, page)
        assert not app.get("plotly_chart"), (dataset, page)  # the reason, not an empty page


def test_images_page_breaks_accuracy_down_by_image_attribute(app):
    open_dataset(app, "demo-vqa").switch_page("pages/05_images.py").run()
    assert_clean(app)
    specs = [json.loads(el.proto.spec) for el in app.get("plotly_chart")]
    titles = {s["layout"]["xaxis"]["title"]["text"] for s in specs}
    assert {"genre", "figures", "setting", "warm ratio"} <= titles
    assert not any("with/without" in i.value for i in app.info)
    captions = [as_read(c.value) for c in app.caption if "image attribute" in c.value]
    assert captions and not [c for c in captions if "\\" in c], captions  # names and values escaped once


def test_the_distractor_caption_names_the_chosen_model_as_written(demo_db, tmp_path, monkeypatch):
    import shutil

    import duckdb
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    path = tmp_path / "eduart.duckdb"
    shutil.copy(demo_db, path)
    model = "Sim *Aurora* Pro (v2.1)"  # markdown punctuation in a model name
    with duckdb.connect(str(path)) as con:
        con.execute("UPDATE models SET display_name = ? WHERE display_name = 'Sim Aurora Pro'", [model])
    monkeypatch.setenv("EDUART_DB", str(path))
    views.clear_caches()
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    open_dataset(app, "demo-vqa").switch_page(TASKS).run()
    app.session_state["study_section"] = "errors"
    app.run()
    app.selectbox(key="study_distractor_model").set_value(model).run()
    assert_clean(app)
    captions = [as_read(c.value) for c in app.caption if "wrong option" in c.value]
    assert any(f"({model})" in c for c in captions), captions


def test_errors_section_has_the_counting_table_on_demo_muse(app):
    open_dataset(app, "demo-muse").switch_page(TASKS).run()
    app.session_state["study_section"] = "errors"
    app.run()
    assert_clean(app)
    titles = " ".join(as_read(m.value) for m in app.markdown)
    assert "Counting answers" in titles and "Multi-part answers" in titles


@pytest.mark.parametrize("task,images", [("Jigsaw Puzzle", 5), ("Activity Localization", 1)])
def test_inspector_draws_boxes_image_options_and_dialogues(app, demo_db, task, images):
    from eduart_core.store import Store
    from eduart_core.store.items import load_items

    items = load_items(Store(demo_db), "demo-muse")
    item_id = items[items["task"] == task]["item_id"].iloc[0]
    app.query_params["item"] = item_id
    open_dataset(app, "demo-muse").switch_page("pages/07_inspector.py").run()
    assert_clean(app)
    assert len(app.get("image")) == images  # the item image (boxes drawn) and, for a jigsaw, its four pieces
    dialogue = items[items["dialogue_id"].notna()]["item_id"].iloc[0]
    app.query_params["item"] = dialogue
    app.session_state["insp_current"] = dialogue
    app.run()
    assert_clean(app)
    assert any(e.label.startswith("Dialogue ") for e in app.expander)

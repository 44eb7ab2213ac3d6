"""AppTest of pages/8_review_page.py on a store holding the extraction demo: accept, edit with a
validation error, flag, bulk accept; every action checked in the store's audit log."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "pages" / "8_review_page.py")


@pytest.fixture(scope="module")
def template_store(tmp_path_factory) -> Path:
    from eduart_core.extraction.simulated import build_extraction_demo
    from eduart_core.store import Store

    path = tmp_path_factory.mktemp("review-template") / "eduart.duckdb"
    build_extraction_demo(Store(path))
    return path


@pytest.fixture
def review_store(template_store, tmp_path, monkeypatch):
    from eduart_core.store import Store

    target = tmp_path / "review" / "eduart.duckdb"
    target.parent.mkdir()
    shutil.copy(template_store, target)
    shutil.copytree(template_store.parent / "eduart_images", target.parent / "eduart_images")
    monkeypatch.setenv("EDUART_DB", str(target))
    return Store(target)


@pytest.fixture
def page(review_store):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    at.text_input(key="review_name").input("Anna").run()
    assert not at.exception, at.exception
    return at


def _open(at, page_id: str, round_: int = 1):
    at.selectbox(key="review_page").set_value(f"{page_id} · round {round_}").run()
    assert not at.exception, at.exception
    return at


def _messages(at) -> str:
    return " ".join(e.value for e in list(at.success) + list(at.error) + list(at.warning) + list(at.info))


def test_page_shows_demo_queue_labelled_simulated(page):
    assert any("simulated" in i.value for i in page.info)
    assert any("Reviewing as **Anna**" in m.value for m in page.markdown)
    options = page.selectbox(key="review_page").options
    assert "ex01/q02 · round 1" in options and len(options) >= 9
    assert page.get("progress")


def test_accept_resolves_page_and_promotes(page, review_store):
    from eduart_core.store import extraction as db
    from eduart_core.store.items import get_item

    _open(page, "ex01/q02")
    page.button(key="accept_a::ex01/q02|1|answers").click().run()
    assert not page.exception
    assert "promoted as gold" in _messages(page)
    log = db.load_decisions(review_store, "ex01/q02")
    assert list(log["reviewer"]) == ["Anna"] and list(log["action"]) == ["accept_a"]
    gold = get_item(review_store, "demo-extraction", "x0102")["record"]
    assert gold["answers"][0]["id"] == "A"


def test_edit_with_validation_error_saves_nothing(page, review_store):
    from eduart_core.store import extraction as db

    _open(page, "ex01/q02")
    key = "ex01/q02|1|answers"
    page.text_area(key=f"edit_value::{key}").set_value('[{"id": "Z", "description": "nobody"}]')
    page.button(key=f"edit::{key}").click().run()
    assert not page.exception
    assert any("would be invalid" in e.value for e in page.error)
    assert db.load_decisions(review_store).empty
    page.text_area(key=f"edit_value::{key}").set_value("[not json")
    page.button(key=f"edit::{key}").click().run()
    assert any("not valid JSON" in e.value for e in page.error)
    page.text_area(key=f"edit_value::{key}").set_value('[{"id": "A", "description": "The flying buttress"}]')
    page.button(key=f"edit::{key}").click().run()
    log = db.load_decisions(review_store)
    assert list(log["action"]) == ["edit"]
    assert log.iloc[0]["new_value"] == [{"id": "A", "description": "The flying buttress"}]


def test_flag_with_note(page, review_store):
    from eduart_core.store import extraction as db

    _open(page, "ex02/q02")
    key = "ex02/q02|1|choices[A].text"
    page.text_input(key=f"flag_note::{key}").input("capital M in the screenshot? ask Carla")
    page.button(key=f"flag::{key}").click().run()
    assert not page.exception
    log = db.load_decisions(review_store)
    assert list(log["action"]) == ["flag"] and log.iloc[0]["note"] == "capital M in the screenshot? ask Carla"
    page.multiselect(key="review_status").set_value(["flagged"]).run()
    assert page.selectbox(key="review_page").options == ["ex02/q02 · round 1"]


def test_bulk_accept_category_across_queue(page, review_store):
    from eduart_core.store import extraction as db

    page.selectbox(key="review_round").set_value(2).run()
    page.selectbox(key="review_bulk_category").set_value("accents").run()
    page.button(key="review_bulk_b").click().run()
    assert not page.exception
    assert "Accepted B for 2 accents field(s)" in _messages(page)
    log = db.load_decisions(review_store)
    assert len(log) == 2 and set(log["action"]) == {"accept_b"} and set(log["round"]) == {2}


def test_second_reviewer_sees_conflict(page, review_store):
    from eduart_core.extraction import review
    from eduart_core.store import extraction as db

    _open(page, "ex01/q02")
    # a colleague decides the same field after Anna loaded the page
    review.decide(review_store, "ex01/q02", 1, "answers", "accept_b", "Bruno", based_on=None)
    page.button(key="accept_a::ex01/q02|1|answers").click().run()
    assert any("Conflict" in w.value and "Bruno" in w.value for w in page.warning)
    assert list(db.load_decisions(review_store)["reviewer"]) == ["Bruno"]


def test_demo_store_without_extraction_gets_it_on_first_visit(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from eduart_core.store import Store
    from eduart_core.store.runs import ensure_dataset

    store = Store(tmp_path / "demo" / "eduart.duckdb")
    ensure_dataset(store, "demo", "Demo", "demo", simulated=True)
    monkeypatch.setenv("EDUART_DB", str(store.path))
    at = AppTest.from_file(PAGE, default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    assert "ex01/q02 · round 1" in at.selectbox(key="review_page").options


def test_user_store_is_not_given_demo_pages(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from eduart_core.store import Store
    from eduart_core.store.runs import ensure_dataset

    store = Store(tmp_path / "mine" / "eduart.duckdb")
    ensure_dataset(store, "eduart", "Mine", "benchmark")
    monkeypatch.setenv("EDUART_DB", str(store.path))
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert any("No extracted pages yet" in i.value for i in at.info)

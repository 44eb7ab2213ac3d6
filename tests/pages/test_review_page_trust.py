"""AppTest of the review studio (pages/11_review.py) on copies of the extraction demo: a
page whose fields contradict each other keeps the reviewer on it with the message beside the
field at fault; switching a round to blind review warns first and asks to confirm; history,
audit and agreement speak the item; the Agreement tab logs no Arrow serialisation trouble."""
from __future__ import annotations

import logging

import pytest

from eduart_core.extraction import review
from eduart_core.store import Store
from eduart_core.store import extraction as db
from eduart_core.team.identity import local
from tests.reading import as_read
from tests.review_fixtures import build_template, copy_store

pytestmark = pytest.mark.slow

PAGE = "pages/11_review.py"
DEMO = "demo-extraction"
TF_PAGE = "ex03/q01"


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return build_template(tmp_path_factory.mktemp("page-trust-template"))


@pytest.fixture
def review_store(template, tmp_path, monkeypatch) -> Store:
    path = copy_store(template, tmp_path / "review")
    monkeypatch.setenv("EDUART_DB", str(path))
    return Store(path)


def session(name: str = "Anna"):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    at = AppTest.from_file(f"../../{PAGE}", default_timeout=90)
    at.run()
    at.text_input(key="review_name").input(name).run()
    assert not at.exception, at.exception
    return at


def open_page(at, page_id: str, round_: int = 1):
    at.session_state["review_round"] = round_
    at.session_state["review_current"] = (page_id, round_)
    at.run()
    assert not at.exception, at.exception
    return at


def card(at, base: str):
    """The bordered card of one field (its block's id carries the card's key)."""
    found = []

    def walk(node):
        for child in getattr(node, "children", {}).values():
            if str(getattr(getattr(child, "proto", None), "id", "")).endswith(f"card::{base}"):
                found.append(child)
            walk(child)
    walk(at.main)
    assert found, f"no card {base}"
    return found[0]


def card_errors(at, base: str) -> str:
    return " ".join(as_read(e.value) for e in card(at, base).get("error"))


def test_a_contradicting_page_keeps_the_reviewer_on_it_with_the_reason_beside_the_field(review_store):
    at = open_page(session(), TF_PAGE)
    at.button(key=f"accept_b::{TF_PAGE}|1|answers").click().run()  # 2 verdicts
    assert at.session_state["review_current"] == (TF_PAGE, 1)
    assert not at.exception, at.exception
    assert f"accept_a::{TF_PAGE}|1|choices" not in {b.key for b in at.button}  # 3 statements: not offered
    assert "statement C has no verdict" in " ".join(as_read(i.value) for i in card(at, f"{TF_PAGE}|1|choices")
                                                    .get("info"))
    assert not any("not promoted" in as_read(t.value) for t in at.toast)
    assert len(db.load_decisions(review_store, TF_PAGE, 1)) == 1
    at.button(key=f"accept_b::{TF_PAGE}|1|choices").click().run()  # consistent
    assert any("promoted as gold" in as_read(t.value) for t in at.toast)


def test_switching_a_round_to_blind_review_warns_and_asks_to_confirm(review_store):
    review.decide(review_store, "ex01/q02", 1, "answers", "accept_a", local("Anna"))  # promoted
    at = session("Lead")
    at.toggle(key="review_show_rounds").set_value(True).run()
    at.selectbox(key="review_setting_round").set_value((DEMO, 1)).run()
    at.number_input(key=f"review_setting_k::{(DEMO, 1)}").set_value(2).run()
    assert not at.exception, at.exception
    said = " ".join(as_read(m.value) for m in at.markdown) + " ".join(as_read(w.value) for w in at.warning)
    assert "changes decisions already made" in said
    assert "ex01/q02 · Answer key (Anna accepted A)" in said and "stop settling" in said
    assert "settled page(s) reopen: ex01/q02 (gold version 1)" in said
    assert at.button(key="review_setting_save").disabled  # not before the confirmation
    assert review.load_state(review_store).reviewers_needed(DEMO, 1) == 1
    at.checkbox(key=f"review_setting_confirm::{(DEMO, 1)}::2").check().run()
    at.button(key="review_setting_save").click().run()
    assert not at.exception, at.exception
    assert review.load_state(review_store).reviewers_needed(DEMO, 1) == 2
    assert any("1 page(s) reopened" in as_read(t.value) for t in at.toast)
    assert any("stop settling" in as_read(i.value) for i in at.info)  # the panel keeps saying it


def test_history_and_audit_on_the_page_speak_the_item(review_store):
    at = open_page(session(), TF_PAGE)
    at.button(key=f"accept_b::{TF_PAGE}|1|answers").click().run()
    history = next(d.value for d in at.dataframe if "Previous value" in d.value.columns)
    assert list(history["Field"]) == ["True or false"] and list(history["Decision"]) == ["accepted B"]
    assert history["Previous value"].iloc[0] == "A: True\nB: False\nC: True"
    at.segmented_control(key="review_section").set_value("audit").run()
    assert not at.exception, at.exception
    audit = next(d.value for d in at.dataframe if "Previous value" in d.value.columns)
    assert list(audit["Decision"]) == ["accepted B"] and list(audit["Field"]) == ["True or false"]
    assert not any("_" in c for c in audit.columns)


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


def test_the_agreement_tab_logs_no_arrow_serialisation_trouble_and_speaks_words(review_store):
    for name in ("Anna", "Bruno"):
        review.decide(review_store, "ex01/q02", 1, "answers", "accept_a", local(name))
    at = session()
    handler = _Records()
    loggers = [logging.getLogger(n) for n in ("streamlit", "streamlit.dataframe_util")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
    try:
        at.segmented_control(key="review_section").set_value("agreement").run()
    finally:
        for lg, level in zip(loggers, levels):
            lg.removeHandler(handler)
            lg.setLevel(level)
    assert not at.exception, at.exception
    arrow = [r for r in handler.records if "Arrow" in r.getMessage() or r.exc_info]
    assert not arrow, arrow[0].getMessage()
    tables = [d.value for d in at.dataframe if "Same choice by all reviewers" in d.value.columns]
    assert len(tables) == 3
    for table in tables:
        cells = table.columns.tolist() + table.astype(str).to_numpy().ravel().tolist()
        assert not any("_" in c or c in ("None", "nan") for c in cells), cells
    assert tables[0]["Round"].tolist() == ["1", "all rounds"]

"""AppTest of the review studio page (pages/11_review.py) on copies of the extraction demo:
decisions field by field, editors, flags, bulk accept, conflicts, blind review with adjudication,
the suspect-key queue, agreement and the audit log; every action checked in the store."""
from __future__ import annotations

import pytest

from eduart_core.extraction import review
from eduart_core.store import Store
from eduart_core.store import extraction as db
from eduart_core.store.items import get_item
from eduart_core.team.identity import local
from tests.reading import as_read
from tests.review_fixtures import build_template, copy_store
from tests.scoring.test_review_keys import DATASET as KEYS_DATASET
from tests.scoring.test_review_keys import keyed_store  # noqa: F401 - fixture

pytestmark = pytest.mark.slow

PAGE = "pages/11_review.py"
DEMO = "demo-extraction"


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return build_template(tmp_path_factory.mktemp("page-template"))


@pytest.fixture
def review_store(template, tmp_path, monkeypatch) -> Store:
    path = copy_store(template, tmp_path / "review")
    monkeypatch.setenv("EDUART_DB", str(path))
    return Store(path)


def session(name: str | None = "Anna", role: str | None = None):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    at = AppTest.from_file(f"../../{PAGE}", default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    if name:
        at.text_input(key="review_name").input(name).run()
    if role:
        at.radio(key="review_role").set_value(role).run()
    assert not at.exception, at.exception
    return at


def open_page(at, page_id: str, round_: int = 1):
    at.session_state["review_round"] = round_
    at.session_state["review_current"] = (page_id, round_)
    at.run()
    assert not at.exception, at.exception
    return at


def toasts(at) -> str:
    return " ".join(as_read(t.value) for t in at.toast)


def errors(at) -> str:
    return " ".join(as_read(e.value) for e in at.error)


def test_page_shows_the_demo_queue_and_opens_the_first_open_page(review_store):
    at = session()
    assert any("simulated" in i.value for i in at.info)
    assert any("Reviewing as **Anna**" in m.value for m in at.markdown)
    assert at.session_state["review_current"] == ("ex01/q01", 1)
    assert at.get("progress")
    assert at.button(key="accept_a::ex01/q01|1|question_text").proto.shortcut.upper() == "A"  # the focused field
    assert at.button(key="review_next").proto.shortcut.upper() == "N"


def test_accept_promotes_and_opens_the_next_page(review_store):
    at = open_page(session(), "ex01/q02")
    at.button(key="accept_a::ex01/q02|1|answers").click().run()
    assert not at.exception, at.exception
    assert "promoted as gold" in toasts(at) and "Opened the next page, ex02/q02" in toasts(at)
    assert at.session_state["review_current"] == ("ex02/q02", 1)
    log = db.load_decisions(review_store, "ex01/q02")
    assert list(log["reviewer"]) == ["Anna"] and list(log["action"]) == ["accept_a"]
    assert get_item(review_store, DEMO, "x0102")["record"]["answers"][0]["id"] == "A"


def test_a_multi_field_page_is_finished_in_any_order(review_store):
    at = open_page(session(), "ex03/q01")
    at.button(key="accept_a::ex03/q01|1|choices").click().run()  # the second field first
    assert not at.exception, at.exception
    assert at.session_state["review_current"] == ("ex03/q01", 1)  # one field left: the page stays
    assert "nan" not in " ".join(m.value for m in at.markdown)
    assert at.button(key="accept_a::ex03/q01|1|answers").proto.shortcut.upper() == "A"  # focus moved to the open field
    at.button(key="accept_a::ex03/q01|1|answers").click().run()
    assert not at.exception, at.exception
    assert "promoted as gold" in toasts(at)
    assert review.review_queue(review_store, round=1).set_index("page_id").loc["ex03/q01", "status"] == "resolved"


def test_edit_is_validated_and_an_edit_equal_to_a_side_is_that_side(review_store):
    at = open_page(session(), "ex01/q01")
    base = "ex01/q01|1|question_text"
    at.toggle(key=f"edit_open::{base}").set_value(True).run()
    box = at.text_area(key=f"ed::{base}::A::text")
    assert "  " in box.value  # A's doubled space, shown in the box; the diff view marks it
    at.button(key=f"edit::{base}").click().run()  # saving A unchanged
    assert not at.exception, at.exception
    assert "question_text: has a doubled space after 'cappella'" in errors(at)
    assert db.load_decisions(review_store).empty
    at.toggle(key=f"edit_open::{base}").set_value(True).run()
    at.radio(key=f"edit_from::{base}").set_value("B").run()
    at.button(key=f"edit::{base}").click().run()  # B unchanged: the same as accepting B
    assert "saved as Accept B" in toasts(at)
    assert list(db.load_decisions(review_store)["action"]) == ["accept_b"]


def test_edit_with_the_key_editor_saves_the_value(review_store):
    at = open_page(session(), "ex01/q02")
    base = "ex01/q02|1|answers"
    at.toggle(key=f"edit_open::{base}").set_value(True).run()
    key = at.radio(key=f"ed::{base}::A::key")
    assert key.value == "A. The flying buttress" and "B. The barrel vault" in key.options
    key.set_value("C. Post and lintel").run()
    at.button(key=f"edit::{base}").click().run()
    assert not at.exception, at.exception
    log = db.load_decisions(review_store)
    assert list(log["action"]) == ["edit"]
    assert log.iloc[0]["new_value"] == [{"id": "C", "description": "Post and lintel"}]


def test_flag_with_a_note_then_a_colleague_settles(review_store):
    at = open_page(session(), "ex02/q02")
    base = "ex02/q02|1|choices[A].text"
    at.text_input(key=f"flag_note::{base}").input("capital M in the screenshot? ask Carla")
    at.button(key=f"flag::{base}").click().run()
    assert not at.exception, at.exception
    log = db.load_decisions(review_store)
    assert list(log["action"]) == ["flag"] and log.iloc[0]["note"] == "capital M in the screenshot? ask Carla"
    carla = open_page(session("Carla"), "ex02/q02")
    assert any("flagged by Anna" in m.value for m in carla.markdown)
    carla.button(key=f"accept_a::{base}").click().run()
    assert "promoted as gold" in toasts(carla)


def test_bulk_accept_of_one_category_across_the_queue(review_store):
    at = session()
    at.session_state["review_round"] = 2
    at.run()
    at.selectbox(key="review_bulk_category").set_value("accents").run()
    at.button(key="review_bulk_b").click().run()
    assert not at.exception, at.exception
    assert "Accepted B for 2 accents field(s)" in toasts(at)
    log = db.load_decisions(review_store)
    assert len(log) == 2 and set(log["action"]) == {"accept_b"} and set(log["round"]) == {2}


def test_a_colleague_deciding_first_gives_a_conflict_in_the_card(review_store):
    at = open_page(session(), "ex01/q02")
    review.decide(review_store, "ex01/q02", 1, "answers", "accept_b", local("Bruno"), based_on=None)
    at.button(key="accept_a::ex01/q02|1|answers").click().run()
    assert "Conflict" in errors(at) and "Bruno" in errors(at)
    assert list(db.load_decisions(review_store)["reviewer"]) == ["Bruno"]


def test_blind_double_review_with_adjudication(review_store):
    review.set_reviewers(review_store, DEMO, 2, 2, set_by=local("lead"))
    anna, bruno = session("Anna"), session("Bruno")
    base = "ex01/q01|2|question_text"
    for at in (anna, bruno):
        open_page(at, "ex01/q01", 2)
        assert not any("sim-extractor" in m.value for m in at.markdown)  # extractors hidden
    order_anna = review.shown_order("ex01/q01", 2, "Anna", 2)
    order_bruno = review.shown_order("ex01/q01", 2, "Bruno", 2)
    anna.button(key=f"accept_a::{base}").click().run()
    assert not anna.exception, anna.exception
    # Bruno clicks the side showing the other extractor: a disagreement
    anna_action = review.true_action("A", order_anna)
    bruno_side = "B" if review.true_action("A", order_bruno) == anna_action else "A"
    bruno.run()
    assert not any("Anna" in m.value for m in bruno.markdown)  # he never sees her decision
    bruno.button(key=f"accept_{bruno_side.lower()}::{base}").click().run()
    said = toasts(bruno)  # the toast tells Bruno nothing of Anna's choice (no "disagree", no "promoted")
    assert "stay hidden" in said and "adjudicator" not in said and "promoted" not in said
    log = db.load_decisions(review_store, "ex01/q01", 2)
    assert list(log["shown_order"]) == [order_anna, order_bruno] and log.iloc[0]["action"] != log.iloc[1]["action"]
    carla = open_page(session("Carla", role="adjudicate"), "ex01/q01", 2)
    table = [d for d in carla.dataframe if len(d.value) == 2 and "reviewer" in d.value.columns]
    assert table and set(table[0].value["reviewer"]) == {"Anna", "Bruno"}
    carla.button(key=f"accept_a::{base}").click().run()
    assert not carla.exception, carla.exception
    assert "promoted as gold" in toasts(carla)
    assert list(db.load_decisions(review_store, "ex01/q01", 2)["role"]) == ["review", "review", "adjudicate"]


def test_agreement_and_audit_sections(review_store):
    for name in ("Anna", "Bruno"):
        review.decide(review_store, "ex01/q02", 1, "answers", "accept_a", local(name))
    at = session()
    at.segmented_control(key="review_section").set_value("agreement").run()
    assert not at.exception, at.exception
    assert any("Krippendorff" in m.value for m in at.markdown)
    assert any(d.value["Fields decided by 2+ reviewers"].tolist() == ["1", "1"] for d in at.dataframe
               if "Fields decided by 2+ reviewers" in d.value.columns)
    at.segmented_control(key="review_section").set_value("audit").run()
    assert not at.exception, at.exception
    assert at.get("download_button")


def test_reading_never_writes_a_store_without_pages_gets_no_demo(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from eduart_core.store.runs import ensure_dataset

    store = Store(tmp_path / "demo" / "eduart.duckdb")
    ensure_dataset(store, "demo", "Demo", "demo", simulated=True)
    monkeypatch.setenv("EDUART_DB", str(store.path))
    version = store.data_version()
    at = AppTest.from_file(f"../../{PAGE}", default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    assert any("No extracted pages yet" in i.value for i in at.info)
    assert store.data_version() == version and db.load_pages(store).empty


def test_suspect_key_queue_from_flag_to_corrected_key(keyed_store, monkeypatch):  # noqa: F811
    from eduart_core.store.scores import load_responses

    monkeypatch.setenv("EDUART_DB", str(keyed_store.path))
    at = session("Carla")
    at.query_params["suspect"] = "k07"
    at.segmented_control(key="review_section").set_value("suspects").run()
    assert not at.exception, at.exception
    assert any(line.value.startswith("Item k07") for line in at.subheader)
    flagged = [t for t in (c.value.replace("\\", "") for c in at.caption) if "flagged:" in t]
    assert flagged and "negative discrimination (r_pb below 0)" in flagged[0], flagged  # words, not codes
    assert not [c.value for c in at.caption if "negative_discrimination" in c.value.replace("\\", "")]
    assert "negative_discrimination" not in " ".join(at.dataframe[0].value["reasons"])
    key = at.radio(key="suspect_ed::k07::1::key")
    assert key.value == "B. una tela"
    key.set_value("A. un affresco")
    at.text_input(key="suspect_correct_note::k07").input("the fresco is right")
    at.button(key="suspect_correct::k07").click().run()
    assert not at.exception, at.exception
    assert "key corrected as version 2" in toasts(at) and "8 stored answer(s) re-scored" in toasts(at)
    assert get_item(keyed_store, KEYS_DATASET, "k07")["version"] == 2
    strong = load_responses(keyed_store, KEYS_DATASET, "k07")
    assert strong[strong["model"] == "Sim 0"].iloc[0]["strict_score"] == 1.0
    # confirming another flagged item clears it from the queue
    at.session_state["suspect_current"] = "k12"
    at.run()
    at.button(key="suspect_confirm::k12").click().run()
    assert "confirmed" in toasts(at)
    assert not any(line.value.startswith("Item k12") for line in at.subheader)


def test_inspector_links_to_the_queue_and_records_an_override(keyed_store, monkeypatch):  # noqa: F811
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from eduart_core.store.scores import load_scores

    monkeypatch.setenv("EDUART_DB", str(keyed_store.path))
    st.cache_data.clear()
    at = AppTest.from_file("../../app.py", default_timeout=120)
    at.run()
    at.query_params["item"] = "k07"
    at.session_state["insp_review"] = True  # the key checks run when their section is opened
    at.switch_page("pages/07_inspector.py").run()
    assert not at.exception, at.exception
    assert any("suspect-key queue" in w.value for w in at.warning)
    options = at.selectbox(key="ovr_response").options
    at.selectbox(key="ovr_response").set_value(next(o for o in options if o.startswith("Sim 0 · default")))
    at.number_input(key="ovr_score").set_value(1.0)
    at.text_input(key="ovr_reason").input("A is right; the key is wrong")
    at.text_input(key="ovr_name").input("Carla")
    at.button(key="FormSubmitter:ovr_form-Save override").click().run()
    assert not at.exception, at.exception
    assert any("Override saved" in s.value for s in at.success)
    scores = load_scores(keyed_store, dataset=KEYS_DATASET)
    row = scores[(scores["item_id"] == "k07") & (scores["model"] == "Sim 0")].iloc[0]
    assert row["score"] == 1.0 and row["overridden"]
    at.button(key="insp_open_suspect").click().run()
    assert not at.exception, at.exception
    assert at.session_state["review_section"] == "suspects"
    assert any(line.value.startswith("Item k07") for line in at.subheader)

"""The Psychometrics page's tabs (CTT, IRT, Distractors, DIF) and the inspector's item curve, under
AppTest on the demo store: each tab renders its charts, says how many examinees it rests on, and
draws the numbers of its named view."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
PAGE = "pages/2_psychometrics.py"


@pytest.fixture
def app(demo_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    monkeypatch.setenv("EDUART_DB", str(demo_db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page(PAGE).run()
    return at


def open_tab(at, label: str):
    at.session_state["psy_tab"] = label
    at.run()
    assert not at.exception, at.exception[0].value
    assert not at.error
    return at


def specs(at) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def numbers(value) -> np.ndarray:
    import base64

    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"])).astype(float)
    return np.asarray(value, dtype=float)


def test_ctt_tab_is_first_and_unchanged(app):
    assert [t.label for t in app.tabs] == ["CTT", "IRT", "Distractors", "DIF"]
    assert len(app.get("plotly_chart")) == 1  # only the open tab computes and draws
    assert any("difficulty p" in c.value for c in app.caption)


def test_irt_tab_draws_the_fit_and_states_the_panel(app, demo_db):
    from eduart_core import views
    from eduart_core.selection import Selection

    open_tab(app, "IRT")
    assert len(app.get("plotly_chart")) == 3  # Wright map, abilities, information curves
    assert any("8 examinees" in w.value and "exploratory" in w.value for w in app.warning)
    ranking = views.irt_abilities(views.Source.of(str(demo_db)), Selection(), examinees="models")
    abilities = specs(app)[1]["data"][0]
    assert sorted(numbers(abilities["x"]).round(6)) == sorted(ranking["ability"].round(6))
    app.radio(key="psy_irt_model").set_value("2pl").run()
    assert not app.exception
    assert any("2PL" in c.value for c in app.caption)


def test_distractor_and_dif_tabs_name_their_examinees(app):
    open_tab(app, "Distractors")
    assert any("8 examinees" in c.value for c in app.caption)
    assert len(app.get("plotly_chart")) == 1
    open_tab(app, "DIF")
    assert any("reference 'answer only' (8 examinees), focal 'answer + justification' (8)" in c.value
               for c in app.caption)
    assert any("confounded with source" in c.value for c in app.caption)
    assert len(app.get("plotly_chart")) == 2  # DIF per item, parallel forms


def test_inspector_shows_the_item_curve(app, demo_db):
    from eduart_core import views
    from eduart_core.selection import Selection

    items = views.irt_items(views.Source.of(str(demo_db)), Selection())
    fitted = items[items["informative"]]["item_id"].iloc[0]
    app.switch_page("pages/1_inspector.py")
    app.query_params["item"] = fitted
    app.session_state["insp_irt"] = True  # the curve is fitted when its section is opened
    app.run()
    assert not app.exception
    assert any("Difficulty" in c.value and "16 examinees" in c.value for c in app.caption)
    curve = [s for s in specs(app) if any(t.get("name") == "P(right)" for t in s["data"])]
    assert curve

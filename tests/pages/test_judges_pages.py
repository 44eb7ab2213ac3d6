"""Judge profiles on the dashboard (AppTest on the demo store): picked in the sidebar like any
profile, labelled with their version, warned about until calibrated, and explained in the Judges
section of the Scoring profiles page.
"""
from __future__ import annotations

import pytest

from tests.pages.test_app_pages import ROOT, assert_clean, leaderboard_bars, specs
from tests.reading import as_read

pytestmark = pytest.mark.slow

LENIENT = "judge:sim-judge-lenient/open-v1"
FAITHFUL = "judge:sim-judge-faithful/open-v1"


@pytest.fixture
def app(demo_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    monkeypatch.setenv("EDUART_DB", str(demo_db))
    views.clear_caches()
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)


def _warnings(at) -> str:
    return " ".join(w.value for w in at.warning)


def test_judge_profiles_are_offered_where_a_judge_scored_and_warned_about_until_calibrated(app, demo_db):
    from eduart_core import analysis, views
    from eduart_core.selection import Selection
    from eduart_core.store import Store
    from eduart_core.store.scores import load_scores

    app.run()
    assert app.radio(key="f_profile").options == ["strict", "paper"]  # the EduArt demo has no judge
    app.query_params["dataset"] = "demo-open"
    app.session_state["f_dataset"] = "demo-open"
    app.run()
    assert_clean(app)
    options = app.radio(key="f_profile").options
    assert options[:2] == ["strict", "paper"] and {FAITHFUL, LENIENT} <= {o.split(" ")[0] for o in options}
    app.radio(key="f_profile").set_value(LENIENT).run()
    assert_clean(app)
    assert "Judge not calibrated" in _warnings(app) and "severity" in _warnings(app)
    assert any("rubric open-v1@" in as_read(c.value) for c in app.caption)  # the version is shown
    # under a judge profile the bars are the judge-corrected macro averages (the graded slice moves them)
    corrected = views.run_view("judge_corrected", views.Source.of(str(demo_db)),
                               Selection(dataset="demo-open", profile=LENIENT), judge=LENIENT)
    expected = corrected[corrected["format"] == "macro"].set_index("model")["corrected"]
    judge_only = analysis.macro_scores(load_scores(Store(demo_db), profile=LENIENT, dataset="demo-open"))
    bars = leaderboard_bars(app)
    assert bars == pytest.approx({m: round(100 * v, 1) for m, v in expected.items()}, abs=0.051)
    assert bars != pytest.approx({m: round(100 * v, 1) for m, v in judge_only.set_index("model")["macro"].items()},
                                 abs=0.051)
    assert any("judge-corrected" in as_read(c.value) for c in app.caption)
    app.radio(key="f_profile").set_value(FAITHFUL).run()
    assert_clean(app)
    # the faithful judge agrees, but its severity interval reaches past the gate: still warned, saying why
    assert "Judge not calibrated" in _warnings(app) and "95% interval" in as_read(_warnings(app))


def test_the_profiles_page_has_a_judges_section(app):
    app.query_params["dataset"] = "demo-open"
    app.session_state["f_dataset"] = "demo-open"
    app.run()
    app.switch_page("pages/09_profiles.py").run()
    assert_clean(app)
    assert any(h.value == "Judges" for h in app.subheader)
    charts = specs(app)
    assert len(charts) >= 3  # profile impact, judge calibration, severities
    calibration = charts[1]["data"][1]  # the judges' alpha
    assert len(calibration["y"]) == 3
    tables = " ".join(str(d.value.columns.tolist()) for d in app.dataframe)
    assert "severity" in tables and "human_points" in tables
    assert "corrected" in tables and "n_human" in tables  # judge-corrected scores
    captions = " ".join(as_read(c.value) for c in app.caption)
    assert "prediction-powered inference" in captions and "95% interval within" in captions

"""Real browser: a respondent sits an adaptive exam, closes the tab, comes back with the same link and goes on.

The session is adaptive on the demo's item bank version 1 (set up through the library, as the Sessions
section does): each answer brings the next item by the same rule as `run --adaptive`, the page says
"about N questions left", the form is in the store, so a closed tab loses nothing, and at the stop the
respondent's ability stands on the bank's scale beside the eight simulated models (the organiser's ranking).
"""
from __future__ import annotations

import re

import pytest

from tests.browser.test_exam_browser import _answer_on_screen
from tests.browser_kit import SHOTS, module_fixtures, problems, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAME = "Chiara Esposito"


def build_adaptive_store(path):
    from eduart_core import team
    from eduart_core.cli import main
    from eduart_core.demo import build_benchmark, build_demo
    from eduart_core.humans import adaptive_exam
    from eduart_core.store import Store

    store = Store(path)
    build_demo(store, force=True, builders=(build_benchmark,))
    assert main(["bank", "--db", str(path), "--dataset", "demo"]) == 0
    adaptive_exam.create_adaptive_session(store, "demo", group="student", bank=1, target_se=0.45, max_items=8,
                                          title="Adaptive 4B", actor=team.local("Rita Researcher"))
    return path


server, browser = module_fixtures(build_adaptive_store, "adaptive_exam")


def _start(browser, url):
    page = browser.new_page(viewport={"width": 1400, "height": 2200})
    page.goto(f"{url}/exam", wait_until="domcontentloaded", timeout=60_000)
    settle(page)
    name = page.get_by_label("Your name", exact=False)
    name.fill(NAME)
    name.press("Enter")
    settle(page)
    page.get_by_role("button", name="Start or resume").click()
    settle(page)
    return page


def _sit(page, steps: int, first: int) -> int:
    """Answer up to ``steps`` items from item ``first``; returns the items answered."""
    done = 0
    for step in range(steps):
        text = page.locator("[data-testid=stMain]").inner_text()
        if "Thank you" in text:
            break
        assert f"Item {first + step}" in text and re.search(r"about \d+ questions? left", text), text[:400]
        assert "Sim " not in text and "Answer key" not in text
        _answer_on_screen(page)
        page.get_by_role("button", name="Submit answer").click()
        settle(page)
        assert not problems(page), problems(page)
        done += 1
    return done


def test_an_adaptive_exam_survives_a_closed_tab_and_ends_on_the_models_scale(server, browser):
    from eduart_core import views
    from eduart_core.selection import Selection
    from eduart_core.store import Store
    from eduart_core.store.adaptive import load_adaptive_runs, load_trajectory

    url, db = server
    page = _start(browser, url)
    first = _sit(page, 3, 1)
    assert first == 3
    page.close()  # the browser tab closes mid-exam
    page = _start(browser, url)  # the same link, the same name
    try:
        rest = _sit(page, 10, 4)
        text = page.locator("[data-testid=stMain]").inner_text()
        assert "Thank you" in text, text[:400]
        page.screenshot(path=str(SHOTS / "adaptive_exam_finished.png"), full_page=True)
        page.get_by_text("Sessions (researchers)").click()  # the organiser (single-machine mode: every role)
        settle(page, charts=True)
        main = page.locator("[data-testid=stMain]").inner_text()
        assert "1 adaptive run(s) and 8 model(s) that answered the bank's items" in main, main[-1500:]
        assert page.locator(".st-key-chart_adaptive_wright_map, [data-testid=stPlotlyChart]").count() >= 1
        page.screenshot(path=str(SHOTS / "adaptive_exam_organiser.png"), full_page=True)
    finally:
        page.close()
    runs = load_adaptive_runs(Store(db), "demo")
    assert len(runs) == 1
    row = runs.iloc[0]
    steps = load_trajectory(Store(db), row["run_id"])
    assert len(steps) == first + rest == int(row["n_items"]) <= 8 and steps["item_id"].is_unique
    assert row["stop_reason"] in ("target_se", "max_items")
    board = views.adaptive_ranking(views.Source.of(str(db)), Selection(dataset="demo"))
    assert row["run_id"] in set(board["examinee"]) and (board["kind"] == "full, 67 items").sum() == 8

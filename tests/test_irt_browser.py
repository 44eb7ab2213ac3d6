"""Real browser: the Psychometrics tabs and the inspector's item curve render (Playwright + chromium).

AppTest proves the scripts run; this proves the lazy tabs switch and draw in a browser.
"""
from __future__ import annotations

import pytest

from tests.browser_kit import SHOTS, chromium, problems, settle, store_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from tests.conftest import build_dashboard_store

    with store_server(tmp_path_factory, build_dashboard_store, "irt-browser") as served:
        yield served


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def test_psychometrics_tabs_switch_and_draw(server, browser):
    url, _ = server
    page = browser.new_page(viewport={"width": 1400, "height": 3200})
    try:
        page.goto(f"{url}/psychometrics", wait_until="domcontentloaded", timeout=60_000)
        settle(page)
        for tab, charts in (("IRT", 3), ("Distractors", 1), ("DIF", 2)):
            page.get_by_role("tab", name=tab).click()
            settle(page)
            page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {charts}",
                                   timeout=60_000)
            page.wait_for_timeout(500)
            assert not problems(page), (tab, problems(page)[0][:300])
            assert page.get_by_text("examinees", exact=False).count() >= 1
            page.screenshot(path=str(SHOTS / f"psychometrics_{tab.lower()}.png"), full_page=True)
    finally:
        page.close()


def test_inspector_draws_the_item_curve(server, browser):
    from eduart_core import views
    from eduart_core.selection import Selection

    url, db = server
    items = views.irt_items(views.Source.of(str(db)), Selection())
    item_id = str(items[items["informative"]]["item_id"].iloc[0])
    page = browser.new_page(viewport={"width": 1400, "height": 3000})
    try:
        page.goto(f"{url}/inspector?item={item_id}", wait_until="domcontentloaded", timeout=60_000)
        settle(page)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        assert page.get_by_text("Item response curve", exact=False).count() >= 1
        assert page.get_by_text("the ability at which the chance is 50%", exact=False).count() >= 1
        assert not problems(page)
        page.screenshot(path=str(SHOTS / "inspector_item_curve.png"), full_page=True)
    finally:
        page.close()

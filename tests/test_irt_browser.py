"""Real browser: the Psychometrics tabs and the inspector's item curve render (Playwright + chromium).

AppTest proves the scripts run; this proves the lazy tabs switch and draw in a browser.
"""
from __future__ import annotations

import pytest

from tests.test_browser import SHOTS, browser, server  # noqa: F401  (module fixtures reused)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
READY = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def _settle(page) -> None:
    page.wait_for_selector(READY, timeout=90_000)
    page.wait_for_timeout(500)
    page.wait_for_selector(READY, timeout=90_000)


def _problems(page) -> list[str]:
    return (page.locator('[data-testid="stException"]').all_inner_texts()
            + page.locator('[data-testid="stAlertContentError"]').all_inner_texts())


def test_psychometrics_tabs_switch_and_draw(server, browser):  # noqa: F811
    url, _ = server
    page = browser.new_page(viewport={"width": 1400, "height": 3200})
    try:
        page.goto(f"{url}/psychometrics", wait_until="domcontentloaded", timeout=60_000)
        _settle(page)
        for tab, charts in (("IRT", 3), ("Distractors", 1), ("DIF", 2)):
            page.get_by_role("tab", name=tab).click()
            _settle(page)
            page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {charts}",
                                   timeout=60_000)
            page.wait_for_timeout(500)
            assert not _problems(page), (tab, _problems(page)[0][:300])
            assert page.get_by_text("examinees", exact=False).count() >= 1
            page.screenshot(path=str(SHOTS / f"psychometrics_{tab.lower()}.png"), full_page=True)
    finally:
        page.close()


def test_inspector_draws_the_item_curve(server, browser):  # noqa: F811
    from eduart_core import views
    from eduart_core.selection import Selection

    url, db = server
    items = views.irt_items(views.Source.of(str(db)), Selection())
    item_id = str(items[items["informative"]]["item_id"].iloc[0])
    page = browser.new_page(viewport={"width": 1400, "height": 3000})
    try:
        page.goto(f"{url}/inspector?item={item_id}", wait_until="domcontentloaded", timeout=60_000)
        _settle(page)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        assert page.get_by_text("Item response curve", exact=False).count() >= 1
        assert page.get_by_text("the ability at which the chance is 50%", exact=False).count() >= 1
        assert not _problems(page)
        page.screenshot(path=str(SHOTS / "inspector_item_curve.png"), full_page=True)
    finally:
        page.close()

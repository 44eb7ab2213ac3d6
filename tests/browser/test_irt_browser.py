"""Real browser: the Psychometrics tabs and the inspector's item curve render (Playwright + chromium).

AppTest proves the scripts run; this proves the lazy tabs switch and draw in a browser.
"""
from __future__ import annotations

import pytest

from tests.browser_kit import SHOTS, dashboard_store, module_fixtures, opened, problems, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]


server, browser = module_fixtures(dashboard_store, "irt-browser")


def test_psychometrics_tabs_switch_and_draw(server, browser):
    url, _ = server
    with opened(browser, f"{url}/psychometrics", height=3200) as page:
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


def test_inspector_draws_the_item_curve(server, browser):
    from eduart_core import views
    from eduart_core.selection import Selection

    url, db = server
    items = views.irt_items(views.Source.of(str(db)), Selection())
    item_id = str(items[items["informative"]]["item_id"].iloc[0])
    with opened(browser, f"{url}/inspector?item={item_id}", height=3000) as page:
        settle(page)
        page.get_by_text("Item response curve", exact=False).first.click()  # fitted when opened
        settle(page)
        page.get_by_text("the ability at which the chance is 50%", exact=False).first.wait_for(timeout=60_000)
        assert page.get_by_text("the ability at which the chance is 50%", exact=False).count() >= 1
        assert not problems(page)
        page.screenshot(path=str(SHOTS / "inspector_item_curve.png"), full_page=True)

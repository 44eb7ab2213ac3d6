"""Real browser (Playwright + Debian chromium): the review workbench opens with the page
screenshot readable, about 700 px wide on a 1440 px screen (not a thumbnail beside the cards)."""
from __future__ import annotations

import pytest

from tests.browser_kit import dashboard_store, module_fixtures, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

server, browser = module_fixtures(dashboard_store, "review-shot", with_db=False)


def test_the_screenshot_opens_about_700_px_wide_on_a_1440_px_screen(server, browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    try:
        page.goto(f"{server}/review", wait_until="domcontentloaded", timeout=60_000)
        settle(page, pause=250)
        box = page.get_by_label("Your name (kept for this browser session and stored with every decision)")
        box.fill("Anna")
        box.press("Enter")
        settle(page, pause=250)
        shot = page.locator('[data-testid="stImage"] img').first
        shot.wait_for(timeout=60_000)
        width = shot.bounding_box()["width"]
        assert 620 <= width <= 820, f"the screenshot is {width:.0f} px wide"
    finally:
        context.close()

"""Real browser: `streamlit run app.py` driven by Playwright with Debian's chromium.

AppTest proves the scripts run; only a browser proves the pages render. Every page is opened,
the test waits until Streamlit has finished running the script, asserts that no exception or
error box is shown, and saves a screenshot under test-output/screenshots/ for a human to look at.
Mandatory when EDUART_REQUIRE_BROWSER=1 (CI); skipped locally only when chromium is missing.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from pages.ui.menu import PAGES as APP_PAGES
from tests.browser_kit import (
    EXCEPTION,
    READY,
    SHOTS,
    dashboard_store,
    module_fixtures,
    opened,
    problems,
    settle,
    streamlit_server,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Every page of the menu, by its URL path (the Overview is the root).
PAGES = ["" if key == "overview" else key for key in APP_PAGES]


server, browser = module_fixtures(dashboard_store, "browser")


def _open(browser, url: str, shot: Path, *, charts: bool = True) -> list[str]:
    """Open ``url``, let it settle, save a screenshot; return what is wrong on the page."""
    page = browser.new_page(viewport={"width": 1400, "height": 2600})
    try:
        page.goto(url, wait_until="domcontentloaded", timeout=60_000)
        settle(page, charts=charts)
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot), full_page=True)
        menu = " ".join(page.locator('[data-testid="stSidebarNav"]').all_inner_texts())
        # Streamlit's automatic page list (it shows the helper module) instead of our menu
        wrong_menu = [f"wrong menu: {menu}"] if "common" in menu.lower() or "Overview" not in menu else []
        return problems(page) + wrong_menu
    finally:
        page.close()


@pytest.mark.parametrize("slug", PAGES)
def test_every_page_renders_in_a_real_browser(server, browser, slug):
    """A page that does not apply to the demo dataset (the menu hides it) opens the line that says why."""
    from eduart_core import views

    server, db = server
    why = APP_PAGES[slug or "overview"].not_applicable(views.study_features(views.Source.of(str(db)), "demo"))
    found = _open(browser, f"{server}/{slug}", SHOTS / f"{slug or 'overview'}.png", charts=why is None)
    assert not found, f"page /{slug} shows an error: {found[0][:400]}"
    assert (SHOTS / f"{slug or 'overview'}.png").stat().st_size > 10_000


@pytest.mark.parametrize("link,shot", [
    ("formats?dataset=eduart2026&present=1", "presentation_reference_formats.png"),
    ("?dataset=eduart2026", "reference_overview.png"),
    ("motivation?dataset=eduart2026", "reference_motivation.png"),
    ("motivation?present=1&profile=paper", "presentation_motivation_paper.png"),
])
def test_shared_links_restore_filters_and_presentation_mode(server, browser, link, shot):
    server, _ = server
    found = _open(browser, f"{server}/{link}", SHOTS / shot)
    assert not found, found[0][:400]


def test_item_deep_link_opens_the_item(server, browser):
    from eduart_core.store import Store
    from eduart_core.store.items import load_items

    server, db = server
    item_id = str(load_items(Store(db), "demo")["item_id"].iloc[2])
    with opened(browser, f"{server}/inspector?item={item_id}") as page:
        page.wait_for_timeout(500)
        assert page.get_by_text(f"Item {item_id}", exact=False).count() >= 1
        page.screenshot(path=str(SHOTS / "inspector_item.png"), full_page=True)


def test_clicking_a_point_in_the_scatter_opens_that_item(server, browser):
    server, _ = server
    with opened(browser, f"{server}/psychometrics") as page:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
        points = page.locator(".js-plotly-plot .scatterlayer .trace .points path")
        assert points.count() > 10
        points.first.click(force=True)
        page.wait_for_url(lambda url: "/inspector" in url and "item=" in url, timeout=30_000)
        page.wait_for_selector(READY, timeout=90_000)
        item_id = page.url.split("item=")[1].split("&")[0]
        assert page.get_by_text(f"Item {item_id}", exact=False).count() >= 1


def test_a_deep_link_as_first_request_opens_that_page_and_builds_the_demo(browser, tmp_path):
    """A shared link opened on a freshly started server with no store yet: the first session goes
    through Streamlit's pages-folder menu, yet the link opens its own page in the app's menu (no
    "Page not found" notice, no list of the folder's files) after the first-start build."""
    db = tmp_path / "cold" / "eduart.duckdb"
    with streamlit_server(db, tmp_path / "streamlit.log") as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        try:
            page.goto(f"{url}/review", wait_until="domcontentloaded", timeout=60_000)
            settle(page)
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / "cold_deep_link_review.png"))
            assert page.locator('[role="dialog"]').count() == 0, page.locator('[role="dialog"]').all_inner_texts()
            assert page.get_by_role("heading", name="Review studio").count() == 1
            menu = page.inner_text('[data-testid="stSidebarNav"]')
            assert "Item inspector" in menu and "common" not in menu.lower(), menu
        finally:
            page.close()
        found = _open(browser, f"{url}/formats", SHOTS / "cold_second_link_formats.png")
    assert not found, found[0][:400]
    assert db.exists()  # the first-start build ran although the first page asked for was not the overview


@pytest.mark.parametrize("link,shot", [
    ("tasks?dataset=demo-vqa", "tasks_demo_vqa.png"),
    ("tasks?dataset=demo-muse", "tasks_demo_muse.png"),
    ("inspector?dataset=demo-muse&item=muse-051", "inspector_jigsaw.png"),
    ("inspector?dataset=demo-muse&item=muse-001", "inspector_dialogue_boxes.png"),
    ("tasks?dataset=vqart2025", "tasks_vqart2025.png"),
    ("tasks?dataset=muse2026&present=1", "presentation_tasks_muse2026.png"),
    ("images?dataset=demo-vqa", "images_demo_vqa.png"),
])
def test_study_pages_render_in_a_real_browser(server, browser, link, shot):
    server, _ = server
    found = _open(browser, f"{server}/{link}", SHOTS / shot)
    assert not found, found[0][:400]


def test_tasks_page_sections_and_checks_in_a_real_browser(server, browser):
    """The checks are told in words, and each section of the page draws when chosen."""
    server, _ = server
    with opened(browser, f"{server}/tasks?dataset=vqart2025", height=2400) as page:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
        assert page.locator('[role="dialog"]').count() == 0  # a deep link opens its page, no "not found" notice
        assert page.get_by_text("13 of 14 models", exact=False).count() >= 1
        assert page.locator(".js-plotly-plot .heatmaplayer, .js-plotly-plot .hm").count() >= 1
        page.get_by_text("All checks", exact=True).click()
        page.wait_for_timeout(300)
        page.wait_for_selector(READY, timeout=90_000)
        assert page.get_by_text("Instance Localization", exact=False).count() >= 1
        for section in ("Correlations", "Families"):
            page.get_by_text(section, exact=True).click()
            page.wait_for_timeout(300)
            page.wait_for_selector(READY, timeout=90_000)
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
            assert not page.locator(EXCEPTION).count(), section
        page.screenshot(path=str(SHOTS / "tasks_vqart2025_families.png"), full_page=True)


def test_clicking_a_matrix_mark_opens_that_response(server, browser):
    """The failure explorer: a mark in the items x (model, condition) matrix opens that answer."""
    from urllib.parse import parse_qs, urlparse

    server, _ = server
    with opened(browser, f"{server}/inspector", height=2400) as page:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
        marks = page.locator(".js-plotly-plot .scatterlayer .trace").last.locator(".points path")
        assert marks.count() > 0
        marks.nth(marks.count() // 2).click(force=True)
        page.wait_for_url(lambda url: "open=" in url, timeout=30_000)
        page.wait_for_selector(READY, timeout=90_000)
        query = parse_qs(urlparse(page.url).query)
        condition, model = query["open"][0].split(":", 1)
        heading = page.locator("h5", has_text=model)
        heading.first.wait_for(timeout=30_000)
        assert condition in heading.first.inner_text()
        assert page.get_by_text(f"Item {query['item'][0]}", exact=False).count() >= 1
        assert page.get_by_text("given (paper)").count() >= 1  # both profiles side by side
        page.screenshot(path=str(SHOTS / "explorer_matrix_click.png"), full_page=True)


def test_compare_two_models_in_the_browser(server, browser):
    server, _ = server
    a, b = "Sim A (strong recogniser)", "Sim H (format-fragile)"
    link = f"{server}/inspector?view=compare&a={a}&b={b}&only=a_right_b_wrong&condition=motivation"
    found = _open(browser, link.replace(" ", "%20"), SHOTS / "explorer_compare.png", charts=False)
    assert not found, found[0][:400]
    with opened(browser, link.replace(" ", "%20"), height=2400) as page:
        page.get_by_text("A right, B wrong on", exact=False).first.wait_for(timeout=30_000)
        assert page.get_by_text("Justification:", exact=False).count() >= 2  # both sides, motivation condition


def test_the_inspectors_filter_change_in_the_browser_prints_its_time(server, browser, capsys):
    """The browser's own time for the inspector's commonest interaction: from choosing another
    "Show" filter to the page settling (the run done, the URL naming the filter), on the page's
    own clock (`performance.now()`) beside the test's. Printed in the test's output for the record
    (benchmarks, not tests, judge speed: `bench pages`); the test asserts only that the change lands."""
    import time

    from eduart_core.analysis import ITEM_FILTERS

    server, _ = server
    with opened(browser, f"{server}/inspector", height=2400) as page:
        settle(page, charts=True)
        timings = []
        for name in ("disagree", "all_wrong", "all"):
            box = page.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text("Show", exact=True))
            box.first.click()
            option = page.get_by_role("option", name=ITEM_FILTERS[name], exact=True)
            t0, b0 = time.perf_counter(), page.evaluate("performance.now()")
            option.click()
            wanted = f"filter={name}" if name != "all" else None
            page.wait_for_url(lambda url, w=wanted: (w in url) if w else "filter=" not in url, timeout=120_000)
            page.wait_for_selector(READY, timeout=120_000)
            browser_s = (page.evaluate("performance.now()") - b0) / 1000
            timings.append((name, browser_s, time.perf_counter() - t0))
            settle(page, pause=250)
        assert not problems(page)
    with capsys.disabled():
        print("\ninspector filter change in the browser (choice to settled page; the browser's clock, the "
              f"test's in brackets; load average {os.getloadavg()[0]:.1f}): "
              + ", ".join(f"{name} {browser_s:.2f} s ({seconds:.2f} s)" for name, browser_s, seconds in timings),
              flush=True)

"""The first seconds of a freshly started server, in a real browser (Debian chromium, Playwright).

Until a session's script has called ``st.navigation``, Streamlit serves a folder named ``pages``
next to the main script as its own menu, one entry per file name ("overview", "tasks", ...
"formats"; helper modules would be there too outside `pages/ui`). A person opening a cold server must never see that list: the first paint is the
studio's own menu or a neutral loading state. Each test starts its own server (a cold process)
and records, from before the page's first script runs, every menu entry the page ever shows
(a MutationObserver installed with the page), then asserts on the whole record. The same observer
records every dialog the page ever shows: Streamlit's "Page not found" dialog must never appear,
not even for an instant on the first request of a cold server (app.py `serve_our_menu_only`).
"""
from __future__ import annotations

import pytest

from tests.browser_kit import SHOTS, chromium, dashboard_store, settle, streamlit_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Entries of Streamlit's automatic list that are not the studio's pages (file names).
RAW_ENTRIES = {"app", "common", "menu", "overview", "inspector", "runs", "review", "tasks", "formats"}

#: Installed before any script of the page runs: every text a sidebar or top menu entry ever shows.
RECORD_MENU = r"""
window.__menuSeen = [];
const note = () => {
  for (const el of document.querySelectorAll(
      '[data-testid="stSidebarNavLink"], [data-testid="stSidebarNav"] a, [data-testid="stTopNavLink"]')) {
    const lines = (el.innerText || '').trim().split('\n');
    const text = lines[lines.length - 1].trim();  // the title, after the icon's ligature name
    if (text && !window.__menuSeen.includes(text)) window.__menuSeen.push(text);
  }
};
window.__dialogsSeen = [];
const noteDialogs = () => {
  for (const el of document.querySelectorAll('[role="dialog"]')) {
    const text = (el.innerText || '').trim();
    if (text && !window.__dialogsSeen.includes(text)) window.__dialogsSeen.push(text);
  }
};
new MutationObserver(note).observe(document, {subtree: true, childList: true, characterData: true});
new MutationObserver(noteDialogs).observe(document, {subtree: true, childList: true, characterData: true});
"""


def seen_menu(page) -> list[str]:
    """Every menu entry text the page has shown since it started loading."""
    return page.evaluate("window.__menuSeen")


def open_recording(browser, url: str):
    """A page of ``browser`` that records its menu entries from the first paint on, opened on ``url``."""
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    page.add_init_script(RECORD_MENU)
    page.goto(url, wait_until="commit", timeout=60_000)
    return page


def seen_dialogs(page) -> list[str]:
    """Every dialog text the page has shown since it started loading (even one closed again)."""
    return page.evaluate("window.__dialogsSeen")


def raw(entries: list[str]) -> list[str]:
    return [e for e in entries if e in RAW_ENTRIES]


def test_a_cold_server_never_shows_the_raw_page_list(tmp_path):
    db = dashboard_store(tmp_path / "store" / "eduart.duckdb")
    with streamlit_server(db, tmp_path / "streamlit.log") as url, chromium() as browser:
        page = open_recording(browser, url)
        settle(page, charts=True)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "cold_first_paint.png"))
        entries = seen_menu(page)
        assert not raw(entries), f"the raw page list was shown: {entries}"
        assert "Overview" in entries and "Item inspector" in entries, entries
        assert not seen_dialogs(page), seen_dialogs(page)


def test_a_cold_servers_first_request_for_an_unknown_path_never_flashes_page_not_found(tmp_path):
    """The very first request of a fresh server is a link to a path no page has: Streamlit's folder
    mode (before any `st.navigation`) would answer it with its "Page not found" dialog, which the
    next run then closes (seen for an instant only, so the record is taken from the first paint).
    The studio's own line and the Overview answer instead, under the studio's menu."""
    db = dashboard_store(tmp_path / "store" / "eduart.duckdb")
    with streamlit_server(db, tmp_path / "streamlit.log") as url, chromium() as browser:
        page = open_recording(browser, f"{url}/nosuchpage")
        settle(page)
        assert not seen_dialogs(page), f"a dialog was shown on the cold first request: {seen_dialogs(page)}"
        entries = seen_menu(page)
        assert not raw(entries) and "Overview" in entries, entries
        main = page.inner_text('[data-testid="stMain"]')
        assert "No page 'nosuchpage': showing the Overview instead." in main, main[:800]


def test_a_cold_team_server_shows_the_sign_in_and_then_the_studio_menu_only(tmp_path):
    """Team mode ([auth] from $EDUART_SECRETS, the local OIDC provider): the first paint precedes the
    sign-in gate, and after signing in the first document again shows only the studio's menu."""
    import os
    import signal

    from tests.browser.test_team_signin_browser import SUBJECT, _provider
    from tests.browser_kit import free_port, serve

    db = dashboard_store(tmp_path / "store" / "eduart.duckdb")
    oidc_port = free_port()
    provider = _provider(oidc_port, tmp_path / "oidc.log")
    secrets = tmp_path / "team-secrets.toml"
    secrets.write_text(
        "[auth]\n"
        'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        'cookie_secret = "a-test-cookie-secret-that-is-long-enough-0123456789"\n'
        'client_id = "eduart-studio"\n'
        'client_secret = "eduart-studio-secret"\n'
        f'server_metadata_url = "http://127.0.0.1:{oidc_port}/.well-known/openid-configuration"\n',
        encoding="utf-8")
    try:
        with serve("app.py", tmp_path / "streamlit.log", env={"EDUART_DB": str(db), "EDUART_SECRETS": str(secrets)}) \
                as url, chromium() as browser:
            page = browser.new_context(viewport={"width": 1400, "height": 1400}).new_page()
            page.add_init_script(RECORD_MENU)
            page.goto(url, wait_until="commit", timeout=60_000)
            settle(page, pause=300)
            assert page.get_by_text("Sign in to use the studio").count() == 1
            gate = seen_menu(page)
            assert not gate, f"the sign-in page showed a menu: {gate}"
            assert not seen_dialogs(page), seen_dialogs(page)
            stray = page.context.new_page()  # a link to a path no page has, before signing in: the gate only
            stray.add_init_script(RECORD_MENU)
            stray.goto(f"{url}/nosuchpage", wait_until="commit", timeout=60_000)
            settle(stray, pause=300)
            assert stray.get_by_text("Sign in to use the studio").count() == 1
            assert not seen_dialogs(stray) and not seen_menu(stray), (seen_dialogs(stray), seen_menu(stray))
            stray.close()
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_selector("input[name=sub]", timeout=60_000)  # the provider's login form
            page.fill("input[name=sub]", SUBJECT)
            page.get_by_role("button", name="Authorize").click()
            page.wait_for_url(f"{url}/**", timeout=60_000)
            settle(page, pause=400)
            entries = seen_menu(page)
            assert not raw(entries), f"the raw page list was shown after sign-in: {entries}"
            assert "Review studio" in entries, entries
            assert not seen_dialogs(page), seen_dialogs(page)
    finally:
        os.killpg(provider.pid, signal.SIGTERM)
        provider.wait(timeout=10)


def test_first_build_keeps_one_menu_and_links_say_what_they_found(tmp_path):
    """No store yet: a link to a page the demo does not offer (Tasks and dimensions) waits for the
    first build with no menu, then opens that page with its reason; the menu never lists it. A link
    to a path no page has then shows one line and the Overview, not Streamlit's "Page not found"."""
    db = tmp_path / "cold" / "eduart.duckdb"
    with streamlit_server(db, tmp_path / "streamlit.log") as url, chromium() as browser:
        page = open_recording(browser, f"{url}/tasks")
        page.wait_for_selector('[data-testid="stSidebarNav"]', timeout=300_000)  # after the first build
        settle(page)
        page.screenshot(path=str(SHOTS / "cold_first_build_tasks.png"))
        entries = seen_menu(page)
        assert "Tasks and dimensions" not in entries and not raw(entries), entries
        assert "Overview" in entries, entries
        assert page.get_by_role("heading", name="Tasks and dimensions").count() == 1
        assert page.get_by_text("has no tasks or reasoning dimensions", exact=False).count() == 1
        assert page.locator('[role="dialog"]').count() == 0, page.locator('[role="dialog"]').all_inner_texts()
        page.close()

        page = open_recording(browser, f"{url}/nosuchpage?dataset=nosuchdata")
        settle(page)
        page.screenshot(path=str(SHOTS / "unknown_page_link.png"))
        assert page.locator('[role="dialog"]').count() == 0, page.locator('[role="dialog"]').all_inner_texts()
        main = page.inner_text('[data-testid="stMain"]')
        assert "No page 'nosuchpage': showing the Overview instead." in main, main[:800]
        assert "No dataset 'nosuchdata' in this store: showing dataset demo instead." in main, main[:800]
        assert page.get_by_role("heading", name="Key findings").count() == 1
        # a chart says what it shows: its title is drawn on the page
        page.wait_for_selector(".js-plotly-plot .main-svg .gtitle", timeout=60_000)

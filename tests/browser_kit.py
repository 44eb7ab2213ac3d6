"""Shared plumbing of the real-browser tests: a `streamlit run` on a free port, Debian's chromium
through Playwright, and the waits and error checks every page test needs.

One place for it so that a change to how Streamlit signals "done" (the READY selector), how the
server is started or stopped, or how chromium is launched is made once for every browser test.
Each test module keeps its own store builder and its own (two-line) fixtures.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "test-output" / "screenshots"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync"]
#: Streamlit has finished running the page's script (no run in progress).
READY = '[data-testid="stApp"][data-test-script-state="notRunning"]'
EXCEPTION = '[data-testid="stException"]'
ERROR_BOX = '[data-testid="stAlertContentError"]'


def require_browser() -> None:
    """Skip when chromium is missing, unless CI demands browser tests (EDUART_REQUIRE_BROWSER=1): then fail."""
    if os.path.exists(CHROMIUM):
        return
    if os.environ.get("EDUART_REQUIRE_BROWSER") == "1":
        pytest.fail(f"EDUART_REQUIRE_BROWSER=1 but {CHROMIUM} is missing (apt-get install chromium)")
    pytest.skip(f"{CHROMIUM} not installed and EDUART_REQUIRE_BROWSER is unset: browser test skipped locally")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def chromium() -> Iterator:
    """A headless chromium (Playwright), closed on exit; skips or fails first when it is missing."""
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def goto(page, url: str, timeout: int = 90_000) -> None:
    """Open ``url`` and wait until Streamlit's first run of the page has finished."""
    page.goto(url, wait_until="domcontentloaded", timeout=60_000)
    page.wait_for_selector(READY, timeout=timeout)


@contextmanager
def opened(browser, url: str, *, height: int = 2000) -> Iterator:
    """A new page of ``browser`` on ``url`` once Streamlit has run it (see `goto`); closed on exit."""
    page = browser.new_page(viewport={"width": 1400, "height": height})
    try:
        goto(page, url)
        yield page
    finally:
        page.close()


def settle(page, *, pause: int = 500, charts: bool = False) -> None:
    """Wait until Streamlit has finished the run a visit, click or key started: a pause in which the run
    begins, idle, a pause in which a follow-up rerun may begin, idle again, a pause for the last elements
    to mount; then, when asked, until the page's plotly charts are drawn."""
    page.wait_for_timeout(pause)
    page.wait_for_selector(READY, timeout=120_000)
    page.wait_for_timeout(pause)
    page.wait_for_selector(READY, timeout=120_000)
    page.wait_for_timeout(pause)
    if charts and page.locator(".js-plotly-plot").count():
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        page.wait_for_timeout(pause)


def problems(page, *, error_boxes: bool = True) -> list[str]:
    """Texts of the exceptions (and, unless told otherwise, the error boxes) the page shows."""
    found = page.locator(EXCEPTION).all_inner_texts()
    return found + page.locator(ERROR_BOX).all_inner_texts() if error_boxes else found


def _wait_healthy(url: str) -> bool:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return True
        except OSError:
            time.sleep(0.3)
    return False


@contextmanager
def serve(script: Path | str, log_path: Path, *, cwd: Path = ROOT, env: dict[str, str] | None = None,
          script_args: Sequence[str] = ()) -> Iterator[str]:
    """`streamlit run script` on a free port of 127.0.0.1; yields its URL once healthy; ended by PID on exit
    (its whole process group, SIGKILL when SIGTERM is not enough)."""
    port = free_port()
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", **(env or {})}
    command = [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    if script_args:
        command += ["--", *script_args]
    with open(log_path, "w") as log:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}"
            if not _wait_healthy(url):
                pytest.fail("streamlit did not start within 60 s")
            yield url
        finally:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)


@contextmanager
def streamlit_server(db: Path, log_path: Path) -> Iterator[str]:
    """The app (`streamlit run app.py`) over the store ``db``; the first request may be any link."""
    with serve("app.py", log_path, env={"EDUART_DB": str(db)}) as url:
        yield url


def dashboard_store(path: Path) -> Path:
    """The demo store (``tests.conftest.build_dashboard_store``), imported when a server needs it."""
    from tests.conftest import build_dashboard_store

    return build_dashboard_store(path)


@contextmanager
def store_server(tmp_path_factory, build: Callable[[Path], Path], name: str) -> Iterator[tuple[str, Path]]:
    """The app over a store made by ``build`` in a fresh tmp folder ``name``: yields (url, db path).
    Module fixtures wrap it: `with store_server(tmp_path_factory, builder, "x") as (url, db): yield ...`."""
    require_browser()
    db = build(tmp_path_factory.mktemp(name) / "eduart.duckdb")
    with streamlit_server(db, tmp_path_factory.mktemp("log") / "streamlit.log") as url:
        yield url, db


def module_fixtures(build: Callable[[Path], Path], name: str, *, with_db: bool = True) -> tuple:
    """The two module-scoped fixtures of a browser test module, for ``server, browser = module_fixtures(...)``:
    ``server`` is the app over a store made by ``build`` in tmp folder ``name`` and gives (url, db path), or
    only the url without ``with_db``; ``browser`` is one chromium for the module's tests."""

    @pytest.fixture(scope="module", name="server")
    def server(tmp_path_factory):
        with store_server(tmp_path_factory, build, name) as (url, db):
            yield (url, db) if with_db else url

    @pytest.fixture(scope="module", name="browser")
    def browser():
        with chromium() as b:
            yield b

    return server, browser

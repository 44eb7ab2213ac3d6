"""Opening the system Chromium through Playwright, signed in only by a browser state file.

Why a state file: the user signs in by hand once (a Playwright storage state holds the cookies
the platform set); capture reads it and never sees, asks for or stores a password.
"""
from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

LAUNCH_ARGS = ["--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path(explicit: str | None = None) -> str | None:
    """The Chromium to drive: `explicit`, $BROWSER_PATH, Debian's /usr/bin/chromium, or one on PATH
    (None: Playwright's own download, when installed)."""
    for candidate in (explicit, os.environ.get("BROWSER_PATH"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if candidate and os.path.exists(candidate):
            return candidate
    if explicit:
        raise UserError(f"--browser {explicit}: no such file")
    return None


def check_state(path: Path) -> Path:
    """`path` if it is a Playwright storage-state file (cookies and origins); UserError otherwise."""
    hint = "make one with: python -m eduart_core capture --sign-in URL --state FILE"
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"--state {path}: cannot read it ({exc.strerror}); {hint}") from None
    except ValueError:
        raise UserError(f"--state {path}: not JSON; {hint}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cookies"), list):
        raise UserError(f"--state {path}: not a browser state file (no \"cookies\" list); {hint}")
    return Path(path)


@contextmanager
def browser_context(*, state: Path | None, width: int, height: int,
                    executable: str | None = None) -> Iterator[BrowserContext]:
    """A fresh headless browser context (the state's cookies loaded when given), closed on exit."""
    from playwright.sync_api import Error, sync_playwright

    path = chromium_path(executable)
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=path, args=LAUNCH_ARGS, headless=True)
        except Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserError(f"cannot start Chromium ({first}); apt-get install chromium or set BROWSER_PATH") from None
        try:
            context = browser.new_context(viewport={"width": width, "height": height},
                                          storage_state=str(check_state(state)) if state else None)
            yield context
            context.close()
        finally:
            browser.close()


def save_sign_in_state(url: str, state: Path, wait: Callable[[Any], None], *, executable: str | None = None,
                       headless: bool = False) -> Path:
    """Open `url` in a visible Chromium, let the person sign in (`wait(page)` returns when they are
    done), then save the browser state (cookies, local storage) to `state`, readable by its owner only.
    What the person types goes to the platform, never to the studio."""
    from playwright.sync_api import Error, sync_playwright

    path = chromium_path(executable)
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=path, args=LAUNCH_ARGS, headless=headless)
        except Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserError(f"cannot open a Chromium window ({first}); sign in on a machine with a display") from None
        try:
            context = browser.new_context()
            page = context.new_page()
            try:
                page.goto(url, wait_until="domcontentloaded")
            except Error as exc:
                raise UserError(f"--sign-in {url}: did not answer ({str(exc).strip().splitlines()[0]})") from None
            wait(page)
            state = Path(state)
            state.parent.mkdir(parents=True, exist_ok=True)
            state.touch(mode=0o600, exist_ok=True)
            os.chmod(state, 0o600)
            context.storage_state(path=str(state))
        finally:
            browser.close()
    return state

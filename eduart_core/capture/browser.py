"""Opening the system Chromium through Playwright, signed in only by a browser state file.

Why a state file: the user signs in by hand once (a Playwright storage state holds the cookies
the platform set); capture reads it and never sees, asks for or stores a password.
"""
from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import UserError

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
    hint = "sign in by hand and save the browser state (see README: Capturing exercise pages)"
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
def browser_context(*, state: Path | None, width: int, height: int, executable: str | None = None) -> Iterator:
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

"""Capturing one exercise page: open it, answer and submit each question, wait for the revealed
right answers, save `<exercise>/<question>.png` (the page's full width) and `.html`.

Why the HTML holds only the question (with the page's context elements, e.g. the title and the
instructions): `extract` gives its visible text to the extractors as the text of that one question.
"""
from __future__ import annotations

import html
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UserError
from .config import CaptureConfig
from .steps import NoAnswer, choose_strategy, perform
from .urls import folder_name

if TYPE_CHECKING:
    from playwright._impl._api_structures import FloatRect
    from playwright.sync_api import BrowserContext, Locator, Page

_BOX = ("el => { const r = el.getBoundingClientRect(); "
        "return [r.top + window.scrollY, r.height, document.documentElement.scrollWidth]; }")
_MARGIN = 8
#: What was typed, ticked or chosen lives in DOM properties; copied into attributes it is in the saved HTML
#: (a password field's never).
_FREEZE = """el => { el.querySelectorAll('input').forEach(i => {
    if (i.type === 'password') { i.removeAttribute('value'); }
    else if (i.type === 'checkbox' || i.type === 'radio') { i.toggleAttribute('checked', i.checked); }
    else { i.setAttribute('value', i.value); } });
  el.querySelectorAll('select option').forEach(o => o.toggleAttribute('selected', o.selected));
  el.querySelectorAll('textarea').forEach(t => { t.textContent = t.value; }); }"""


class PageFailed(Exception):
    """The page (or one of its questions) could not be captured; the message is the reason."""


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _write(path: Path, data: bytes) -> None:
    """Whole or not at all: a file `extract` finds is never half written. A full disk stops the run."""
    partial = path.with_name(path.name + ".part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(data)
        os.replace(partial, path)
    except OSError as exc:
        raise UserError(f"cannot write {path} ({exc.strerror}); capture stopped: run the same command again") from None


def _document(page: Page, question: Locator, config: CaptureConfig, url: str) -> str:
    parts = []
    for selector in config.context:
        found = page.locator(selector)
        parts += [found.nth(i).evaluate("el => el.outerHTML") for i in range(found.count())]
    question.evaluate(_FREEZE)
    parts.append(question.evaluate("el => el.outerHTML"))
    return ('<!doctype html><html><head><meta charset="utf-8">'
            f'<title>{html.escape(page.title())}</title>'
            f'<meta name="captured-from" content="{html.escape(url)}"></head>'
            f'<body>{"".join(parts)}</body></html>')


def _shoot(page: Page, question: Locator, config: CaptureConfig) -> bytes:
    question.scroll_into_view_if_needed()
    top, height, page_width = question.evaluate(_BOX)
    clip: FloatRect = {"x": 0, "y": max(0.0, top - _MARGIN), "width": max(config.viewport_width, page_width),
                       "height": height + 2 * _MARGIN}
    return page.screenshot(full_page=True, clip=clip, animations="disabled")


def _open(page: Page, url: str, config: CaptureConfig, timeout_ms: float) -> None:
    from playwright.sync_api import Error, TimeoutError

    try:
        response = page.goto(url, wait_until="domcontentloaded", timeout=timeout_ms)
    except TimeoutError:
        raise PageFailed(f"timed out after {config.timeout_s:g} s loading the page") from None
    except Error as exc:
        reason = _first_line(exc).split(" at ")[0].removeprefix("Page.goto: ")
        raise PageFailed(f"did not answer ({reason})") from None
    if response is not None and response.status >= 400:
        raise PageFailed(f"the server answered HTTP {response.status}")
    if config.signed_out and page.locator(config.signed_out).count():
        raise PageFailed("not signed in (the page shows a sign-in form): sign in by hand and pass --state FILE")
    try:
        page.wait_for_selector(config.question, timeout=timeout_ms)
    except TimeoutError:
        if config.signed_out and page.locator(config.signed_out).count():  # a sign-in form drawn late
            raise PageFailed("not signed in (the page shows a sign-in form): sign in by hand and pass --state FILE") from None
        raise PageFailed(f"no questions: nothing matches {config.question!r} after {config.timeout_s:g} s") from None


def _answer(question: Locator, name: str, config: CaptureConfig, timeout_ms: float) -> None:
    """Answer the question by the first strategy that fits it, and submit it."""
    from playwright.sync_api import TimeoutError

    strategy = choose_strategy(question, config)
    if strategy is None:
        raise PageFailed(f"question {name}: no strategy of the config matches it")
    try:
        perform(question, strategy, timeout_ms)
        question.locator(config.submit).first.click(timeout=timeout_ms)
    except NoAnswer as exc:
        raise PageFailed(f"question {name}: no answer given ({exc})") from None
    except TimeoutError:
        raise PageFailed(f"question {name}: timed out after {config.timeout_s:g} s answering it") from None


def capture_page(context: BrowserContext, url: str, exercise: str, out_dir: Path, config: CaptureConfig,
                 done: list[str]) -> None:
    """Capture every question of the page at `url` into `out_dir/exercise`; the names of the
    questions saved are appended to `done` as they are written. PageFailed names the reason."""
    from playwright.sync_api import Error, TimeoutError

    timeout_ms = config.timeout_s * 1000
    page = context.new_page()
    try:
        _open(page, url, config, timeout_ms)
        folder = Path(out_dir) / exercise
        for index, question in enumerate(page.locator(config.question).all(), start=1):
            name = folder_name((question.get_attribute(config.question_name) if config.question_name else None)
                               or f"q{index:02d}")
            if name in done:  # the platform names two questions alike: keep both
                name = f"{name}-{index:02d}"
            if not question.locator(config.revealed).first.is_visible():  # else answered on an earlier visit
                _answer(question, name, config, timeout_ms)
            try:
                question.locator(config.revealed).first.wait_for(state="visible", timeout=timeout_ms)
            except TimeoutError:
                raise PageFailed(f"question {name}: timed out after {config.timeout_s:g} s waiting for the "
                                 "revealed answers") from None
            document, image = _document(page, question, config, url), _shoot(page, question, config)
            _write(folder / f"{name}.html", document.encode("utf-8"))
            _write(folder / f"{name}.png", image)
            done.append(name)
    except Error as exc:  # the browser or page went away mid-way
        raise PageFailed(f"browser error ({_first_line(exc)})") from None
    finally:
        page.close()

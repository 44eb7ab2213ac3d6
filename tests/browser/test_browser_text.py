"""Real browser: text from items, models, answers, reviewers and files stays text on every page.

The store of `tests/browser/injection_store.py` plants markdown images, HTML images, links, bold tags,
Streamlit colour directives and maths in every field a page shows. Each page is opened in Debian's
chromium with every request recorded (`page.on("request")`) and anything not for 127.0.0.1
refused; the test asserts that no request left the machine, that no planted element exists in the
page (no image or link to the planted host, no bold or coloured planted word, no typeset maths)
and that the planted text is visible as typed where the page shows it.
"""
from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from tests.browser.injection_store import HOST, MODELS, build_injection_store
from tests.browser_kit import SHOTS, module_fixtures, problems, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LOCAL = ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:", "about:")
MODEL_A, MODEL_B = (name for name, _ in MODELS.values())
COMMON = "dataset=inj"
LINKS = [
    "", "inspector", "psychometrics", "formats", "motivation", "images", "profiles", "runs", "review",
    f"inspector?item=inj-0001&open=default:{quote(MODEL_A)}",
    f"inspector?item=inj-0002&condition=motivation&open=motivation:{quote(MODEL_B)}",
    f"inspector?item=inj-0003&open=default:{quote(MODEL_B)}",
    f"inspector?item=inj-0004&condition=motivation&open=motivation:{quote(MODEL_A)}",
    f"inspector?view=compare&a={quote(MODEL_A)}&b={quote(MODEL_B)}&condition=motivation",
    "?present=1", "formats?present=1", "motivation?present=1", "images?present=1",
]
#: Pages that show item and answer texts: the planted text must be visible there, as typed.
SHOWS_TEXT = {LINKS[9], LINKS[10], LINKS[11], LINKS[12], LINKS[13]}
ONLY_BOLD, ONLY_RED = re.compile(r"^\s*boldtag\s*$"), re.compile(r"^\s*redtext\s*$")


server, browser = module_fixtures(build_injection_store, "inject", with_db=False)


@pytest.mark.parametrize("link", LINKS)
def test_planted_markup_stays_text_and_nothing_leaves_the_machine(server, browser, link):
    requests: list[str] = []
    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    page.on("request", lambda r: requests.append(r.url))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(LOCAL) else route.abort())
    try:
        sep = "&" if "?" in link else "?"
        page.goto(f"{server}/{link}{sep}{COMMON}", wait_until="domcontentloaded", timeout=60_000)
        settle(page, pause=700, charts=True)
        name = "text_" + "".join(c if c.isalnum() else "_" for c in link)[:60]
        page.screenshot(path=str(SHOTS / f"{name or 'text_overview'}.png"), full_page=True)
        outside = sorted({u for u in requests if not u.startswith(LOCAL)})
        assert not outside, f"/{link}: requests left the machine: {outside[:5]}"
        injected = {
            "image": page.locator(f"img[src*='{HOST}']").count(),
            "link": page.locator(f"a[href*='{HOST}']").count(),
            "any src": page.locator(f"[src*='{HOST}']").count(),
            "any href": page.locator(f"[href*='{HOST}']").count(),
            "script": page.locator("script", has_text=HOST).count(),  # (plotly heatmaps are svg images: not counted)
            # an element made from a planted tag holds exactly the planted word (our own bold or
            # coloured wrappers around a whole planted text hold the text as typed, tags included)
            "bold tag": page.locator("b, strong").filter(has_text=ONLY_BOLD).count(),
            "plotly bold": page.locator("tspan[style*='bold']").filter(has_text=ONLY_BOLD).count(),
            "maths": page.locator(".katex").count(),
            "colour directive": page.locator("span").filter(has_text=ONLY_RED).count(),
        }
        assert not any(injected.values()), f"/{link}: planted markup became elements: {injected}"
        errors = problems(page, error_boxes=False)
        assert not errors, f"/{link}: {errors[0][:300]}"
        body = page.inner_text("body").replace("\u2060", "")  # word joiners that keep URLs unlinked
        if link in SHOWS_TEXT:
            for literal in (f"![x](http://{HOST}/x.png)", f"<img src=http://{HOST}/y.png>", ":red[redtext]",
                            "<b>boldtag</b>", "$x^2$"):
                assert literal in body, f"/{link}: {literal!r} is not shown as typed"
    finally:
        page.close()

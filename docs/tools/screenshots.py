"""Take the manual's screenshots (docs/images/*.png) from the demo app in a real browser.

Run by hand when a page changes: ``python docs/tools/screenshots.py`` (Debian's chromium and the
test kit's server helpers: the same demo store, the same waits as the browser tests). The PNGs are
committed; the build never takes them, so `mkdocs build` stays offline and fast.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from browser_kit import chromium, settle, streamlit_server  # noqa: E402
from demo_kit import build_dashboard_store  # noqa: E402

IMAGES = ROOT / "docs" / "images"
NAME_BOX = "Your name (kept for this browser session and stored with every decision)"
#: file name -> (URL path and query, type a reviewer's name first, text of the heading to scroll to)
SHOTS = {
    "overview.png": ("/", False, "Leaderboard"),
    "inspector.png": ("/inspector?dataset=demo&profile=strict&condition=motivation", False,
                      "Which model gets which item right"),
    "review.png": ("/review", True, None),
}


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = build_dashboard_store(Path(tmp) / "eduart.duckdb")
        with streamlit_server(db, Path(tmp) / "streamlit.log") as url, chromium() as browser:
            for name, (path, sign, heading) in SHOTS.items():
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                try:
                    page.goto(url + path, wait_until="domcontentloaded", timeout=60_000)
                    settle(page, charts=True)
                    if sign:
                        box = page.get_by_label(NAME_BOX)
                        box.fill("Anna")
                        box.press("Enter")
                        settle(page, charts=True)
                    if heading:  # the window starts at that part of the page (the sidebar stays)
                        page.get_by_text(heading, exact=True).first.evaluate("e => e.scrollIntoView()")
                        page.wait_for_timeout(500)
                    page.screenshot(path=str(IMAGES / name))
                    print(IMAGES / name)
                finally:
                    page.close()


if __name__ == "__main__":
    main()

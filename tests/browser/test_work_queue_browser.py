"""The work queue in Debian's chromium on the team server (`team-trial`: PostgreSQL, the local sign-in
provider, the studio): bruno and clara, signed in at the same time in two browser contexts, open the
review page, each is handed a page held for them (the trial's round 1 is blind with two reviewers per
page, so both may hold one page, never more); the round becomes single review, and "Next" by its key
(N) hands each another page, now different; the keys do nothing while typing in a text field.

What of the page this relies on: the subheader "Page <id> · round <n>", the caption "Held for you
until", the "Flag" popover's "Note for a colleague" box, and the buttons' keyboard shortcuts.
"""
from __future__ import annotations

import re

import pytest

from eduart_core import team
from eduart_core.extraction import review
from eduart_core.store import Store, release_readers
from eduart_core.store import extraction as db
from eduart_core.store import holds as hold_db
from tests import trial_kit
from tests.browser.test_team_trial_browser import _review, _sign_in
from tests.browser_kit import chromium, free_port, problems, require_browser, settle
from tests.trial_kit import require_postgres, start, stop

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.slow]

trial_dir = trial_kit.trial_dir


def _shown_page(page) -> str:
    heading = page.get_by_role("heading", name=re.compile(r"^Page .+ · round \d+$")).first
    heading.wait_for(timeout=60_000)
    return heading.inner_text().strip()


def test_two_signed_in_reviewers_are_handed_different_pages_and_keys_skip_text_fields(trial_dir, monkeypatch,
                                                                                       tmp_path):
    require_browser()
    require_postgres()
    running = start(trial_dir, free_port())
    url = running.url
    for name, value in running.env().items():
        monkeypatch.setenv(name, value)
    store = Store(running.env()["EDUART_DATABASE_URL"])
    try:
        with chromium() as browser:
            people = {}
            for who in ("bruno", "clara"):  # two browsers, both signed in at once
                page = browser.new_context(viewport={"width": 1500, "height": 1800}).new_page()
                _sign_in(page, url, who)
                people[who] = page
            for page in people.values():
                _review(page, url)
            first = {who: _shown_page(page) for who, page in people.items()}
            # the trial's round 1 is blind with two reviewers per page: both may hold the same page
            held = hold_db.load_holds(store, "review:1")
            assert sorted(held["holder"]) == ["bruno", "clara"]
            assert held.groupby("unit")["holder"].nunique().max() <= 2
            for who, page in people.items():
                assert page.get_by_text("Held for you until").count() == 1, who
                assert page.get_by_text("N next · S skip").count() == 1

            review.set_reviewers(store, "demo-extraction", 1, 1, team.operator())  # now single review
            for page in people.values():  # "Next" by its key: each is handed another page, still not the same
                page.locator("h1").first.click()
                page.keyboard.press("n")
                settle(page, pause=500)
            second = {who: _shown_page(page) for who, page in people.items()}
            assert second["bruno"] != second["clara"] and all(second[w] != first[w] for w in people), second
            held = hold_db.load_holds(store, "review:1")
            assert sorted(held["holder"]) == ["bruno", "clara"] and held["unit"].is_unique
            assert all(problems(page) == [] for page in people.values())

            bruno = people["bruno"]  # typing N, S, A, B into a text field: letters, not actions
            before = len(db.load_decisions(store))
            bruno.get_by_role("button", name="Flag").first.click()
            note = bruno.get_by_label("Note for a colleague").first
            note.click()
            note.type("nsab")
            settle(bruno, pause=500)
            assert note.input_value() == "nsab"
            assert _shown_page(bruno) == second["bruno"]
            assert len(db.load_decisions(store)) == before
            bruno.screenshot(path=str(tmp_path / "bruno-queue.png"))
    finally:
        release_readers(None)
        code = stop(running)
    assert code == 0, running.output

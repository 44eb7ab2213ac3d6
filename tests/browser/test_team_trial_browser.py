"""`team-trial` end to end in Debian's chromium: the command runs as a real process (PostgreSQL in its
folder, the local sign-in provider, the studio), and three people of the trial take one field of a
blind round from open to settled through the pages, signing in and out on the provider's page:

bruno (reviewer) accepts one side, signs out; clara (reviewer) accepts the other side of the same
field, signs out; dora (adjudicator) settles it. The store (read with the password from the trial's
`trial.env`, as the README says) holds each decision under the subject who made it and the field
settled by adjudication. Then SIGINT: the trial ends, every process it ran (by PID) has ended, its
ports are free and no secret is in its lines or logs.

What of the page this relies on: the buttons "Sign in" and "Sign out" (sidebar), the provider's
one-click subject buttons and its "End session" button, "Accept A"/"Accept B" inside the field's
card, and the card's key ``card::<page>|<round>|<path>`` (Streamlit's class ``st-key-card--...``).
"""
from __future__ import annotations

import re

import pytest

from eduart_core.extraction import review
from eduart_core.store import Store, release_readers
from eduart_core.store import extraction as db
from tests import trial_kit
from tests.browser_kit import chromium, free_port, problems, require_browser, settle
from tests.trial_kit import assert_no_secret_in_lines_or_logs, assert_nothing_left, require_postgres, start, stop

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.slow]

trial_dir = trial_kit.trial_dir  # a folder the postgres user may enter


def _card_class(page_id: str, round_: int, path: str) -> str:
    """Streamlit writes a container's key into its class (``st-key-`` + the key, other characters as '-')."""
    return "st-key-" + re.sub(r"[^A-Za-z0-9_-]", "-", f"card::{page_id}|{round_}|{path}")


def _card(page, page_id: str, round_: int, path: str):
    return page.locator("." + _card_class(page_id, round_, path))


def _untouched_blind_fields(store: Store) -> dict[str, tuple[str, int, str]]:
    """Card class -> (page, round, path) of every field of a round of two or more reviewers that nobody has
    decided or flagged yet (whatever review rounds the demo ships, the test takes one of these)."""
    state = review.load_state(store)
    found = {}
    for row in state.queued[["page_id", "round", "path", "dataset"]].itertuples(index=False):
        field = state.state(row.page_id, row.round, row.path)
        if state.reviewers_needed(row.dataset, row.round) >= 2 and field.last is None:
            found[_card_class(row.page_id, int(row.round), row.path)] = (row.page_id, int(row.round), row.path)
    return found


def _first_untouched_card(page, store: Store) -> tuple[str, int, str]:
    """The first card on the page with an Accept button whose field is untouched in a blind round."""
    untouched = _untouched_blind_fields(store)
    cards = page.locator('[class*="st-key-card--"]').filter(has=page.get_by_role("button", name="Accept A"))
    for i in range(cards.count()):
        for name in (cards.nth(i).get_attribute("class") or "").split():
            if name in untouched:
                return untouched[name]
    pytest.fail(f"the review page offers no untouched field of a blind round ({len(untouched)} in the store)")


def _sign_in(page, url: str, subject: str) -> None:
    page.goto(url, wait_until="domcontentloaded", timeout=60_000)
    settle(page, pause=300)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("input[name=sub]", timeout=60_000)  # the provider's page
    page.get_by_role("button", name=subject, exact=True).click()  # one click per person of the trial
    page.wait_for_url(f"{url}/**", timeout=60_000)
    settle(page, pause=300)


def _sign_out(page, url: str) -> None:
    page.get_by_role("button", name="Sign out").first.click()
    page.wait_for_url(re.compile(r".*(end_session|127\.0\.0\.1:\d+/?$|oauth2callback).*"), timeout=60_000)
    if "end_session" in page.url:  # the provider ends its session too, after one click
        page.get_by_role("button", name="End session").click()
        page.wait_for_url(f"{url}/**", timeout=60_000)
    settle(page, pause=300)
    page.goto(url, wait_until="domcontentloaded", timeout=60_000)
    settle(page, pause=300)
    assert page.get_by_role("button", name="Sign in").count() == 1  # signed out: the sign-in gate again


def _review(page, url: str) -> None:
    page.goto(f"{url}/review", wait_until="domcontentloaded", timeout=60_000)
    settle(page, pause=400)


def _field_state(store: Store, page_id: str, round_: int, path: str):
    return review.load_state(store, round_).state(page_id, round_, path)


def test_reviewers_decide_blind_and_the_adjudicator_settles_then_sigint_leaves_nothing(trial_dir, monkeypatch,
                                                                                     tmp_path):
    require_browser()
    require_postgres()
    running = start(trial_dir, free_port())
    url = running.url
    issuer = f"http://127.0.0.1:{running.port_of('sign-in provider')}"
    ports = [running.port, running.port_of("sign-in provider"), running.port_of("PostgreSQL")]
    pids = trial_kit.trial_processes(running)
    env = running.env()
    for name, value in env.items():  # the store as `. trial.env` gives it to a shell
        monkeypatch.setenv(name, value)
    store = Store(env["EDUART_DATABASE_URL"])
    try:
        with chromium() as browser:
            page = browser.new_context(viewport={"width": 1500, "height": 1800}).new_page()
            page.goto(f"{url}/review", wait_until="domcontentloaded", timeout=60_000)
            settle(page, pause=300)
            assert page.get_by_role("button", name="Sign in").count() == 1
            assert page.get_by_role("button", name="Accept A").count() == 0  # nothing before sign-in

            # bruno, reviewer: the first field the review page offers him
            _sign_in(page, url, "bruno")
            assert page.get_by_text("Signed in as Bruno Reviewer").count() >= 1
            _review(page, url)
            page_id, round_, path = _first_untouched_card(page, store)
            _card(page, page_id, round_, path).get_by_role("button", name="Accept A").click()
            settle(page, pause=400)
            assert problems(page) == []
            page.screenshot(path=str(tmp_path / "bruno.png"))
            decisions = db.load_decisions(store)
            decisions = decisions[decisions["actor_subject"] == "bruno"]
            assert len(decisions) == 1, decisions
            first = decisions.iloc[0]
            assert (first["page_id"], int(first["round"]), first["path"]) == (page_id, round_, path)
            assert first["reviewer"] == "bruno" and first["actor_provider"].startswith(issuer)
            assert _field_state(store, page_id, round_, path).state == "awaiting"  # one vote of a blind round
            _sign_out(page, url)

            # clara, reviewer: the same field, the other extractor's value (her A/B order is her own)
            _sign_in(page, url, "clara")
            _review(page, url)
            state = review.load_state(store, round_)
            needed = state.reviewers_needed(state.dataset_of(page_id), round_)
            assert needed == 2  # the trial's blind rounds need two reviewers: bruno and clara
            order = review.shown_order(page_id, round_, "clara", needed)
            side = next(s for s in "AB" if review.true_action(s, order) != first["action"])
            _card(page, page_id, round_, path).get_by_role("button", name=f"Accept {side}").click()
            settle(page, pause=400)
            assert problems(page) == []
            assert _field_state(store, page_id, round_, path).state == "adjudication"
            _sign_out(page, url)

            # dora, adjudicator: settles it
            _sign_in(page, url, "dora")
            _review(page, url)
            _card(page, page_id, round_, path).get_by_role("button", name="Accept A").click()
            settle(page, pause=400)
            assert problems(page) == []
            page.screenshot(path=str(tmp_path / "dora.png"))
        settled = _field_state(store, page_id, round_, path)
        assert (settled.state, settled.how, settled.settled_by) == ("resolved", "adjudication", "dora")
        field = db.load_decisions(store)
        field = field[(field["page_id"] == page_id) & (field["round"] == round_) & (field["path"] == path)]
        assert list(field["actor_subject"]) == ["bruno", "clara", "dora"]
        assert list(field["role"]) == ["review", "review", "adjudicate"]
        assert all(p.startswith(issuer) for p in field["actor_provider"])
    finally:
        release_readers(None)
        code = stop(running)  # SIGINT, as Ctrl-C at the terminal
    assert code == 0, running.output
    assert "stopped: studio, sign-in provider, PostgreSQL" in running.output
    assert_nothing_left(running, pids, ports)
    assert_no_secret_in_lines_or_logs(running)

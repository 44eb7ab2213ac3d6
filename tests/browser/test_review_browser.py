"""Real browser (Playwright + Debian chromium) on the review studio of a demo store:

- a whole demo round is finished through the page itself, field by field, the last field of a
  page first (multi-field pages included), the first decision by keyboard shortcut; every page
  is promoted;
- blind double review: two reviewers in separate browsers, then the adjudicator settles the
  field they disagree on;
- the suspect-key queue, reached from the item inspector, leads to a corrected key and re-scored
  responses.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from eduart_core.extraction import review
from eduart_core.store import Store
from eduart_core.store.items import get_item
from eduart_core.store.scores import load_responses
from tests.browser_kit import SHOTS, dashboard_store, module_fixtures, problems, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EXTRACTION = "demo-extraction"


BLIND = 3  # the demo's blind round in progress: one simulated reviewer decided every page but ex01/q01


def _two_reviewer_store(path: Path) -> Path:
    """A fresh demo store (its extraction round 3 needs two blind reviewers)."""
    db = dashboard_store(path)
    assert review.load_state(Store(db), BLIND).reviewers_needed(EXTRACTION, BLIND) == 2
    return db


server, browser = module_fixtures(_two_reviewer_store, "review-browser")


def no_errors(page) -> None:
    found = problems(page)
    assert not found, found[0][:400]


def open_review(browser, url: str, name: str, query: str = ""):
    context = browser.new_context(viewport={"width": 1500, "height": 1800})
    page = context.new_page()
    page.goto(f"{url}/review{query}", wait_until="domcontentloaded", timeout=60_000)
    settle(page, pause=250)
    box = page.get_by_label("Your name (kept for this browser session and stored with every decision)")
    box.fill(name)
    box.press("Enter")
    settle(page, pause=250)
    assert page.get_by_text(f"Reviewing as {name}").count() >= 1
    return context, page


def accept_buttons(page, side: str):
    return page.get_by_role("button", name=f"Accept {side}", exact=False)


def choose_round(page, round_: int) -> None:
    box = page.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text("Round", exact=True))
    box.first.click()  # Streamlit's selectbox opens its option list
    page.get_by_role("option", name=str(round_), exact=True).click()
    settle(page, pause=250)


def test_a_whole_demo_round_is_finished_in_the_browser(server, browser):
    url, db = server
    store = Store(db)
    queued = review.review_queue(store, round=1)
    assert len(queued) >= 9 and (queued["fields"] > 1).any()  # multi-field pages are part of it
    context, page = open_review(browser, url, "Anna")
    try:
        page.screenshot(path=str(SHOTS / "review_workbench.png"), full_page=False)
        page.locator("h1").first.click()  # focus out of the name box: shortcuts reach the page
        page.keyboard.press("a")  # the focused field's "Accept A" shortcut
        settle(page, pause=250)
        no_errors(page)
        clicks = 1
        while clicks < 40:
            buttons = accept_buttons(page, "A")
            if buttons.count() == 0:
                break
            buttons.last.click()  # the page's last open field first: any order works
            settle(page, pause=250)
            no_errors(page)
            clicks += 1
        assert clicks == int(queued["fields"].sum())
        page.screenshot(path=str(SHOTS / "review_round_done.png"), full_page=False)
    finally:
        context.close()
    done = review.review_queue(store, round=1)
    assert set(done["status"]) == {"resolved"}
    assert done["promoted_version"].notna().all(), done[["page_id", "promoted_version"]]
    log = review.load_state(store, 1).decisions
    assert set(log["reviewer"]) == {"Anna"} and set(log["source"]) == {"page"}
    for page_id in done["page_id"]:
        item_id = review.load_state(store, 1).pages.set_index("page_id").loc[page_id, "item_id"]
        assert get_item(store, EXTRACTION, item_id)["version"] >= 1


def test_blind_double_review_and_adjudication_in_two_browsers(server, browser):
    url, db = server
    store = Store(db)
    page_id, path = "ex01/q01", "question_text"
    order = {name: review.shown_order(page_id, BLIND, name, 2) for name in ("Anna", "Bruno")}
    anna_ctx, anna = open_review(browser, url, "Anna")
    bruno_ctx, bruno = open_review(browser, url, "Bruno")
    carla_ctx = None
    try:
        for page in (anna, bruno):
            choose_round(page, BLIND)
            assert page.get_by_text("blind review: 2 independent reviewers per page").count() >= 1
            assert page.get_by_text("sim-extractor").count() == 0  # which extractor is which stays hidden
        accept_buttons(anna, "A").first.click()
        settle(anna, pause=250)
        no_errors(anna)
        anna.get_by_role("button", name="◀ Previous").click()  # back to the page she decided
        settle(anna, pause=250)
        assert anna.get_by_text("Your decision: Accept A.").count() >= 1
        assert accept_buttons(anna, "A").count() == 0 and accept_buttons(anna, "B").count() == 0  # a change, no Accept
        assert anna.get_by_text("Change my decision").count() >= 1
        anna_action = review.true_action("A", order["Anna"])
        bruno_side = "B" if review.true_action("A", order["Bruno"]) == anna_action else "A"
        choose_round(bruno, 1)  # a fresh run after Anna's decision
        choose_round(bruno, BLIND)
        assert bruno.get_by_text("Anna").count() == 0  # he sees neither her name nor her decision
        accept_buttons(bruno, bruno_side).first.click()
        settle(bruno, pause=250)
        no_errors(bruno)
        state = review.load_state(store, BLIND).state(page_id, BLIND, path)
        assert state.state == "adjudication"
        carla_ctx, carla = open_review(browser, url, "Carla")
        carla.get_by_text("Adjudicator", exact=True).click()
        settle(carla, pause=250)
        choose_round(carla, BLIND)
        assert carla.get_by_text("Every decision on this field").count() >= 1
        carla.screenshot(path=str(SHOTS / "review_adjudication.png"), full_page=False)
        accept_buttons(carla, "A").first.click()
        settle(carla, pause=250)
        no_errors(carla)
        carla.get_by_text("Agreement", exact=True).click()  # round 3 still waits for a second reviewer elsewhere
        settle(carla, pause=250)
        assert carla.get_by_text("their agreement appears here once every field of the round is settled",
                                 exact=False).count() >= 1
        no_errors(carla)
    finally:
        for ctx in (anna_ctx, bruno_ctx, carla_ctx):
            if ctx is not None:
                ctx.close()
    state = review.load_state(store, BLIND).state(page_id, BLIND, path)
    assert state.state == "resolved" and state.how == "adjudication"
    log = review.load_state(store, BLIND).decisions
    log = log[(log["page_id"] == page_id) & (log["path"] == path)]
    assert list(log["reviewer"]) == ["Anna", "Bruno", "Carla"]
    assert list(log["role"]) == ["review", "review", "adjudicate"]
    assert list(log["shown_order"])[:2] == [order["Anna"], order["Bruno"]]
    outcome = review.load_state(store, BLIND).outcomes.set_index(["page_id", "round"]).loc[(page_id, BLIND)]
    assert outcome["promoted_version"] is not None


def test_suspect_key_from_the_inspector_to_a_corrected_key(server, browser):
    from eduart_core import suspects

    url, db = server
    store = Store(db)
    queue = suspects.suspect_queue(store, "demo")
    radio = queue[queue["type"] == "multiple_choice_radio"]
    assert len(radio), "the demo has a flagged single-answer item"
    item_id = str(radio["item_id"].iloc[0])
    record = get_item(store, "demo", item_id)["record"]
    old_key = record["answers"][0]["id"]
    new = next(c for c in record["choices"] if c["id"] != old_key)
    before = load_responses(store, "demo", item_id)
    context = browser.new_context(viewport={"width": 1500, "height": 2000})
    page = context.new_page()
    try:
        page.goto(f"{url}/inspector?item={item_id}&dataset=demo", wait_until="domcontentloaded", timeout=60_000)
        settle(page, pause=250)
        page.get_by_text("Review: version history and key checks").click()
        page.get_by_role("button", name="Open it in the suspect-key queue").click()
        page.wait_for_url(lambda u: "/review" in u and f"suspect={item_id}" in u, timeout=60_000)
        settle(page, pause=250)
        assert page.get_by_text(f"Item {item_id}").count() >= 1
        box = page.get_by_label("Your name (kept for this browser session and stored with every decision)")
        box.fill("Carla")
        box.press("Enter")
        settle(page, pause=250)
        page.get_by_text(f"{new['id']}. {new['text']}", exact=True).last.click()
        page.get_by_label("Why (kept with the new version)").fill("checked against the source")
        page.get_by_role("button", name="Save the corrected key").click()
        settle(page, pause=250)
        no_errors(page)
        page.screenshot(path=str(SHOTS / "review_suspect_corrected.png"), full_page=False)
    finally:
        context.close()
    item = get_item(store, "demo", item_id)
    assert item["version"] == 2 and item["record"]["answers"][0]["id"] == new["id"]
    after = load_responses(store, "demo", item_id)
    for row in after.to_dict("records"):
        chose = [a.get("id") for a in row["parsed_answers"] or []]
        assert row["strict_score"] == (1.0 if chose == [new["id"]] else 0.0), row["model"]
    assert len(after) == len(before)

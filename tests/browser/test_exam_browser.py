"""Real browser: a respondent sits a 10-item form on the Sit-the-exam page, and the comparison shows it.

Debian's chromium drives the page of a real `streamlit run` (single-machine mode: the respondent
types a name). A researcher's session (set up through the library, as the Sessions section does)
asks one item per format and language of five formats in Italian and English: ten items. The test
answers each item in its own editor (radio buttons, checkboxes, true/false switches, a choice per
blank, a word-bank pick per blank), pauses and resumes once, and then checks what a researcher
relies on: the page never showed a model's name or answer, the ten answers are stored under the
respondent's pseudonym, timed and scored by the models' scorers, and the Overview's "Models and
people" section counts the respondent.
"""
from __future__ import annotations

import pytest

from tests.browser_kit import SHOTS, module_fixtures, problems, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FORMATS = ("multiple_choice_radio", "multiple_choice_check", "true_false", "completion_closed", "positioning")
NAME = "Chiara Esposito"


def build_exam_store(path):
    from eduart_core import team
    from eduart_core.demo import build_benchmark, build_demo
    from eduart_core.humans import sessions
    from eduart_core.store import Store

    store = Store(path)
    build_demo(store, force=True, builders=(build_benchmark,))
    sessions.create_session(store, "demo", group="student", per_cell=1, formats=FORMATS, languages=("it", "en"),
                            title="Class 4B", actor=team.local("Rita Researcher"), seed=11)
    return path


server, browser = module_fixtures(build_exam_store, "exam")


def _answer_on_screen(page) -> None:
    """Give an answer in whatever editor the item shows: the first option of every choice, the first
    checkbox or switch, the first word of every word bank."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    area = page.locator(".st-key-exam_answer")
    for group in area.locator("[role=radiogroup]").all():
        group.locator("label").first.click()
        settle(page, pause=250)
    boxes = area.locator("[data-testid=stCheckbox] label")
    if boxes.count():
        boxes.first.click()
        settle(page, pause=250)
    for k in range(area.locator("[data-testid=stSelectbox]").count()):
        box = area.locator("[data-testid=stSelectbox]").nth(k)
        for attempt in range(3):  # a click that lands while the page reruns opens nothing: open it again
            box.click()
            option = page.locator("[role=option]").first
            try:
                option.wait_for(state="visible", timeout=10_000)
            except PlaywrightTimeoutError:
                if attempt == 2:
                    raise
                settle(page)
                continue
            option.click()
            break
        settle(page, pause=250)


def test_a_respondent_sits_a_ten_item_form_and_appears_in_the_comparison(server, browser):
    from eduart_core import team, views
    from eduart_core.humans import people
    from eduart_core.selection import Selection
    from eduart_core.store import Store
    from eduart_core.store.scores import load_scores
    from eduart_core.vocab import HUMAN_KIND

    url, db = server
    page = browser.new_page(viewport={"width": 1400, "height": 2200})
    try:
        page.goto(f"{url}/exam", wait_until="domcontentloaded", timeout=60_000)
        settle(page)
        name = page.get_by_label("Your name", exact=False)
        name.fill(NAME)
        name.press("Enter")
        settle(page)
        page.get_by_role("button", name="Start or resume").click()
        settle(page)
        seen = []
        for step in range(10):
            text = page.locator("[data-testid=stMain]").inner_text()
            assert f"Item {step + 1} of 10" in text, text[:400]
            assert "Sim " not in text and "Answer key" not in text  # no model, no key on the page
            seen.append(text)
            if step == 3:  # pause and resume once
                page.get_by_role("button", name="Pause").click()
                settle(page)
                assert "Paused" in page.locator("[data-testid=stMain]").inner_text()
                page.get_by_role("button", name="Resume").click()
                settle(page)
            _answer_on_screen(page)
            page.get_by_role("button", name="Submit answer").click()
            settle(page)
            assert not problems(page), problems(page)
        assert "you answered all 10 items" in page.locator("[data-testid=stMain]").inner_text()
        page.screenshot(path=str(SHOTS / "exam_finished.png"), full_page=True)

        frame = load_scores(Store(db), dataset="demo")
        mine = frame[frame["kind"] == HUMAN_KIND]
        assert len(mine) == 10 and mine["model"].nunique() == 1 and set(mine["type"]) == set(FORMATS)
        pseudonym = str(mine["model"].iloc[0])
        assert people.names(Store(db), team.operator()) == {pseudonym: NAME}
        src = views.Source.of(str(db))
        gap = views.human_gap(src, Selection())
        assert set(gap["median_person"]) == {pseudonym} and gap.attrs["headline"].startswith("1 person (1 student)")

        page.goto(url, wait_until="domcontentloaded", timeout=60_000)
        settle(page, charts=True)
        main = page.locator("[data-testid=stMain]").inner_text()
        assert "Models and people" in main and "1 person (1 student) sat 10 items" in main
        assert NAME not in main  # the comparison names the pseudonym, never the person
        page.screenshot(path=str(SHOTS / "exam_overview.png"), full_page=True)
    finally:
        page.close()

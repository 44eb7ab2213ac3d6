"""`capture` against the local exercise site with the real Chromium, then `extract` on what it saved.

One capture run (module fixture) over the seven format pages, a page whose answers are revealed too
late and a URL nobody answers; the tests read the files and the log that run wrote.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from browser_kit import free_port, require_browser

from eduart_core.capture.browser import save_sign_in_state
from eduart_core.capture.config import LOCAL_SITE_CONFIG
from eduart_core.capture.site import exercise_urls, load_exercises, make_app, serve_site
from eduart_core.capture.site_items import site_records
from eduart_core.cli import main
from eduart_core.extraction.pipeline import html_to_text
from eduart_core.team.identity import local

pytestmark = pytest.mark.browser

TIMEOUT = "6"
#: The background of the site's solution panel (#e8f5e9), drawn only after a submission.
SOLUTION_BACKGROUND = (232, 245, 233)
#: What each format's revealed solution says, per question (from the site's own data).
EXERCISES = load_exercises()


def _revealed(exercise: dict, question: dict) -> list[str]:
    key = question["key"]
    if exercise["format"] in ("multiple_choice_radio", "multiple_choice_check"):
        return [f"{k}. {question['choices'][k]}" for k in key]
    if exercise["format"] == "true_false":
        return [f"{k}: {v}" for k, v in key.items()]
    if exercise["format"] == "select_errors":
        return [f"Error: {wrong} -> {right}" for wrong, right in key]
    return [f"[{k}] {v}" for k, v in key.items()]


def _capture(urls: Path, out: Path, capsys, *extra: str) -> tuple[int, str]:
    code = main(["capture", "--urls", str(urls), "--out", str(out), "--delay", "0", "--timeout", TIMEOUT, *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture(scope="module")
def site():
    require_browser()
    with serve_site() as url:
        yield url


@pytest.fixture(scope="module")
def first_run(site, tmp_path_factory):
    """The first capture: 7 format pages, one page revealing after 60 s, one dead URL."""
    root = tmp_path_factory.mktemp("capture")
    dead = f"http://127.0.0.1:{free_port()}/exercise/gone"
    urls = root / "urls.txt"
    urls.write_text("# the site's pages\n" + "\n".join(exercise_urls(site)) +
                    f"\n{site}/exercise/orsetti-one?delay=60 slow-page\n{dead} dead-page\n", encoding="utf-8")
    out = root / "captured"
    code = main(["capture", "--urls", str(urls), "--out", str(out), "--delay", "0", "--timeout", TIMEOUT])
    return {"code": code, "out": out, "urls": urls, "dead": dead, "site": site}


def test_every_question_of_every_format_has_png_and_html_with_the_revealed_answers(first_run):
    from PIL import Image

    out = first_run["out"]
    assert first_run["code"] == 2  # two pages failed, the rest captured
    for exercise in EXERCISES:
        for index, question in enumerate(exercise["questions"], start=1):
            png, html = out / exercise["slug"] / f"q{index:02d}.png", out / exercise["slug"] / f"q{index:02d}.html"
            text = html_to_text(html.read_text(encoding="utf-8"))
            for line in _revealed(exercise, question):
                assert line in text, (exercise["slug"], index, line, text)
            assert " ".join(question["text"].split("[")[0].split()[:3]) in text
            with Image.open(png) as image:
                image.load()
                assert image.width == 1280 and image.height > 100
                # the solution panel (shown only once the answers are revealed) is in the picture
                colours = {c for _, c in image.convert("RGB").getcolors(1 << 20)}
                assert SOLUTION_BACKGROUND in colours, png


def test_the_answers_given_are_in_the_saved_html(first_run):
    text = (first_run["out"] / "orsetti-open" / "q01.html").read_text(encoding="utf-8")
    assert 'value="opera"' in text
    closed = (first_run["out"] / "orsetti-closed" / "q01.html").read_text(encoding="utf-8")
    assert re.search(r"<option selected[^>]*>left</option>", closed)


def test_failed_pages_are_named_with_their_reason_and_logged(first_run):
    log = [json.loads(line) for line in (first_run["out"] / "capture-log.jsonl").read_text().splitlines()]
    failed = {e["exercise"]: e["reason"] for e in log if e["status"] == "failed"}
    assert set(failed) == {"slow-page", "dead-page"}
    assert "timed out" in failed["slow-page"] and "revealed answers" in failed["slow-page"]
    assert failed["dead-page"].startswith("did not answer")
    assert sum(e["status"] == "captured" for e in log) == 7
    assert not (first_run["out"] / "slow-page").exists()


def test_second_run_captures_nothing_again_and_retries_only_the_failures(first_run, capsys):
    out = first_run["out"]
    before = {p: p.stat().st_mtime_ns for p in out.glob("*/*")}
    code, text = _capture(first_run["urls"], out, capsys)
    assert code == 2
    assert "0 pages captured (0 questions), 7 already captured, 2 could not be captured" in text
    failures = [line for line in text.splitlines() if line.startswith("could not capture")]
    assert len(failures) == 2 and any(first_run["dead"] in line and "did not answer" in line for line in failures)
    assert {p: p.stat().st_mtime_ns for p in out.glob("*/*")} == before


def test_a_url_that_does_not_answer_is_one_line_and_exit_2(tmp_path, capsys):
    require_browser()
    urls = tmp_path / "urls.txt"
    dead = f"http://127.0.0.1:{free_port()}/exercise/nobody"
    urls.write_text(dead + "\n", encoding="utf-8")
    code, text = _capture(urls, tmp_path / "out", capsys)
    assert code == 2
    lines = [line for line in text.splitlines() if dead in line]
    assert len(lines) == 1 and lines[0].startswith(f"could not capture {dead}: did not answer")
    assert "Traceback" not in text


def test_extract_review_promote_on_the_captured_folder(first_run, tmp_path, monkeypatch, capsys):
    """capture -> extract -> review -> promote offline: the loopback extractors answer each page with
    the site's truth, B misreads one correction; 13 pages agree, the disputed one is decided by a
    reviewer; all 14 become valid items. The page text the extractors got carries the revealed answer."""
    from eduart_core.extraction import review
    from eduart_core.store import Store
    from eduart_core.store.items import get_item
    from tests.stubs import StubServer

    truth = site_records()

    def answer(info) -> str:
        page_id = re.search(r"Exam page (\S+)", info.user_text).group(1)
        record = json.loads(json.dumps(truth[page_id]))
        if info.model == "model-b" and page_id == "orsetti-errors/q01":
            record["answers"][0]["correct"] = "tempura"
        return json.dumps(record, ensure_ascii=False)

    store_path = tmp_path / "store.duckdb"
    with StubServer(answer=answer) as stub:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-capture")
        monkeypatch.setenv("OPENAI_BASE_URL", stub.url + "/v1")
        code = main(["extract", "--input", str(first_run["out"]), "--extractor", "A=openai:model-a",
                     "--extractor", "B=openai:model-b", "--db", str(store_path), "--dataset", "captured"])
        out = capsys.readouterr().out
        assert code == 0, out
        assert "14 pages" in out and "agreed 13" in out and "queued 1" in out
        request = stub.requests_for("Exam page orsetti-true-false/q02")[0]
        assert "A: False" in request.user_text and request.image.startswith(b"\x89PNG")
    store = Store(store_path)
    fields = review.page_fields(store, "orsetti-errors/q01", 1)
    assert len(fields) == 1
    result = review.decide(store, "orsetti-errors/q01", 1, fields.iloc[0]["path"], "accept_a", local("Anna"))
    assert result.promoted_version == 1
    for page_id, record in truth.items():
        item = get_item(store, "captured", page_id.replace("/", "-"))
        assert item is not None, page_id
        assert item["record"]["answers"] == record["answers"]


def test_sign_in_only_through_a_browser_state_made_by_hand(tmp_path, capsys):
    require_browser()
    password = "orsetti-secret-7"
    with serve_site(make_app(password=password)) as url:
        urls = tmp_path / "urls.txt"
        urls.write_text(f"{url}/exercise/orsetti-one\n", encoding="utf-8")
        code, text = _capture(urls, tmp_path / "out", capsys)
        assert code == 2 and "not signed in" in text and "--state" in text

        state = tmp_path / "state.json"

        def person_signs_in(page) -> None:  # what the person does in the window `--sign-in` opens
            page.fill("input[name=password]", password)
            page.click("form#sign-in button")
            page.wait_for_selector("form.question")

        save_sign_in_state(f"{url}/exercise/orsetti-one", state, person_signs_in, headless=True)
        assert state.stat().st_mode & 0o077 == 0  # the session cookies are readable by their owner only
        code, text = _capture(urls, tmp_path / "out", capsys, "--state", str(state))
        assert code == 0, text
        assert "1 page captured (2 questions)" in text
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert password not in path.read_text(encoding="utf-8", errors="replace")


def test_two_browsers_at_once_capture_the_same_pages(site, tmp_path, capsys):
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join(exercise_urls(site)) + "\n", encoding="utf-8")
    code, text = _capture(urls, tmp_path / "out", capsys, "--parallel", "2")
    assert code == 0, text
    assert "7 pages captured (14 questions)" in text
    assert len(list((tmp_path / "out").glob("*/*.png"))) == len(list((tmp_path / "out").glob("*/*.html"))) == 14


def test_a_question_no_strategy_fits_or_none_can_answer_is_named(site, tmp_path, capsys):
    data = json.loads(LOCAL_SITE_CONFIG.read_text(encoding="utf-8"))
    data["strategies"] = [s for s in data["strategies"] if s["name"] != "multiple_choice_radio"]
    for strategy in data["strategies"]:
        if strategy["name"] == "select_errors":
            strategy["steps"] = [{"do": "click_first", "target": ".no-such-word"}]
    config = tmp_path / "platform.json"
    config.write_text(json.dumps(data), encoding="utf-8")
    urls = tmp_path / "urls.txt"
    urls.write_text(f"{site}/exercise/orsetti-one\n{site}/exercise/orsetti-errors\n{site}/exercise/orsetti-open\n",
                    encoding="utf-8")
    code, text = _capture(urls, tmp_path / "out", capsys, "--config", str(config))
    assert code == 2
    assert f"could not capture {site}/exercise/orsetti-one: question q01: no strategy of the config matches it" in text
    assert (f"could not capture {site}/exercise/orsetti-errors: question q01: no answer given "
            "(nothing matches '.no-such-word' for step click_first)") in text
    assert "1 page captured (2 questions)" in text

"""`capture` without a browser: the platform configuration, the URL list, the resume log, the local
exercise site (through Flask's test client) and the command's one-line refusals."""
from __future__ import annotations

import json

import pytest

from eduart_core.capture import journal
from eduart_core.capture.config import LOCAL_SITE_CONFIG, load_config
from eduart_core.capture.site import load_exercises, make_app
from eduart_core.capture.site_items import site_records
from eduart_core.capture.urls import read_urls
from eduart_core.cli import main
from eduart_core.errors import UserError
from eduart_core.items import check_item
from eduart_core.vocab import EDUART_FORMATS


def _config(tmp_path, **changes) -> object:
    data = json.loads(LOCAL_SITE_CONFIG.read_text(encoding="utf-8"))
    data.update(changes)
    path = tmp_path / "platform.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_shipped_config_has_a_strategy_for_each_of_the_seven_formats():
    config = load_config()
    assert [s.name for s in config.strategies] == list(EDUART_FORMATS)
    assert config.revealed and config.signed_out


@pytest.mark.parametrize(("changes", "words"), [
    ({"question": ""}, '"question" (a CSS selector) is required'),
    ({"strategies": []}, '"strategies" must be a non-empty list'),
    ({"strategies": [{"name": "x", "when": "form", "steps": [{"do": "guess", "target": "input"}]}]},
     'each step needs "do" one of check_first'),
    ({"strategies": [{"name": "x", "when": "form", "steps": [{"do": "type_in_each", "target": "input"}]}]},
     'type_in_each needs the "text"'),
    ({"selectors": "form"}, "unknown key 'selectors'"),
    ({"timeout_s": "soon"}, "must be numbers"),
])
def test_a_bad_config_is_refused_in_one_line(tmp_path, changes, words):
    with pytest.raises(UserError) as error:
        load_config(_config(tmp_path, **changes))
    assert words in str(error.value) and "\n" not in str(error.value)


def test_a_toml_config_reads_like_the_json_one(tmp_path):
    path = tmp_path / "platform.toml"
    path.write_text('question = "div.q"\nsubmit = "button"\nrevealed = ".answer"\ndelay_s = 3\n\n'
                    '[[strategies]]\nname = "pick"\nwhen = "input[type=radio]"\n'
                    'steps = [{do = "check_first", target = "input[type=radio]"}]\n', encoding="utf-8")
    config = load_config(path)
    assert (config.question, config.delay_s, config.strategies[0].steps[0]["do"]) == ("div.q", 3.0, "check_first")
    path.write_text("question = [", encoding="utf-8")
    with pytest.raises(UserError, match="not valid TOML"):
        load_config(path)


def test_url_list_names_bad_lines_and_repeated_names_and_keeps_the_rest(tmp_path):
    path = tmp_path / "urls.txt"
    path.write_text("# pages\n\nhttps://example.org/ex/renaissance-1\nftp://example.org/x\n"
                    "https://example.org/other/renaissance-1\nhttps://example.org/other/renaissance-1 second one\n",
                    encoding="utf-8")
    entries, problems = read_urls(path)
    assert [(e.line, e.exercise) for e in entries] == [(3, "renaissance-1"), (6, "second-one")]
    assert problems == ["--urls line 4: 'ftp://example.org/x' is not an http(s) URL",
                        "--urls line 5: exercise name 'renaissance-1' is already used on line 3 (add a NAME after the URL)"]


def test_a_page_counts_as_captured_only_when_its_last_visit_succeeded_and_its_files_exist(tmp_path):
    url = "http://127.0.0.1:1/exercise/a"
    journal.append(tmp_path, url=url, exercise="a", status="failed", questions=[], reason="timed out")
    assert not journal.is_captured(tmp_path, journal.latest(tmp_path).get(url), "a")
    journal.append(tmp_path, url=url, exercise="a", status="captured", questions=["q01"])
    assert not journal.is_captured(tmp_path, journal.latest(tmp_path).get(url), "a")  # no files yet
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "q01.png").write_bytes(b"png")
    (tmp_path / "a" / "q01.html").write_text("<p>x</p>")
    with open(tmp_path / journal.LOG_NAME, "a") as handle:
        handle.write('{"url": "cut by an interrup')  # a half-written last line is ignored
    assert journal.is_captured(tmp_path, journal.latest(tmp_path).get(url), "a")
    assert not journal.is_captured(tmp_path, journal.latest(tmp_path).get(url), "renamed")


def test_the_site_offers_the_seven_formats_and_reveals_answers_only_when_asked():
    exercises = load_exercises()
    assert sorted(e["format"] for e in exercises) == sorted(EDUART_FORMATS)
    client = make_app().test_client()
    page = client.get("/exercise/orsetti-errors").get_data(as_text=True)
    assert 'data-format="select_errors"' in page and "tempera" not in page  # the key is not in the page
    revealed = client.post("/check/orsetti-errors/q01").get_json()
    assert revealed["lines"] == ["Error: fresco -> tempera"]
    assert client.get("/exercise/nowhere").status_code == 404
    assert [client.post(f"/check/orsetti-one/{q}").status_code for q in ("q09", "q00", "x1")] == [404] * 3


def test_the_site_escapes_its_text():
    exercise = {"slug": "x", "title": "<b>T</b>", "format": "multiple_choice_radio", "instructions": "i",
                "questions": [{"text": "<script>alert(1)</script>", "choices": {"A": "a & b"}, "key": ["A"]}]}
    page = make_app([exercise]).test_client().get("/exercise/x").get_data(as_text=True)
    assert "<script>alert(1)" not in page and "&lt;script&gt;" in page and "a &amp; b" in page


def test_with_a_password_the_site_wants_a_sign_in_and_keeps_the_next_page():
    client = make_app(password="pw").test_client()
    first = client.get("/exercise/orsetti-one")
    assert first.status_code == 302 and "/sign-in?next=/exercise/orsetti-one" in first.headers["Location"]
    assert client.post("/check/orsetti-one/q01").status_code == 403
    assert client.post("/sign-in", data={"password": "nope", "next": "/exercise/orsetti-one"}).status_code == 401
    signed = client.post("/sign-in", data={"password": "pw", "next": "https://elsewhere.example/"})
    assert signed.status_code == 302 and signed.headers["Location"] == "/"  # no open redirect
    assert client.get("/exercise/orsetti-one").status_code == 200


def test_every_site_question_is_a_valid_item_record():
    records = site_records()
    assert len(records) == sum(len(e["questions"]) for e in load_exercises())
    assert {k: check_item(r, require_id=False)[1] for k, r in records.items() if check_item(r, require_id=False)[1]} == {}


@pytest.mark.parametrize(("args", "words"), [
    (["--urls", "{tmp}/missing.txt"], "--urls {tmp}/missing.txt: cannot read it"),
    (["--urls", "{tmp}/empty.txt"], "no URLs"),
    (["--urls", "{tmp}/one.txt", "--state", "{tmp}/empty.txt"], "not JSON"),
    (["--urls", "{tmp}/one.txt", "--state", "{tmp}/list.json"], "not a browser state file"),
    (["--urls", "{tmp}/one.txt", "--config", "{tmp}/missing.json"], "cannot read it"),
    (["--urls", "{tmp}/one.txt", "--delay", "-1"], "--delay must be 0 or more"),
    ([], "give --urls FILE"),
    (["--urls", "{tmp}/one.txt", "--parallel", "9"], "--parallel must be between 1 and 4"),
    (["--sign-in", "http://127.0.0.1:1/"], "--sign-in needs --state FILE"),
])
def test_capture_refuses_bad_input_in_one_line_with_exit_2(tmp_path, capsys, args, words):
    (tmp_path / "empty.txt").write_text("# nothing yet\n", encoding="utf-8")
    (tmp_path / "one.txt").write_text("http://127.0.0.1:1/exercise/a\n", encoding="utf-8")
    (tmp_path / "list.json").write_text("[]", encoding="utf-8")
    code = main(["capture", *[a.format(tmp=tmp_path) for a in args], "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert words.format(tmp=tmp_path) in err and len(err.strip().splitlines()) == 1


def test_a_url_list_with_only_bad_lines_names_them_without_starting_a_browser(tmp_path, capsys):
    urls = tmp_path / "urls.txt"
    urls.write_text("not-a-url\n", encoding="utf-8")
    assert main(["capture", "--urls", str(urls), "--out", str(tmp_path / "out")]) == 2
    out = capsys.readouterr().out
    assert "--urls line 1: 'not-a-url' is not an http(s) URL" in out and "1 could not be captured" in out


@pytest.mark.slow
def test_exercise_site_command_serves_the_pages_it_lists(tmp_path):
    """`exercise-site --write-urls FILE` in its own process: the listed pages answer; ended by its PID."""
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time
    import urllib.request
    from pathlib import Path

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    urls = tmp_path / "pages.txt"
    root = Path(__file__).resolve().parents[2]
    process = subprocess.Popen([sys.executable, "-m", "eduart_core", "exercise-site", "--port", str(port),
                                "--write-urls", str(urls)], cwd=root, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(root)})
    try:
        deadline = time.monotonic() + 60
        while not urls.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
        listed = urls.read_text(encoding="utf-8").split()
        assert len(listed) == 7 and all(u.startswith(f"http://127.0.0.1:{port}/exercise/") for u in listed)
        with urllib.request.urlopen(listed[0], timeout=10) as reply:
            assert 'class="question"' in reply.read().decode("utf-8")
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_exercise_site_on_a_port_in_use_is_one_line(capsys):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        assert main(["exercise-site", "--port", str(busy.getsockname()[1])]) == 2
    err = capsys.readouterr().err
    assert "cannot serve the exercise site" in err and "--port" in err and len(err.strip().splitlines()) == 1

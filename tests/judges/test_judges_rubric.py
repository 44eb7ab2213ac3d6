"""Rubrics, checks, judge prompts and verdicts: what an examiner writes and what a judge is asked.

What an examiner relies on: a rubric file is read with one clear line per mistake; its hash
changes with its text; the most specific attachment decides which rubric an item gets; the
checks mark dates, names and terms the way a person would; an item's score is its points over
the points that apply. What a researcher relies on: every judge request lists the scoring options
in a recorded order, the position probe reverses it, and a verdict is read or refused, never guessed.
"""
from __future__ import annotations

import hashlib
import re

import pytest

from eduart_core.errors import UserError
from eduart_core.judges import checks, prompts
from eduart_core.judges.rubric import RUBRICS_DIR, applicable_rubric, load_rubric, parse_rubric
from eduart_core.judges.scoring import item_score, mean_points
from eduart_core.vocab import CHECK_METHOD, JUDGE_METHOD, judge_profile_name, split_judge_profile


def test_the_shipped_rubric_is_read_and_hashed_by_its_bytes():
    rubric = load_rubric("open-v1")
    path = RUBRICS_DIR / "open-v1.toml"
    assert rubric.hash == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [c.method for c in rubric.criteria].count(JUDGE_METHOD) == 2
    assert {c.check for c in rubric.checked} == set(checks.CHECKS)  # every kind of check is used
    assert all(c.points >= 1 and c.allowed[0] == 0 for c in rubric.criteria)
    assert rubric.expected(rubric.criterion("date"), "demo-open-01") == [1303, 1305]


BASE = """name = "{name}"
[attach]
{attach}
[[criteria]]
id = "a"
points = 1
check = "alias"
[[criteria]]
id = "b"
points = 2
judge = "Is it good?"
{extra}
"""


def _write(tmp_path, name="r-v1", attach='formats = ["open_text"]', extra="") -> object:
    path = tmp_path / f"{name}.toml"
    path.write_text(BASE.format(name=name, attach=attach, extra=extra), encoding="utf-8")
    return path


@pytest.mark.parametrize("extra, words", [
    ('[[criteria]]\nid = "c"\npoints = 1', "either check"),
    ('[[criteria]]\nid = "c"\npoints = 1\ncheck = "magic"', "unknown check"),
    ('[[criteria]]\nid = "c"\npoints = 0\njudge = "x"', "points must be"),
    ('[[criteria]]\nid = "a"\npoints = 1\njudge = "x"', "share an id"),
    ('[items."x"]\nzzz = 1', "no criterion zzz"),
    ('colour = "red"', "unknown field"),
])
def test_a_bad_rubric_is_one_line_naming_the_file(tmp_path, extra, words):
    path = _write(tmp_path, extra=extra)
    with pytest.raises(UserError) as info:
        parse_rubric(path)
    message = str(info.value)
    assert words in message and str(path) in message and "\n" not in message


def test_the_name_must_be_the_file_stem_and_attach_names_something(tmp_path):
    wrong = tmp_path / "other.toml"
    wrong.write_text(BASE.format(name="r-v1", attach='formats = ["open_text"]', extra=""), encoding="utf-8")
    with pytest.raises(UserError, match="stem"):
        parse_rubric(wrong)
    with pytest.raises(UserError, match="names no format"):
        parse_rubric(_write(tmp_path, attach=""))
    with pytest.raises(UserError, match="unknown format"):
        parse_rubric(_write(tmp_path, attach='formats = ["essay"]'))


def test_a_changed_rubric_text_has_another_hash(tmp_path):
    before = parse_rubric(_write(tmp_path)).hash
    after = parse_rubric(_write(tmp_path, extra='[items."x"]\na = ["Giotto"]')).hash
    assert before != after


def test_the_most_specific_attachment_wins(tmp_path):
    by_format = parse_rubric(_write(tmp_path, "f-v1", 'formats = ["open_text"]'))
    by_task = parse_rubric(_write(tmp_path, "t-v1", 'tasks = ["Portraits"]'))
    by_item = parse_rubric(_write(tmp_path, "i-v1", 'items = ["q7"]'))
    rubrics = [by_format, by_task, by_item]
    assert applicable_rubric({"item_id": "q1", "type": "open_text"}, rubrics).name == "f-v1"
    assert applicable_rubric({"item_id": "q1", "type": "open_text", "task": "Portraits"}, rubrics).name == "t-v1"
    assert applicable_rubric({"item_id": "q7", "type": "open_text", "task": "Portraits"}, rubrics).name == "i-v1"
    assert applicable_rubric({"item_id": "q1", "type": "numeric"}, rubrics) is None
    twin = parse_rubric(_write(tmp_path, "g-v1", 'formats = ["open_text"]'))
    with pytest.raises(UserError, match="attach equally"):
        applicable_rubric({"item_id": "q1", "type": "open_text"}, [by_format, twin])


def _criterion(check: str, **params):
    from eduart_core.judges.rubric import Criterion

    return Criterion(id="c", label="c", points=1, method=CHECK_METHOD, check=check, params=params)


@pytest.mark.parametrize("text, expected, right", [
    ("Dipinta intorno al 1340.", 1305, True), ("Dipinta nel 1400.", 1305, False),
    ("Del XIV secolo.", 1305, True), ("Early 14th century work", [1303, 1305], True),
    ("Quattrocento fiorentino", 1427, True), ("Maybe 3.14 or 12345", 1305, False),
    ("Painted between 1500 and 1504", [1501, 1504], True), ("no date at all", 1305, False),
])
def test_the_date_check_reads_years_and_centuries(text, expected, right):
    assert checks.run_check(_criterion("date_within", years=50), expected, text) == int(right)


def test_the_alias_and_term_checks_fold_case_accents_and_punctuation():
    alias = _criterion("alias")
    assert checks.run_check(alias, ["Albrecht Dürer", "Dürer"], "It is by DURER, I think.") == 1
    assert checks.run_check(alias, ["Giotto"], "by Giottone") == 0  # whole words only
    assert checks.run_check(alias, ["Masaccio"], "by Masolino") == 0
    any_term = _criterion("required_term", match="any")
    all_terms = _criterion("required_term", match="all")
    assert checks.run_check(any_term, ["affresco", "fresco"], "un Affresco") == 1
    assert checks.run_check(all_terms, ["tempera", "secco"], "tempera a secco") == 1
    assert checks.run_check(all_terms, ["tempera", "secco"], "tempera su tavola") == 0


def test_an_item_score_is_points_over_the_points_that_apply(tmp_path):
    rubric = parse_rubric(_write(tmp_path, extra='[items."q1"]\na = ["Giotto"]'))
    # q1: both criteria apply (1 + 2 points); q2: the check has no value to compare with
    assert item_score(rubric, "q1", {"a": 1, "b": 1})["score"] == pytest.approx(2 / 3)
    assert item_score(rubric, "q2", {"b": 2})["score"] == 1.0
    assert item_score(rubric, "q1", {"a": 1}) is None  # not every criterion marked yet: no score
    details = item_score(rubric, "q1", {"a": 0, "b": 2})["details"]
    assert [(d["element"], d["given"], d["expected"]) for d in details] == [("a", 0, 1), ("b", 2, 2)]
    assert mean_points([1, 0]) == 0.5 and mean_points([]) is None


def test_the_option_order_is_drawn_per_request_recorded_and_reversible():
    rubric = load_rubric("open-v1")
    criterion = rubric.criterion("evidence")
    orders = {tuple(prompts.option_order(criterion, f"launch|{k}|evidence|0")) for k in range(40)}
    assert orders == {(0, 1), (1, 0)}  # both orders occur
    order = prompts.option_order(criterion, "launch|7|evidence|0")
    assert order == prompts.option_order(criterion, "launch|7|evidence|0")  # a resume draws the same
    assert prompts.parse_order(prompts.order_text(order)) == order
    templates = prompts.load_judge_templates()
    record = {"item_id": "x", "type": "open_text", "question_text": "Who painted it?",
              "answers": [{"id": "A", "references": ["Giotto"]}], "language": "en"}
    text = prompts.render_request(templates, record, criterion, "By Giotto.", list(reversed(order)))
    lines = [line for line in text.splitlines() if re.match(r"- \d+ points?:", line)]
    assert [int(line[2]) for line in lines] == list(reversed(order))
    assert "{{" not in text and "By Giotto." in text and "Giotto" in text.split("The answer to mark")[0]
    assert len(prompts.pad_answer("Giotto.", "it")) > 3 * len("Giotto.")


@pytest.mark.parametrize("reply, points, error", [
    ('{"points": 1, "reason": "ok"}', 1, None), ('```json\n{"points": 0, "reason": "no"}\n```', 0, None),
    ('{"score": 1}', 1, None), ("1", 1, None), ('{"points": 2}', None, "not one of"),
    ('{"points": true}', None, "no points"), ("I would give 0 or maybe 1", None, "no readable"),
    ("", None, "no readable"),
])
def test_a_verdict_is_read_or_refused(reply, points, error):
    verdict = prompts.parse_verdict(reply, (0, 1))
    assert verdict.points == points
    assert (verdict.error is None) if error is None else (error in verdict.error)


def test_judge_profile_names():
    name = judge_profile_name("openai_compatible:stub", "open-v1")
    assert name == "judge:openai_compatible:stub/open-v1"
    assert split_judge_profile(name) == ("openai_compatible:stub", "open-v1")
    from eduart_core.selection import Selection

    assert Selection(profile=name).profile == name
    for bad in ("judge:", "judge:x", "judge:/r", "judges:x/r"):
        with pytest.raises(UserError):
            Selection(profile=bad)

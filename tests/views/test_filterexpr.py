"""The filter language (`eduart_core.filterexpr`): `show --where` and the inspector's expression field.

What a researcher relies on: an expression keeps exactly the rows its words say; a mistake is one
line that names the position of the mistake (never a traceback); text that looks like code is a
mistake like any other and is never run; the inspector's link carries the expression and reopens the
same slice.
"""
from __future__ import annotations

import builtins
import io
import json
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pandas as pd
import pytest

from eduart_core import filterexpr
from eduart_core.filterexpr import FilterError
from eduart_core.text import plain

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def frame() -> pd.DataFrame:
    """A small score frame with the columns `show scores` prints (missing values included)."""
    return pd.DataFrame({
        "model": ["Sim A", "Sim B", "GPT-x", "Sim A", None],
        "condition": ["default", "default", "motivation", "motivation", "default"],
        "item_id": ["d-1", "d-2", "d-3", "d-4", "d-5"],
        "type": ["completion_open", "true_false", "completion_open", "multiple_choice_radio", "completion_open"],
        "has_image": [True, False, True, True, False],
        "score": [0.2, 1.0, 0.4, float("nan"), 0.0],
        "n_repeats": [1, 3, 1, 2, 1],
    })


VALID = [  # expression -> the item ids it keeps
    ('score < 0.5 and format == "completion_open" and has_image and model ~ "Sim"', ["d-1"]),
    ("score < 0.5", ["d-1", "d-3", "d-5"]),  # NaN matches no comparison
    ("score >= 0.4", ["d-2", "d-3"]),
    ("score != 1", ["d-1", "d-3", "d-5"]),  # a missing score is not "different from 1"
    ("score == 1.0", ["d-2"]),
    ("score > -1 and score <= 0.2", ["d-1", "d-5"]),
    ("n_repeats > 1", ["d-2", "d-4"]),
    ("has_image", ["d-1", "d-3", "d-4"]),
    ("not has_image", ["d-2", "d-5"]),
    ("has_image == false", ["d-2", "d-5"]),
    ("has_image != True", ["d-2", "d-5"]),
    ('model in ["GPT-x", "Sim B"]', ["d-2", "d-3"]),
    ('model not in ["GPT-x"]', ["d-1", "d-2", "d-4"]),  # a missing model is in no list
    ("model in []", []),
    ('model ~ "^Sim [AB]$"', ["d-1", "d-2", "d-4"]),
    ("model ~ '(?i)gpt'", ["d-3"]),
    ('not model ~ "Sim"', ["d-3", "d-5"]),
    ('(score < 0.3 or score > 0.9) and not (model == "Sim B")', ["d-1", "d-5"]),
    ('condition == "motivation" OR item_id == "d-1"', ["d-1", "d-3", "d-4"]),  # keywords in any case
    ('item_id >= "d-4"', ["d-4", "d-5"]),  # text is ordered as text
    ('type == \'true_false\'', ["d-2"]),
    ('model == "Sim \\"A\\""', []),  # escaped quotes are part of the text
    ("((((score < 0.5))))", ["d-1", "d-3", "d-5"]),
    ("not not has_image", ["d-1", "d-3", "d-4"]),
]

INVALID = [  # expression -> (position, words of the one line)
    ("__import__('os')", (11, "no functions")),
    ("__import__('os').system('touch /tmp/eduart_pwned')", (11, "no functions")),
    ("().__class__", (2, "expected a column name")),
    ("score.__class__", (6, "unexpected character '.'")),
    ("exec('print(1)')", (5, "no functions")),
    ("lambda: 1", (7, "unexpected character ':'")),
    ("open('/etc/passwd').read()", (5, "no functions")),
    ("score ==", (9, "expected a value after '=='")),
    ("score == ", (10, "found the end")),
    ("score = 1", (7, "use == to compare")),
    ('model == "Sim', (10, "unterminated string")),
    ("model ~ 'x", (9, "unterminated string")),
    ('model ~ "("', (9, "invalid regular expression")),
    ('model ~ "' + "a" * 300 + '"', (9, "longer than 200 characters")),
    ("model ~ 3", (9, "quoted")),
    ('model ~ "(a+)+$"', (9, "repeats a group that itself repeats")),  # exponential backtracking refused
    ('model ~ "(\\w*x)*"', (9, "repeats a group that itself repeats")),
    ('score == "high"', (7, "cannot be compared with text")),
    ('model < 3', (7, "cannot be compared with number")),
    ("has_image < true", (11, "use == or !=")),
    ('has_image ~ "T"', (11, "'~' matches text")),
    ("model", (1, "not true/false")),
    ("nope == 1", (1, "no column 'nope'")),
    ("score < 0.5 and", (16, "expected a column name, found the end")),
    ("score < 0.5 score > 1", (13, "expected 'and', 'or' or the end")),
    ("(score < 0.5", (13, "expected ')' to close the '(' at position 1")),
    ("score < 0.5)", (12, "closing parenthesis without its opening")),
    ("1 == score", (1, "a comparison starts with the column")),
    ("score in 1", (10, "expected '['")),
    ('model in ["a" "b"]', (15, "expected ',' or ']'")),
    ("score < 12abc", (9, "a number runs into a name")),
    ("score < 0.5 and and", (17, "expected a column name")),
    ("x" * 5000, (2001, "longer than 2000 characters")),
    ("(" * 200 + "has_image" + ")" * 200, (41, "nested deeper than 40 levels")),
    ("not " * 100 + "has_image", (161, "nested deeper than 40 levels")),
    ("score @ 1", (7, "unexpected character '@'")),
]


def kept(frame: pd.DataFrame, expression: str) -> list[str]:
    return list(filterexpr.apply(frame, expression)["item_id"])


@pytest.mark.parametrize("expression,ids", VALID)
def test_a_valid_expression_keeps_the_rows_its_words_say(frame, expression, ids):
    assert kept(frame, expression) == ids


@pytest.mark.parametrize("expression,expected", INVALID)
def test_a_mistake_is_one_line_with_its_position(frame, expression, expected, monkeypatch, tmp_path):
    position, words = expected
    ran = []
    for name in ("eval", "exec", "compile", "__import__"):  # nothing may be run: any call is recorded
        real = getattr(builtins, name)
        monkeypatch.setattr(builtins, name, lambda *a, _real=real, _name=name, **k: (ran.append(_name), _real(*a, **k))[1])
    with pytest.raises(FilterError) as caught:
        filterexpr.mask(frame, expression)
    monkeypatch.undo()
    message = str(caught.value)
    assert "\n" not in message and len(message) < 400, message
    assert message.startswith(f"position {position}: ") and words in message, message
    assert caught.value.position == position
    assert not [n for n in ran if n != "__import__"], ran  # no eval/exec/compile of the text
    assert not Path("/tmp/eduart_pwned").exists()


def test_the_language_counts_thirty_expressions_and_more():
    assert len(VALID) + len(INVALID) >= 30 and len(INVALID) >= 15


def test_an_empty_expression_says_so(frame):
    with pytest.raises(FilterError, match="^the expression is empty$"):
        filterexpr.mask(frame, "   ")


def test_the_module_holds_no_evaluator_of_code():
    """The parser builds its own tree: no eval, exec, compile of source text or ast in the module."""
    source = (ROOT / "eduart_core" / "filterexpr.py").read_text(encoding="utf-8")
    for word in ("eval(", "exec(", "import ast", "compile(", "getattr(", "__import__"):
        assert word not in source.replace("re.compile(", "")


def test_a_syntax_mistake_is_found_without_a_frame():
    with pytest.raises(FilterError, match="^position 9: "):
        filterexpr.parse("score ==")
    assert filterexpr.parse("has_image") is not None


def test_format_names_the_type_column_and_a_real_format_column_wins(frame):
    assert kept(frame, 'format == "true_false"') == ["d-2"]
    with_format = frame.assign(format=["x", "y", "x", "y", "x"])
    assert kept(with_format, 'format == "y"') == ["d-2", "d-4"]


def test_the_mask_is_aligned_with_the_frames_index(frame):
    shuffled = frame.set_index(pd.Index([10, 3, 7, 1, 5]))
    mask = filterexpr.mask(shuffled, "has_image")
    assert list(mask.index) == [10, 3, 7, 1, 5] and mask.dtype == bool
    assert list(mask) == [True, False, True, True, False]


# ---------------------------------------------------------------- `show VIEW --where`
def _show_here(db: Path, *args: str) -> tuple[int, str]:
    from eduart_core.cli import main

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        code = main(["show", *args, "--db", str(db)])
    return code, buffer.getvalue()


@pytest.mark.slow
def test_show_scores_where_keeps_the_rows_a_direct_filter_keeps(demo_db):
    code, out = _show_here(demo_db, "scores")
    every = pd.DataFrame(json.loads(out))
    expression = 'score < 0.5 and format == "completion_open" and has_image and model ~ "Sim"'
    code, out = _show_here(demo_db, "scores", "--where", expression)
    assert code == 0
    rows = pd.DataFrame(json.loads(out))
    direct = every[(every["score"] < 0.5) & (every["type"] == "completion_open") & every["has_image"]
                   & every["model"].str.contains("Sim")]
    assert len(rows) == len(direct) > 0
    assert sorted(zip(rows["model"], rows["item_id"])) == sorted(zip(direct["model"], direct["item_id"]))
    code, out = _show_here(demo_db, "explorer_items", "--where", 'type in ["true_false", "completion_open"] and p < 0.5')
    listed = json.loads(out)  # any view's frame: here the inspector's item list with its statistics
    assert code == 0 and listed and {r["type"] for r in listed} <= {"true_false", "completion_open"}
    assert all(r["p"] < 0.5 for r in listed)


@pytest.mark.slow
def test_show_where_mistakes_are_one_line_with_exit_2(demo_db):
    for where, words in [("score ==", "position 9: expected a value after '=='"),
                         ("__import__('os')", "position 11: unexpected '(' after '__import__'"),
                         ("colour == 'red'", "--where on view 'scores': position 1: no column 'colour' here"),
                         ("score == 'x", "position 10: unterminated string")]:
        out = subprocess.run([sys.executable, "-m", "eduart_core", "show", "scores", "--where", where,
                              "--db", str(demo_db)], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert out.returncode == 2, (where, out.stdout[:200])
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0] and "Traceback" not in out.stderr, (where, out.stderr)
        assert out.stdout == ""


# ---------------------------------------------------------------- the inspector (AppTest)
@pytest.fixture
def app(demo_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    monkeypatch.setenv("EDUART_DB", str(demo_db))
    views.clear_caches()
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)


def _inspector(app, **query):
    for key, value in query.items():
        app.query_params[key] = value
    app.run()
    app.switch_page("pages/07_inspector.py").run()
    assert not app.exception, app.exception[0].value
    return app


def _slice(demo_db, expression: str) -> pd.DataFrame:
    from eduart_core import views
    from eduart_core.selection import Selection
    from eduart_core.store import Store

    src = views.Source.of(Store(demo_db))
    return filterexpr.apply(views.scores(src, Selection(dataset="demo"), all_conditions=True), expression)


def _list_caption(app) -> str:
    return next(c.value for c in app.caption if " items (" in c.value and "condition" in c.value)


@pytest.mark.slow
def test_the_inspector_filters_by_expression_and_its_link_reopens_the_slice(app, demo_db):
    expression = 'score < 0.5 and format == "completion_open" and model ~ "Sim A"'
    expected = _slice(demo_db, expression)
    items = sorted(set(expected["item_id"]))
    assert 0 < len(items) < 40
    _inspector(app)
    app.text_input(key="insp_where").set_value(expression).run()
    assert not app.exception
    assert app.query_params["where"] in (expression, [expression])  # the URL carries it
    assert _list_caption(app).startswith(f"{len(items)} of ")
    shown = next(m.value for m in app.markdown if m.value.startswith("Item **"))
    assert any(f"Item **{plain(i)}**" in shown for i in items)
    share = next(c.value for c in app.code if c.value.startswith("/inspector?"))
    assert "where=" in share

    # a link with the expression (a fresh session) opens the same slice
    from urllib.parse import parse_qs, urlsplit

    from streamlit.testing.v1 import AppTest

    query = {k: v[0] for k, v in parse_qs(urlsplit(share).query).items()}
    assert query["where"] == expression
    fresh = _inspector(AppTest.from_file(str(ROOT / "app.py"), default_timeout=180), **query)
    assert fresh.text_input(key="insp_where").value == expression
    assert _list_caption(fresh).startswith(f"{len(items)} of ")
    assert any(f"Item **{plain(query['item'])}**" in m.value for m in fresh.markdown)
    answers = expected[expected["item_id"] == query["item"]]
    assert any(c.value.startswith(f"Showing the {len(answers)} answers") for c in fresh.caption)


@pytest.mark.slow
def test_an_invalid_expression_is_one_line_and_the_page_goes_on(app):
    _inspector(app, where="score == ")
    errors = [e.value for e in app.error]  # the field's value is stripped: "score ==" ends at 8
    assert errors == ["Filter not applied: " + plain("position 9: expected a value after '==' (a \"string\", a number, "
                            "true or false), found the end")]
    assert any(m.value.startswith("Item **") for m in app.markdown)  # the list and the card are still there
    app.text_input(key="insp_where").set_value("__import__('os')").run()
    assert not app.exception
    assert [e.value for e in app.error] == ["Filter not applied: " + plain("position 11: unexpected '(' after "
                                                  "'__import__': the filter language has no functions")]
    app.selectbox(key="insp_quick").set_value("all_wrong").run()  # the page's own filters keep working
    assert not app.exception and "no model fully right" in _list_caption(app).lower()

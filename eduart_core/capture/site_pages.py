"""HTML of the local exercise site: one page per exercise, one form per question.

Why hand-written HTML (escaped with markupsafe): the site stands in for an exercise platform, so
its pages look like one (inputs a browser answers, a Check button, a solution box that fills only
after the server answered), and nothing in it depends on the studio's own rendering.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

from ..formats import find_format

_BLANK = re.compile(r"\[([A-Z])\]")
_STYLE = """
body { font-family: sans-serif; margin: 0 auto; max-width: 900px; padding: 24px; color: #222; }
form.question { border: 1px solid #bbb; border-radius: 6px; padding: 16px; margin: 18px 0; }
.stem { font-weight: bold; } label { display: block; margin: 4px 0; } .bank li { display: inline; margin-right: 12px; }
.word { cursor: pointer; padding: 0 1px; } .word.selected { background: #fd6; }
.solution { margin-top: 10px; padding: 8px; background: #e8f5e9; border-left: 4px solid #2e7d32; }
.right { outline: 2px solid #2e7d32; }
"""
_SCRIPT = """
const delay = Number(new URLSearchParams(location.search).get('delay') || 0) * 1000;
document.querySelectorAll('.word').forEach(w => w.addEventListener('click', () => w.classList.toggle('selected')));
document.querySelectorAll('form.question').forEach(form => form.addEventListener('submit', event => {
  event.preventDefault();
  form.querySelector('button[type=submit]').disabled = true;
  setTimeout(async () => {
    const reply = await fetch(form.dataset.check, {method: 'POST'});
    const data = await reply.json();
    const box = form.querySelector('.solution');
    for (const line of data.lines) { const p = document.createElement('p'); p.textContent = line; box.appendChild(p); }
    for (const id of data.right) { form.querySelectorAll('[data-id="' + id + '"]').forEach(e => e.classList.add('right')); }
    box.hidden = false;
  }, delay);
}));
"""


def _choices(question: Mapping[str, Any], kind: str) -> Markup:
    return Markup("").join(
        Markup('<label data-id="{0}"><input type="{1}" name="answer" value="{0}"> {0}. {2}</label>')
        .format(key, kind, text) for key, text in question["choices"].items())


def _statements(question: Mapping[str, Any]) -> Markup:
    rows = []
    for key, text in question["statements"].items():
        buttons = Markup("").join(Markup('<label><input type="radio" name="{0}" value="{1}"> {1}</label>')
                                  .format(key, word) for word in ("True", "False"))
        rows.append(Markup('<div class="statement" data-id="{0}"><p>{0}. {1}</p>{2}</div>').format(key, text, buttons))
    return Markup("").join(rows)


def _passage(question: Mapping[str, Any], blank) -> Markup:
    """The question text with each [X] marker replaced by `blank(X)` (an input or a select)."""
    parts, last = [], 0
    for match in _BLANK.finditer(question["text"]):
        parts += [escape(question["text"][last:match.start()]), blank(match.group(1))]
        last = match.end()
    parts.append(escape(question["text"][last:]))
    return Markup('<p class="passage">{}</p>').format(Markup("").join(parts))


def _select(name: str, words: list[str]) -> Markup:
    options = Markup("").join(Markup("<option>{}</option>").format(w) for w in words)
    return Markup('<select name="{0}" data-id="{0}"><option value="">[{0}]</option>{1}</select>').format(name, options)


def _words(question: Mapping[str, Any]) -> Markup:
    words = question["text"].split()
    return Markup('<p class="passage">{}</p>').format(Markup(" ").join(
        Markup('<span class="word" data-index="{}">{}</span>').format(i, w) for i, w in enumerate(words)))


def question_body(fmt: str, question: Mapping[str, Any]) -> Markup:
    """The answering part of one question, as the format's site spec says (`AnswerFormat.site`)."""
    body = site_spec(fmt)["body"]
    if body == "choices":
        return Markup('<p class="stem">{}</p>{}').format(question["text"], _choices(question, site_spec(fmt)["input"]))
    if body == "statements":
        return Markup('<p class="stem">{}</p>{}').format(question["text"], _statements(question))
    if body == "bank":
        bank = Markup("").join(Markup("<li>{}</li>").format(w) for w in question["bank"])
        return Markup('<ul class="bank">{}</ul>{}').format(bank, _passage(question, lambda k: _select(k, question["bank"])))
    if body == "select":
        return _passage(question, lambda k: _select(k, question["options"][k]))
    if body == "text":
        return _passage(question, lambda k: Markup('<span class="blank">[{0}] <input type="text" name="{0}" data-id="{0}" size="12"></span>').format(k))
    if body == "words":
        return _words(question)
    raise ValueError(f"the exercise site has no page for format {fmt!r}")


def site_spec(fmt: str) -> Mapping[str, Any]:
    """How the site shows a format (`AnswerFormat.site`); ValueError when it has no page for it."""
    found = find_format(fmt)
    if found is None or found.site is None:
        raise ValueError(f"the exercise site has no page for format {fmt!r}")
    return found.site


def solution_lines(fmt: str, question: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """What the site reveals after a submission: lines of text, and the ids to mark as right."""
    key = question["key"]
    spec = site_spec(fmt)
    if spec["key"] == "options":
        return [f"{spec['label']}: " + "; ".join(f"{k}. {question['choices'][k]}" for k in key)], list(key)
    if spec["key"] == "statements":
        return [f"{k}: {v}" for k, v in key.items()], [k for k, v in key.items() if v == "True"]
    if spec["key"] == "errors":
        return [f"Error: {wrong} -> {right}" for wrong, right in key], []
    return ["Right answers: " + "; ".join(f"[{k}] {v}" for k, v in key.items())], list(key)


def exercise_page(exercise: Mapping[str, Any]) -> str:
    """The whole page of one exercise."""
    forms = []
    for index, question in enumerate(exercise["questions"], start=1):
        name = f"q{index:02d}"
        forms.append(Markup(
            '<form class="question" data-question="{0}" data-format="{1}" data-check="/check/{2}/{0}">'
            '<h2>Question {3}</h2>{4}<button type="submit">Check</button>'
            '<div class="solution" hidden></div></form>').format(
                name, exercise["format"], exercise["slug"], index, question_body(exercise["format"], question)))
    return str(Markup(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{0}</title><style>{1}</style></head>'
        '<body data-exercise="{2}"><h1 class="exercise-title">{0}</h1><p class="instructions">{3}</p>{4}'
        '<script>{5}</script></body></html>').format(
            exercise["title"], Markup(_STYLE), exercise["slug"], exercise["instructions"],
            Markup("").join(forms), Markup(_SCRIPT)))


def index_page(exercises: Sequence[Mapping[str, Any]]) -> str:
    """The list of exercises."""
    rows = Markup("").join(Markup('<li><a href="/exercise/{}">{}</a> ({})</li>').format(e["slug"], e["title"], e["format"])
                           for e in exercises)
    return str(Markup('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Exercises</title></head>'
                      '<body><h1>Exercises</h1><ul>{}</ul></body></html>').format(rows))


def sign_in_page(error: bool, next_url: str = "/") -> str:
    """The sign-in form (the site's password is set by whoever serves it)."""
    note = Markup('<p class="error">Wrong password.</p>') if error else Markup("")
    return str(Markup('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head>'
                      '<body><h1>Sign in</h1>{}<form id="sign-in" method="post" action="/sign-in">'
                      '<input type="hidden" name="next" value="{}">'
                      '<label>Password <input type="password" name="password"></label>'
                      '<button type="submit">Sign in</button></form></body></html>').format(note, next_url))

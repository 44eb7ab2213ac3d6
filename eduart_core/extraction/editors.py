"""Editors that speak the item, not JSON: a small data-only spec per answer format.

Why: a reviewer correcting an extraction should see options as rows, the answer key as radio
buttons or checkboxes, one input per blank, and errors as "wrong word -> correction" rows, never a
JSON box (saving a pre-filled JSON box unchanged once promoted a doubled space into the gold).

Three layers, all free of Streamlit:
- the spec: plain data in each format's ``editor`` slot of the format registry
  (``eduart_core.formats``): ``{"format", "fields": [{"path", "widget", "label", ...}]}``, a path
  being a record field (``answers``), a leaf (``answers[0].value``) or a pattern (``answers[*].text``);
  fields a spec leaves out get the common widgets (titles, text, language, format);
- ``WIDGETS``: per widget kind, a codec turning a field value into primitive controls (text,
  textarea, radio, checkbox, toggle, select) and the controls' values back into a value, plus a
  validation that names the field and the problem;
- ``editor_for(format, path, start, record, other)``: the editor for one reviewed path, started
  from the side the reviewer picked, with the controls that differ from the other side marked.
The page draws the controls generically and calls ``Editor.decode`` / ``Editor.problems``.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..formats import AnswerFormat, find_format
from ..items import blank_ids
from ..vocab import (
    BENCHMARK_LANGUAGES,
    LANGUAGE_NAMES,
    format_label,
    format_names,
)
from .compare import compare_values, top_field
from .paths import parse_path

CONTROL_KINDS = ("text", "textarea", "radio", "checkbox", "toggle", "select", "number")
TRUE, FALSE = "True", "False"


@dataclass(frozen=True)
class Control:
    """One primitive input of an editor (the page maps ``kind``, one of ``CONTROL_KINDS``, to a widget)."""

    key: str
    kind: str
    label: str
    value: Any
    options: tuple = ()
    row: str | None = None        # controls sharing a row label are drawn side by side
    subpath: str | None = None    # the part of the field this control edits (for marks)
    marked: bool = False          # differs from the other extraction


@dataclass
class Editor:
    """The editor of one reviewed path: controls plus decoding and validation."""

    path: str
    kind: str
    label: str
    controls: list[Control]
    _decode: Callable[[dict[str, Any]], Any]
    _validate: Callable[[Any], list[str]]
    help: str = ""

    def initial(self) -> dict[str, Any]:
        """The controls' starting values (what an unchanged editor decodes from)."""
        return {c.key: c.value for c in self.controls}

    def decode(self, values: dict[str, Any]) -> Any:
        """The field value the controls describe (missing controls keep their start value)."""
        return self._decode({**self.initial(), **values})

    def problems(self, values: dict[str, Any]) -> list[str]:
        """Problems of the decoded value, each naming the field: ``choices[B].text: is empty``."""
        try:
            value = self.decode(values)
        except ValueError as exc:
            return [f"{self.path}: {exc}"]
        return self._validate(value)


@dataclass(frozen=True)
class Context:
    format: str
    path: str
    record: dict
    spec: dict = field(default_factory=dict)  # the spec entry of this path (extra keys: item_fields, ...)


@dataclass(frozen=True)
class Widget:
    """A codec: value -> controls, control values -> value, value -> problems."""

    controls: Callable[[Any, Context], list[Control]]
    decode: Callable[[dict[str, Any], Context], Any]
    validate: Callable[[Any, Context], list[str]]
    help: str = ""


# --------------------------------------------------------------------------------- text checks

def text_problems(text: str) -> list[str]:
    """Invisible mistakes in a typed text: doubled, leading or trailing spaces, no-break spaces."""
    out = []
    if text != text.strip():
        out.append("has a leading or trailing space")
    found = re.search(r"\S?( {2,})", text.strip())
    if found:
        before = text.strip()[:found.start(1)].split()[-1:] or [""]
        out.append(f"has a doubled space after {before[0]!r}")
    if "\u00a0" in text:
        out.append("has a no-break space")
    if "\t" in text or "\r" in text:
        out.append("has a tab or carriage return")
    return out


def _named(path: str, problems: list[str]) -> list[str]:
    return [f"{path}: {p}" for p in problems]


def _text(value: Any) -> str:
    return "" if value is None else str(value)


OPTIONAL_TEXT = ("question_title", "instructions")


# --------------------------------------------------------------------------------- simple widgets

def _line_controls(kind: str):
    def controls(value: Any, ctx: Context) -> list[Control]:
        return [Control("text", kind, _label(ctx.path, ctx.format), _text(value), subpath=ctx.path)]
    return controls


def _line_decode(values: dict, ctx: Context) -> Any:
    text = values["text"]
    if text == "" and (ctx.path in OPTIONAL_TEXT or ctx.path == "question_text"):
        return None  # an absent optional field
    return text


def _line_validate(value: Any, ctx: Context) -> list[str]:
    if value is None:
        return []
    if value == "" or not str(value).strip():
        return [f"{ctx.path}: is empty"]
    return _named(ctx.path, text_problems(str(value)))


def _toggle_controls(value: Any, ctx: Context) -> list[Control]:
    return [Control("on", "toggle", _label(ctx.path, ctx.format), bool(value), subpath=ctx.path)]


def _select_controls(options_of: Callable[[Context], list[str]]):
    def controls(value: Any, ctx: Context) -> list[Control]:
        options = list(options_of(ctx))
        if value is not None and value not in options:
            options.append(value)
        return [Control("choice", "select", _label(ctx.path, ctx.format), value, tuple(options), subpath=ctx.path)]
    return controls


def _required_choice(value: Any, ctx: Context) -> list[str]:
    return [] if value not in (None, "") else [f"{ctx.path}: choose a value"]


def _json_controls(value: Any, ctx: Context) -> list[Control]:
    return [Control("json", "textarea", f"{ctx.path} (JSON: no dedicated editor for this field)",
                    json.dumps(value, ensure_ascii=False, indent=1), subpath=ctx.path)]


def _json_decode(values: dict, ctx: Context) -> Any:
    try:
        return json.loads(values["json"])
    except ValueError as exc:
        raise ValueError(f"not valid JSON ({exc})") from None


# --------------------------------------------------------------------------------- rows

def _rows(n_rows: int) -> range:
    return range(n_rows + 1)  # one empty row to add an entry


def _option_rows_controls(value: Any, ctx: Context) -> list[Control]:
    rows = [v for v in (value or []) if isinstance(v, dict)]
    word = words_of(ctx.format).row_word.capitalize()
    out = []
    for i in _rows(len(rows)):
        row = rows[i] if i < len(rows) else {}
        ident = _text(row.get("id"))
        label = f"{word} {i + 1}" if i < len(rows) else f"New {word.lower()}"
        out.append(Control(f"id{i}", "text", "id", ident, row=label, subpath=f"{ctx.path}[{ident}].id"))
        out.append(Control(f"text{i}", "text", "text", _text(row.get("text")), row=label,
                           subpath=f"{ctx.path}[{ident}].text"))
    return out


def _row_count(values: dict, prefix: str) -> int:
    return len([k for k in values if re.fullmatch(rf"{prefix}\d+", k)])


def _option_rows_decode(values: dict, ctx: Context) -> list[dict]:
    out = []
    for i in range(_row_count(values, "id")):
        ident, text = values[f"id{i}"].strip().upper(), values[f"text{i}"]
        if ident or text.strip():
            out.append({"id": ident, "text": text})
    return out


def _option_rows_validate(value: list[dict], ctx: Context) -> list[str]:
    out, seen = [], set()
    for i, row in enumerate(value):
        where = f"{ctx.path}[{row['id']}]" if row["id"] else f"{ctx.path} row {i + 1}"
        if not row["id"]:
            out.append(f"{where}: the id is empty")
        elif not re.fullmatch(r"[A-Z]{1,2}", row["id"]):
            out.append(f"{where}: the id must be a capital letter")
        elif row["id"] in seen:
            out.append(f"{where}: the id appears twice")
        seen.add(row["id"])
        if not row["text"].strip():
            out.append(f"{where}.text: is empty")
        else:
            out.extend(_named(f"{where}.text", text_problems(row["text"])))
    if not value:
        out.append(f"{ctx.path}: at least one row is needed")
    return out


def _word_bank_controls(value: Any, ctx: Context) -> list[Control]:
    terms = [t for t in (value or []) if not isinstance(t, dict)]
    return [Control(f"term{i}", "text", f"Term {i + 1}" if i < len(terms) else "New term",
                    _text(terms[i]) if i < len(terms) else "", subpath=f"{ctx.path}[{i}]")
            for i in _rows(len(terms))]


def _word_bank_decode(values: dict, ctx: Context) -> list[str]:
    return [values[f"term{i}"] for i in range(_row_count(values, "term")) if values[f"term{i}"].strip()]


def _word_bank_validate(value: list[str], ctx: Context) -> list[str]:
    out = []
    for i, term in enumerate(value):
        out.extend(_named(f"{ctx.path}[{i}]", text_problems(term)))
        if term in value[:i]:
            out.append(f"{ctx.path}[{i}]: {term!r} appears twice in the word bank")
    return out or ([] if value else [f"{ctx.path}: the word bank is empty"])


def _alternatives_controls(value: Any, ctx: Context) -> list[Control]:
    rows = [v for v in (value or []) if isinstance(v, dict)]
    out = []
    for i in _rows(len(rows)):
        row = rows[i] if i < len(rows) else {}
        ident = _text(row.get("id"))
        options = list(row.get("options") or []) + ["", ""]
        label = f"Blank [{ident}]" if ident else "New blank"
        out.append(Control(f"id{i}", "text", "blank id", ident, row=label, subpath=f"{ctx.path}[{ident}].id"))
        for j in (0, 1):
            out.append(Control(f"opt{i}_{j}", "text", f"alternative {j + 1}", _text(options[j]), row=label,
                               subpath=f"{ctx.path}[{ident}].options[{j}]"))
    return out


def _alternatives_decode(values: dict, ctx: Context) -> list[dict]:
    out = []
    for i in range(_row_count(values, "id")):
        ident = values[f"id{i}"].strip().upper()
        options = [values[f"opt{i}_0"], values[f"opt{i}_1"]]
        if ident or any(o.strip() for o in options):
            out.append({"id": ident, "options": options})
    return out


def _alternatives_validate(value: list[dict], ctx: Context) -> list[str]:
    out = []
    for i, row in enumerate(value):
        where = f"{ctx.path}[{row['id']}]" if row["id"] else f"{ctx.path} row {i + 1}"
        if not row["id"]:
            out.append(f"{where}: the blank id is empty")
        for j, option in enumerate(row["options"]):
            if not option.strip():
                out.append(f"{where}.options[{j}]: is empty")
            else:
                out.extend(_named(f"{where}.options[{j}]", text_problems(option)))
    return out


def _error_rows_controls(value: Any, ctx: Context) -> list[Control]:
    rows = [v for v in (value or []) if isinstance(v, dict)]
    out = []
    for i in _rows(len(rows)):
        row = rows[i] if i < len(rows) else {}
        label = f"Error {i + 1}" if i < len(rows) else "New error"
        out.append(Control(f"error{i}", "text", "wrong word in the passage", _text(row.get("error")), row=label,
                           subpath=f"{ctx.path}[{i}].error"))
        out.append(Control(f"correct{i}", "text", "correction", _text(row.get("correct")), row=label,
                           subpath=f"{ctx.path}[{i}].correct"))
    return out


def _error_rows_decode(values: dict, ctx: Context) -> list[dict]:
    out = []
    for i in range(_row_count(values, "error")):
        error, correct = values[f"error{i}"], values[f"correct{i}"]
        if error.strip() or correct.strip():
            out.append({"error": error, "correct": correct})
    return out


def _error_rows_validate(value: list[dict], ctx: Context) -> list[str]:
    out = []
    passage = _text(ctx.record.get("question_text"))
    for i, row in enumerate(value):
        where = f"{ctx.path}[{i}]"
        if not row["error"].strip():
            out.append(f"{where}.error: the wrong word is empty")
        elif passage and row["error"] not in passage:
            out.append(f"{where}.error: {row['error']!r} does not appear in the passage")
        if not row["correct"].strip():
            out.append(f"{where}.correct: the correction is empty")
        for part in ("error", "correct"):
            out.extend(_named(f"{where}.{part}", text_problems(row[part])))
    return out or ([] if value else [f"{ctx.path}: list at least one error"])


# --------------------------------------------------------------------------------- answer keys

def _options(ctx: Context, value: Any = None) -> list[tuple[str, str]]:
    """(id, text) of the record's options, plus ids only the edited value mentions."""
    out = [(str(c.get("id")), _text(c.get("text"))) for c in ctx.record.get("choices") or [] if isinstance(c, dict)]
    known = {i for i, _ in out}
    for entry in value or []:
        if isinstance(entry, dict) and entry.get("id") is not None and str(entry["id"]) not in known:
            out.append((str(entry["id"]), _text(entry.get("description") or entry.get("text"))))
            known.add(str(entry["id"]))
    return out


def _key_ids(value: Any) -> list[str]:
    return [str(a.get("id")) for a in value or [] if isinstance(a, dict) and a.get("id") is not None]


def _single_key_controls(value: Any, ctx: Context) -> list[Control]:
    options = _options(ctx, value)
    keys = _key_ids(value)
    labels = tuple(f"{i}. {t}" for i, t in options)
    current = next((f"{i}. {t}" for i, t in options if keys and i == keys[0]), None)
    return [Control("key", "radio", "The correct option", current, labels, subpath=ctx.path)]


def _description(ctx: Context, ident: str) -> str:
    return next((t for i, t in _options(ctx) if i == ident), "")


def _single_key_decode(values: dict, ctx: Context) -> list[dict]:
    chosen = values["key"]
    if not chosen:
        return []
    ident = str(chosen).split(".", 1)[0]
    return [{"id": ident, "description": _description(ctx, ident)}]


def _key_validate(word: str):
    def validate(value: list[dict], ctx: Context) -> list[str]:
        return [] if value else [f"{ctx.path}: {word}"]
    return validate


def _multi_key_controls(value: Any, ctx: Context) -> list[Control]:
    keys = set(_key_ids(value))
    return [Control(f"opt_{i}", "checkbox", f"{i}. {t}", i in keys, subpath=f"{ctx.path}[{i}]")
            for i, t in _options(ctx, value)]


def _multi_key_decode(values: dict, ctx: Context) -> list[dict]:
    return [{"id": i, "description": t} for i, t in _options(ctx) if values.get(f"opt_{i}")] + [
        {"id": k[4:], "description": ""} for k, on in values.items()
        if k.startswith("opt_") and on and k[4:] not in {i for i, _ in _options(ctx)}]


def _true_false_controls(value: Any, ctx: Context) -> list[Control]:
    verdicts = {str(a.get("id")): _text(a.get("text")) for a in value or [] if isinstance(a, dict)}
    return [Control(f"tf_{i}", "toggle", f"{i}. {t} (on = true)", verdicts.get(i) == TRUE, subpath=f"{ctx.path}[{i}]")
            for i, t in _options(ctx, value)]


def _true_false_decode(values: dict, ctx: Context) -> list[dict]:
    return [{"id": i, "text": TRUE if values.get(f"tf_{i}") else FALSE} for i, _ in _options(ctx)]


def _blank_list(ctx: Context, value: Any) -> list[str]:
    ids = blank_ids(ctx.record.get("question_text"))
    for ident in _key_ids(value):
        if ident not in ids:
            ids.append(ident)
    return ids


def _blank_answers(value: Any) -> dict[str, str]:
    return {str(a.get("id")): _text(a.get("description")) for a in value or [] if isinstance(a, dict)}


def _blanks_controls(value: Any, ctx: Context) -> list[Control]:
    given = _blank_answers(value)
    bank = [str(t) for t in ctx.record.get("choices") or [] if not isinstance(t, dict)]
    out = []
    for ident in _blank_list(ctx, value):
        if words_of(ctx.format).word_bank and bank:
            options = tuple(dict.fromkeys(bank + ([given[ident]] if given.get(ident) else [])))
            out.append(Control(f"blank_{ident}", "select", f"Blank [{ident}]", given.get(ident) or None, options,
                               subpath=f"{ctx.path}[{ident}]"))
        else:
            out.append(Control(f"blank_{ident}", "text", f"Blank [{ident}]", given.get(ident, ""),
                               subpath=f"{ctx.path}[{ident}]"))
    return out


def _blanks_decode(values: dict, ctx: Context) -> list[dict]:
    return [{"id": k[6:], "description": v or ""} for k, v in values.items() if k.startswith("blank_")]


def _blanks_validate(value: list[dict], ctx: Context) -> list[str]:
    out = []
    for entry in value:
        where = f"{ctx.path}[{entry['id']}]"
        if not entry["description"].strip():
            out.append(f"{where}: blank [{entry['id']}] is empty")
        else:
            out.extend(_named(where, text_problems(entry["description"])))
    return out or ([] if value else [f"{ctx.path}: the text has no blank markers [A], [B], ..."])


def _alternatives_of(ctx: Context, ident: str) -> list[str]:
    for c in ctx.record.get("choices") or []:
        if isinstance(c, dict) and str(c.get("id")) == ident:
            return [_text(o) for o in c.get("options") or []]
    return []


def _blank_choice_controls(value: Any, ctx: Context) -> list[Control]:
    given = _blank_answers(value)
    out = []
    for ident in _blank_list(ctx, value):
        options = _alternatives_of(ctx, ident)
        if given.get(ident) and given[ident] not in options:
            options.append(given[ident])
        out.append(Control(f"blank_{ident}", "radio", f"Blank [{ident}]", given.get(ident) or None, tuple(options),
                           subpath=f"{ctx.path}[{ident}]"))
    return out


def _verdict_controls(value: Any, ctx: Context) -> list[Control]:
    return [Control("on", "toggle", f"{_label(ctx.path, ctx.format)} (on = true)", value == TRUE, subpath=ctx.path)]


def _option_pick_controls(value: Any, ctx: Context) -> list[Control]:
    ident = _leaf_id(ctx.path)
    options = _alternatives_of(ctx, ident)
    if value and value not in options:
        options.append(str(value))
    return [Control("choice", "radio", f"Blank [{ident}]: the right alternative", value, tuple(options),
                    subpath=ctx.path)]


def _leaf_id(path: str) -> str:
    for kind, ref in parse_path(path):
        if kind == "id":
            return str(ref)
    return ""


def _number_controls(value: Any, ctx: Context) -> list[Control]:
    start = value if isinstance(value, int | float) and not isinstance(value, bool) else ctx.spec.get("default")
    return [Control("number", "number", _label(ctx.path, ctx.format), start, subpath=ctx.path)]


def _number_decode(values: dict, ctx: Context) -> Any:
    value = values["number"]
    if value is None or value == "":
        return None
    number = float(value)
    return int(number) if number.is_integer() and not isinstance(ctx.spec.get("default"), float) else number


def _number_validate(value: Any, ctx: Context) -> list[str]:
    if value is None:
        return [f"{ctx.path}: enter a number"] if ctx.spec.get("required") else []
    minimum = ctx.spec.get("min")
    if minimum is not None and value < minimum:
        return [f"{ctx.path}: must be at least {minimum}"]
    return []


def _text_list_validate(value: list[str], ctx: Context) -> list[str]:
    out = []
    for i, text in enumerate(value):
        out.extend(_named(f"{ctx.path}[{i}]", text_problems(text)))
    need = int(ctx.spec.get("min_items") or 0)
    if len(value) < need:
        out.append(f"{ctx.path}: at least {need} entr{'y is' if need == 1 else 'ies are'} needed")
    return out


ITEM_SEPARATOR = " | "


def _list_controls(value: Any, ctx: Context) -> list[Control]:
    """Rows of dicts, one control per item field; a list inside a row is one text "a | b | c"."""
    rows = [v for v in (value or []) if isinstance(v, dict)]
    fields = ctx.spec.get("item_fields") or []
    out = []
    for i in _rows(len(rows)):
        row = rows[i] if i < len(rows) else {}
        label = f"Row {i + 1}" if i < len(rows) else "New row"
        for f in fields:
            raw = row.get(f["key"])
            shown = ITEM_SEPARATOR.join(_text(x) for x in raw) if isinstance(raw, list) else _text(raw)
            out.append(Control(f"{f['key']}{i}", "text", f.get("label") or f["key"], shown, row=label,
                               subpath=f"{ctx.path}[{i}].{f['key']}"))
    return out


def _list_decode(values: dict, ctx: Context) -> list[dict]:
    fields = ctx.spec.get("item_fields") or []
    if not fields:
        return []
    out = []
    for i in range(_row_count(values, fields[0]["key"])):
        row = {}
        for f in fields:
            text = values.get(f"{f['key']}{i}", "")
            if f.get("widget") == "text_list":
                row[f["key"]] = [part.strip() for part in text.split("|") if part.strip()]
            elif text.strip():
                row[f["key"]] = text.strip().upper() if f["key"] == "id" else text
        if any(v for v in row.values()):
            out.append(row)
    return out


def _list_validate(value: list[dict], ctx: Context) -> list[str]:
    out = []
    for i, row in enumerate(value):
        for f in ctx.spec.get("item_fields") or []:
            where = f"{ctx.path}[{i}].{f['key']}"
            got = row.get(f["key"])
            if f.get("required") and not got:
                out.append(f"{where}: is empty")
            need = int(f.get("min_items") or 0)
            if isinstance(got, list) and len(got) < need:
                out.append(f"{where}: at least {need} entries are needed (separate them with |)")
    need = int(ctx.spec.get("min_items") or 0)
    if len(value) < need:
        out.append(f"{ctx.path}: at least {need} row(s) are needed")
    return out


# --------------------------------------------------------------------------------- registries

def _languages(ctx: Context) -> list[str]:
    return list(dict.fromkeys([*BENCHMARK_LANGUAGES, *LANGUAGE_NAMES]))


def _formats(ctx: Context) -> list[str]:
    return list(format_names())


_no_problems: Callable[[Any, Context], list[str]] = lambda value, ctx: []  # noqa: E731

WIDGETS: dict[str, Widget] = {
    "line": Widget(_line_controls("text"), _line_decode, _line_validate),
    "textarea": Widget(_line_controls("textarea"), _line_decode, _line_validate,
                       "Blanks are written [A], [B], ... in the text."),
    "toggle": Widget(_toggle_controls, lambda v, ctx: bool(v["on"]), _no_problems),
    "format": Widget(_select_controls(_formats), lambda v, ctx: v["choice"], _required_choice),
    "language": Widget(_select_controls(_languages), lambda v, ctx: v["choice"], _required_choice),
    "option_rows": Widget(_option_rows_controls, _option_rows_decode, _option_rows_validate,
                          "One row per option; clear both boxes of a row to remove it; fill the last row to add one."),
    "word_bank": Widget(_word_bank_controls, _word_bank_decode, _word_bank_validate,
                        "Every term of the word bank, distractors included; clear a term to remove it."),
    "alternatives": Widget(_alternatives_controls, _alternatives_decode, _alternatives_validate,
                           "The two alternatives offered for each blank."),
    "error_rows": Widget(_error_rows_controls, _error_rows_decode, _error_rows_validate,
                         "Each wrong word exactly as it appears in the passage, and its correction."),
    "single_key": Widget(_single_key_controls, _single_key_decode, _key_validate("choose the correct option")),
    "multi_key": Widget(_multi_key_controls, _multi_key_decode, _key_validate("tick at least one correct option")),
    "statement_verdicts": Widget(_true_false_controls, _true_false_decode, _no_problems,
                         "Switch on every statement that is true."),
    "blanks": Widget(_blanks_controls, _blanks_decode, _blanks_validate),
    "blank_choice": Widget(_blank_choice_controls, _blanks_decode, _blanks_validate),
    "verdict": Widget(_verdict_controls, lambda v, ctx: TRUE if v["on"] else FALSE, _no_problems),
    "option_pick": Widget(_option_pick_controls, lambda v, ctx: v["choice"], _required_choice),
    "json": Widget(_json_controls, _json_decode, _no_problems),
    # widget kinds the newer formats declare
    "number": Widget(_number_controls, _number_decode, _number_validate),
    "text_list": Widget(_word_bank_controls, _word_bank_decode, _text_list_validate,
                        "One entry per box; clear a box to remove the entry, fill the last one to add one."),
    "per_part_choice": Widget(_blank_choice_controls, _blanks_decode, _blanks_validate),
    "list": Widget(_list_controls, _list_decode, _list_validate,
                   "One row per entry; a list inside a row is written a | b | c."),
}
#: Synonyms the specs may use for the common widgets.
WIDGET_ALIASES = {"text": "line"}


@dataclass(frozen=True)
class EditorSpec:
    """Which widget kind edits each path of one format's records (read from the format registry)."""

    format: str
    fields: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    entries: dict[str, dict] = field(default_factory=dict)

    def widget(self, name: str) -> str | None:
        kind = self.fields.get(name) or COMMON_FIELDS.get(name)
        return WIDGET_ALIASES.get(kind, kind) if kind else None

    def match(self, path: str) -> str | None:
        """The spec path that covers ``path``: itself, or a pattern such as ``answers[*].text``."""
        if path in self.fields:
            return path
        for pattern in self.fields:  # [*] matches any element; [0] also the single keyed entry ([A])
            if "[" in pattern and re.fullmatch(re.sub(r"\\\[(\\\*|\d+)\\\]", r"\\[[^\\]]+\\]", re.escape(pattern)), path):
                return pattern
        return None


COMMON_FIELDS: dict[str, str] = {
    "type": "format", "language": "language", "has_image": "toggle",
    "question_title": "line", "instructions": "line", "question_text": "textarea",
}
FIELD_LABELS: dict[str, str] = {
    "type": "Format", "language": "Language", "has_image": "Has an image", "question_title": "Title",
    "instructions": "Instructions", "question_text": "Question text", "choices": "Options", "answers": "Answer key",
}


#: What an unknown format answers to the editors' questions (the plain defaults).
_PLAIN_FORMAT = AnswerFormat()


def words_of(format_name: str) -> AnswerFormat:
    """The format's answers to the editors' questions (what its parts are called, whether its key is
    per blank, whether its choices are a word bank); the plain defaults for an unknown name."""
    return find_format(format_name) or _PLAIN_FORMAT


def editor_spec(format_name: str) -> EditorSpec:
    """The editor spec of a format, from its ``editor`` slot in the format registry (a format
    without one edits every field with the common widgets)."""
    fmt = find_format(format_name)
    data = getattr(fmt, "editor", None) if fmt is not None else None
    entries = {str(f["path"]): dict(f) for f in (data or {}).get("fields", []) if isinstance(f, dict) and "path" in f}
    return EditorSpec(format_name, {p: str(f.get("widget")) for p, f in entries.items()},
                      {p: f["label"] for p, f in entries.items() if f.get("label")}, entries)


def _label(path: str, format_name: str) -> str:
    """A reviewer's name for a path: ``choices[B].text`` -> "Option B", ``answers[A].description``
    of a completion -> "Answer key: blank [A]", ``answers[1].error`` -> "Error 2: wrong word"."""
    spec = editor_spec(format_name)
    matched = spec.match(path)
    if matched in spec.labels and "[*]" not in matched:  # the format names this path (numeric "Correct value")
        return spec.labels[matched]
    top = top_field(path)
    base = spec.labels.get(top) or FIELD_LABELS.get(top, top.replace("_", " ").capitalize())
    if path == top:
        return base
    tokens = parse_path(path)[1:]
    fmt = words_of(format_name)
    words = []
    for kind, ref in tokens:
        if kind == "id":
            if fmt.blank_key:
                words.append(f"blank [{ref}]")
            else:
                words.append(f"{fmt.row_word if top == 'choices' else fmt.key_word} {ref}")
        elif kind == "index":
            words.append(f"{fmt.entry_word} {int(ref) + 1}" if fmt.entry_word else f"#{int(ref) + 1}")
        elif str(ref) == "options":
            continue
        elif str(ref) in ("error", "correct"):
            words.append("wrong word" if ref == "error" else "correction")
    if tokens and tokens[-1][0] == "index" and len(tokens) > 1 and tokens[-2] == ("key", "options"):
        words[-1] = f"alternative {int(tokens[-1][1]) + 1}"
    return f"{base}: " + " ".join(words) if words else base


def field_label(path: str, format_name: str) -> str:
    """Public name of a reviewed path, in the item's words (cards, queues, CLI)."""
    return _label(path, format_name)


def widget_kind(format_name: str, path: str, value: Any) -> str:
    """Which widget edits ``path`` of a ``format_name`` record holding ``value``."""
    spec = editor_spec(format_name)
    matched = spec.match(path)
    if matched is not None:
        kind = spec.fields[matched]
        kind = WIDGET_ALIASES.get(kind, kind)
        if kind in WIDGETS:
            return kind
    top = top_field(path)
    if path == top and top in COMMON_FIELDS:
        return COMMON_FIELDS[top]
    if isinstance(value, bool):
        return "toggle"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str) or (value is None and path != top):
        return "line"
    return "json"


_NO_OTHER = object()


def editor_for(format_name: str, path: str, start: Any, record: dict, other: Any = _NO_OTHER,
               widget: str | None = None) -> Editor:
    """The editor of ``path`` started from ``start`` (the side the reviewer picked).

    ``record`` gives the context (options for a key, blanks of the text); controls whose part
    of the field differs from ``other`` (the other extraction's value, None when it has none)
    are marked; without ``other`` nothing is marked. ``widget`` names a widget kind of `WIDGETS`
    to use instead of the one the format's spec gives (the exam page's free-text answers).
    """
    compare = other is not _NO_OTHER
    other = other if compare else None
    kind = widget if widget in WIDGETS else widget_kind(format_name, path, start if start is not None else other)
    codec = WIDGETS[kind]
    spec = editor_spec(format_name)
    matched = spec.match(path)
    ctx = Context(format_name, path, record or {}, spec.entries.get(matched, {}) if matched else {})
    controls = codec.controls(start, ctx)
    diff_paths = [d.path for d in compare_values(start, other, path)] if compare else []
    marked = [Control(**{**c.__dict__, "marked": bool(diff_paths) and _differs(c, start, other, path, diff_paths)})
              for c in controls]
    return Editor(path, kind, _label(path, format_name), marked,
                  lambda values: codec.decode(values, ctx),
                  lambda value: codec.validate(value, ctx), codec.help)


_MISSING = object()


def _part(value: Any, rest: str) -> Any:
    """The part of a field value below its path (``rest`` like ``[B].text``); _MISSING when absent."""
    from .paths import get_at

    try:
        return get_at({"value": value}, "value" + rest, _MISSING)
    except ValueError:  # a part name the path syntax does not read
        return _MISSING


def _differs(control: Control, start: Any, other: Any, path: str, diff_paths: list[str]) -> bool:
    """Whether the part of the field one control edits differs from the other extraction.

    The part is compared itself (an id equal on both sides is not a difference, even when the
    lists differ in length); the empty row for a new entry is marked when the other side has
    more entries; a part that cannot be located falls back to the differing paths."""
    sub = control.subpath or path
    if "[]" in sub:  # the row that adds an entry
        return isinstance(start, list) and isinstance(other, list) and len(other) > len(start)
    if sub == path or sub.startswith(path + ".") or sub.startswith(path + "["):
        mine, theirs = _part(start, sub[len(path):]), _part(other, sub[len(path):])
        if mine is not _MISSING:
            return theirs is _MISSING or json.dumps(mine, sort_keys=True) != json.dumps(theirs, sort_keys=True)
    return any(p == sub or p.startswith(sub + ".") or p.startswith(sub + "[") or p == path for p in diff_paths)


def describe(value: Any, path: str, format_name: str) -> str:
    """A value in the item's words, as plain text (cards show this; never markdown or HTML)."""
    top = top_field(path)
    if value is None:
        return "(absent)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return format_label(value) if top == "type" and path == top else value
    if isinstance(value, list) and path == top:
        lines = []
        for i, entry in enumerate(value):
            if isinstance(entry, dict) and "options" in entry:
                lines.append(f"[{entry.get('id')}] " + " / ".join(_text(o) for o in entry.get("options") or []))
            elif isinstance(entry, dict) and "error" in entry:
                lines.append(f"{_text(entry.get('error'))} → {_text(entry.get('correct'))}")
            elif isinstance(entry, dict) and top == "answers":
                lines.append(words_of(format_name).key_line(entry))
            elif isinstance(entry, dict):
                lines.append(f"{entry.get('id')}. {_text(entry.get('text'))}")
            else:
                lines.append(f"{i + 1}. {_text(entry)}")
        return "\n".join(lines) if lines else "(empty list)"
    return json.dumps(value, ensure_ascii=False)

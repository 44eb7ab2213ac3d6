"""Exam forms for people: which items a respondent gets, what they may see, and how they answer.

Why the review studio's editors: a person answering an item fills in exactly what an art historian
fills in when correcting its answer key (an option, ticks, true/false switches, a term per blank,
"wrong word -> correction" rows, a number, a text). Each format declares in its ``respondent`` slot
(format registry) which key editor that is and how its value maps onto the ``Answers`` entries a
model is asked for; the answer then goes through the format's own parser and scorers, as a model's
reply does. Nothing here branches on a format name.

What a respondent sees is the item without its key (`blind_record`): the key and every hint about
wrong options (distractor types) are removed before the record reaches a page.
"""
from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from ..errors import UserError
from ..extraction.editors import Control, Editor, editor_for
from ..formats import find_format, get_format
from ..vocab import format_rank

#: Record fields a respondent may see (the key, the scoring metadata and the review notes are left out).
VISIBLE_FIELDS = ("item_id", "type", "language", "has_image", "image_hash", "question_title", "instructions",
                  "question_text", "regions")
#: Fields of an option (or a part, or a blank's alternatives) a respondent may see.
VISIBLE_CHOICE_FIELDS = ("id", "text", "options", "label", "bbox")


def blind_record(record: Mapping[str, Any]) -> dict:
    """The item as a respondent sees it: question, options, word bank; never the key.

    Options keep their id, text, options, label and box; a ``distractor_type`` (which kind of trap a
    wrong option is) or an option image path is dropped with the key. ``answers`` is left empty."""
    out = {k: record[k] for k in VISIBLE_FIELDS if k in record}
    choices = record.get("choices")
    if isinstance(choices, list):
        out["choices"] = [{k: c[k] for k in VISIBLE_CHOICE_FIELDS if k in c} if isinstance(c, dict) else c
                          for c in choices]
    else:
        out["choices"] = choices
    out["answers"] = []
    return out


def respondent_spec(format_name: str) -> dict:
    """The format's ``respondent`` spec with its defaults (path ``answers``)."""
    fmt = get_format(format_name)
    spec = dict(fmt.respondent or {})
    spec.setdefault("path", "answers")
    spec.setdefault("fields", {"id": "id", "text": "text"})
    return spec


def answerable(record: Mapping[str, Any]) -> bool:
    """Whether a person can sit this item on the exam page: a known format, no dialogue turns (they
    need the earlier answers) and no options that are images of their own (not drawn yet)."""
    fmt = find_format(record.get("type"))
    if fmt is None or record.get("dialogue_id"):
        return False
    return not fmt.option_images(record)


def _start(spec: dict, blind: Mapping[str, Any]) -> Any:
    """The empty answer the editor starts from: nothing, empty rows, or one empty entry per part."""
    if spec.get("parts_from"):
        parts = blind.get(spec["parts_from"]) or []
        return [{"id": p.get("id"), "description": ""} for p in parts if isinstance(p, dict) and p.get("id")]
    if spec.get("rows"):
        return [dict(spec.get("row") or {}) for _ in range(int(spec["rows"]))]
    return None


def answer_editor(record: Mapping[str, Any]) -> Editor:
    """The controls a person answers ``record`` with (built from the blind record: no key inside)."""
    blind = blind_record(record)
    fmt_name = str(blind.get("type"))
    spec = respondent_spec(fmt_name)
    editor = editor_for(fmt_name, spec["path"], _start(spec, blind), blind, widget=spec.get("widget"))
    if spec.get("label") and len(editor.controls) == 1:
        only = editor.controls[0]
        editor.controls = [Control(**{**only.__dict__, "label": spec["label"]})]
    return editor


def _element_id(record: Mapping[str, Any]) -> str:
    """The id a single-part answer is given under (the element the scorer reads; not the answer)."""
    answers = record.get("answers") or []
    first = answers[0] if answers and isinstance(answers[0], dict) else {}
    return str(first.get("id") or "A")


def answer_entries(record: Mapping[str, Any], value: Any) -> list[dict]:
    """The ``Answers`` entries (the output schema a model is asked for) of a decoded editor value."""
    spec = respondent_spec(str(record.get("type")))
    if value is None or (isinstance(value, str) and not value.strip()):
        return []
    if not isinstance(value, list):  # one number or one text: the single element of the item
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return [{"id": _element_id(record), "text": f"{value:g}" if number else str(value)}]
    out = []
    for entry in value:
        if not isinstance(entry, dict):
            continue
        mapped = {target: entry.get(source) for target, source in spec["fields"].items()
                  if entry.get(source) not in (None, "")}
        if mapped:
            out.append(mapped)
    return out


def answer_text(record: Mapping[str, Any], values: Mapping[str, Any] | None) -> str:
    """The raw response text of a person's answer: ``{"Answers": [...]}`` as a model is asked to write.

    ``values`` are the editor's control values (by control key); None or {} is an empty answer (a
    skipped item, or one whose time ran out), which every scorer scores 0."""
    if not values:
        return json.dumps({"Answers": []})
    editor = answer_editor(record)
    known = {c.key for c in editor.controls}
    try:
        value = editor.decode({k: v for k, v in values.items() if k in known})
    except (ValueError, TypeError) as exc:
        raise UserError(f"the answer cannot be read: {exc}") from None
    return json.dumps({"Answers": answer_entries(record, value)}, ensure_ascii=False)


# ---------------------------------------------------------------- sampling a form

def sample_form(items: pd.DataFrame, per_cell: int, seed_key: str, formats: Iterable[str] = (),
                languages: Iterable[str] = ()) -> list[str]:
    """Item ids of one respondent's form: up to ``per_cell`` items of each format x language.

    ``items`` has item_id, type, language (answerable items only). The draw is seeded by
    ``seed_key`` (session seed and respondent), so a resumed form is the same form; items come in
    sections by format (display order), shuffled within each section."""
    if per_cell < 1:
        raise UserError("a form needs at least one item per format and language")
    formats, languages = set(formats), set(languages)
    pool = items
    if formats:
        pool = pool[pool["type"].isin(formats)]
    if languages:
        pool = pool[pool["language"].isin(languages)]
    rng = random.Random(seed_key)
    chosen: list[tuple[tuple, float, str]] = []
    for (kind, _language), cell in pool.groupby(["type", "language"], sort=True, dropna=False):
        ids = sorted(str(i) for i in cell["item_id"])
        for item_id in rng.sample(ids, min(per_cell, len(ids))):
            chosen.append((format_rank(str(kind)), rng.random(), item_id))
    return [item_id for _, _, item_id in sorted(chosen)]


def form_items(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """item_id, type, language of the records a person can sit (`answerable`)."""
    rows = [{"item_id": str(r.get("item_id")), "type": r.get("type"), "language": r.get("language")}
            for r in records if answerable(r)]
    return pd.DataFrame(rows, columns=["item_id", "type", "language"])


__all__ = ["VISIBLE_FIELDS", "answer_editor", "answer_entries", "answer_text", "answerable", "blind_record",
           "form_items", "respondent_spec", "sample_form"]

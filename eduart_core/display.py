"""How an item and a scored answer read on a page: one vocabulary per format, on both sides.

Why in the library: the inspector, the model comparison, the report's failure examples, `show` and
the tests must show the same words for the same scorer details. Each answer format brings its words
(`AnswerFormat.answer_words`, a `formats.answer_words.FormatDisplay`; an unknown format reads values
as written), so "expected" and "given" always use the same words. The rows of the item card come
from the answer-format registry (`formats.display_item`); this module only puts its key into words.

Everything here returns plain data (strings, lists, DataFrames); pages decide how to draw them
and render every string as text (`text.plain`), never as markup.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from .formats import display_item, find_format
from .formats.answer_words import CORRECT_OPTION, NOTHING, FormatDisplay, verdict

__all__ = ["CORRECT_OPTION", "NOTHING", "FormatDisplay", "verdict", "answer_rows", "answer_summary", "card", "display_for", "mark",
           "neighbours", "profile_marks"]

#: How a per-element result reads (visual mark and word; the page adds colour).
MARKS = {True: "✓ right", False: "✗ wrong", None: ""}


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def mark(right: Any) -> str:
    """'✓ right' / '✗ wrong' / '' for a per-element or per-response result."""
    if _missing(right):
        return ""
    return MARKS[bool(right)]


_DEFAULT = FormatDisplay()


def display_for(record: Mapping[str, Any] | None) -> FormatDisplay:
    """The words of a record's format (`AnswerFormat.answer_words`; the plain words for an unknown format)."""
    fmt = find_format((record or {}).get("type"))
    return fmt.answer_words if fmt is not None else _DEFAULT


def card(record: Mapping[str, Any] | None) -> dict:
    """What the item card shows, as plain data: title, instructions, text, rows, extras, gold.

    Rows are the format registry's (`formats.display_item`: one per option, statement, blank,
    part or error) with the key put into words: "correct option", TRUE/FALSE, the term, the
    correction. ``extras`` holds the word bank of a positioning item; ``chance`` the chance level.
    """
    record = record or {}
    shown = display_for(record)
    item = display_item(record)
    rows = []
    for row in item["rows"]:
        element = "" if _missing(row.get("element")) else str(row.get("element"))
        if row.get("label"):
            element = f"{element} ({row['label']})" if element else str(row["label"])
        rows.append({"element": element, "text": "" if _missing(row.get("text")) else str(row.get("text")),
                     "gold": shown.gold_word(row.get("gold"))})
    extras = {"Word bank": ", ".join(item["word_bank"])} if item.get("word_bank") else {}
    return {"type": record.get("type"), "question_title": record.get("question_title"),
            "instructions": record.get("instructions"), "question_text": record.get("question_text"),
            "source": record.get("source"), "rows": rows, "extras": extras, "chance": item.get("chance"),
            "gold": "; ".join(_gold_words(r) for r in rows if r.get("gold"))}


def _gold_words(row: dict) -> str:
    """One card row's key in a line: 'B. option text' for a right option, 'A: term' otherwise."""
    if row["gold"] == CORRECT_OPTION:
        return f"{row['element']}. {row['text']}" if row["text"] else str(row["element"])
    return f"{row['element']}: {row['gold']}" if row["element"] else str(row["gold"])


def _frame_of(details: Any) -> list[dict]:
    return [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []


def answer_rows(details: list | None, record: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Per-element marks of one scored response (mark, element, expected, given), in the format's words."""
    record = record or {}
    shown = display_for(record)
    rows = [{"mark": mark(d.get("right")), "element": shown.element(d.get("element"), record),
             "expected": shown.value(d.get("expected"), record), "given": shown.value(d.get("given"), record)}
            for d in _frame_of(details)]
    return pd.DataFrame(rows, columns=["mark", "element", "expected", "given"])


def answer_summary(details: list | None, record: Mapping[str, Any] | None = None) -> str:
    """What the model answered, in one line of the format's words."""
    record = record or {}
    return display_for(record).summary(_frame_of(details), record)


def profile_marks(details_by_profile: Mapping[str, Any], record: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Both profiles side by side: element, expected, then per profile the given value and its mark.

    The profiles may read a response differently (the published parser rejects what the strict one
    repairs), so each profile keeps its own "given" column; rows are matched by element.
    """
    record = record or {}
    shown = display_for(record)
    table: dict[str, dict] = {}
    for profile, details in details_by_profile.items():
        for d in _frame_of(details):
            element = shown.element(d.get("element"), record)
            key = element if element != "not an error" else f"{element}: {shown.value(d.get('given'), record)}"
            row = table.setdefault(key, {"element": element, "expected": shown.value(d.get("expected"), record)})
            row[f"given ({profile})"] = shown.value(d.get("given"), record)
            row[profile] = mark(d.get("right"))
    columns = ["element", "expected"]
    for profile in details_by_profile:
        columns += [f"given ({profile})", profile]
    frame = pd.DataFrame(list(table.values()), columns=columns)
    return frame.fillna("")


def neighbours(ids: list[str], current: str) -> tuple[str | None, str | None]:
    """Previous and next id around ``current`` in a list (None at the ends)."""
    if current not in ids:
        return None, (ids[0] if ids else None)
    i = ids.index(current)
    return (ids[i - 1] if i > 0 else None), (ids[i + 1] if i + 1 < len(ids) else None)

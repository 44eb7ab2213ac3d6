"""The answer-format registry: one entry per format, in display order.

Why an explicit list: a new format is one module plus one line here; items (validation,
rendering), scoring, prompts, the runner, the offline chance model and the inspector all look
formats up in `REGISTRY` instead of branching on type names. The names, labels and order come
from `vocab.FORMATS` (the vocabulary every page uses); `tests/test_formats.py` checks that the
two lists agree.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..vocab import EDUART_FORMATS, format_label
from . import blanks, check, multi_part_choice, numeric, open_text, radio, select_errors, true_false
from .base import AnswerFormat, Scored, ScoringOptions
from .visual import box_shapes, draw_boxes

__all__ = ["REGISTRY", "AnswerFormat", "ScoringOptions", "Scored", "box_shapes", "display_item",
           "draw_boxes", "editor_spec", "find_format", "get_format"]

#: Every answer format, in display order (the 7 EduArt formats first, in published order).
REGISTRY: tuple[AnswerFormat, ...] = (
    radio.FORMAT,
    check.FORMAT,
    true_false.FORMAT,
    blanks.POSITIONING,
    blanks.COMPLETION_CLOSED,
    blanks.COMPLETION_OPEN,
    select_errors.FORMAT,
    numeric.FORMAT,
    multi_part_choice.FORMAT,
    open_text.FORMAT,
)
_BY_NAME: dict[str, AnswerFormat] = {f.name: f for f in REGISTRY}


def find_format(name: Any) -> AnswerFormat | None:
    """The format called `name`, or None."""
    return _BY_NAME.get(name) if isinstance(name, str) else None


def get_format(name: Any) -> AnswerFormat:
    """The format called `name`; ValueError naming the known formats otherwise."""
    found = find_format(name)
    if found is None:
        raise ValueError(f"unknown item type {name!r}; known: {', '.join(_BY_NAME)}")
    return found


def editor_spec(name: str) -> Any:
    """What the review page needs to edit a format's record (None until a spec is set)."""
    return get_format(name).editor


def display_item(record: Mapping[str, Any]) -> dict:
    """How the inspector shows an item: plain data, no Streamlit, JSON-serialisable.

    Keys: `format`, `label`, `eduart` (one of the 7 published formats), `question_title`,
    `instructions`, `question_text`, `rows` (per option / statement / blank / part / reference:
    `element`, `text`, `gold`, and `bbox` / `image` / `label` where they apply), `gold` (one-line
    summary), `word_bank` (positioning), `regions`, `option_images` ([id, path]), `chance`.
    """
    fmt = find_format(record.get("type"))
    base = {"format": record.get("type"), "label": format_label(str(record.get("type"))),
            "eduart": record.get("type") in EDUART_FORMATS,
            "question_title": record.get("question_title"), "instructions": record.get("instructions"),
            "question_text": record.get("question_text"), "regions": record.get("regions") or [],
            "rows": [], "gold": "", "word_bank": [], "option_images": [], "chance": None}
    if fmt is None:
        return base
    base.update(rows=fmt.display_rows(record), gold=fmt.gold_summary(record),
                option_images=[list(p) for p in fmt.option_images(record)], chance=fmt.chance(record))
    if fmt.word_bank:
        base["word_bank"] = [str(t) for t in record.get("choices") or []]
    return base

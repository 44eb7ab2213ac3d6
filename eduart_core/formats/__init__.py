"""The answer-format registry: one entry per format, in display order.

Why an explicit list: a new format is one module plus one line here; items (validation,
rendering), scoring, prompts, the runner, the offline chance model and the inspector all look
formats up in `REGISTRY` instead of branching on type names. The names, labels and order come
from `vocab.FORMATS` (the vocabulary every page uses); `tests/formats/test_formats.py` checks that the
two lists agree.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..vocab import EDUART_FORMATS, FormatInfo, format_label, register_format, unregister_format
from . import blanks, check, multi_part_choice, numeric, open_text, radio, select_errors, true_false
from .base import AnswerFormat, Scored, ScoringOptions
from .visual import box_shapes, draw_boxes

__all__ = ["REGISTRY", "AnswerFormat", "ScoringOptions", "Scored", "all_formats", "box_shapes", "display_item",
           "draw_boxes", "editor_spec", "find_format", "get_format", "level_rule", "register", "score_levels",
           "score_parts", "unregister"]

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
#: Formats added at run time (`register`): after the shipped ones, in registration order.
_ADDED: list[AnswerFormat] = []


def all_formats() -> tuple[AnswerFormat, ...]:
    """Every format: the shipped `REGISTRY`, then the ones `register` added (what callers iterate)."""
    return REGISTRY + tuple(_ADDED)


def register(fmt: AnswerFormat, label: str, *, choice: bool = False) -> AnswerFormat:
    """Add a format that does not ship with the studio (a plug-in, or a test's fixture).

    Why a function: the shipped formats are one line in `REGISTRY`, but a format defined outside the
    package cannot edit that tuple. This puts its name and label into the vocabulary
    (`vocab.register_format`) and its entry into the registry, so validation, prompts (from
    `fmt.prompt_path`), scoring, the inspector, the editors, screenshots and the demo simulation find
    it like any other. Registering the same entry again is a no-op; another entry under a taken name
    is refused.
    """
    if not fmt.name:
        raise ValueError("a format needs a name")
    known = _BY_NAME.get(fmt.name)
    if known is fmt:
        return fmt
    if known is not None:
        raise ValueError(f"format {fmt.name!r} is already registered")
    register_format(FormatInfo(fmt.name, label, choice=choice))
    _ADDED.append(fmt)
    _BY_NAME[fmt.name] = fmt
    return fmt


def unregister(name: str) -> None:
    """Remove a format `register` added (the shipped ones stay): a test cleans up after itself."""
    fmt = _BY_NAME.get(name)
    if fmt is None or fmt not in _ADDED:
        return
    _ADDED.remove(fmt)
    del _BY_NAME[name]
    unregister_format(name)


def find_format(name: Any) -> AnswerFormat | None:
    """The format called `name`, or None."""
    return _BY_NAME.get(name) if isinstance(name, str) else None


def get_format(name: Any) -> AnswerFormat:
    """The format called `name`; ValueError naming the known formats otherwise."""
    found = find_format(name)
    if found is None:
        raise ValueError(f"unknown item type {name!r}; known: {', '.join(_BY_NAME)}")
    return found


def score_parts(record: Mapping[str, Any]) -> int:
    """How many parts of an item earn credit on their own (it has parts + 1 score levels; 1 for an unknown format)."""
    fmt = find_format(record.get("type")) if isinstance(record, Mapping) else None
    return fmt.score_parts(record) if fmt is not None else 1


def score_levels(name: str, scores: np.ndarray, parts: np.ndarray) -> np.ndarray:
    """Score levels (0..parts) of scores of one format, by the format's rule (an unknown format: score >= 0.5)."""
    fmt = find_format(name)
    return (fmt or radio.FORMAT).score_levels(np.asarray(scores, dtype=float), np.asarray(parts))


def level_rule(name: str) -> str:
    """The format's rule from score to score level, in words."""
    fmt = find_format(name)
    return (fmt or radio.FORMAT).level_rule


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

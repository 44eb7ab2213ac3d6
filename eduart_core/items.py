"""The canonical item: the published EduArt record plus an `item_id`.

Why this module exists: every room (importers, store, runs, extraction review, demo) must agree on
what a valid item is and on how it is shown to a model. Validation lists *every* problem with the
item, the field and the reason, so that a reviewer can fix a record in one pass and importers can
keep defective records with their problems attached (`check_item`) instead of dropping them.
"""
from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from eduart_core.formats import AnswerFormat, find_format
from eduart_core.formats.common import (
    PLAIN_KEY_FIELD,
    Problems,
    blank_ids,
    entry_label,
    keyed_answers,
    nonempty_str,
)
from eduart_core.formats.visual import check_regions
from eduart_core.text import norm_id
from eduart_core.vocab import is_language_code

__all__ = [
    "RECORD_FIELDS", "METADATA_FIELDS", "OPTIONAL_FIELDS",
    "Item", "ItemValidationError", "validate_item", "check_item", "normalise_record",
    "render_prompt_text", "blank_ids", "is_tag_key", "keyed_answers",
]

#: Optional metadata of other benchmarks: what the item tests (`task`, `dimension`),
#: free `tags` and `image_attributes` (objects of short string or number values), the id of a
#: parallel form (`parallel_of`: the Italian vs English version, with vs without image) and the
#: place in a multi-turn dialogue (`dialogue_id`, `turn`), and the source item of a variant
#: (`variant_of`) with what was done to it (`variant`: an object with at least `kind`, see
#: `eduart_core.variants`). A normalised record carries them only
#: when set, so that a record without metadata keeps its published shape and its content hash.
METADATA_FIELDS: tuple[str, ...] = (
    "task", "dimension", "tags", "image_attributes", "parallel_of", "dialogue_id", "turn",
    "variant_of", "variant",
)

#: Optional fields of the answer formats (kept only when set, like the metadata): `regions`, boxes
#: on the image the question refers to (`[{"id", "bbox", "label"}]`, see `formats.visual`);
#: `answers_as_strings`, an older completion_open key as written (a plain list of strings) once
#: `answers` holds it keyed A, B, ... (see `formats.common.plain_list_key`).
OPTIONAL_FIELDS: tuple[str, ...] = ("regions", PLAIN_KEY_FIELD)

#: Canonical key order of `Item.to_record()` and `normalise_record()` (metadata only when set).
RECORD_FIELDS: tuple[str, ...] = (
    "item_id", "type", "question_title", "instructions", "question_text", "choices", "answers",
    "language", "exercise", "question", "source", "has_image", "image", *METADATA_FIELDS,
)
#: The published fields: always in a canonical record (null when missing).
_ALWAYS: frozenset[str] = frozenset(f for f in RECORD_FIELDS if f not in METADATA_FIELDS)

#: Limits of the metadata values: labels and tags are for grouping and filtering, not prose.
MAX_LABEL_CHARS = 120
MAX_TAG_VALUE_CHARS = 200
MAX_TAGS = 50
MAX_TURN = 1000
_TAG_KEY = re.compile(r"^\w[\w .:/\-]{0,63}$")

class ItemValidationError(ValueError):
    """A record is not a valid item; the message lists every problem, one per `; `.

    `.item_id` and `.field` name the first problem, `.problems` holds all of them as
    `item <id>: field <path>: <problem>` strings.
    """

    def __init__(self, item_id: str, problems: list[tuple[str, str]]):
        self.item_id = item_id
        self.fields = [f for f, _ in problems]
        self.field = self.fields[0] if self.fields else ""
        self.problems = [_format_problem(item_id, f, p) for f, p in problems]
        super().__init__("; ".join(self.problems))


def _format_problem(item_id: str, field_path: str, problem: str) -> str:
    return f"item {item_id or '?'}: field {field_path}: {problem}"


@dataclass(frozen=True)
class Item:
    """A validated, normalised item. Treat the lists as read-only; use `to_record()` to edit."""

    item_id: str
    type: str
    question_text: str | None
    choices: list | None
    answers: list
    language: str
    question_title: str | None = None
    instructions: str | None = None
    exercise: int | str | None = None
    question: int | str | None = None
    source: str | None = None
    has_image: bool = False
    image: str | None = None
    task: str | None = None
    dimension: str | None = None
    tags: dict | None = None
    image_attributes: dict | None = None
    parallel_of: str | None = None
    dialogue_id: str | None = None
    turn: int | None = None
    variant_of: str | None = None
    variant: dict | None = None
    regions: list | None = None
    answers_as_strings: list | None = None

    def to_record(self) -> dict:
        """Canonical JSON-serialisable record, keys in `RECORD_FIELDS` order (a deep copy).

        Metadata and optional fields that are not set are left out (see `METADATA_FIELDS`,
        `OPTIONAL_FIELDS`).
        """
        return {name: copy.deepcopy(getattr(self, name)) for name in (*RECORD_FIELDS, *OPTIONAL_FIELDS)
                if name in _ALWAYS or getattr(self, name) is not None}


# ---------------------------------------------------------------------------------------------
# Normalisation of older variants
# ---------------------------------------------------------------------------------------------

def _norm_entry_id(entry: Any) -> Any:
    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
        entry = dict(entry)
        entry["id"] = norm_id(entry["id"])
    return entry


def normalise_record(record: Mapping[str, Any] | Item) -> dict:
    """Return a canonical copy of `record`: known keys in canonical order, old variants fixed.

    Fixes: true_false verdicts `Vero`/`Falso` (any case, or booleans) -> `True`/`False`;
    completion_open answers given as a plain list of strings -> `[{"id": "A", "description": s}]`
    (the list as written kept in `answers_as_strings`);
    ids upper-cased and stripped; `item_id` as a string; missing `has_image` derived from
    `image`. Unknown keys (bookkeeping fields of the published files) are dropped. Never
    validates: a defective record stays defective, only in canonical shape.
    """
    if isinstance(record, Item):
        return record.to_record()
    if not isinstance(record, Mapping):
        kind = type(record).__name__
        raise ItemValidationError("?", [("record", f"expected a JSON object, got {kind}")])
    out: dict[str, Any] = {name: copy.deepcopy(record.get(name)) for name in RECORD_FIELDS
                           if name not in METADATA_FIELDS}
    out.update(_normalised_metadata(record))
    out.update({name: copy.deepcopy(record[name]) for name in OPTIONAL_FIELDS if record.get(name) is not None})
    if out["item_id"] is not None and not isinstance(out["item_id"], str):
        out["item_id"] = str(out["item_id"])
    if isinstance(out["type"], str):
        out["type"] = out["type"].strip()
    if isinstance(out["language"], str):
        out["language"] = out["language"].strip().lower()
    if "has_image" not in record or record.get("has_image") is None:
        out["has_image"] = bool(out["image"])
    item_type = out["type"]
    answers = keyed_answers(item_type, out["answers"])
    if answers is not out["answers"]:  # an older plain-list key: remembered as written (paper, data issue)
        out[PLAIN_KEY_FIELD] = copy.deepcopy(out["answers"])
    if isinstance(answers, list):
        answers = [_norm_entry_id(a) for a in answers]
    out["answers"] = answers
    fmt = find_format(item_type)
    if isinstance(out["choices"], list) and not (fmt is not None and fmt.word_bank):  # a word bank is plain terms
        out["choices"] = [_norm_entry_id(c) for c in out["choices"]]
    return fmt.normalise(out) if fmt is not None else out


def is_tag_key(name: object) -> bool:
    """A usable key of `tags` / `image_attributes`: a short name (letters, digits, space, _ . : / -)."""
    return isinstance(name, str) and bool(_TAG_KEY.match(name))


def _normalised_metadata(record: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata fields that are set, trimmed: labels stripped, ids as strings, "3" -> 3.

    Empty values (None, "", {}) count as not set, so a table importer may pass empty cells.
    """
    out: dict[str, Any] = {}
    for name in METADATA_FIELDS:
        value = copy.deepcopy(record.get(name))
        if isinstance(value, str):
            value = value.strip()
        if name in ("parallel_of", "dialogue_id", "variant_of") and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if name == "turn" and isinstance(value, str) and value.isdigit():
            value = int(value)
        if value is None or value == "" or value == {}:
            continue
        out[name] = value
    return out


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------

def _check_common(rec: dict, out: Problems, image_exists: Callable[[str], bool] | None) -> None:
    if not nonempty_str(rec["item_id"]):
        out.add("item_id", "missing item_id")
    if not is_language_code(rec["language"]):
        out.add("language", f"must be an ISO 639-1 code such as 'it', 'en' or 'fr', got {rec['language']!r}")
    qt = rec["question_text"]
    if qt is not None and not isinstance(qt, str):
        out.add("question_text", f"must be a string or null, got {type(qt).__name__}")
    for name in ("question_title", "instructions", "source"):
        if rec[name] is not None and not isinstance(rec[name], str):
            out.add(name, f"must be a string or null, got {type(rec[name]).__name__}")
    for name in ("exercise", "question"):
        value = rec[name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, str))):
            out.add(name, f"must be an integer or string, got {type(value).__name__}")
    if not isinstance(rec["has_image"], bool):
        out.add("has_image", f"must be true or false, got {rec['has_image']!r}")
    image = rec["image"]
    if image is not None and not nonempty_str(image):
        out.add("image", "must be a non-empty path or null")
    elif rec["has_image"] is True and image is None:
        out.add("has_image", "has_image is true but image is null")
    elif rec["has_image"] is False and image is not None:
        out.add("image", f"image {image!r} is set but has_image is false")
    if nonempty_str(image) and image_exists is not None:
        try:
            found = bool(image_exists(image))
        except Exception as exc:  # a checker failure is reported, never fatal
            out.add("image", f"cannot check image file {image!r}: {exc}")
        else:
            if not found:
                out.add("image", f"image file {image!r} not found")


def _short_label(value: Any, limit: int = MAX_LABEL_CHARS) -> str | None:
    """Why a label is unusable (None when it is a non-empty string within ``limit``)."""
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    if not value.strip():
        return "must not be empty"
    if len(value) > limit:
        return f"is {len(value)} characters long (at most {limit})"
    return None


def _check_attributes(value: Any, name: str, out: Problems) -> None:
    """`tags` / `image_attributes`: an object of short string or finite number values."""
    if not isinstance(value, dict):
        out.add(name, f"must be an object of short string or number values, got {type(value).__name__}")
        return
    if len(value) > MAX_TAGS:
        out.add(name, f"has {len(value)} keys (at most {MAX_TAGS})")
    for key, val in value.items():
        if not is_tag_key(key):
            out.add(f"{name}.{key}", "key must be a short name (letters, digits, space, _ . : / -)")
            continue
        if isinstance(val, bool) or val is None or not isinstance(val, (str, int, float)):
            out.add(f"{name}.{key}", f"value must be a short string or a number, got {type(val).__name__}")
        elif isinstance(val, float) and not math.isfinite(val):
            out.add(f"{name}.{key}", f"value must be a finite number, got {val}")
        elif isinstance(val, str) and (problem := _short_label(val, MAX_TAG_VALUE_CHARS)):
            out.add(f"{name}.{key}", f"value {problem}")


def _check_metadata(rec: dict, out: Problems) -> None:
    """The optional metadata of `METADATA_FIELDS` and the choices' `distractor_type`."""
    for name in ("task", "dimension", "dialogue_id"):
        if name in rec and (problem := _short_label(rec[name])):
            out.add(name, problem)
    for name in ("tags", "image_attributes"):
        if name in rec:
            _check_attributes(rec[name], name, out)
    if "image_attributes" in rec and rec["has_image"] is False:
        out.add("image_attributes", "image attributes are set but the item has no image")
    if "parallel_of" in rec:
        if problem := _short_label(rec["parallel_of"]):
            out.add("parallel_of", f"item id {problem}")
        elif rec["parallel_of"] == rec["item_id"]:
            out.add("parallel_of", "an item cannot be its own parallel form")
    if "variant_of" in rec:
        if problem := _short_label(rec["variant_of"]):
            out.add("variant_of", f"item id {problem}")
        elif rec["variant_of"] == rec["item_id"]:
            out.add("variant_of", "an item cannot be a variant of itself")
    if "variant" in rec:
        variant = rec["variant"]
        if not isinstance(variant, dict) or _short_label(variant.get("kind")):
            out.add("variant", "must be an object with a short 'kind' (rotate, grayscale, translate, ...)")
        else:
            _check_attributes(variant, "variant", out)
    turn = rec.get("turn")
    if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int) or not 1 <= turn <= MAX_TURN):
        out.add("turn", f"must be a whole number from 1 to {MAX_TURN}, got {turn!r}")
    if ("turn" in rec) != ("dialogue_id" in rec):
        missing = "dialogue_id" if "turn" in rec else "turn"
        out.add(missing, "dialogue_id and turn go together: a dialogue turn needs both")
    choices = rec.get("choices")
    for i, choice in enumerate(choices if isinstance(choices, list) else []):
        if isinstance(choice, dict) and choice.get("distractor_type") is not None \
                and (problem := _short_label(choice["distractor_type"])):
            out.add(f"choices[{entry_label(choice, i)}].distractor_type", problem)


def _check_visual(rec: dict, out: Problems, image_exists: Callable[[str], bool] | None) -> None:
    """Regions of the image and option image files (options that are images)."""
    check_regions(rec, out)
    if image_exists is None or not isinstance(rec.get("choices"), list):
        return
    for c in rec["choices"]:
        if isinstance(c, dict) and nonempty_str(c.get("image")):
            try:
                found = bool(image_exists(c["image"]))
            except Exception as exc:  # a checker failure is reported, never fatal
                out.add(f"choices[{c.get('id')}].image", f"cannot check image file {c['image']!r}: {exc}")
            else:
                if not found:
                    out.add(f"choices[{c.get('id')}].image", f"image file {c['image']!r} not found")


def _problems_of(rec: dict, image_exists: Callable[[str], bool] | None) -> list[tuple[str, str]]:
    out = Problems()
    fmt = find_format(rec["type"])
    if fmt is None:
        out.add("type", f"unknown type {rec['type']!r}")
    _check_common(rec, out, image_exists)
    _check_metadata(rec, out)
    _check_visual(rec, out, image_exists)
    if not isinstance(rec["answers"], list):
        out.add("answers", "answers must be a list")
        return out.items
    if fmt is not None:
        fmt.validate(rec, out)
    return out.items


def check_item(record: Mapping[str, Any], *, image_exists: Callable[[str], bool] | None = None,
               require_id: bool = True) -> tuple[dict, list[str]]:
    """Normalise and list the problems of `record` without raising (importers keep defects).

    `require_id=False` validates a record that has no id yet (an extraction before promotion
    gets its id from the page), so the absence of `item_id` is not reported as a problem.
    Raises `ItemValidationError` only when `record` is not a JSON object at all.
    """
    rec = normalise_record(record)
    return rec, [_format_problem(rec["item_id"] or "?", f, p)
                 for f, p in _problems_of(rec, image_exists)
                 if require_id or f != "item_id"]


def validate_item(record: Mapping[str, Any], *,
                  image_exists: Callable[[str], bool] | None = None) -> Item:
    """Strictly validate and normalise `record`; raise `ItemValidationError` listing every problem.

    `image_exists(path)` lets importers check that the record's image file is really there.
    """
    rec = normalise_record(record)
    problems = _problems_of(rec, image_exists)
    if problems:
        raise ItemValidationError(rec["item_id"] or "?", problems)
    return Item(**rec)


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------

def render_prompt_text(item: Item | Mapping[str, Any]) -> str:
    """The model-ready text of `data/<id>.txt`: question_text, blank line, one line per choice.

    Choices with `text` render as `A. text`, completion_closed blanks as `A:` then
    `  1. option` / `  2. option`, a positioning word bank as `1. term`, ...; null choices add
    nothing. Decisions where the published layout is silent: a null (or empty) question_text
    renders as the choice lines alone (no leading blank line), null choices as the question_text
    alone, and there is no trailing newline. Title, instructions and type are not included.
    Each format renders through the registry (`eduart_core.formats`); regions and box or image
    options of the newer formats add their own lines.
    """
    record = vars(item) if isinstance(item, Item) else item
    fmt = find_format(record.get("type")) or _GENERIC
    return fmt.render(record)


_GENERIC = AnswerFormat()

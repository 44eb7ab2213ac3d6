"""An Inspect sample as studio data: an item record, an answer our formats score, the scorers' values.

Why a mapping of its own (plain data in, plain data out, no ``inspect_ai``): the rules of what maps
onto a studio format are ours and must be testable without Inspect installed.

- A sample with choices and one target among them is a ``multiple_choice_radio`` item: the input's
  text is the question, the choices are options A, B, ... (Inspect's letters), the target (a letter,
  or the text of an option) the key, metadata values that fit a tag are tags, and one input image is
  the item's image. Anything else (no choices, several targets, several images, an image that is a
  link rather than embedded bytes, no text) cannot map and is named with the reason.
- The answer: Inspect's multiple-choice template asks for a last line ``ANSWER: X``. Our own reading
  of that line (`read_letters`, written here, not Inspect's parser) becomes our answer JSON, which
  the format scores under strict and paper like any run; the model's whole text is kept as the
  response's justification. A completion without such a line is stored as it is (unparseable: 0).
"""
from __future__ import annotations

import base64
import binascii
import json
import re

from ..items import MAX_TAG_VALUE_CHARS, check_item, is_tag_key
from ..text import norm_strict
from ..vocab import MCQ_TYPE

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_DATA_URI = re.compile(r"^data:image/[\w.+-]+;base64,", re.IGNORECASE)
#: The last ``ANSWER: X`` line (a strict line first, then anywhere in the text).
_ANSWER_LINE = re.compile(r"(?im)^\s*ANSWER\s*:\s*\(?([A-Z](?:\s*,\s*[A-Z])*)\)?\s*\.?\s*$")
_ANSWER_ANYWHERE = re.compile(r"(?i)ANSWER\s*:\s*\(?([A-Z](?:\s*,\s*[A-Z])*)\)?(?![\w])")


class SampleProblem(ValueError):
    """Why a sample cannot become an item, in a few words."""


def decode_image(source: str) -> bytes:
    """The bytes of an embedded image (``data:image/...;base64,``), else SampleProblem."""
    match = _DATA_URI.match(source)
    if not match:
        shown = source if len(source) <= 60 else source[:57] + "..."
        raise SampleProblem(f"its image is not embedded in the log ({shown})")
    try:
        return base64.b64decode(source[match.end():], validate=True)
    except (binascii.Error, ValueError):
        raise SampleProblem("its image is not valid base64") from None


def _key(target: list[str], choices: list[dict]) -> str:
    if len(target) != 1:
        raise SampleProblem(f"it has {len(target)} targets; a multiple_choice_radio item has one key")
    wanted = target[0].strip()
    ids = [c["id"] for c in choices]
    if wanted.upper() in ids:
        return wanted.upper()
    by_text = [c["id"] for c in choices if norm_strict(c["text"]) == norm_strict(wanted)]
    if len(by_text) == 1:
        return by_text[0]
    raise SampleProblem(f"its target {wanted!r} is not one of the options {', '.join(ids)}")


def _tags(metadata: dict) -> dict:
    tags = {}
    for key, value in metadata.items():
        if not is_tag_key(str(key)) or value is None:
            continue
        if not isinstance(value, (str, int, float, bool)):
            value = json.dumps(value, ensure_ascii=False, sort_keys=True)
        if isinstance(value, bool):
            value = "true" if value else "false"
        if isinstance(value, str) and (not value.strip() or len(value) > MAX_TAG_VALUE_CHARS):
            continue
        tags[str(key)] = value.strip() if isinstance(value, str) else value
    return tags


def item_record(sample_id: str, text: str, choices: list[str] | None, target: list[str], metadata: dict,
                n_images: int, language: str, source: str) -> dict:
    """The item record of a sample (image fields filled by the caller), or SampleProblem."""
    if not choices:
        raise SampleProblem("it has no choices (only multiple-choice samples map onto a studio format so far)")
    if len(choices) > len(_LETTERS):
        raise SampleProblem(f"it has {len(choices)} choices; at most {len(_LETTERS)} map onto letters")
    if not text.strip():
        raise SampleProblem("its input has no text")
    if n_images > 1:
        raise SampleProblem(f"its input holds {n_images} images; an item holds one")
    options = [{"id": _LETTERS[i], "text": str(c)} for i, c in enumerate(choices)]
    key = _key(target, options)
    record = {
        "item_id": sample_id, "type": MCQ_TYPE, "question_text": text, "choices": options,
        "answers": [{"id": key, "description": next(c["text"] for c in options if c["id"] == key)}],
        "language": language, "source": f"{source}/{sample_id}", "has_image": False, "image": None,
        "tags": _tags(metadata),
    }
    for name in ("task", "dimension"):
        if isinstance(metadata.get(name), str) and metadata[name].strip():
            record[name] = metadata[name].strip()
    _, problems = check_item(record)
    if problems:
        raise SampleProblem("; ".join(problems))
    return record


def read_letters(completion: str) -> list[str] | None:
    """The letters of the last ``ANSWER: X`` line of a completion (``A`` or ``A, C``), else None."""
    matches = _ANSWER_LINE.findall(completion) or _ANSWER_ANYWHERE.findall(completion)
    if not matches:
        return None
    return [letter.strip().upper() for letter in matches[-1].split(",") if letter.strip()]


def answer_text(completion: str | None) -> tuple[str, str | None]:
    """(raw text our formats score, justification kept beside it) of a completion: our answer JSON
    when the completion has an ``ANSWER:`` line (the model's whole text kept as the justification),
    else the completion itself."""
    completion = completion or ""
    letters = read_letters(completion)
    if letters is None:
        return completion, None
    return json.dumps({"Answers": [{"id": letter} for letter in letters]}), completion

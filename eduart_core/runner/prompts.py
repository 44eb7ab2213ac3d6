"""Turning an item into the request a model sees: system prompt, user text, JSON schema.

Why files: researchers edit the templates in ``prompts/`` without touching code, and every run
records the content hash of the templates it used, so two runs are comparable only when their
hashes match. Each request is keyed (response cache) by the hash of the templates that reach it:
the system and condition templates and its own format's rules (`Templates.format_hash`), so a
change to one format's rules leaves every other format's requests cached.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..errors import UserError
from ..items import render_prompt_text
from ..vocab import CONDITIONS, MOTIVATION_CONDITION

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts"
#: One template per format: `prompts/formats/<format>.md` (rules, then a fenced json example).
FORMATS_DIR = "formats"
VISUAL_NOTE = "_visual_options.md"
_FENCE = re.compile(r"```json\s*\n(.*?)\n```", re.DOTALL)


@dataclass(frozen=True)
class Templates:
    """The template texts of one condition and their combined content hash."""

    system: str
    user: str
    formats: dict[str, tuple[str, str]]  # type -> (rules, output example JSON)
    condition: str
    #: the content hash of every template together (what a run records as its prompt hash)
    hash: str
    visual_note: str = ""  # added to the rules of items whose options are boxes or images
    #: (format, with the visual note) -> content hash of the templates a request of that format sees
    format_hashes: dict[tuple[str, bool], str] = field(default_factory=dict)

    def format_hash(self, kind: str, visual: bool = False) -> str:
        """The hash of the templates an item of format ``kind`` is asked with (``visual``: its options
        are boxes or images, so the visual note joins its rules); the combined hash for an unknown format."""
        return self.format_hashes.get((kind, visual), self.hash)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"prompt template {path} is missing") from None


def _parse_format(text: str) -> tuple[str, str]:
    """(rules, output example) of one `prompts/formats/<name>.md` file."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    match = _FENCE.search(text)
    example = match.group(1).strip() if match else '{"Answers": []}'
    return _FENCE.sub("", text).strip(), example


def _format_files(base: Path) -> list[Path]:
    """One template per registered format (in registry order), then the visual-options note.

    A format's rules are `<base>/formats/<name>.md`, unless its entry names its own file
    (`AnswerFormat.prompt_path`: a format registered from outside the package ships its rules).
    """
    from ..formats import all_formats

    return ([Path(f.prompt_path) if f.prompt_path else base / FORMATS_DIR / f"{f.name}.md" for f in all_formats()]
            + [base / FORMATS_DIR / VISUAL_NOTE])


def _format_names() -> list[str]:
    from ..formats import all_formats

    return [f.name for f in all_formats()]


@lru_cache(maxsize=16)
def _load(condition: str, prompts_dir: str, stamp: tuple) -> Templates:
    base = Path(prompts_dir)
    system = _read(base / "system.md")
    user = _read(base / f"{condition}.md")
    files = _format_files(base)
    texts = [_read(path) for path in files]
    digest = _digest(system, user, *texts)
    names = _format_names()
    formats = {name: _parse_format(text) for name, text in zip(names, texts[:-1])}
    note = texts[-1]
    per_format = {(name, visual): _digest(system, user, text, *([note] if visual else []))
                  for name, text in zip(names, texts[:-1]) for visual in (False, True)}
    return Templates(system=system.strip(), user=user, formats=formats, condition=condition, hash=digest,
                     visual_note=_parse_format(note)[0], format_hashes=per_format)


def _digest(*texts: str) -> str:
    return hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]


def load_templates(condition: str, prompts_dir: Path | None = None) -> Templates:
    """Templates of ``condition``, re-read whenever a file changes on disk."""
    if condition not in CONDITIONS:
        raise UserError(f"unknown condition {condition!r}: use {' or '.join(CONDITIONS)}")
    base = Path(prompts_dir or PROMPTS_DIR)
    paths = [base / "system.md", base / f"{condition}.md", *_format_files(base)]
    stamp = tuple((str(p), p.stat().st_mtime_ns if p.exists() else 0) for p in paths)
    return _load(condition, str(base), stamp)


def render_user_text(record: dict, templates: Templates) -> str:
    """The user message: title, instructions, model-ready item text and the format's rules."""
    kind = record.get("type", "")
    rules, example = templates.formats.get(kind, ("Answer the question.", '{"Answers": []}'))
    if templates.visual_note and _has_visual_options(record):
        rules = f"{rules} {templates.visual_note}"
    example_motivation = example[:-1].rstrip() + ', "motivation": "Two to four sentences."}' if example.endswith("}") else example
    title = (record.get("question_title") or "").strip()
    instructions = (record.get("instructions") or "").strip()
    values = {
        "title": f"{title}\n" if title else "",
        "instructions": f"{instructions}\n\n" if instructions else ("\n" if title else ""),
        "item_text": render_prompt_text(record).strip(),
        "format_rules": rules,
        "output_example": example,
        "output_example_motivation": example_motivation,
    }
    text = templates.user
    for name, value in values.items():
        text = text.replace("{{" + name + "}}", value)
    return text.strip() + "\n"


def request_templates_hash(record: dict, templates: Templates) -> str:
    """The hash of the templates that reach this item's request (its format's, see `Templates.format_hash`)."""
    return templates.format_hash(str(record.get("type", "")), bool(templates.visual_note) and _has_visual_options(record))


def _has_visual_options(record: dict) -> bool:
    return any(isinstance(c, dict) and (c.get("bbox") is not None or c.get("image"))
               for c in record.get("choices") or [])


def answer_schema(item_type: str, condition: str, record: dict | None = None) -> dict:
    """JSON schema of the reply: ``Answers`` entries per format, plus ``motivation`` when asked."""
    from ..formats import AnswerFormat, find_format

    fmt = find_format(item_type) or AnswerFormat()
    entry = fmt.entry_schema(record)
    schema: dict = {"type": "object", "properties": {"Answers": {"type": "array", "items": entry}},
                    "required": ["Answers"]}
    if condition == MOTIVATION_CONDITION:
        schema["properties"]["motivation"] = {"type": "string"}
        schema["required"] = ["Answers", "motivation"]
    return schema


def schema_hash(schema: dict) -> str:
    return hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()[:16]

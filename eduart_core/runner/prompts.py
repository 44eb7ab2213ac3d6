"""Turning an item into the request a model sees: system prompt, user text, JSON schema.

Why files: researchers edit the templates in ``prompts/`` without touching code, and every run
records the content hash of the templates it used, so two runs are comparable only when their
hashes match.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..errors import UserError
from ..items import render_prompt_text
from ..vocab import CONDITIONS, MOTIVATION_CONDITION

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts"
_SECTION = re.compile(r"^## +(\w+)\s*$", re.MULTILINE)
_FENCE = re.compile(r"```json\s*\n(.*?)\n```", re.DOTALL)


@dataclass(frozen=True)
class Templates:
    """The template texts of one condition and their combined content hash."""

    system: str
    user: str
    formats: dict[str, tuple[str, str]]  # type -> (rules, output example JSON)
    condition: str
    hash: str


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"prompt template {path} is missing") from None


def _parse_formats(text: str) -> dict[str, tuple[str, str]]:
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    parts = _SECTION.split(text)
    formats = {}
    for name, body in zip(parts[1::2], parts[2::2]):
        match = _FENCE.search(body)
        example = match.group(1).strip() if match else '{"Answers": []}'
        rules = _FENCE.sub("", body).strip()
        formats[name] = (rules, example)
    return formats


@lru_cache(maxsize=16)
def _load(condition: str, prompts_dir: str, stamp: tuple) -> Templates:
    base = Path(prompts_dir)
    system = _read(base / "system.md")
    user = _read(base / f"{condition}.md")
    formats_text = _read(base / "default_formats.md")
    digest = hashlib.sha256("\x00".join([system, user, formats_text]).encode()).hexdigest()[:16]
    return Templates(system=system.strip(), user=user, formats=_parse_formats(formats_text),
                     condition=condition, hash=digest)


def load_templates(condition: str, prompts_dir: Path | None = None) -> Templates:
    """Templates of ``condition``, re-read whenever a file changes on disk."""
    if condition not in CONDITIONS:
        raise UserError(f"unknown condition {condition!r}: use {' or '.join(CONDITIONS)}")
    base = Path(prompts_dir or PROMPTS_DIR)
    names = ["system.md", f"{condition}.md", "default_formats.md"]
    stamp = tuple((base / n).stat().st_mtime_ns if (base / n).exists() else 0 for n in names)
    return _load(condition, str(base), stamp)


def render_user_text(record: dict, templates: Templates) -> str:
    """The user message: title, instructions, model-ready item text and the format's rules."""
    kind = record.get("type", "")
    rules, example = templates.formats.get(kind, ("Answer the question.", '{"Answers": []}'))
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


def answer_schema(item_type: str, condition: str) -> dict:
    """JSON schema of the reply: ``Answers`` entries per format, plus ``motivation`` when asked."""
    if item_type in ("multiple_choice_radio", "multiple_choice_check"):
        entry = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    elif item_type == "select_errors":
        entry = {"type": "object", "properties": {"text": {"type": "string"}, "correct": {"type": "string"}},
                 "required": ["text"]}
    else:
        entry = {"type": "object", "properties": {"id": {"type": "string"}, "text": {"type": "string"}},
                 "required": ["id", "text"]}
    schema: dict = {"type": "object", "properties": {"Answers": {"type": "array", "items": entry}},
                    "required": ["Answers"]}
    if condition == MOTIVATION_CONDITION:
        schema["properties"]["motivation"] = {"type": "string"}
        schema["required"] = ["Answers", "motivation"]
    return schema


def schema_hash(schema: dict) -> str:
    return hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()[:16]

"""The item record each question of the local exercise site stands for (its truth).

Why: with these, a loopback extractor can answer `extract` on a captured folder exactly, so that
capture -> extract -> review -> promote can be tried and tested offline end to end.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .site import load_exercises
from .site_pages import site_spec


def _fields(fmt: str, question: Mapping[str, Any]) -> dict[str, Any]:
    """The record's choices and answers of one question, by the format's site spec (`AnswerFormat.site`)."""
    spec = site_spec(fmt)
    key = question["key"]
    if spec["key"] == "options":
        return {"choices": [{"id": k, "text": t} for k, t in question["choices"].items()],
                "answers": [{"id": k, "description": question["choices"][k]} for k in key]}
    if spec["key"] == "statements":
        return {"choices": [{"id": k, "text": t} for k, t in question["statements"].items()],
                "answers": [{"id": k, "text": v} for k, v in key.items()]}
    if spec["key"] == "errors":
        return {"choices": None, "answers": [{"error": wrong, "correct": right} for wrong, right in key]}
    choices = {"bank": lambda: question.get("bank"),
               "options": lambda: [{"id": k, "options": list(v)} for k, v in (question.get("options") or {}).items()],
               None: lambda: None}[spec.get("choices")]()
    return {"choices": choices, "answers": [{"id": k, "description": v} for k, v in key.items()]}


def site_records(exercises: Sequence[Mapping[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """`{"<exercise>/<question>": item record}` for every question of the site (page ids of `extract`)."""
    found = {}
    for exercise in exercises if exercises is not None else load_exercises():
        for index, question in enumerate(exercise["questions"], start=1):
            found[f"{exercise['slug']}/q{index:02d}"] = {
                "type": exercise["format"], "language": "en", "question_title": exercise["title"],
                "instructions": exercise["instructions"], "question_text": question["text"],
                "has_image": False, "image": None, **_fields(exercise["format"], question)}
    return found

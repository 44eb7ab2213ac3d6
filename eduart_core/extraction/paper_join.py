"""One extractor's page replies of a paper, joined into one record per question number.

Why by number: a page holds several questions and a question can run onto the next page (its
last options overleaf); the number printed in the paper is the one identity both extractors and
the answer key share. The first part found gives the question its fields; a later part adds the
text and options the first lacked. The image a question refers to is named by the extractor as
a candidate label and becomes the stored image's hash here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .answer_key import parse_key_text

RECORD_FIELDS = ("type", "language", "question_title", "instructions", "question_text", "choices", "answers")


@dataclass
class JoinedQuestion:
    number: int
    record: dict
    pages: list[int] = field(default_factory=list)
    region: dict[str, list[float]] = field(default_factory=dict)   # page -> [x0, y0, x1, y1] fractions
    image_label: str | None = None


def parse_page_reply(text: str | None) -> tuple[dict | None, str | None]:
    """The reply for one page: ``{"questions": [...], "answer_key": ...}``, or a bare list of
    questions (models often answer with the list alone); (None, why) when neither is there."""
    import json

    from .pipeline import parse_record

    stripped = (text or "").strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", stripped, re.S)
    candidate = (fenced.group(1) if fenced else stripped).strip()
    if candidate.startswith("["):
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, list):
            return {"questions": value}, None
    reply, error = parse_record(text)
    if reply is not None and not isinstance(reply.get("questions"), list):
        return None, "reply holds no list of questions"
    return reply, error


def question_number(value) -> int | None:
    """12, "12", "Question 12", "12." -> 12; None when there is no number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    match = re.search(r"\d{1,4}", str(value or ""))
    return int(match.group()) if match else None


def _region(value) -> list[float] | None:
    if isinstance(value, list) and len(value) == 4 and all(isinstance(v, (int, float)) for v in value):
        box = [min(max(float(v), 0.0), 1.0) for v in value]
        if box[2] > box[0] and box[3] > box[1]:
            return box
    return None


def _merge_part(into: JoinedQuestion, part: dict) -> None:
    record = into.record
    text = part.get("question_text")
    if isinstance(text, str) and text.strip():
        current = record.get("question_text")
        if not current:
            record["question_text"] = text
        elif text.strip() not in current:
            record["question_text"] = f"{current.rstrip()} {text.strip()}"
    choices = part.get("choices")
    if isinstance(choices, list) and choices:
        have = record.get("choices") if isinstance(record.get("choices"), list) else []
        ids = {str(c.get("id")).strip() for c in have if isinstance(c, dict)}
        record["choices"] = have + [c for c in choices if not (isinstance(c, dict) and str(c.get("id")).strip() in ids)]
    for name in RECORD_FIELDS:
        if record.get(name) in (None, [], "") and part.get(name) not in (None, [], ""):
            record[name] = part[name]


def join_replies(replies: list[tuple[int, dict]], candidates: dict[str, str]) -> tuple[dict[int, JoinedQuestion],
                                                                                    dict[int, str], list[str]]:
    """(questions by number, the printed key as read by this extractor, problems).

    ``replies``: (page number, parsed reply) in page order; a reply is
    ``{"questions": [...], "answer_key": [{"number", "key"}] | "1-C, 2-B"}``.
    ``candidates``: candidate label -> stored image hash.
    """
    questions: dict[int, JoinedQuestion] = {}
    key: dict[int, str] = {}
    problems: list[str] = []
    for page_no, reply in replies:
        for part in reply.get("questions") or []:
            if not isinstance(part, dict):
                continue
            number = question_number(part.get("number"))
            if number is None:
                problems.append(f"page {page_no}: a question without a number was left out")
                continue
            joined = questions.get(number)
            if joined is None:
                joined = questions[number] = JoinedQuestion(number, {name: part.get(name) for name in RECORD_FIELDS})
                joined.record["image"] = None
            else:
                _merge_part(joined, part)
            if page_no not in joined.pages:
                joined.pages.append(page_no)
            box = _region(part.get("region"))
            if box:
                joined.region[str(page_no)] = box
            label = part.get("image")
            if isinstance(label, str) and label.strip() and joined.image_label is None:
                label = label.strip()
                if label in candidates:
                    joined.image_label = label
                    joined.record["image"] = candidates[label]
                else:
                    problems.append(f"question {number}: attached {label!r}, which is not an image of the paper")
        printed = reply.get("answer_key")
        if isinstance(printed, str):
            key.update(parse_key_text(printed, whole=True))
        elif isinstance(printed, list):
            for entry in printed:
                if isinstance(entry, dict) and question_number(entry.get("number")) is not None \
                        and isinstance(entry.get("key"), str) and entry["key"].strip():
                    key[question_number(entry["number"])] = entry["key"].replace(",", "").replace(" ", "").upper()
    for joined in questions.values():
        if joined.record.get("answers") is None:
            joined.record["answers"] = []
    return dict(sorted(questions.items())), key, problems

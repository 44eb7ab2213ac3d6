"""What a judge sees and says: the request for one criterion of one answer, and reading its verdict.

Why one criterion per request: a judge asked about several criteria at once lets one impression
colour the others (the halo effect); one request per criterion also makes every verdict a row of
its own, with its own option order, cost and failure.

Order effects are controlled: the scoring options of a criterion are listed in an order drawn per
request (seeded by the request, so a resume draws the same one) and the order is recorded with
the judgement. The position probe asks again with the options in the reverse order; the verbosity
probe asks again with the answer padded by words that add nothing.
"""
from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..items import render_prompt_text
from .rubric import Criterion

JUDGE_PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts" / "judges"
SYSTEM_FILE = "system.md"
CRITERION_FILE = "criterion.md"
_COMMENT = re.compile(r"<!--.*?-->\s*", re.DOTALL)

#: Words that lengthen an answer without adding content (the verbosity probe), per language.
PADDING: dict[str, str] = {
    "en": ("I have thought about this question carefully, and I would like to restate my answer clearly and at "
           "some length, so that nothing in it can be misunderstood by the reader. To put it once more in other "
           "words, what I wrote above is my considered answer, and I stand by every part of it."),
    "it": ("Ho riflettuto con attenzione su questa domanda e vorrei ribadire la mia risposta in modo chiaro e "
           "disteso, perché nulla possa essere frainteso da chi legge. Per dirlo ancora una volta con altre "
           "parole, quanto ho scritto sopra è la mia risposta ponderata, e la confermo in ogni sua parte."),
}


@dataclass(frozen=True)
class JudgeTemplates:
    """The judge's system prompt and criterion template, and their combined content hash."""

    system: str
    user: str
    hash: str


def load_judge_templates(directory: Path | None = None) -> JudgeTemplates:
    base = Path(directory) if directory else JUDGE_PROMPTS_DIR
    texts = []
    for name in (SYSTEM_FILE, CRITERION_FILE):
        try:
            texts.append((base / name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UserError(f"judge prompt {base / name} is missing") from None
    digest = hashlib.sha256("\0".join(texts).encode("utf-8")).hexdigest()
    return JudgeTemplates(_COMMENT.sub("", texts[0]).strip(), _COMMENT.sub("", texts[1]).strip(), digest)


def answer_text(parsed: object, raw: object) -> str:
    """The words of an answer as a grader or judge reads them: the texts of the parsed entries
    (blanks as ``A: term``), else the raw reply."""
    if isinstance(parsed, list):
        parts = []
        for entry in parsed:
            if isinstance(entry, dict):
                value = entry.get("text") if entry.get("text") not in (None, "") else entry.get("description")
                if value in (None, ""):
                    continue
                ident = str(entry.get("id") or "").strip()
                parts.append(str(value) if len(parsed) == 1 or not ident else f"{ident}: {value}")
            elif isinstance(entry, str) and entry.strip():
                parts.append(entry)
        if parts:
            return "\n".join(parts)
    return str(raw or "").strip()


def question_text(record: dict) -> str:
    """The item as the examinee saw it: title, instructions, then the rendered question."""
    head = [str(record.get(k)) for k in ("question_title", "instructions") if record.get(k)]
    return "\n".join([*head, render_prompt_text(record)]).strip()


def key_text(record: dict) -> str:
    """The answer key in words (reference answers for free text)."""
    from ..formats import find_format

    fmt = find_format(str(record.get("type")))
    if fmt is None:
        return json.dumps(record.get("answers"), ensure_ascii=False)
    refs = []
    for entry in record.get("answers") or []:
        if isinstance(entry, dict) and isinstance(entry.get("references"), list):
            refs += [f"- {r}" for r in entry["references"] if isinstance(r, str) and r.strip()]
    return "\n".join(refs) if refs else fmt.gold_summary(record)


def option_order(criterion: Criterion, seed: str) -> list[int]:
    """The points of the scoring options in the order a request lists them (drawn from ``seed``)."""
    order = list(criterion.allowed)
    rng = random.Random(hashlib.sha256(seed.encode("utf-8")).hexdigest())
    rng.shuffle(order)
    return order


def order_text(order: list[int]) -> str:
    return ",".join(str(p) for p in order)


def parse_order(text: str | None) -> list[int]:
    return [int(p) for p in str(text or "").split(",") if p.strip().lstrip("-").isdigit()]


def pad_answer(answer: str, language: str | None) -> str:
    """The same answer, longer by words that add nothing (the verbosity probe)."""
    return f"{answer}\n\n{PADDING.get(str(language), PADDING['en'])}"


def render_request(templates: JudgeTemplates, record: dict, criterion: Criterion, answer: str,
                   order: list[int]) -> str:
    """The user text of one judge request (placeholders of ``criterion.md`` filled in)."""
    options = "\n".join(f"- {p} point{'s' if p != 1 else ''}: {criterion.level_text(p)}" for p in order)
    what = f"{criterion.label}. {criterion.prompt or criterion.description}".strip()
    values = {"question": question_text(record), "key": key_text(record), "answer": answer, "criterion": what,
              "options": options, "allowed": ", ".join(str(p) for p in criterion.allowed)}
    text = templates.user
    for name, value in values.items():
        text = text.replace("{{" + name + "}}", value)
    return text


def verdict_schema(criterion: Criterion) -> dict:
    """JSON schema of a verdict: the points (one of the allowed numbers) and a one-sentence reason."""
    return {"type": "object", "additionalProperties": False, "required": ["points", "reason"],
            "properties": {"points": {"type": "integer", "enum": list(criterion.allowed)},
                           "reason": {"type": "string"}}}


@dataclass(frozen=True)
class Verdict:
    points: int | None
    reason: str | None
    error: str | None


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_NUMBER = re.compile(r"(?<![\w.])(-?\d+)(?![\w.])")


def parse_verdict(text: str | None, allowed: tuple[int, ...]) -> Verdict:
    """The points a judge gave: the JSON object's ``points`` (also ``score``), else the one number
    of a reply that holds exactly one allowed number; anything else is a verdict with an error."""
    raw = str(text or "").strip()
    fenced = _FENCE.search(raw)
    body = fenced.group(1) if fenced else raw
    found = _OBJECT.search(body)
    if found:
        try:
            data = json.loads(found.group(0))
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict):
            value = data.get("points", data.get("score"))
            reason = data.get("reason")
            reason = str(reason) if reason is not None else None
            if isinstance(value, bool) or value is None:
                return Verdict(None, reason, "the reply gives no points")
            try:
                number = float(value)
            except (TypeError, ValueError):
                return Verdict(None, reason, f"points {value!r} is not a number")
            if number != int(number) or int(number) not in allowed:
                return Verdict(None, reason, f"points {value!r} is not one of {', '.join(map(str, allowed))}")
            return Verdict(int(number), reason, None)
    numbers = {int(n) for n in _NUMBER.findall(raw)}
    candidates = numbers & set(allowed)
    if len(candidates) == 1 and len(numbers) == 1:
        return Verdict(candidates.pop(), None, None)
    return Verdict(None, None, "the reply holds no readable verdict")

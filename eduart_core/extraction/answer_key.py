"""Answer keys of exam papers: read from text ("1-C, 2-B, ..." or a two-column table), a CSV
(``number,key``) or a PDF, and joined to questions by number.

Why joining is its own step: released papers print the key pages away from the questions (often
at the end), so a question's key never sits on its page. A question without a key and a key
without a question are both notes for review: a silent gap would promote an item with no right
answer, or hide a question the extractors missed.
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from ..errors import UserError

# "12-C", "12. C", "12) C", "12: AC", "12 C" (a table row read as text); letters A-H
_PAIR_RE = re.compile(r"(?<![\w.])(\d{1,3})\s*[-\u2013\u2014.:)=]?\s*([A-Ha-h]{1,4})(?![\w])")
_HEADING_RE = re.compile(r"\b(answers?|answer key|key|soluzioni|risposte)\b", re.I)


def parse_key_text(text: str, *, whole: bool = False) -> dict[int, str]:
    """Number -> key letters found in ``text``. Unless ``whole``, only the text after the first
    "Answers"/"Key" heading is read (question text above it holds numbers and letters too)."""
    if not whole:
        heading = _HEADING_RE.search(text or "")
        if heading is None:
            return {}
        text = text[heading.end():]
    key: dict[int, str] = {}
    for number, letters in _PAIR_RE.findall(text or ""):
        key.setdefault(int(number), letters.upper())
    return key


def read_key_file(path: Path) -> dict[int, str]:
    """A key given on its own: a CSV of ``number,key`` rows (a header row is allowed) or a PDF."""
    from .paper_read import pdf_text

    path = Path(path)
    if not path.is_file():
        raise UserError(f"--key {path}: no such file")
    if path.suffix.lower() == ".pdf":
        key = parse_key_text(pdf_text(path), whole=True)
    else:
        key = {}
        rows = csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig", errors="replace")))
        for line, row in enumerate(rows, start=1):
            cells = [c.strip() for c in row]
            if not any(cells):
                continue
            if len(cells) < 2 or not cells[0].isdigit():
                if line == 1:
                    continue  # the header
                raise UserError(f"--key {path.name} line {line}: expected number,key, got {','.join(cells)!r}")
            key[int(cells[0])] = cells[1].replace(" ", "").replace(",", "").upper()
    if not key:
        raise UserError(f"--key {path.name}: no key found (expected lines like 1,C or 1-C)")
    return key


def answers_for(letters: str) -> list[dict]:
    """The ``answers`` of a choice question whose key is ``letters`` (one letter, or several for
    a question with more than one right option)."""
    return [{"id": letter} for letter in letters.upper() if letter.isalpha()]


def join_key(records: dict[int, dict], key: dict[int, str]) -> list[dict]:
    """Write each key into the question of its number (in place); the notes for review."""
    notes = []
    for number, record in records.items():
        if number in key:
            record["answers"] = answers_for(key[number])
        elif not record.get("answers"):
            notes.append({"kind": "no_key", "ref": number, "detail": f"question {number} has no key"})
    for number in sorted(set(key) - set(records)):
        notes.append({"kind": "key_without_question", "ref": number,
                      "detail": f"key {number}-{key[number]} has no question {number}"})
    return notes

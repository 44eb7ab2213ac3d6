"""Field-level comparison of two extracted item records, with a category per difference.

Why: the reviewer's time goes to differences that matter. A doubled space and a wrong answer key
are both "differences", but only one changes what a model is scored against. Each difference
carries a path into the record (``choices[B].text``, ``answers[2].error``, ``choices``), the
least serious category that explains it, and both values.

Rules: strings get the first text category whose cumulative normalisation makes them
equal (see ``normalise``). A list without ids (word bank, select_errors answers, the two
alternatives of a completion_closed blank) holding the same elements in another order is one
``order`` difference at the list's path; lists of equal length are otherwise compared element by
element (0-based index in the path); lists of different length are one ``content`` difference.
Lists whose elements all carry an ``id`` are compared id by id when both hold the same set of ids,
else the whole list is one ``content`` difference. A different type, a missing field or a value of
another kind is ``content``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .normalise import CATEGORIES, text_category

# The fields an extractor reads off a page. Position fields (exercise, question, source) come
# from the input layout, not from the models, so they are not compared. ``image`` is compared:
# a paper's extractors attach one of the paper's images (by hash); screenshots carry none.
COMPARED_FIELDS: tuple[str, ...] = (
    "type", "language", "question_title", "instructions", "question_text", "choices", "answers",
    "has_image", "image",
)


@dataclass(frozen=True)
class FieldDiff:
    """One difference between record A and record B at ``path``."""

    path: str
    category: str
    a: Any
    b: Any

    def to_dict(self) -> dict:
        return {"path": self.path, "category": self.category, "a": self.a, "b": self.b}


_MISSING = object()


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _has_ids(values: list) -> bool:
    return bool(values) and all(isinstance(v, dict) and "id" in v for v in values)


def _id_key(value: dict) -> str:
    return str(value.get("id")).strip()


def _compare(a: Any, b: Any, path: str, out: list[FieldDiff]) -> None:
    if a is _MISSING and b is _MISSING:
        return
    if a is _MISSING or b is _MISSING:
        out.append(FieldDiff(path, "content", None if a is _MISSING else a, None if b is _MISSING else b))
        return
    if isinstance(a, str) and isinstance(b, str):
        category = text_category(a, b)
        if category:
            out.append(FieldDiff(path, category, a, b))
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            _compare(a.get(key, _MISSING), b.get(key, _MISSING), f"{path}.{key}" if path else key, out)
        return
    if isinstance(a, list) and isinstance(b, list):
        _compare_lists(a, b, path, out)
        return
    if type(a) is not type(b) or a != b:
        out.append(FieldDiff(path, "content", a, b))


def _compare_lists(a: list, b: list, path: str, out: list[FieldDiff]) -> None:
    if _canon(a) == _canon(b):
        return
    if _has_ids(a) and _has_ids(b):
        ids_a = [_id_key(v) for v in a]
        ids_b = [_id_key(v) for v in b]
        if len(set(ids_a)) == len(ids_a) and len(set(ids_b)) == len(ids_b) and set(ids_a) == set(ids_b):
            by_id_b = {_id_key(v): v for v in b}
            for element in a:
                ident = _id_key(element)
                other = by_id_b[ident]
                for key in [k for k in element if k != "id"] + [k for k in other if k != "id" and k not in element]:
                    _compare(element.get(key, _MISSING), other.get(key, _MISSING), f"{path}[{ident}].{key}", out)
            return
        out.append(FieldDiff(path, "content", a, b))
        return
    if len(a) != len(b):
        out.append(FieldDiff(path, "content", a, b))
        return
    if sorted(_canon(v) for v in a) == sorted(_canon(v) for v in b):
        out.append(FieldDiff(path, "order", a, b))
        return
    for index, (x, y) in enumerate(zip(a, b)):
        _compare(x, y, f"{path}[{index}]", out)


def compare_records(a: dict, b: dict) -> list[FieldDiff]:
    """Every difference between two item records, in field order; identical fields give none."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        raise TypeError("compare_records expects two item records (dicts)")
    out: list[FieldDiff] = []
    for field in COMPARED_FIELDS:
        va = a.get(field, _MISSING)
        vb = b.get(field, _MISSING)
        # An absent optional field and an explicit null mean the same thing on a page.
        va = _MISSING if va is None else va
        vb = _MISSING if vb is None else vb
        if field == "type":  # a different format is always a content difference
            if va is not _MISSING and vb is not _MISSING and va != vb:
                out.append(FieldDiff(field, "content", va, vb))
                continue
        _compare(va, vb, field, out)
    return out


def compare_values(a: Any, b: Any, path: str) -> list[FieldDiff]:
    """Every difference between two values of one field (editors mark the rows that differ)."""
    out: list[FieldDiff] = []
    _compare(_MISSING if a is None else a, _MISSING if b is None else b, path, out)
    return out


def category_counts(diffs: list[FieldDiff]) -> dict[str, int]:
    """Count of differences per category, every category present (zeros included)."""
    counts = {name: 0 for name in CATEGORIES}
    for diff in diffs:
        counts[diff.category] += 1
    return counts


def top_field(path: str) -> str:
    """The record field a path belongs to: ``choices[B].text`` -> ``choices``."""
    for sep in "[.":
        path = path.split(sep, 1)[0]
    return path

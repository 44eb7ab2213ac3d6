"""Reading and writing a value inside an item record by a diff path such as ``choices[B].text``.

Why: review decisions are stored per path, and the promoted record is rebuilt by writing each
decided value back at its path. ``[B]`` addresses the list element whose ``id`` is B;
``[2]`` the element at 0-based index 2.
"""
from __future__ import annotations

import copy
import re
from typing import Any

_TOKEN_RE = re.compile(r"([^.\[\]]+)|\[([^\]]+)\]")


def parse_path(path: str) -> list[tuple[str, str | int]]:
    """``answers[2].error`` -> [("key","answers"), ("index",2), ("key","error")]."""
    tokens: list[tuple[str, str | int]] = []
    for key, bracket in _TOKEN_RE.findall(path):
        if key:
            tokens.append(("key", key))
        elif bracket.isdigit():
            tokens.append(("index", int(bracket)))
        else:
            tokens.append(("id", bracket))
    if not tokens:
        raise ValueError(f"empty path {path!r}")
    return tokens


def _step(container: Any, token: tuple[str, str | int]) -> Any:
    kind, ref = token
    if kind == "key":
        return container[ref]
    if kind == "index":
        return container[ref]
    for element in container:
        if isinstance(element, dict) and str(element.get("id")).strip() == ref:
            return element
    raise KeyError(ref)


def get_at(record: dict, path: str, default: Any = None) -> Any:
    """The value at ``path``, or ``default`` when any step is missing."""
    current: Any = record
    try:
        for token in parse_path(path):
            current = _step(current, token)
    except (KeyError, IndexError, TypeError):
        return default
    return current


def set_at(record: dict, path: str, value: Any) -> dict:
    """A copy of ``record`` with ``value`` written at ``path`` (the parent must exist)."""
    result = copy.deepcopy(record)
    tokens = parse_path(path)
    parent: Any = result
    for token in tokens[:-1]:
        parent = _step(parent, token)
    kind, ref = tokens[-1]
    if kind == "id":
        for index, element in enumerate(parent):
            if isinstance(element, dict) and str(element.get("id")).strip() == ref:
                parent[index] = value
                return result
        raise KeyError(ref)
    if kind == "key" and value is None and isinstance(parent, dict):
        parent.pop(ref, None)  # deciding "absent" removes the field
        return result
    parent[ref] = value
    return result

"""Reading JSON that other people wrote, with one clear reason when it cannot be used.

Why a reader of our own around ``json``: the standard parser accepts things our store cannot hold
or our code cannot survive, and fails on others with messages that name nothing. Published answer
folders have been seen with token counts of ``Infinity``, ``1e30`` and ``2^70``, records nested
100,000 levels deep (``RecursionError``), lone surrogate characters (which cannot be encoded as
UTF-8, so the insert fails later, far from the file) and 200 MB text fields. Here each of those
becomes ``BadInput`` with a one-line reason that names the field, and the importer skips that file
or record, names it, and imports the rest.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .errors import UserError
from .fileio import os_cause
from .limits import MAX_JSON_DEPTH, describe, int_limit

INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1


class BadInput(UserError):
    """A file, line or record that cannot be imported; the message is the reason (no path)."""


class _Rejected(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _reject_constant(name: str) -> Any:
    raise _Rejected(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Rejected(f"number {text} is out of range")
    return value


def _path(parent: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_value(value: Any, *, max_text: int | None = None, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise ``BadInput`` naming the first field that the store cannot hold safely.

    Iterative (no recursion), so a hostile depth cannot crash the check itself.
    """
    max_text = int_limit("max_text_chars") if max_text is None else max_text
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        node, where, depth = stack.pop()
        label = f"field {where}" if where else "value"
        if depth > max_depth:
            raise BadInput(f"{label}: JSON nested more than {max_depth} levels deep")
        if isinstance(node, str):
            if len(node) > max_text:
                raise BadInput(f"{label}: text of {len(node):,} characters exceeds the limit of "
                               f"{describe('max_text_chars')}")
            if not _encodable(node):
                raise BadInput(f"{label}: lone surrogate character (not valid Unicode)")
        elif isinstance(node, bool) or node is None:
            continue
        elif isinstance(node, int):
            if abs(node) > INT64_MAX:
                raise BadInput(f"{label}: integer with {len(str(abs(node)))} digits is out of range")
        elif isinstance(node, float):
            if not math.isfinite(node):
                raise BadInput(f"{label}: {node} is not a finite number")
        elif isinstance(node, dict):
            for key, child in node.items():
                if isinstance(key, str) and not _encodable(key):
                    raise BadInput(f"{label}: a key holds a lone surrogate character (not valid Unicode)")
                stack.append((child, _path(where, key), depth + 1))
        elif isinstance(node, list):
            for index, child in enumerate(node):
                stack.append((child, _path(where, index), depth + 1))


def loads(data: bytes | str, *, max_text: int | None = None) -> Any:
    """Parse JSON text (bytes are UTF-8, a BOM is allowed) and check it; ``BadInput`` on any problem."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise BadInput(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    else:
        text = data
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except _Rejected as exc:
        raise BadInput(exc.reason) from None
    except json.JSONDecodeError as exc:
        raise BadInput(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise BadInput(f"JSON nested too deeply (more than {MAX_JSON_DEPTH} levels allowed)") from None
    except ValueError as exc:  # e.g. an integer literal beyond Python's digit limit
        raise BadInput(f"not usable JSON ({str(exc).splitlines()[0]})") from None
    check_value(value, max_text=max_text)
    return value


def check_file_size(path: Path) -> int:
    """The size of ``path`` in bytes; ``BadInput`` when it exceeds the file limit or cannot be read."""
    try:
        size = Path(path).stat().st_size
    except OSError as exc:
        raise BadInput(f"cannot read: {os_cause(exc)}") from None
    if size > int_limit("max_file_bytes"):
        raise BadInput(f"file of {size / 1024 / 1024:.1f} MB exceeds the limit of {describe('max_file_bytes')}")
    return size


def read_bytes(path: Path) -> bytes:
    """The bytes of ``path`` after the size check; ``BadInput`` naming the cause otherwise."""
    check_file_size(path)
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise BadInput(f"cannot read: {os_cause(exc)}") from None


def read_json(path: Path) -> tuple[Any, bytes]:
    """The checked JSON value of a file and its bytes (for content hashes)."""
    data = read_bytes(path)
    return loads(data), data


def count_value(value: Any, field: str) -> int | None:
    """A token count for the store (0 .. 2^31-1) or None for a missing/non-numeric value.

    A number that cannot be a count (negative, fractional, ``1e30``, ``2^70``) is ``BadInput``:
    storing it would either fail the whole import or put a fake count into the cost totals.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value) if any(c in value for c in ".eE") else int(value)
        except ValueError:
            return None  # "n/a" and friends: no count recorded
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise BadInput(f"field {field}: {value!r} is not a token count")
        value = int(value)
    if not isinstance(value, int):
        return None
    if value < 0 or value > INT32_MAX:
        shown = f"{value:.3g}" if abs(value) >= 10**6 else str(value)
        raise BadInput(f"field {field}: {shown} is not a token count (0 to {INT32_MAX:,})")
    return value

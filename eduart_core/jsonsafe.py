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

import errno
import json
import math
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

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


#: One decoder for every call (``json.loads`` with options builds a new decoder and scanner each time).
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _path(parent: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


#: A lone surrogate can only come from a ``\\uD800``-``\\uDFFF`` escape (UTF-8 bytes cannot hold one).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_TEXT = re.compile(r"\\u[dD][89a-fA-F]")
#: An integer beyond 64 bits has at least 19 digits, and a float beyond range an exponent of three
#: digits: the text is mapped (digits to "0", e/E to "e", signs to "+", anything else to a space)
#: and searched for those shapes (a few passes in C, much faster than a regex).
_NUMBER_SHAPES = bytes(48 if 48 <= i <= 57 else 101 if i in (69, 101) else 43 if i in (43, 45) else 32
                       for i in range(256))
_LONG_NUMBER_TEXT = re.compile(r"[0-9]{19}|[eE][+-]?[0-9]{3}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _bad_text(text: str) -> bool:
    """A lone surrogate in ``text`` (cannot be encoded as UTF-8)."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (it could not be stored), without encoding a copy."""
    return _bad_text(text)


def might_fail_check(data: bytes | str, max_text: int, max_depth: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text ``data`` could parse to anything ``check_value`` refuses.

    Why: almost every file is fine, and a few scans of its text in C prove it without looking at
    a single parsed node. No string can be longer than the text; nesting cannot be deeper than
    the number of opening brackets; a lone surrogate needs a ``\\uD8xx``-``\\uDFxx`` escape (or,
    in a ``str``, the character itself); an integer out of range needs 19 digits in a row, and a
    float that overflows to infinity an exponent of three digits (``NaN`` and ``Infinity`` never
    get this far: the parser refuses them). True only means "walk the value".
    """
    if len(data) > max_text:
        return True
    if isinstance(data, bytes):
        if data.count(b"[") + data.count(b"{") > max_depth or _SURROGATE_ESCAPE.search(data) is not None:
            return True
        shapes = data.translate(_NUMBER_SHAPES)
        return b"0" * 19 in shapes or b"e000" in shapes or b"e+000" in shapes
    return (data.count("[") + data.count("{") > max_depth or _SURROGATE_ESCAPE_TEXT.search(data) is not None
            or _bad_text(data) or _LONG_NUMBER_TEXT.search(data) is not None)


def _leaf_problem(node: Any, max_text: int) -> bool:
    """A string, number or other leaf the store cannot hold (any subclass, bool excluded)."""
    if isinstance(node, str):
        return len(node) > max_text or _bad_text(node)
    if isinstance(node, bool):
        return False
    if isinstance(node, int):
        return node > INT64_MAX or node < -INT64_MAX
    if isinstance(node, float):
        return not math.isfinite(node)
    return False


def _keys_problem(node: dict) -> bool:
    return any(isinstance(key, str) and _bad_text(key) for key in node)


def _first_problem(value: Any, max_text: int, max_depth: int) -> Any:
    """The first node (depth first, in order) the store cannot hold, or None; for nesting that is
    too deep, the container whose children would be too deep.

    Allocates one iterator per container and nothing per node: no path strings, no encoded
    copies (``check_value`` rebuilds the path of the one node it reports).
    """
    if not isinstance(value, dict | list):
        return value if _leaf_problem(value, max_text) else None
    if isinstance(value, dict) and _keys_problem(value):
        return value
    if max_depth < 1 and value:
        return value
    stack = [iter(value.values()) if isinstance(value, dict) else iter(value)]
    while stack:
        for child in stack[-1]:
            kind = type(child)
            if kind is str:
                if len(child) > max_text or (not child.isascii() and _SURROGATE.search(child) is not None):
                    return child
            elif kind is int:
                if child > INT64_MAX or child < -INT64_MAX:
                    return child
            elif kind is float:
                if not math.isfinite(child):
                    return child
            elif kind is bool or child is None:
                continue
            elif isinstance(child, dict | list):
                if not child:
                    continue
                if len(stack) + 1 > max_depth:  # its children would be nested deeper than allowed
                    return child
                if isinstance(child, dict):
                    if _keys_problem(child):
                        return child
                    stack.append(iter(child.values()))
                else:
                    stack.append(iter(child))
                break
            elif _leaf_problem(child, max_text):
                return child
        else:
            stack.pop()
    return None


def _where(value: Any, target: Any) -> tuple[str, int]:
    """The path (``a.b[0]``) and depth of ``target`` in ``value``, found by identity in the same
    order as ``_first_problem`` (only called once a problem was found)."""
    if value is target or not isinstance(value, dict | list):
        return "", 0
    stack = [(iter(value.items()) if isinstance(value, dict) else iter(enumerate(value)), "")]
    while stack:
        items, parent = stack[-1]
        for key, child in items:
            where = _path(parent, key)
            if child is target:
                return where, len(stack)
            if isinstance(child, dict) and child:
                stack.append((iter(child.items()), where))
                break
            if isinstance(child, list) and child:
                stack.append((iter(enumerate(child)), where))
                break
        else:
            stack.pop()
    return "", 0


def check_value(value: Any, *, max_text: int | None = None, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise ``BadInput`` naming the first field that the store cannot hold safely.

    Iterative (no recursion), so a hostile depth cannot crash the check itself; it builds a field
    path only for the one node it reports.
    """
    max_text = int_limit("max_text_chars") if max_text is None else max_text
    node = _first_problem(value, max_text, max_depth)
    if node is None:
        return
    where, _depth = _where(value, node)
    if isinstance(node, dict | list):
        if isinstance(node, dict) and _keys_problem(node):
            raise BadInput(f"{'field ' + where if where else 'value'}: a key holds a lone surrogate character "
                           "(not valid Unicode)")
        first = _path(where, next(iter(node)) if isinstance(node, dict) else 0)
        raise BadInput(f"field {first}: JSON nested more than {max_depth} levels deep")
    label = f"field {where}" if where else "value"
    if isinstance(node, str):
        if len(node) > max_text:
            raise BadInput(f"{label}: text of {len(node):,} characters exceeds the limit of "
                           f"{describe('max_text_chars')}")
        raise BadInput(f"{label}: lone surrogate character (not valid Unicode)")
    if isinstance(node, float):
        raise BadInput(f"{label}: {node} is not a finite number")
    raise BadInput(f"{label}: integer with {len(str(abs(int(node))))} digits is out of range")


def loads(data: bytes | str, *, max_text: int | None = None) -> Any:
    """Parse JSON text (bytes are UTF-8, a BOM is allowed) and check it; ``BadInput`` on any problem.

    The check walks the parsed value only when a scan of the text says it might fail
    (``might_fail_check``): for ordinary files parsing is all the work. Text the scan clears is
    parsed by ``orjson`` (several times faster); whatever it refuses, and all text the scan does
    not clear, goes to the standard parser, which gives the reasons named here. On cleared text
    the two agree value for value: orjson differs only on integers beyond 64 bits, numbers that
    overflow, lone surrogates and nesting beyond 1,024 levels, and the scan clears none of those.
    """
    max_text = int_limit("max_text_chars") if max_text is None else max_text
    suspect = might_fail_check(data, max_text)
    if not suspect:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # a BOM, or not JSON: the standard parser reads the one and names the other
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise BadInput(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    else:
        text = data
    try:
        value = _DECODER.decode(text)
    except _Rejected as exc:
        raise BadInput(exc.reason) from None
    except json.JSONDecodeError as exc:
        raise BadInput(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise BadInput(f"JSON nested too deeply (more than {MAX_JSON_DEPTH} levels allowed)") from None
    except ValueError as exc:  # e.g. an integer literal beyond Python's digit limit
        raise BadInput(f"not usable JSON ({str(exc).splitlines()[0]})") from None
    if suspect:
        check_value(value, max_text=max_text)
    return value


def _too_big(size: int) -> BadInput:
    return BadInput(f"file of {size / 1024 / 1024:.1f} MB exceeds the limit of {describe('max_file_bytes')}")


def check_file_size(path: Path) -> int:
    """The size of ``path`` in bytes; ``BadInput`` when it exceeds the file limit or cannot be read."""
    try:
        size = Path(path).stat().st_size
    except OSError as exc:
        raise BadInput(f"cannot read: {os_cause(exc)}") from None
    if size > int_limit("max_file_bytes"):
        raise _too_big(size)
    return size


def read_bytes(path: Path | str, max_bytes: int | None = None) -> bytes:
    """The bytes of ``path``, after the size check on the open file; ``BadInput`` naming the cause
    otherwise. ``max_bytes`` defaults to EDUART_MAX_FILE_MB (an importer reads it once and passes it
    for every file).

    One ``open``, one ``fstat`` and, for a regular file, usually one ``read`` of one byte more than
    its size: a read that returns less than it asked for has reached the end of a regular file, so
    no second read is needed to find it. A file that grew after the ``fstat`` is read on, to just
    over the limit (and refused); one that shrank ends where it ends. No Python file object and no
    buffer larger than the file.
    """
    max_bytes = int_limit("max_file_bytes") if max_bytes is None else max_bytes
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            info = os.fstat(fd)
            mode, size = info.st_mode, info.st_size
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
            if size > max_bytes:
                raise _too_big(size)
            regular = stat.S_ISREG(mode)
            chunk = os.read(fd, size + 1)
            if regular and len(chunk) <= size:  # short of what was asked: the end of the file
                return chunk
            chunks, total = [chunk], len(chunk)
            while chunk and total <= max_bytes:  # a pipe, or a file that grew: read on, to just over the limit
                asked = min(max_bytes + 1, max(size + 1, total + 65536)) - total
                chunk = os.read(fd, asked)
                chunks.append(chunk)
                total += len(chunk)
                if regular and len(chunk) < asked:
                    break
        finally:
            os.close(fd)
    except OSError as exc:
        raise BadInput(f"cannot read: {os_cause(exc)}") from None
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise _too_big(len(data))
    return data


def read_lines(path: Path | str, max_bytes: int | None = None) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of every non-blank line of a JSON Lines file, streamed.

    Why bytes, one line at a time: each line is decoded and parsed on its own (``loads`` takes
    bytes), so a line that is not UTF-8 or not JSON is one bad line for the importer to name and
    skip, never the end of the file. A file over ``max_bytes`` (default EDUART_MAX_FILE_MB) is
    refused before a line is read; a BOM before the first line is dropped.
    """
    max_bytes = int_limit("max_file_bytes") if max_bytes is None else max_bytes
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({os_cause(exc)})") from None
    with handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise UserError(f"{path}: file of {size / 1024 / 1024:.1f} MB exceeds the limit of "
                            f"{describe('max_file_bytes')}: nothing imported")
        for number, raw in enumerate(handle, start=1):
            raw = raw.rstrip(b"\r\n")
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if raw.strip():
                yield number, raw


def read_json(path: Path | str, *, max_bytes: int | None = None, max_text: int | None = None) -> tuple[Any, bytes]:
    """The checked JSON value of a file and its bytes (for content hashes)."""
    data = read_bytes(path, max_bytes)
    return loads(data, max_text=max_text), data


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

"""Turn a raw model response into a structured answer.

Why two parsers: the `strict` profile wants every answer a careful reader would recover (JSON
wrapped in fences or prose, `{{ }}`, trailing commas, responses cut off after complete entries),
while the `paper` profile must reproduce the published parsing rule exactly, including what it
fails to parse. Both only extract JSON: a bare letter or prose without a JSON object is
unparseable. Everything here is linear in the input size so several-MB responses are safe.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = ["ParsedAnswer", "StoredAnswer", "parse_answer", "parse_answer_paper", "published_parse"]

_DECODER = json.JSONDecoder()
_ANSWERS_KEY = re.compile(r"""["']answers["']\s*:""", re.IGNORECASE)
_MOTIVATION_KEY = re.compile(r"""["']motivation["']\s*:\s*""", re.IGNORECASE)
_BRACKETS_OR_QUOTE = re.compile(r'[{}\[\]"]')
# A JSON string literal, or a trailing comma before a closing bracket (strings are kept as is).
_TRAILING_COMMA = re.compile(r'"(?:[^"\\]|\\.)*"|,\s*(?=[}\]])', re.DOTALL)
_DOUBLE_BRACES = re.compile(r'"(?:[^"\\]|\\.)*"|\{\{|\}\}', re.DOTALL)
_WS = " \t\r\n"
_MAX_KEY_TRIES = 5
_LITERAL_EVAL_LIMIT = 200_000


@dataclass(frozen=True)
class ParsedAnswer:
    """`answers` is the `Answers` list (None when nothing usable), `parse_error` says why not.

    `repairs` names what had to be fixed to read the response (for example `fence`, `prose`,
    `double_braces`, `trailing_comma`, `truncated`), so reviewers can see how lenient we were.
    """

    answers: list[dict] | None
    motivation: str | None
    parse_error: str | None
    repairs: tuple[str, ...] = ()


@dataclass(frozen=True)
class StoredAnswer:
    """An `llm_answer` as an answer file stores it: past published step 1, never parsed again.

    Why a wrapper: a plain string given to the `paper` scorer is a raw response (step 1 parses
    it), while an imported `llm_answer` string is what the published pipeline left unparsed and
    must be scored as that string. `value` may be a list, a string, None or anything JSON.
    """

    value: Any


def _unfence(text: str) -> tuple[str, bool]:
    """Content of the first markdown fence (an unclosed fence runs to the end)."""
    start = text.find("```")
    if start < 0:
        return text, False
    body_start = text.find("\n", start + 3)
    if body_start < 0:  # ```{...}``` on one line: skip a language tag made of letters
        body_start = start + 3
        while body_start < len(text) and text[body_start].isalpha():
            body_start += 1
    end = text.find("```", body_start)
    body = text[body_start:] if end < 0 else text[body_start:end]
    if "{" not in body and "[" not in body:  # an empty or non-JSON fence: keep the whole text
        return text, False
    return body.strip(), True


def _key(obj: dict, name: str) -> Any:
    """Value of `name` in `obj`, matching the key case-insensitively; exact case wins."""
    if name in obj:
        return obj[name]
    for k, v in obj.items():
        if isinstance(k, str) and k.strip().lower() == name:
            return v
    return None


def _has_key(obj: dict, name: str) -> bool:
    return any(isinstance(k, str) and k.strip().lower() == name for k in obj)


def _clean_entries(entries: list) -> tuple[list[dict], bool]:
    """Keep object entries with lower-cased keys; report whether anything was dropped."""
    cleaned = [{(k.strip().lower() if isinstance(k, str) else k): v for k, v in e.items()}
               for e in entries if isinstance(e, dict)]
    return cleaned, len(cleaned) != len(entries)


def _motivation_text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _from_object(obj: Any, repairs: list[str]) -> ParsedAnswer | None:
    """A ParsedAnswer when `obj` carries an Answers key (or is a list of entries), else None."""
    if isinstance(obj, list):
        if all(isinstance(e, dict) for e in obj):
            entries, _ = _clean_entries(obj)
            return ParsedAnswer(entries, None, None, tuple(repairs + ["bare_list"]))
        return None
    if not isinstance(obj, dict) or not _has_key(obj, "answers"):
        return None
    value = _key(obj, "answers")
    motivation = _motivation_text(_key(obj, "motivation"))
    if isinstance(value, dict):
        value, repairs = [value], repairs + ["single_entry"]
    if not isinstance(value, list):
        return ParsedAnswer(None, motivation, f"Answers is not a list ({type(value).__name__})",
                            tuple(repairs))
    entries, dropped = _clean_entries(value)
    if dropped:
        repairs = repairs + ["dropped_non_object_entries"]
    return ParsedAnswer(entries, motivation, None, tuple(repairs))


#: A run of 19 digits: an integer orjson would not read as Python does (beyond 64 bits it gives a float).
_LONG_DIGITS = re.compile(r"[0-9]{19}")


def _loads(text: str) -> Any:
    """The JSON value of ``text`` as the standard parser reads it (NaN and big integers included), or None.

    orjson reads the common case several times faster; what it refuses (NaN, overflowing numbers,
    lone surrogates, deep nesting) and long integers go to the standard parser.
    """
    if _LONG_DIGITS.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _match_close(text: str, start: int) -> int | None:
    """Index of the bracket closing the one at `start` (string-aware), None if it never closes."""
    depth = 0
    pos = start
    search = _BRACKETS_OR_QUOTE.search
    while True:
        m = search(text, pos)
        if m is None:
            return None
        ch, i = m.group(), m.start()
        if ch == '"':
            j = i + 1
            while True:
                j = text.find('"', j)
                if j < 0:
                    return None
                k = j - 1
                while text[k] == "\\":
                    k -= 1
                if (j - 1 - k) % 2 == 0:
                    break
                j += 1
            pos = j + 1
        elif ch in "{[":
            depth += 1
            pos = i + 1
        else:
            depth -= 1
            pos = i + 1
            if depth == 0:
                return i


def _repaired_loads(span: str) -> tuple[Any, str | None]:
    """Try the span as JSON, then with the usual repairs; returns (object, repair name)."""
    obj = _loads(span)
    if obj is not None:
        return obj, None
    no_commas = _TRAILING_COMMA.sub(lambda m: m.group() if m.group().startswith('"') else "", span)
    if no_commas != span:
        obj = _loads(no_commas)
        if obj is not None:
            return obj, "trailing_comma"
    single = _DOUBLE_BRACES.sub(lambda m: m.group()[0] if m.group() in ("{{", "}}") else m.group(),
                                no_commas)
    if single != no_commas:
        obj = _loads(single)
        if obj is not None:
            return obj, "double_braces"
    if len(span) <= _LITERAL_EVAL_LIMIT:  # Python-style dicts with single quotes
        try:
            return ast.literal_eval(span), "python_literal"
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    return None, None


def _skip(text: str, pos: int, chars: str) -> int:
    n = len(text)
    while pos < n and text[pos] in chars:
        pos += 1
    return pos


def _recover_entries(text: str, pos: int) -> tuple[list | None, bool]:
    """Decode the Answers array starting at `pos` entry by entry; (entries, array_closed)."""
    pos = _skip(text, pos, _WS)
    if pos >= len(text) or text[pos] != "[":
        return None, False
    pos += 1
    entries: list = []
    while True:
        pos = _skip(text, pos, _WS + ",")
        if pos >= len(text):
            return entries, False
        if text[pos] == "]":
            return entries, True
        doubled = text.startswith("{{", pos)
        try:
            entry, pos = _DECODER.raw_decode(text, pos + 1 if doubled else pos)
        except (ValueError, RecursionError):
            return entries, False
        if doubled:
            pos = _skip(text, pos, _WS)
            if text.startswith("}", pos):
                pos += 1
        entries.append(entry)


def _recover_motivation(text: str, start: int) -> str | None:
    m = _MOTIVATION_KEY.search(text, start)
    if m is None or not text.startswith('"', m.end()):
        return None
    try:
        value, _ = _DECODER.raw_decode(text, m.end())
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, str) else None


def _slow_path(text: str, repairs: list[str]) -> ParsedAnswer:
    """Find objects holding an Answers key anywhere in the text and repair or recover them."""
    tried = 0
    for key in _ANSWERS_KEY.finditer(text):
        tried += 1
        if tried > _MAX_KEY_TRIES:
            break
        start = text.rfind("{", 0, key.start())
        if start < 0:
            continue
        extra = repairs + (["prose"] if text[:start].strip(" \t\r\n{") else [])
        end = _match_close(text, start)
        if end is not None:
            obj, how = _repaired_loads(text[start:end + 1])
            if how:
                extra.append(how)
            if "prose" not in extra and text[end + 1:].strip(" \t\r\n}"):
                extra.append("prose")
            parsed = _from_object(obj, extra)
            if parsed is not None:
                return parsed
        entries, closed = _recover_entries(text, key.end())
        if entries is None:
            continue
        cleaned, dropped = _clean_entries(entries)
        recovery = ["truncated"] if end is None else ["recovered_entries"]
        if dropped:
            recovery.append("dropped_non_object_entries")
        if not cleaned and not closed:
            return ParsedAnswer(None, _recover_motivation(text, start),
                                "response cut off before any complete Answers entry",
                                tuple(extra + recovery))
        return ParsedAnswer(cleaned, _recover_motivation(text, start), None, tuple(extra + recovery))
    if "{" not in text:
        return ParsedAnswer(None, None, "no JSON object in the response", tuple(repairs))
    return ParsedAnswer(None, _recover_motivation(text, 0),
                        "no JSON object with an Answers key in the response", tuple(repairs))


def _parse(raw: Any) -> ParsedAnswer:
    if raw is None:
        return ParsedAnswer(None, None, "empty response")
    if isinstance(raw, (dict, list)):
        parsed = _from_object(raw, [])
        return parsed or ParsedAnswer(None, None, "JSON value has no Answers key")
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    text = (raw if isinstance(raw, str) else str(raw)).strip()
    if not text:
        return ParsedAnswer(None, None, "empty response")
    repairs: list[str] = []
    body, fenced = _unfence(text)
    if fenced:
        repairs.append("fence")
    if body[:1] in "{[":
        parsed = _from_object(_loads(body), repairs)
        if parsed is not None:
            return parsed
        if body.startswith("{{") and body.endswith("}}"):
            parsed = _from_object(_loads(body[1:-1]), repairs + ["double_braces"])
            if parsed is not None:
                return parsed
    result = _slow_path(body, repairs)
    if fenced and result.answers is None:  # the fence may have hidden the real JSON
        other = _slow_path(text, [])
        if other.answers is not None:
            return other
    return result


def parse_answer(raw: str) -> ParsedAnswer:
    """Extract the `Answers` list and `motivation` from a model response. Never raises."""
    try:
        return _parse(raw)
    except Exception as exc:  # defensive: a parser bug must not stop a run or an import
        return ParsedAnswer(None, None, f"parser failure: {type(exc).__name__}")


def published_parse(raw_text: str) -> Any:
    """Published step 1 on a raw response string, literally (formats doc section 3).

    Delete every "```json" (lower case only), then every "```"; strip; a leading "{{" becomes
    "{" and, independently, a trailing "}}" becomes "}"; strict ``json.loads``. The result is the
    value under the case-sensitive key ``Answers`` (a list, a string, null, ...), or the raw
    response itself when parsing fails or there is no such key. The quirks are the point: a fence
    tagged ``JSON`` stays unparsed, valid JSON ending in a nested object is broken by the brace
    rule, a lone leading "{{" is repaired.
    """
    text = raw_text.replace("```json", "").replace("```", "").strip()
    if text.startswith("{{"):
        text = text[1:]
    if text.endswith("}}"):
        text = text[:-1]
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return raw_text
    if isinstance(obj, dict) and "Answers" in obj:
        return obj["Answers"]
    return raw_text


def parse_answer_paper(raw: Any) -> Any:
    """The `llm_answer` the published pipeline would have stored for `raw` (step 1).

    A string (or bytes) is a raw response: ``published_parse`` applies. Other inputs are already
    past step 1: a list is an `llm_answer` and is returned unchanged; a dict is a parsed JSON
    object (its ``Answers`` value, else its JSON text as the raw response); None becomes "".
    Never raises.
    """
    if raw is None:
        return ""
    if isinstance(raw, list):
        return raw
    if isinstance(raw, dict):
        return raw["Answers"] if "Answers" in raw else json.dumps(raw, ensure_ascii=False)
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    return published_parse(raw if isinstance(raw, str) else str(raw))

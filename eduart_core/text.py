"""Text normalisations shared by validation, scoring and extraction, and text made inert.

One place for them so that every room compares strings the same way: the `paper` profile must
reproduce the published `norm` exactly (quirks included), while the `strict` profile and the
extraction diff need a normalisation that treats punctuation as a word separator.

Text from items, models, files and reviewers is data, never markup: ``plain`` makes a string inert
for Streamlit markdown, ``inert_html`` for HTML and plotly labels, and ``truncate`` shortens a
long answer for display (the page offers the full text as a download).
"""
from __future__ import annotations

import html
import re
import string
import unicodedata
from functools import lru_cache
from typing import Any

__all__ = ["fold_accents", "norm_paper", "norm_strict", "norm_id", "plain", "inert_html", "truncate"]

_NON_WORD_NON_SPACE = re.compile(r"[^\w\s]")
_PUNCT_OR_UNDERSCORE = re.compile(r"[\W_]+")
_WHITESPACE = re.compile(r"\s+")


def fold_accents(s: str) -> str:
    """Drop accents (NFKD, remove combining marks) so `perché` compares equal to `perche`."""
    if s.isascii():
        return s
    decomposed = unicodedata.normalize("NFKD", s)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


_CACHE_MAX_LEN = 256  # long strings (whole responses) are normalised once, never cached


def _norm_paper_uncached(s: str) -> str:
    s = s.strip().lower()
    if not s.isascii():
        s = unicodedata.normalize("NFD", s)
        s = "".join(ch for ch in s if not unicodedata.combining(ch))
    s = _NON_WORD_NON_SPACE.sub("", s)
    return _WHITESPACE.sub(" ", s).strip()


_norm_paper_cached = lru_cache(maxsize=65536)(_norm_paper_uncached)


def norm_paper(x: Any) -> str:
    """The published `norm`: lower, strip accents, delete punctuation WITHOUT a space.

    Kept bit-for-bit as published (`l'equilibrio` -> `lequilibrio`) because the `paper`
    profile must reproduce the published scores. None -> "".
    """
    if x is None:
        return ""
    s = x if isinstance(x, str) else str(x)
    return _norm_paper_cached(s) if len(s) <= _CACHE_MAX_LEN else _norm_paper_uncached(s)


def _norm_strict_uncached(s: str) -> str:
    s = fold_accents(s.casefold())
    s = _PUNCT_OR_UNDERSCORE.sub(" ", s)
    return _WHITESPACE.sub(" ", s).strip()


_norm_strict_cached = lru_cache(maxsize=65536)(_norm_strict_uncached)


def norm_strict(x: Any) -> str:
    """Case-fold, fold accents, punctuation -> space, collapse whitespace.

    Used by the `strict` profile and the extraction diff so that `chiaro-scuro` equals
    `chiaro scuro` and `l'equilibrio` equals `l equilibrio`. None -> "".
    """
    if x is None:
        return ""
    s = x if isinstance(x, str) else str(x)
    return _norm_strict_cached(s) if len(s) <= _CACHE_MAX_LEN else _norm_strict_uncached(s)


def norm_id(x: Any) -> str:
    """Ids are compared upper-cased and stripped in every profile. None -> ""."""
    if x is None:
        return ""
    return (x if isinstance(x, str) else str(x)).strip().upper()


def letter_id(index: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA: the id of the index-th blank, option or simulated model."""
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


# ---------------------------------------------------------------- inert text for display

# CommonMark lets every ASCII punctuation character be escaped with a backslash, and an escaped
# character is always literal text. Escaping all of them (not a hand-picked list) also covers
# Streamlit's extensions: `:red[...]` colour and `:material/...:` icon directives, `$...$` maths,
# emoji short codes, GFM tables, strikethrough and autolinks (`http\://` is no longer a link).
_MD_ESCAPE = {ord(c): "\\" + c for c in string.punctuation}
_LEADING_SPACE = re.compile(r"^[ \t]+")
# GFM turns bare URLs and e-mail addresses into links after escapes are resolved, so escaping is
# not enough for them: an invisible WORD JOINER (U+2060) inside `://`, after `www` and before `@`
# keeps the text exactly as it reads while no longer matching a URL.
_WORD_JOINER = "\u2060"
_AUTOLINK = re.compile(r"(?i)(?<=:)(?=//)|(?<=\bwww)(?=\.)|(?=@)")


def plain(value: Any) -> str:
    """``value`` as inert Streamlit markdown: shown exactly as written, never as markup.

    Neutralised: markdown syntax (emphasis, headings, lists, tables, code), links and images
    (``![x](http://host/x.png)`` cannot make the browser fetch anything), raw HTML, Streamlit
    directives (``:red[...]``, ``:material/...:``), maths and bare URLs or e-mail addresses
    (an invisible word joiner keeps them from becoming links). Line breaks are kept as hard
    breaks; leading spaces are kept as non-breaking spaces (never an indented code block).
    None -> "".
    """
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    lines = []
    text = _AUTOLINK.sub(_WORD_JOINER, text)
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = line.translate(_MD_ESCAPE)
        lead = _LEADING_SPACE.match(line)
        if lead:
            line = "\u00a0" * len(lead.group(0).expandtabs(4)) + line[lead.end():]
        lines.append(line)
    return "  \n".join(lines)


def inert_html(value: Any) -> str:
    """``value`` escaped for HTML and for plotly's label markup (which decodes entities back to
    the literal characters, so ``<b>`` is shown as typed and never makes text bold)."""
    if value is None:
        return ""
    return html.escape(value if isinstance(value, str) else str(value), quote=True)


def truncate(value: Any, limit: int | None = None) -> tuple[str, bool]:
    """(shown text, was it truncated?) for a text that may be too long to show in full.

    ``limit`` defaults to EDUART_MAX_SHOWN_CHARS (see ``eduart_core.limits``). The cut falls on
    the last space in the final tenth of the allowance when there is one, and the shown text
    ends with an ellipsis, so a reader never mistakes a cut text for the whole answer.
    """
    if value is None:
        return "", False
    text = value if isinstance(value, str) else str(value)
    if limit is None:
        from .limits import int_limit

        limit = int_limit("max_shown_chars")
    limit = max(1, int(limit))
    if len(text) <= limit:
        return text, False
    cut = text[:limit]
    space = cut.rfind(" ", int(limit * 0.9))
    if space > 0:
        cut = cut[:space]
    return cut.rstrip() + " …", True

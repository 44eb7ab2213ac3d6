"""Text normalisations shared by validation, scoring and extraction.

One place for them so that every room compares strings the same way: the `paper` profile must
reproduce the published `norm` exactly (quirks included), while the `strict` profile and the
extraction diff need a normalisation that treats punctuation as a word separator.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

__all__ = ["fold_accents", "norm_paper", "norm_strict", "norm_id"]

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

"""The cumulative text normalisations behind the discrepancy categories.

Why a ladder: a reviewer wants to know the *least* serious reason two extractions differ. Each
step adds one normalisation on top of the previous ones, so the first step at which two values
become equal names the category (a doubled space plus a capital letter is a ``case`` difference).
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

# Category names in the order they are tried; `order` and `content` are decided structurally.
TEXT_CATEGORIES: tuple[str, ...] = ("whitespace", "typography", "case", "accents", "punctuation")
CATEGORIES: tuple[str, ...] = TEXT_CATEGORIES + ("order", "content")

_SPACE_RE = re.compile(r"\s+")
_TYPO_TABLE = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "`": "'", "\u00b4": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u2013": "-", "\u2014": "-", "\u2012": "-", "\u2015": "-", "\u2212": "-", "\u2010": "-", "\u2011": "-",
})
# A vowel followed by an apostrophe that ends the word is the typewriter spelling of an accented
# vowel (perche' = perché, citta' = città); elisions such as l'arte are not touched.
_APOSTROPHE_ACCENT_RE = re.compile(r"([aeiouAEIOU])'(?!\w)")
_NON_WORD_RE = re.compile(r"[^\w\s]")


def norm_whitespace(text: str) -> str:
    """Non-breaking and doubled spaces, tabs and line breaks become one space; ends stripped."""
    return _SPACE_RE.sub(" ", text.replace("\u00a0", " ").replace("\u202f", " ")).strip()


def norm_typography(text: str) -> str:
    """Curly quotes and apostrophes become straight, dashes a hyphen, the ellipsis three dots."""
    return text.translate(_TYPO_TABLE).replace("\u2026", "...")


def norm_case(text: str) -> str:
    return text.casefold()


def norm_accents(text: str) -> str:
    """Drop combining marks and the apostrophe written for an accent (perche' -> perche)."""
    decomposed = unicodedata.normalize("NFD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _APOSTROPHE_ACCENT_RE.sub(r"\1", unicodedata.normalize("NFC", stripped))


def norm_punctuation(text: str) -> str:
    """Delete every character that is neither a word character nor a space, then re-collapse."""
    return _SPACE_RE.sub(" ", _NON_WORD_RE.sub("", text)).strip()


_STEPS: dict[str, Callable[[str], str]] = {
    "whitespace": norm_whitespace,
    "typography": norm_typography,
    "case": norm_case,
    "accents": norm_accents,
    "punctuation": norm_punctuation,
}


def normalise(text: str, upto: str) -> str:
    """Apply every normalisation up to and including the category ``upto``."""
    if upto not in _STEPS:
        raise ValueError(f"unknown text category {upto!r}; choose from {', '.join(TEXT_CATEGORIES)}")
    for name in TEXT_CATEGORIES:
        text = _STEPS[name](text)
        if name == upto:
            break
    return text


def text_category(a: str, b: str) -> str | None:
    """The first category whose cumulative normalisation makes a and b equal; None if equal;
    ``content`` when no normalisation does."""
    if a == b:
        return None
    for name in TEXT_CATEGORIES:
        if normalise(a, name) == normalise(b, name):
            return name
    return "content"

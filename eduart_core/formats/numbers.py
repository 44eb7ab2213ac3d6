"""Reading the one number in an answer text: digits, or an English or Italian word up to twenty.

Why strict: a counting answer is right or wrong only when it names one number. "7", "sette",
"seven figures" and "7 (seven)" all read 7; "6 or 7", "between five and eight" and prose with no
number are unparseable (None), never a guess.

Decisions where the rule is silent: a decimal separator may be "." or "," ("3,5" = 3.5; no
thousands separators); a leading minus counts; the Italian articles "un"/"una" and English
"a"/"an" are not numbers (they would turn every sentence into a count of one), while the words
"one" and "uno" are. Accents and case are folded ("ventitre" is beyond twenty and not read).
"""
from __future__ import annotations

import math
import re

from ..text import fold_accents

__all__ = ["NUMBER_WORDS", "parse_number", "numbers_in"]

_EN = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
       "fifteen sixteen seventeen eighteen nineteen twenty").split()
_IT = ("zero uno due tre quattro cinque sei sette otto nove dieci undici dodici tredici quattordici "
       "quindici sedici diciassette diciotto diciannove venti").split()
#: number word -> value (English and Italian, 0-20)
NUMBER_WORDS: dict[str, int] = {**{w: i for i, w in enumerate(_EN)}, **{w: i for i, w in enumerate(_IT)}}

_TOKEN = re.compile(
    r"(?<![\w.,])(-?\d+(?:[.,]\d+)?)(?![\w]|[.,]\d)"          # a number in digits
    r"|\b(" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)


def numbers_in(text: str) -> list[float]:
    """Every number the text names, in order (digits and number words)."""
    folded = fold_accents(str(text)).lower()
    out: list[float] = []
    for digits, word in _TOKEN.findall(folded):
        if digits:
            out.append(float(digits.replace(",", ".")))
        else:
            out.append(float(NUMBER_WORDS[word]))
    return out


def parse_number(text: object) -> float | None:
    """The one number of `text` (the same number twice is one), else None."""
    if isinstance(text, bool) or text is None:
        return None
    if isinstance(text, (int, float)):
        return None if math.isnan(text) else float(text)
    values = set(numbers_in(str(text)))
    return values.pop() if len(values) == 1 else None

"""The one rounding of EduArt Studio: chart labels, on-screen tables and exports use these functions.

Why one place: a chart label computed from already-rounded percentages (72.4 - 48.1) can differ by
0.1 from the table's rounded difference, and a heatmap cell of -0.3 printed with no decimals
reads "-0". Every number a user sees is a fraction turned into a percent here (``percent``), then
printed here (``fmt``), so the same value always reads the same everywhere.
"""
from __future__ import annotations

import math

import numpy as np

#: Percentages and percentage points are shown with one decimal everywhere.
PERCENT_DIGITS = 1
#: Other statistics (p-values, correlations, odds ratios) keep three decimals in tables.
STAT_DIGITS = 3


def rounded(values, digits: int = PERCENT_DIGITS):
    """``values`` rounded to ``digits`` (numpy's round-half-even), with negative zero made zero.

    Scalars give a float, anything else a float ndarray; NaN stays NaN.
    """
    arr = np.round(np.asarray(values, dtype=float), digits) + 0.0  # + 0.0 turns -0.0 into 0.0
    if np.ndim(values) == 0:
        return float(arr)
    return arr


def percent(fractions, digits: int = PERCENT_DIGITS):
    """Fractions in [0, 1] (or differences of them) as rounded percentages (percentage points)."""
    return rounded(np.asarray(fractions, dtype=float) * 100.0, digits)


def fmt(value, digits: int = PERCENT_DIGITS, *, signed: bool = False, missing: str = "—") -> str:
    """A number as text with ``digits`` decimals; never "-0" (a value that rounds to zero prints
    as 0, unsigned); ``signed`` adds "+" to positive values; NaN/None print as ``missing``."""
    if value is None:
        return missing
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number):
        return missing
    number = rounded(number, digits)
    text = f"{number:.{digits}f}"
    if number == 0:
        return f"{0:.{digits}f}"
    if signed and number > 0:
        return "+" + text
    return text


def fmt_percent(fraction, digits: int = PERCENT_DIGITS, *, signed: bool = False, missing: str = "—") -> str:
    """A fraction printed as a percentage (no % sign): 0.7245 -> "72.5" (or "+72.5")."""
    if fraction is None:
        return missing
    try:
        number = float(fraction)
    except (TypeError, ValueError):
        return str(fraction)
    return fmt(number * 100.0, digits, signed=signed, missing=missing)

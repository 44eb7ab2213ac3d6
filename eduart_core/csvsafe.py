"""CSV that a spreadsheet opens as data: no text cell is ever run as a formula.

Why one module: item ids, model names, answers and reviewer notes come from other people, and a
cell such as ``=HYPERLINK("http://...")`` or ``@SUM(A1)`` would be executed by Excel, LibreOffice
or Google Sheets when a colleague opens the file. Every CSV writer of the product (`export-scores`,
`show --format csv`, the table downloads of the pages) goes through `to_csv`, so the rule lives
here once: a text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets
a leading apostrophe (spreadsheets show it as the text typed). Numbers are never touched, and a
text cell holding a plain number (``-0.5``) stays as it is, since a spreadsheet reads it as that
number and nothing else.

Rows end with CRLF (RFC 4180): the csv writer quotes a cell only when it holds a character of the
line ending, so with a bare LF a cell holding a carriage return would be written unquoted and a
spreadsheet would start a new row inside it (and could then meet a formula at the start of it).
"""
from __future__ import annotations

import re
from typing import Any, overload

import pandas as pd

__all__ = ["FORMULA_START", "inert_cell", "inert_frame", "to_csv"]

#: First characters that make a spreadsheet evaluate a cell (OWASP's list for CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def inert_cell(value: Any) -> Any:
    """The value to write: a formula-looking text gets a leading ``'``; anything else is unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def inert_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose headers and text cells are inert (numeric columns untouched)."""
    shown = frame.copy()
    shown.columns = [inert_cell(str(c)) for c in shown.columns]
    for position, dtype in enumerate(shown.dtypes):
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            shown.isetitem(position, shown.iloc[:, position].map(inert_cell))
    return shown


@overload
def to_csv(frame: pd.DataFrame, target: None = None) -> str: ...
@overload
def to_csv(frame: pd.DataFrame, target: Any) -> None: ...
def to_csv(frame: pd.DataFrame, target: Any = None) -> str | None:
    """``frame.to_csv(target, index=False)`` with inert cells and CRLF row ends: the text when
    ``target`` is None."""
    return inert_frame(frame).to_csv(target, index=False, lineterminator="\r\n")

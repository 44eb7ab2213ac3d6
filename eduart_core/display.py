"""How a scored answer reads on an item card: one row per element, marked right or wrong.

Why in the library: the inspector, the report's failure examples and the tests must show the
same marks for the same scorer details; the answer-format registry refines this per format.
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def answer_rows(details: list | None, labels: dict[str, str] | None = None) -> pd.DataFrame:
    """Per-element marks of one scored response (mark, element, expected, given) for the item card.

    ``labels`` maps option ids to their text, so "B" reads "B. De prospectiva pingendi".
    """
    labels = {str(k).upper(): str(v) for k, v in (labels or {}).items()}
    if not details:
        return pd.DataFrame(columns=["mark", "element", "expected", "given"])
    frame = pd.DataFrame([d for d in details if isinstance(d, dict)])
    for col in ("element", "expected", "given", "right"):
        if col not in frame:
            frame[col] = None
    frame["mark"] = frame["right"].map(lambda r: "right" if r is True else ("wrong" if r is False else ""))

    def show(value) -> str:
        if value is True or value is False:
            return "selected" if value else "not selected"
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return "—"
        if isinstance(value, list | tuple):
            return ", ".join(show(v) for v in value) or "—"
        text = str(value)
        return f"{text}. {labels[text.upper()]}" if text.upper() in labels else text

    for col in ("expected", "given"):
        frame[col] = frame[col].astype(object).map(show)
    frame["element"] = frame["element"].astype(object).map(
        lambda e: f"{e}. {labels[str(e).upper()]}" if str(e).upper() in labels else ("" if e is None else str(e)))
    return frame[["mark", "element", "expected", "given"]]


def neighbours(ids: list[str], current: str) -> tuple[str | None, str | None]:
    """Previous and next id around ``current`` in a list (None at the ends)."""
    if current not in ids:
        return None, (ids[0] if ids else None)
    i = ids.index(current)
    return (ids[i - 1] if i > 0 else None), (ids[i + 1] if i + 1 < len(ids) else None)

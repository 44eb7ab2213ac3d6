"""The helpers of the Python API beyond the views (``from eduart_core import scores``).

Why a module: a researcher in a notebook wants the long score frame without knowing how views
are keyed; `scores` takes a store path or a `Source` and a `Selection` (or the selection's
fields as keywords) and returns what the ``scores`` view returns, so a script and ``show scores``
agree.
"""
from __future__ import annotations

import os
from typing import Any

import pandas as pd

from . import views
from .selection import Selection


def scores(source: views.Source | str | os.PathLike, selection: Selection | None = None, *,
           all_conditions: bool = False, **fields: Any) -> pd.DataFrame:
    """The long score frame: one row per model, condition and item of the selection.

    ``source``: a `Source` or the path of a store; ``selection``: a `Selection`, or its fields as
    keywords (``scores("data/eduart.duckdb", dataset="demo", profile="paper")``); the selected
    condition only unless ``all_conditions``.
    """
    src = source if isinstance(source, views.Source) else views.Source.of(os.fspath(source))
    sel = selection if selection is not None else Selection(**fields)
    if selection is not None and fields:
        sel = sel.with_(**fields)
    return views.run_view("scores", src, sel, all_conditions=all_conditions)


__all__ = ["scores"]

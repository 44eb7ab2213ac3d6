"""How the studio's processes run pandas: text columns held as Python strings.

Why: pandas 3 holds every text column it infers (a model name, a format, an item id in a frame
built from a list) as Arrow strings. The values and their missing values mean the same either
way, but the pages work on small frames (a dozen models, a few thousand rows) through many small
steps, and every step that turns such a column into values (a sort key, a lookup, a chart's
labels, a join) converts Arrow strings to Python objects and back. At published scale that was
about a fifth of the Overview's model-filter change (0.46 s -> 0.37 s, median of 24 changes on one
machine, 2026-12-07). With ``mode.string_storage = "python"`` the same ``str`` columns keep their
values as Python objects: same dtype name, same missing value (NaN), same results.

The entry points call `use_python_strings` (the app, the CLI, the test suite), so every table and
chart is computed the same way wherever it is shown; the library itself never sets a global option
on import (a script that imports it keeps its own pandas settings).
"""
from __future__ import annotations

import pandas as pd

#: The storage of pandas' ``str`` columns in the studio's processes.
STRING_STORAGE = "python"


def use_python_strings() -> None:
    """Hold this process's ``str`` columns as Python strings (idempotent; a pandas without the
    option keeps its default)."""
    try:
        pd.set_option("mode.string_storage", STRING_STORAGE)
    except (KeyError, ValueError):  # pandas.errors.OptionError is a KeyError: an option pandas no longer has
        pass

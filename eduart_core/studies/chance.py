"""The chance level of one item: the expected score of answering at random.

Why here: the per-task tables flag models (and the median model) that score below chance, and the
chance level of a column is the mean over its items (a four-option question 1/4, a three-part
answer with three options per part 1/27). Each answer format declares its own chance level in the
format registry; formats without one (free text, numbers) give None and their columns are not
compared with chance.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def item_chance(record: Any) -> float | None:
    """Chance level of an item record, or None when its format defines none."""
    from ..formats import find_format

    if not isinstance(record, Mapping):
        return None
    fmt = find_format(record.get("type"))
    return fmt.chance(record) if fmt is not None else None

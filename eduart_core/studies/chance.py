"""The chance level of one item: the expected score of answering at random.

Why here: the per-task tables flag models (and the median model) that score below chance, and the
chance level of a column is the mean over its items (a four-option question 1/4, a three-part
answer with three options per part 1/27). Formats without a defined chance (free text, numbers)
give None and their columns are not compared with chance.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..vocab import MCQ_TYPE


def _one_of_options(record: Mapping[str, Any]) -> float | None:
    choices = [c for c in record.get("choices") or [] if isinstance(c, dict)]
    return 1.0 / len(choices) if choices else None


#: Chance rules by format (explicit; a format without a rule has no chance level here).
CHANCE_RULES = {MCQ_TYPE: _one_of_options}


def item_chance(record: Any) -> float | None:
    """Chance level of an item record, or None when the format defines none."""
    if not isinstance(record, Mapping):
        return None
    rule = CHANCE_RULES.get(str(record.get("type")))
    return rule(record) if rule else None

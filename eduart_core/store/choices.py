"""The options models chose: the parsed answer of each model, condition and item, in bulk.

Why a query of its own: distractor analysis needs, for every option item, which option each
examinee picked; `load_responses` reads one item at a time with every column, far too much for
871 items x 24 examinees. The same latest-response rule as `load_scores` applies (repetition 0,
the newest response wins, failed requests are not answers).
"""
from __future__ import annotations

import json

import pandas as pd

from .core import Store

CHOICE_COLUMNS = ["model", "condition", "item_id", "answers"]

_SQL = """
    SELECT model, condition, item_id, answers FROM (
        SELECT m.display_name AS model, u.condition, r.item_id, CAST(r.parsed_answers AS TEXT) AS answers,
               row_number() OVER (PARTITION BY u.model, u.condition, r.item_id ORDER BY r.response_id DESC)
                   AS latest_order
        FROM responses r JOIN runs u USING (run_id) JOIN models m ON m.model = u.model
        JOIN items i ON i.dataset = u.dataset AND i.item_id = r.item_id AND i.is_current
        WHERE u.dataset = ? AND r.error IS NULL AND i.type = ANY(?)
          AND (CASE WHEN u.repetition <> 0 THEN u.repetition ELSE r.repetition END) = 0) ranked
    WHERE latest_order = 1
    ORDER BY 1, 2, 3"""


def load_choices(store: Store, dataset: str, types: tuple[str, ...]) -> pd.DataFrame:
    """model (display name), condition, item_id, answers (the parsed answer list, or None) of the
    latest repetition-0 response per model, condition and item of the given formats."""
    with store.connect(read_only=True) as con:
        frame = con.frame(_SQL, [dataset, list(types)])
    frame["answers"] = pd.Series([json.loads(v) if isinstance(v, str) else None for v in frame["answers"]],
                                 dtype=object, index=frame.index)
    return frame[CHOICE_COLUMNS]


__all__ = ["CHOICE_COLUMNS", "load_choices"]

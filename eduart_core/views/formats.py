"""Views of the answer formats: chance levels, the answer key as the inspector shows it, and the
format-specific statistics of numeric and multi-part items."""
from __future__ import annotations

import pandas as pd

from .. import analysis
from ..formats import display_item
from ..selection import Selection
from ..vocab import MULTI_PART_TYPE
from ._base import EmptySelection, Source, cached, items

_KEY_COLUMNS = ["item_id", "type", "element", "label", "text", "gold", "bbox", "image"]


def _selected_items(src: Source, sel: Selection) -> pd.DataFrame:
    catalogue = items(src, sel.dataset)
    if catalogue.empty:
        raise EmptySelection(f"Dataset '{sel.dataset}' has no items.")
    out = sel.apply(catalogue)
    if out.empty:
        raise EmptySelection("No items match the current selection: widen the filters.")
    return out


@cached()
def chance_levels(src: Source, sel: Selection) -> pd.DataFrame:
    """Per format: items, items with a defined chance level, and their mean chance level.

    The chance level of an item is the expected strict score of the offline chance model's answer
    (1/options for one choice, 1/2 per true/false statement, the product over parts, ...); free
    text has none.
    """
    return analysis.chance_levels(_selected_items(src, sel))


@cached()
def answer_key(src: Source, sel: Selection, item: str = "") -> pd.DataFrame:
    """The answer key as the inspector shows it: one row per option, statement, blank, part or reference.

    Columns: item_id, type, element, label (part label), text, gold (True/False for options, the
    verdict, term, value or reference otherwise), bbox (box options), image (image options).
    Option item=<id> for one item.
    """
    frame = _selected_items(src, sel)
    if item:
        frame = frame[frame["item_id"] == item]
        if frame.empty:
            raise EmptySelection(f"No item {item!r} in the selection.")
    rows = [{"item_id": r.item_id, "type": r.type, **row}
            for r in frame.itertuples() for row in display_item(r.record)["rows"]]
    out = pd.DataFrame(rows)
    for column in _KEY_COLUMNS:
        if column not in out:
            out[column] = None
    return out[_KEY_COLUMNS]


@cached(maxsize=8)
def _scores_with_details(src: Source, profile: str, dataset: str) -> pd.DataFrame:
    from ..store import scores as store_scores

    return store_scores.load_scores(src.store, profile=profile, dataset=dataset, include_details=True)


def numeric_errors(src: Source, sel: Selection) -> pd.DataFrame:
    """Numeric items per model and condition: n, parsed, accuracy, mean absolute error, off-by-one rate."""
    frame = sel.apply(_scores_with_details(src, sel.profile, sel.dataset), all_conditions=True)
    return analysis.numeric_errors(frame)


def part_accuracy(src: Source, sel: Selection) -> pd.DataFrame:
    """Multi-part items per model, condition and part label: share right with its Wilson interval."""
    frame = sel.apply(_scores_with_details(src, sel.profile, sel.dataset), all_conditions=True)
    catalogue = items(src, sel.dataset)
    labels = {r.item_id: {c.get("id"): c.get("label") for c in r.record.get("choices") or [] if isinstance(c, dict)}
              for r in catalogue.itertuples() if r.type == MULTI_PART_TYPE and isinstance(r.record, dict)}
    return analysis.part_accuracy(frame, labels)

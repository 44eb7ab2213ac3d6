"""Views of the Review studio: the extraction review queue, reviewer agreement, suspect keys, overrides.

The extraction queue and agreement span every extraction dataset of the store (the pages say
which dataset each row belongs to); the suspect-key queue is for the selected dataset and profile.
Each decision the page records changes the data version, so these cached frames refresh exactly
when a decision lands.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import UserError
from ..selection import Selection
from ._base import Source, cached

AGREEMENT_GROUPS: dict[str, list[str]] = {"round": ["dataset", "round"], "field": ["field"], "format": ["format"]}
DISCREPANCY_GROUPS = ("category", "field", "format")


@cached(maxsize=8)
def _state(src: Source):
    from ..extraction.review import load_state
    from ..store import extraction as db

    db.ensure_schema(src.store)
    return load_state(src.store)


def review_queue(src: Source, sel: Selection, round: int = 0) -> pd.DataFrame:
    """Queued extraction pages with their review status and progress (option round; 0 = every round)."""
    from ..extraction.review import review_queue as queue

    frame = queue(_state(src), round=round or None)
    return frame.assign(categories=frame["categories"].map(", ".join),
                        field_names=frame["field_names"].map(", ".join))


def review_agreement(src: Source, sel: Selection, by: str = "round") -> pd.DataFrame:
    """Reviewer agreement with decisions coded by choice (percent: the share of fields on which all reviewers made the same choice; Cohen, Fleiss, Krippendorff's alpha with a bootstrap 95% CI) and on the final value (value_percent, the same share), by round, field or format; a blind round appears once it is settled.

    The coding in words: ``extraction.stats.AGREEMENT_CODING``.
    """
    from ..extraction.stats import agreement_by

    if by not in AGREEMENT_GROUPS:
        raise UserError(f"unknown grouping {by!r}; use one of {', '.join(AGREEMENT_GROUPS)}")
    return agreement_by(_state(src), AGREEMENT_GROUPS[by])


@cached(maxsize=8)
def _suspects(src: Source, dataset: str, profile: str, reviewed: bool) -> pd.DataFrame:
    from .. import suspects
    from ._base import items, scores

    # the score and item frames the other views already hold in the cache (every model and condition)
    return suspects.suspect_queue(src.store, dataset, profile, overrides=reviewed,
                                  scores=scores(src, profile, dataset, reviewed), items=items(src, dataset))


def suspect_keys(src: Source, sel: Selection) -> pd.DataFrame:
    """Items whose statistics suggest a wrong key, still waiting for review (selected dataset and profile;
    with the reviewed score overrides unless the selection switches them off)."""
    return _suspects(src, sel.dataset, sel.profile, sel.reviewed)


@cached(maxsize=8)
def discrepancies(src: Source, sel: Selection, by: str = "category") -> pd.DataFrame:
    """Discrepancies between the two extractions per round (auto-merged ones included), by category, field or format."""
    from ..extraction.stats import discrepancy_table
    from ..store import extraction as db

    if by not in DISCREPANCY_GROUPS:
        raise UserError(f"unknown grouping {by!r}; use one of {', '.join(DISCREPANCY_GROUPS)}")
    outcomes = _state(src).outcomes
    rounds = sorted(int(r) for r in outcomes["round"].unique()) if not outcomes.empty else []
    return discrepancy_table(db.load_discrepancies(src.store), by=by, rounds=rounds)


@cached(maxsize=16)
def page_extractions(src: Source, page_id: str, round: int) -> pd.DataFrame:
    """Both extractions of one page and round (record, model, error), indexed by extractor name.

    Who extracted what is in the ``model`` column: a blind reviewer's page must not show it."""
    from ..store import extraction as db

    return db.load_extractions(src.store, page_id=page_id, round=round).set_index("extractor")


def image_file(src: Source, image_hash: str) -> Path:
    """The file of a stored image (a page screenshot, an item image); UserError when the hash is unknown."""
    from ..store import items as store_items

    return store_items.image_path(src.store, image_hash)


def score_overrides(src: Source, sel: Selection, item: str = "") -> pd.DataFrame:
    """Human score overrides of the dataset (one item with option item=<id>), oldest first, and whether each applies."""
    return _overrides(src, sel.dataset, item)


@cached(maxsize=8)
def _overrides(src: Source, dataset: str, item: str) -> pd.DataFrame:
    """Keyed on the dataset, not the selection (which does not narrow them): a filter change reads nothing."""
    from ..store import overrides as store_overrides

    return store_overrides.load_overrides(src.store, dataset, item or None)

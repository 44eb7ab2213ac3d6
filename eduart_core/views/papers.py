"""The paper behind a question of the Review studio: its pages, candidate images, notes.

Why a view: the review page reads through views, never the store; a question extracted from a PDF
paper is reviewed against the paper's page, not a screenshot.
"""
from __future__ import annotations

from ._base import Source


def paper_question(src: Source, page_id: str, round: int):
    """The paper context of an extraction page (``extraction.paper_review.PaperQuestion``), or None
    for a page that did not come from a PDF paper (or a store from before papers)."""
    from ..extraction.paper_review import paper_question as context
    from ..store import StoreError
    from ..store import extraction as db

    db.ensure_schema(src.store)
    try:
        return context(src.store, page_id, round)
    except StoreError:
        return None


def marked_page_image(src: Source, image_hash: str, regions: dict) -> bytes:
    """A paper page's image with the extractors' regions of the question framed."""
    from ..extraction.paper_review import marked_page
    from ..store.items import image_path

    data = image_path(src.store, image_hash).read_bytes()
    return marked_page(data, regions) if regions else data


def paper_notes(src: Source, round: int | None = None):
    """The notes of every PDF paper for review (paper, round, kind, about, note); empty without papers."""
    import pandas as pd

    from ..store import StoreError
    from ..store import extraction as db
    from ..store import papers as paper_db

    columns = ["paper", "round", "kind", "about", "note"]
    db.ensure_schema(src.store)
    try:
        notes = paper_db.load_notes(src.store, round=round)
    except StoreError:
        return pd.DataFrame(columns=columns)
    return notes.rename(columns={"ref": "about", "detail": "note"})[columns]

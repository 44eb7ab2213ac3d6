"""Tables and SQL of exam papers read from PDF: pages, embedded images, question placement, notes.

Why apart from ``store/extraction.py``: a paper adds what a folder of screenshots does not have
(several questions per page, candidate images, a printed key); each question still becomes one
extraction page there, so review and promotion stay the room's own.
"""
from __future__ import annotations

import json
from collections.abc import Iterable

import pandas as pd

from .core import Store
from .extraction import _frame, _upsert

_PAGE = _upsert("paper_pages", ("paper", "page_no", "source", "image_hash", "page_text", "width_pt", "height_pt"),
                ("paper", "page_no"))
_IMAGE = _upsert("paper_images", ("paper", "label", "page_no", "image_hash", "bbox"), ("paper", "label"))
_QUESTION = _upsert("paper_questions", ("page_id", "round", "extractor", "paper", "number", "pages", "region",
                                        "image_label"), ("page_id", "round", "extractor"))
_NOTE = _upsert("paper_notes", ("paper", "round", "kind", "ref", "detail"), ("paper", "round", "kind", "ref"))


def save_pages(store: Store, pages: list[dict]) -> list[dict]:
    """A few read pages in one transaction: the page images and the candidate images (stored once
    per content, verified), the page rows and the candidate rows. ``pages``: paper, page_no, source,
    image (bytes), page_text, width_pt, height_pt, images [{label, data, bbox}]. Returns per page
    ``{"image_hash", "candidates": {label: hash}}``, in order. Why batched: opening a transaction
    costs more than storing a page, and the caller holds only these few pages in memory."""
    from .items import _store_image

    out = []
    with store.transaction() as con:
        for page in pages:
            page_hash, _ = _store_image(con, store, page["image"], f"{page['paper']}-p{page['page_no']}.jpg")
            con.execute(_PAGE, [page["paper"], page["page_no"], page.get("source"), page_hash,
                                page.get("page_text"), float(page["width_pt"]), float(page["height_pt"])])
            candidates = {}
            for image in page["images"]:
                candidates[image["label"]] = _store_image(con, store, image["data"],
                                                          f"{page['paper']}-{image['label']}")[0]
                con.execute(_IMAGE, [page["paper"], image["label"], page["page_no"], candidates[image["label"]],
                                     json.dumps(image.get("bbox"))])
            out.append({"image_hash": page_hash, "candidates": candidates})
    return out


def save_questions(store: Store, rows: Iterable[dict]) -> None:
    """Where each extractor placed each question (pages, region, attached candidate)."""
    values = [[r["page_id"], r["round"], r["extractor"], r["paper"], int(r["number"]), json.dumps(r["pages"]),
               json.dumps(r.get("region")) if r.get("region") else None, r.get("image_label")] for r in rows]
    if values:
        with store.transaction() as con:
            con.executemany(_QUESTION, values)


def save_notes(store: Store, paper: str, round: int, notes: Iterable[dict]) -> None:
    """Replace the paper's notes of this round (a re-run states the present, not history)."""
    with store.transaction() as con:
        con.execute("DELETE FROM paper_notes WHERE paper = ? AND round = ?", [paper, round])
        con.executemany(_NOTE, [[paper, round, n["kind"], str(n["ref"]), n["detail"]] for n in notes])


def load_pages(store: Store, paper: str | None = None) -> pd.DataFrame:
    where, params = (" WHERE paper = ?", [paper]) if paper else ("", [])
    with store.connect(read_only=True) as con:
        return _frame(con, "SELECT * FROM paper_pages" + where + " ORDER BY paper, page_no", params)


def load_images(store: Store, paper: str | None = None) -> pd.DataFrame:
    where, params = (" WHERE paper = ?", [paper]) if paper else ("", [])
    with store.connect(read_only=True) as con:
        frame = _frame(con, "SELECT * FROM paper_images" + where + " ORDER BY paper, page_no, label", params)
    frame["bbox"] = [json.loads(b) if b else None for b in frame["bbox"]]
    return frame


def load_questions(store: Store, page_id: str | None = None, round: int | None = None) -> pd.DataFrame:
    clauses: list[str] = []
    params: list[object] = []
    if page_id is not None:
        clauses.append("page_id = ?")
        params.append(page_id)
    if round is not None:
        clauses.append("round = ?")
        params.append(int(round))
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    with store.connect(read_only=True) as con:
        frame = _frame(con, "SELECT * FROM paper_questions" + where + " ORDER BY page_id, round, extractor", params)
    frame["pages"] = [json.loads(p) for p in frame["pages"]]
    frame["region"] = [json.loads(r) if r else None for r in frame["region"]]
    return frame


def load_notes(store: Store, paper: str | None = None, round: int | None = None) -> pd.DataFrame:
    clauses: list[str] = []
    params: list[object] = []
    if paper is not None:
        clauses.append("paper = ?")
        params.append(paper)
    if round is not None:
        clauses.append("round = ?")
        params.append(int(round))
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    with store.connect(read_only=True) as con:
        return _frame(con, "SELECT * FROM paper_notes" + where + " ORDER BY paper, round, kind, ref", params)

"""Reviewing a question of a PDF paper: its pages with the question marked, the candidate images
with which extractor attached each, and attaching or detaching an image as a decision.

Why a decision like any other: which artwork a question shows is part of the item a model is
scored on; a reviewer's choice is appended with who made it, checked against the item schema,
and counted by the blind and adjudication rules of the round (``review.decide``). Attaching the
image one extractor attached is accepting that extractor; attaching another candidate or none
where an extractor attached one is an edit.
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field

from ..store import Store
from ..team import Identity
from .review import ACCEPT_A, ACCEPT_B, EDIT, LATEST, REVIEW_ROLE, DecisionResult, decide, load_state

IMAGE_PATH = "image"
MARK_COLOURS = {"A": (220, 40, 40), "B": (30, 90, 220)}


@dataclass
class PaperQuestion:
    paper: str
    number: int
    pages: list[dict] = field(default_factory=list)       # page_no, image_hash, has_text, regions {A|B: box}
    candidates: list[dict] = field(default_factory=list)  # label, image_hash, page_no, attached_by [A|B]
    notes: list[str] = field(default_factory=list)


def paper_question(store: Store, page_id: str, round: int) -> PaperQuestion | None:
    """The paper context of an extraction page; None when the page is not a question of a paper."""
    from ..store import papers as paper_db

    placed = paper_db.load_questions(store, page_id, round)
    if placed.empty:
        return None
    paper, number = str(placed["paper"].iloc[0]), int(placed["number"].iloc[0])
    on = sorted({int(p) for pages in placed["pages"] for p in pages})
    stored = paper_db.load_pages(store, paper).set_index("page_no")
    result = PaperQuestion(paper, number)
    for page_no in on:
        regions = {row["extractor"]: row["region"][str(page_no)] for row in placed.to_dict("records")
                   if row["region"] and str(page_no) in row["region"]}
        row = stored.loc[page_no]
        result.pages.append({"page_no": page_no, "image_hash": row["image_hash"],
                             "has_text": bool(row["page_text"]), "regions": regions})
    attached: dict[str, list[str]] = {}
    for row in placed.to_dict("records"):
        if row["image_label"]:
            attached.setdefault(row["image_label"], []).append(row["extractor"])
    images = paper_db.load_images(store, paper)
    for row in images[images["page_no"].isin(on)].to_dict("records"):
        result.candidates.append({"label": row["label"], "image_hash": row["image_hash"], "page_no": int(row["page_no"]),
                                  "attached_by": sorted(attached.get(row["label"], []))})
    notes = paper_db.load_notes(store, paper, round)
    result.notes = [str(d) for d, ref in zip(notes["detail"], notes["ref"]) if str(ref) == str(number)]
    return result


def marked_page(png: bytes, regions: dict[str, list[float]]) -> bytes:
    """The page image with each extractor's region of the question drawn as a frame (A red, B blue)."""
    from PIL import Image, ImageDraw

    with Image.open(io.BytesIO(png)) as page:
        image = page.convert("RGB")
    draw = ImageDraw.Draw(image)
    width, height = image.size
    for label, box in sorted(regions.items()):
        x0, y0, x1, y1 = box
        draw.rectangle([x0 * width, y0 * height, x1 * width, y1 * height], outline=MARK_COLOURS.get(label, (0, 0, 0)),
                       width=max(2, width // 300))
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=1)
    return out.getvalue()


def attach_image(store: Store, page_id: str, round: int, image_hash: str | None, reviewer: Identity,
                 based_on: int | None | str = LATEST, *, role: str = REVIEW_ROLE, order: str | None = None,
                 note: str | None = None, state=None) -> DecisionResult:
    """Attach the stored image ``image_hash`` to the question (None: detach every image), as the
    reviewer's decision on its ``image`` field (see the module docstring)."""
    state = state or load_state(store, round)
    fields = state.fields(page_id, round)
    row = fields[fields["path"] == IMAGE_PATH]
    value_a = row["value_a"].iloc[0] if not row.empty else None
    value_b = row["value_b"].iloc[0] if not row.empty else None
    action = ACCEPT_A if image_hash == value_a else ACCEPT_B if image_hash == value_b else EDIT
    return decide(store, page_id, round, IMAGE_PATH, action, reviewer, value=image_hash, note=note,
                  based_on=based_on, role=role, order=order, state=state)

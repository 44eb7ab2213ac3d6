"""Made-up items of the newer formats (numeric, multi-part, open text, box and image options).

Written for this project: none of these is a benchmark question. Images are plain colour plates
generated here.
"""
from __future__ import annotations

import io
from pathlib import Path

NUMERIC = {"item_id": "n1", "type": "numeric", "question_text": "How many invented horses are in the plate?",
           "choices": None, "answers": [{"id": "A", "value": 7, "tolerance": 0}], "language": "en",
           "has_image": False, "image": None}
NUMERIC_TOL = {**NUMERIC, "item_id": "n2", "answers": [{"id": "A", "value": 12, "tolerance": 1}],
               "question_text": "Quante figure inventate ci sono?", "language": "it"}
PARTS = {"item_id": "m1", "type": "multi_part_choice", "question_text": "Where is the made-up dog relative to the rider?",
         "choices": [{"id": "A", "label": "lateral", "options": ["left", "none", "right"]},
                     {"id": "B", "label": "depth", "options": ["in front", "none", "behind"]},
                     {"id": "C", "label": "vertical", "options": ["above", "none", "below"]}],
         "answers": [{"id": "A", "description": "left"}, {"id": "B", "description": "behind"},
                     {"id": "C", "description": "none"}], "language": "en", "has_image": False, "image": None}
OPEN = {"item_id": "o1", "type": "open_text", "question_text": "Cosa tiene in mano la figura inventata?",
        "choices": None, "answers": [{"id": "A", "references": ["La Madonna tiene il Bambino in braccio.",
                                                                "The Virgin holds the Child."]}],
        "language": "it", "has_image": False, "image": None}
BOXES = {"item_id": "b1", "type": "multiple_choice_radio", "question_text": "Which box shows the invented lantern?",
         "choices": [{"id": "A", "bbox": [0.1, 0.1, 0.3, 0.3]}, {"id": "B", "bbox": [0.5, 0.5, 0.4, 0.4], "text": "lower right"},
                     {"id": "C", "bbox": [0.6, 0.05, 0.3, 0.2]}],
         "answers": [{"id": "B", "description": "lower right"}], "language": "en", "has_image": True,
         "image": "imgs/scene.png", "regions": [{"id": "R1", "bbox": [0.0, 0.6, 0.3, 0.4], "label": "river"}]}
PIECES = {"item_id": "p1", "type": "multiple_choice_radio", "question_text": "Which piece fills the gap in the plate?",
          "choices": [{"id": "A", "image": "imgs/piece_a.png"}, {"id": "B", "image": "imgs/piece_b.png"},
                      {"id": "C", "image": "imgs/piece_c.png"}],
          "answers": [{"id": "C", "description": "piece C"}], "language": "en", "has_image": True,
          "image": "imgs/scene.png"}

RECORDS = [NUMERIC, NUMERIC_TOL, PARTS, OPEN, BOXES, PIECES]
COLOURS = {"scene.png": (240, 240, 240), "piece_a.png": (200, 0, 0), "piece_b.png": (0, 160, 0),
           "piece_c.png": (0, 0, 200)}
#: A right answer per item, as a model would write it.
RIGHT = {"n1": [{"id": "A", "text": "7"}], "n2": [{"id": "A", "text": "undici"}],
         "m1": [{"id": "A", "text": "Left"}, {"id": "B", "text": "behind"}, {"id": "C", "text": "none"}],
         "o1": [{"id": "A", "text": "La Madonna tiene il Bambino in braccio."}],
         "b1": [{"id": "B"}], "p1": [{"id": "C"}]}


def png(colour: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def write_images(root: Path) -> Path:
    """The plates under root/imgs; returns root."""
    (root / "imgs").mkdir(parents=True, exist_ok=True)
    for name, colour in COLOURS.items():
        (root / "imgs" / name).write_bytes(png(colour, (200, 100) if name == "scene.png" else (40, 30)))
    return root


def fill(store, dataset: str = "muse") -> list[dict]:
    """The records in `dataset` of `store`, images stored; returns the records."""
    from eduart_core.scoring.item_writes import upsert_items

    root = write_images(store.local_base.parent / "format_src")
    upsert_items(store, RECORDS, dataset, "test", images_root=root)
    return RECORDS

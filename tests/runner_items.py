"""Small made-up items (all seven formats, two languages, some with images) for runner tests.

Written for this project: none of these is an EduArt exam question.
"""
from __future__ import annotations

import io
from pathlib import Path


def _image(path: Path, colour: tuple[int, int, int]) -> None:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (16, 12), colour).save(buffer, format="JPEG")
    path.write_bytes(buffer.getvalue())


def make_records(n_copies: int = 1) -> list[dict]:
    base = [
        {"type": "multiple_choice_radio", "question_text": "Which material is a fresco painted on?",
         "choices": [{"id": "A", "text": "wet plaster"}, {"id": "B", "text": "canvas"}, {"id": "C", "text": "wood"}],
         "answers": [{"id": "A", "description": "wet plaster"}], "language": "en", "has_image": False, "image": None},
        {"type": "multiple_choice_check", "question_text": "Quali sono colori primari nella pittura tradizionale?",
         "choices": [{"id": "A", "text": "rosso"}, {"id": "B", "text": "verde"}, {"id": "C", "text": "blu"}],
         "answers": [{"id": "A", "description": "rosso"}, {"id": "C", "description": "blu"}],
         "language": "it", "has_image": False, "image": None},
        {"type": "true_false", "question_text": "Read the statements about the pictured plate.",
         "choices": [{"id": "A", "text": "The plate is a single colour."}, {"id": "B", "text": "The plate shows a crowd."}],
         "answers": [{"id": "A", "text": "True"}, {"id": "B", "text": "False"}],
         "language": "en", "has_image": True, "image": "imgs/plate1.jpg"},
        {"type": "positioning", "question_text": "Una [A] copre la navata; la [B] sta sopra l'altare.",
         "choices": ["volta", "cupola", "colonna"],
         "answers": [{"id": "A", "description": "volta"}, {"id": "B", "description": "cupola"}],
         "language": "it", "has_image": False, "image": None},
        {"type": "completion_closed", "question_text": "The [A] is the top part of a column.",
         "choices": [{"id": "A", "options": ["capital", "plinth"]}],
         "answers": [{"id": "A", "description": "capital"}], "language": "en", "has_image": True,
         "image": "imgs/plate2.jpg"},
        {"type": "completion_open", "question_text": "Il colore della tavola è [A].", "choices": None,
         "answers": [{"id": "A", "description": "rosso"}], "language": "it", "has_image": True,
         "image": "imgs/plate1.jpg"},
        {"type": "select_errors", "question_text": "A mosaic is made of small wooden pieces called tesserae.",
         "choices": None, "answers": [{"error": "wooden", "correct": "stone"}], "language": "en",
         "has_image": False, "image": None},
    ]
    records = []
    for copy in range(n_copies):
        for index, record in enumerate(base):
            item_id = f"{copy * len(base) + index + 1:04d}"
            records.append({**record, "item_id": item_id, "question_title": f"Exercise {item_id}",
                            "source": "test/made-up", "exercise": copy + 1, "question": index + 1})
    return records


def fill_store(store, n_copies: int = 1, dataset: str = "demo") -> list[dict]:
    """Items in ``dataset`` of ``store`` (created on the fly); returns the records."""
    from eduart_core.scoring.item_writes import upsert_items

    root = store.local_base.parent / "item_src"
    (root / "imgs").mkdir(parents=True, exist_ok=True)
    _image(root / "imgs" / "plate1.jpg", (200, 30, 30))
    _image(root / "imgs" / "plate2.jpg", (30, 30, 200))
    records = make_records(n_copies)
    upsert_items(store, records, dataset, "test", images_root=root)
    return records

"""Made-up multi-turn items shared by the online and the batch dialogue tests.

One dialogue of three turns about an invented colour plate (the first and third turn show its image)
and one lone item. Each question starts with a label (TURN-ONE, ..., SOLO) so a stub can answer
"reply to <label>" and a test can recognise every earlier turn in a later request.
"""
from __future__ import annotations

import io

from eduart_core.scoring.item_writes import upsert_items
from eduart_core.store import Store


def png() -> bytes:
    """The plate: a small plain-colour PNG generated here."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (10, 8), (180, 140, 40)).save(buffer, format="PNG")
    return buffer.getvalue()


def mcq(item_id: str, question: str, **extra) -> dict:
    return {"item_id": item_id, "type": "multiple_choice_radio", "question_title": f"Title {item_id}",
            "question_text": question, "choices": [{"id": "A", "text": "yes"}, {"id": "B", "text": "no"}],
            "answers": [{"id": "A", "description": "yes"}], "language": "en", "has_image": False, "image": None,
            **extra}


# Item ids deliberately out of turn order: the turn number decides, not the id.
DIALOGUE = [
    mcq("d-3", "TURN-ONE: is the plate golden?", dialogue_id="plate", turn=1, has_image=True, image="plate.png"),
    mcq("d-1", "TURN-TWO: does that colour fill the whole plate?", dialogue_id="plate", turn=2),
    mcq("d-2", "TURN-THREE: looking again at the plate, is it one colour?", dialogue_id="plate", turn=3,
        has_image=True, image="plate.png"),
    mcq("solo", "SOLO: is a fresco painted on wet plaster?"),
]


def fill_dialogue(store: Store) -> None:
    """The dialogue and the lone item in dataset "demo", with the plate image beside the store."""
    root = store.local_base.parent / "src"
    root.mkdir(parents=True, exist_ok=True)
    (root / "plate.png").write_bytes(png())
    upsert_items(store, DIALOGUE, "demo", "test", images_root=root)

"""A small store of written answers and a test rubric, for the judge and grading tests.

Made up for this project (not EduArt questions). The items are open completions (cheap to score: no
sentence embeddings); the rubric checks the artist's name and the date, and asks a judge whether
the answer names a visual feature. Each answer's words say what it deserves, so a stub judge and
stub graders can mark it right by reading it.
"""
from __future__ import annotations

from pathlib import Path

DATASET = "written"
RUBRIC = "test-v1"
#: key -> display name; distinctive strings a test can look for in what graders and judges see
MODELS = {"zeta-model-x": "Zeta Examinee Alpha", "omega-model-y": "Omega Examinee Beta",
          "kappa-model-z": "Kappa Examinee Gamma"}

RUBRIC_TEXT = """name = "test-v1"
title = "Test rubric"
[attach]
formats = ["completion_open"]

[[criteria]]
id = "artist"
label = "Artist"
points = 1
check = "alias"

[[criteria]]
id = "date"
label = "Date"
points = 1
check = "date_within"
years = 50

[[criteria]]
id = "evidence"
label = "Visual evidence"
points = 1
judge = "Does the answer name a visual feature of the work?"
levels = { "0" = "No visual feature.", "1" = "A visual feature." }

[items."w1"]
artist = ["Giotto"]
date = 1305
[items."w2"]
artist = ["Masaccio"]
date = 1427
[items."w3"]
artist = ["Botticelli"]
date = 1485
[items."w4"]
artist = ["Caravaggio"]
date = 1600
"""

ITEMS = [
    {"item_id": f"w{k}", "type": "completion_open", "question_text": f"Chi dipinse l'opera {k}? [A]", "choices": None,
     "answers": [{"id": "A", "description": artist}], "language": "it", "has_image": False, "image": None,
     "source": "test/written"}
    for k, artist in ((1, "Giotto"), (2, "Masaccio"), (3, "Botticelli"), (4, "Caravaggio"))
]
ARTISTS = {"w1": ("Giotto", 1305), "w2": ("Masaccio", 1427), "w3": ("Botticelli", 1485), "w4": ("Caravaggio", 1600)}
#: (model key, item) pairs whose answer names a visual feature ("the light from the left")
WITH_FEATURE = {("zeta-model-x", "w1"), ("zeta-model-x", "w2"), ("omega-model-y", "w1"), ("omega-model-y", "w3"),
                ("kappa-model-z", "w4"), ("zeta-model-x", "w4")}
FEATURE = "la luce da sinistra"


def answer_text(model: str, item: str) -> str:
    artist, year = ARTISTS[item]
    who = artist if model != "kappa-model-z" else "Anonimo"
    words = f"{who}, intorno al {year}"
    return words + (f"; lo mostra {FEATURE}" if (model, item) in WITH_FEATURE else "; è un'opera famosa")


def write_rubric(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{RUBRIC}.toml").write_text(RUBRIC_TEXT, encoding="utf-8")
    return folder


def build_written_store(store) -> None:
    """Items, three examinees with one answer each per item (default condition)."""
    import json

    from eduart_core.scoring.item_writes import upsert_items
    from eduart_core.scoring.responses import add_responses
    from eduart_core.store.runs import create_run, ensure_dataset, ensure_model

    ensure_dataset(store, DATASET, "Written answers (test)", "benchmark")
    upsert_items(store, ITEMS, DATASET, "test")
    for key, name in MODELS.items():
        ensure_model(store, key, name, "Test", "offline", key)
        run_id = f"answers-{key}"
        create_run(store, run_id, DATASET, key, "default", "import", status="completed")
        add_responses(store, run_id, [{"item_id": item["item_id"], "request_key": item["item_id"],
                                       "raw_text": json.dumps({"Answers": [{"id": "A", "text": answer_text(key,
                                                                                            item["item_id"])}]})}
                                      for item in ITEMS])


def deserved(text: str) -> int:
    """What the evidence criterion deserves: the answer names the visual feature."""
    return int(FEATURE in text)


def written_store(folder: Path, monkeypatch):
    """A fresh store of written answers in ``folder`` with the test rubric's folder set (EDUART_RUBRICS):
    what the judge, grading and grading-page tests start from."""
    from eduart_core.store import Store

    monkeypatch.setenv("EDUART_RUBRICS", str(write_rubric(folder / "rubrics")))
    store = Store(folder / "store" / "eduart.duckdb")
    with store.held():  # a fixture's build: one open of the file, not one per write
        build_written_store(store)
    return store


#: The two graders of ``disputed_round`` (single-machine names).
DISPUTING = ("gia", "gus")


def disputed_round(store, disputed: int = 4, agreed: int = 1) -> list[str]:
    """A grading round of two graders on ``store`` (built by ``build_written_store``) whose first
    ``disputed`` answers they dispute (on the evidence) and whose next ``agreed`` ones they agree on;
    returns the tokens in that order (the disputed ones first). The rest stay ungraded."""
    from eduart_core import team
    from eduart_core.judges import grading

    gia, gus = (team.local(n) for n in DISPUTING)
    grading.start_round(store, DATASET, RUBRIC, graders=2, set_by=team.operator(), seed=7)
    tokens: list[str] = []
    while len(tokens) < disputed + agreed and (task := grading.next_answer(store, DATASET, RUBRIC, gia)) is not None:
        grading.submit_grades(store, task.token, gia, {"artist": 1, "date": 1, "evidence": 0})
        grading.submit_grades(store, task.token, gus, {"artist": 1, "date": 1, "evidence": int(len(tokens) < disputed)})
        tokens.append(task.token)
    return tokens

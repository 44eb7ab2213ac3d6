"""Data simulated from a known partial credit model, written as item and response files and imported
through the real CLI (`import-items`, `import-responses`), for the partial-credit IRT tests.

Items are made up (no benchmark text): single-answer multiple choice (one part), true/false sets
(k statements), two-option clozes (k blanks) and error finding (k errors). An examinee's score
level on an item is drawn from the PCM, and the answer written gets exactly that many parts
right, so the stored score maps back to the level by the format's own rule. Plants:
``misfit``: an item whose levels are drawn at random, whatever the ability; ``aberrant``: an
examinee at level 0 on the easier half of the items and at full credit on the harder half;
``invalid``: an examinee whose every tenth answer is not JSON (unreadable, scored 0).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from eduart_core.cli import main
from eduart_core.store import Store

DATASET = "pcm-sim"
FORMATS = ("multiple_choice_radio", "true_false", "completion_closed", "select_errors")
WORDS = ("altar", "apse", "arch", "bell", "choir", "crypt", "dome", "frieze", "nave", "niche", "pier", "porch")


@dataclass
class Simulated:
    """What the simulation knows and the estimates should find."""

    theta: dict[str, float]
    steps: dict[str, list[float]]
    parts: dict[str, int]
    types: dict[str, str]
    models: list[str]
    items: list[str]
    plants: dict[str, str] = field(default_factory=dict)


def item_record(item_id: str, kind: str, k: int) -> dict:
    """A made-up item of one format with k parts."""
    base = {"item_id": item_id, "type": kind, "question_title": "Synthetic item", "language": "en",
            "source": "simulation", "has_image": False, "image": None}
    ids = [chr(ord("A") + i) for i in range(k)]
    if kind == "multiple_choice_radio":
        return {**base, "question_text": f"Synthetic question {item_id}: which option is the right one?",
                "choices": [{"id": o, "text": f"option {o} of {item_id}"} for o in "ABCD"],
                "answers": [{"id": "A", "description": f"option A of {item_id}"}]}
    if kind == "true_false":
        return {**base, "question_text": f"Synthetic statements {item_id}: true or false?",
                "choices": [{"id": i, "text": f"Invented statement {i} of {item_id}."} for i in ids],
                "answers": [{"id": i, "text": "True" if n % 2 == 0 else "False"} for n, i in enumerate(ids)]}
    if kind == "completion_closed":
        text = " ".join(f"In the invented fresco {item_id} part {i} is [{i}]." for i in ids)
        return {**base, "question_text": text,
                "choices": [{"id": i, "options": [f"right{i}", f"wrong{i}"]} for i in ids],
                "answers": [{"id": i, "description": f"right{i}"} for i in ids]}
    errors = list(WORDS[:k])
    passage = f"In the invented church {item_id} the " + ", the ".join(WORDS) + " were built of stone."
    return {**base, "question_text": passage, "choices": None,
            "answers": [{"error": w, "correct": w.upper()} for w in errors]}


def answer(record: dict, level: int, rng: np.random.Generator) -> str:
    """A reply with exactly ``level`` parts right."""
    kind = record["type"]
    if kind == "multiple_choice_radio":
        return json.dumps({"Answers": [{"id": "A" if level else str(rng.choice(list("BCD")))}]})
    gold = record["answers"]
    right = set(rng.choice(len(gold), size=level, replace=False).tolist())
    if kind == "true_false":
        flip = {"True": "FALSE", "False": "TRUE"}
        return json.dumps({"Answers": [{"id": g["id"], "text": g["text"].upper() if n in right else flip[g["text"]]}
                                       for n, g in enumerate(gold)]})
    if kind == "completion_closed":
        return json.dumps({"Answers": [{"id": g["id"], "text": g["description"] if n in right
                                        else g["description"].replace("right", "wrong")} for n, g in enumerate(gold)]})
    found = [{"text": gold[n]["error"]} for n in sorted(right)]
    return json.dumps({"Answers": found or [{"text": WORDS[-1]}]})  # level 0: a word that is no error


def pcm_level(theta: float, steps: list[float], rng: np.random.Generator) -> int:
    """A level drawn from the PCM: log P(k) - log P(k-1) = theta - step_k."""
    logits = np.concatenate([[0.0], np.cumsum(theta - np.asarray(steps))])
    p = np.exp(logits - logits.max())
    return int(rng.choice(len(p), p=p / p.sum()))


def simulate(store: Store, folder: Path, n_models: int = 400, n_items: int = 30, seed: int = 25,
             misfit: str | None = None, aberrant: str | None = None, invalid: str | None = None) -> Simulated:
    """Write and import items and responses; return the truth (plants by item id / model name)."""
    rng = np.random.default_rng(seed)
    models = [f"sim-pcm-{m:03d}" for m in range(n_models)]
    items = [f"pcm-{i:04d}" for i in range(n_items)]
    kinds = [FORMATS[i % len(FORMATS)] for i in range(n_items)]
    parts = [1 if kind == "multiple_choice_radio" else int(rng.integers(2, 5)) for kind in kinds]
    theta = dict(zip(models, rng.normal(0.0, 1.2, n_models)))
    steps = {item: sorted(rng.normal(0.0, 1.0, k).tolist()) for item, k in zip(items, parts)}
    records = [item_record(item, kind, k) for item, kind, k in zip(items, kinds, parts)]
    path = folder / "items.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    assert main(["import-items", str(path), "--dataset", DATASET, "--db", str(store.path)]) == 0
    location = {item: float(np.mean(s)) for item, s in steps.items()}
    easy = sorted(items, key=location.get)
    lines = []
    for model in models:
        for n, (item, record, k) in enumerate(zip(items, records, parts)):
            level = pcm_level(theta[model], steps[item], rng)
            if item == misfit:
                level = int(rng.integers(0, k + 1))
            if model == aberrant:
                level = 0 if easy.index(item) < n_items // 2 else k
            raw = answer(record, level, rng)
            if model == invalid and n % 10 == 0:
                raw = "Sorry, the reply was cut off before any"
            lines.append(json.dumps({"dataset": DATASET, "item_id": item, "model": model, "condition": "default",
                                     "raw_response": raw}))
    path = folder / "responses.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["import-responses", str(path), "--db", str(store.path)]) == 0
    plants = {k: v for k, v in (("misfit", misfit), ("aberrant", aberrant), ("invalid", invalid)) if v}
    return Simulated(theta=theta, steps=steps, parts=dict(zip(items, parts)), types=dict(zip(items, kinds)),
                     models=models, items=items, plants=plants)

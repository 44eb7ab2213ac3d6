"""Data simulated from a known Rasch model, written as item and response files and imported through
the real CLI (`import-items`, `import-responses`), for the psychometrics tests.

Items are made-up single-answer multiple-choice questions (no benchmark text). A response is
right with probability expit(theta_model - b_item); a wrong response picks a wrong option at
random unless a plant says otherwise.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from eduart_core.cli import main
from eduart_core.store import Store

OPTIONS = ("A", "B", "C", "D")
DATASET = "rasch-sim"


@dataclass
class Simulated:
    """What the simulation knows and the estimates should find."""

    theta: dict[str, float]
    difficulty: dict[str, float]
    models: list[str]
    items: list[str]
    plants: dict[str, str] = field(default_factory=dict)


def item_record(item_id: str, language: str = "en", parallel_of: str | None = None) -> dict:
    record = {"item_id": item_id, "type": "multiple_choice_radio", "question_title": "Synthetic item",
              "question_text": f"Synthetic question {item_id}: which option is the right one?",
              "choices": [{"id": o, "text": f"option {o} of {item_id}"} for o in OPTIONS],
              "answers": [{"id": "A", "description": f"option A of {item_id}"}],
              "language": language, "source": "simulation", "has_image": False, "image": None}
    if parallel_of:
        record["parallel_of"] = parallel_of
    return record


def _answer(option: str) -> str:
    return json.dumps({"Answers": [{"id": option}]})


def simulate(store: Store, tmp_path: Path, n_models: int, n_items: int, seed: int = 0,
             conditions: tuple[str, ...] = ("default",), consensus_wrong: str | None = None,
             harder_with_motivation: str | None = None, parallel: dict[str, str] | None = None,
             languages: dict[str, str] | None = None) -> Simulated:
    """Write and import items and responses; return the truth.

    ``consensus_wrong``: an item whose stronger half of the models picks wrong option B;
    ``harder_with_motivation``: an item answered from the Rasch model in the default condition and
    always wrong in the motivation condition; ``parallel``: item -> its parallel form;
    ``languages``: item -> language code (default English).
    """
    rng = np.random.default_rng(seed)
    models = [f"sim-irt-{m:03d}" for m in range(n_models)]
    items = [f"irt-{i:04d}" for i in range(n_items)]
    theta = dict(zip(models, rng.normal(0.0, 1.2, n_models)))
    difficulty = dict(zip(items, rng.normal(0.0, 1.0, n_items)))
    items_path = tmp_path / "items.jsonl"
    items_path.write_text("\n".join(json.dumps(item_record(i, (languages or {}).get(i, "en"),
                                                             (parallel or {}).get(i))) for i in items) + "\n",
                          encoding="utf-8")
    assert main(["import-items", str(items_path), "--dataset", DATASET, "--db", str(store.path)]) == 0
    strong = set(sorted(models, key=lambda m: -theta[m])[: (n_models + 1) // 2])
    lines = []
    for model in models:
        for condition in conditions:
            for item in items:
                right = rng.random() < 1.0 / (1.0 + np.exp(-(theta[model] - difficulty[item])))
                option = "A" if right else str(rng.choice(OPTIONS[1:]))
                if item == consensus_wrong and model in strong:
                    option = "B"
                if item == harder_with_motivation and condition == "motivation":
                    option = str(rng.choice(OPTIONS[1:]))
                lines.append(json.dumps({"dataset": DATASET, "item_id": item, "model": model, "condition": condition,
                                         "raw_response": _answer(option)}))
    responses_path = tmp_path / "responses.jsonl"
    responses_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["import-responses", str(responses_path), "--db", str(store.path)]) == 0
    plants = {k: v for k, v in (("consensus_wrong", consensus_wrong),
                                ("harder_with_motivation", harder_with_motivation)) if v}
    return Simulated(theta=theta, difficulty=difficulty, models=models, items=items, plants=plants)

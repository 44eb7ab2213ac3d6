"""Study datasets at any scale, for benchmarks: VQArt-Bench-like (7 dimensions) or MUSE-like (12 tasks).

Why: the study analyses and the Tasks page must stay fast at the published sizes (14 models x
14,463 questions; 30 models x 2,400 questions). These items are placeholders (no question text
worth reading, tiny generated images shared by about three questions each, as artworks are), with
four options labelled by distractor type; the simulated panel answers them through the store's real
parser and scorer, like the demo.
"""
from __future__ import annotations

import io
import random
import tempfile
from pathlib import Path

from PIL import Image

from ..store import Store
from ..text import letter_id
from ..vocab import BENCHMARK_KIND, MCQ_TYPE
from .respondents import STUDY_MODELS, StudyModel

#: VQArt-Bench Table 1: dimensions with their item counts (the mix is scaled to any size).
VQA_MIX = {"Instance Identity": 2031, "Instance Attribute": 2598, "Instance Location": 2100,
           "Instance Counting": 1710, "Spatial Relation": 2067, "Instance Interaction": 1794,
           "Visual-Inspired Reasoning": 2163}
#: MUSE Table 1: tasks and their dimensions (no per-task counts are printed: equal shares).
MUSE_TASKS = {"Object Classification": "Visual Perception", "Object Count": "Visual Perception",
              "Activity Localization": "Semantic Understanding", "Activity Description": "Semantic Understanding",
              "Scene Classification": "Semantic Understanding", "Emotion Detection": "Affective Interpretation",
              "Visual Clue Identification": "Affective Interpretation",
              "Emotion Cause Inference": "Affective Interpretation", "Relative Position": "Compositional Reasoning",
              "Remote Interaction": "Compositional Reasoning", "Jigsaw Puzzle": "Compositional Reasoning",
              "Cultural Identification": "Cultural Understanding"}
STUDIES = ("vqa", "muse")
DISTRACTORS = ("same category, other object", "nearby box", "absent object")
QUESTIONS_PER_IMAGE = 3


def _groups(study: str, n: int) -> list[tuple[str | None, str | None]]:
    """(task, dimension) per item, in the study's published mix."""
    if study == "vqa":
        total = sum(VQA_MIX.values())
        out: list[tuple[str | None, str | None]] = []
        for dim, count in VQA_MIX.items():
            out += [(None, dim)] * round(n * count / total)
        return (out + [(None, "Instance Attribute")] * n)[:n]
    tasks = list(MUSE_TASKS)
    return [(tasks[i % len(tasks)], MUSE_TASKS[tasks[i % len(tasks)]]) for i in range(n)]


def _tiny_png(index: int) -> bytes:
    rng = random.Random(f"tiny|{index}")
    image = Image.new("RGB", (8, 8), (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def synthetic_study_items(study: str, n_items: int, seed: int) -> tuple[list[dict], dict[str, bytes]]:
    """(records, image files by relative path): four-option items with labelled distractors."""
    if study not in STUDIES:
        raise ValueError(f"study must be one of {', '.join(STUDIES)}")
    rng = random.Random(f"synthetic-study|{study}|{seed}")
    images: dict[str, bytes] = {}
    records = []
    genres = ("portrait", "landscape", "still life", "genre scene", "religious")
    for index, (task, dimension) in enumerate(_groups(study, n_items)):
        image_index = index // QUESTIONS_PER_IMAGE
        path = f"imgs/{image_index:05d}.png"
        if path not in images:
            images[path] = _tiny_png(image_index)
        gold = rng.randrange(4)
        choices = []
        for k in range(4):
            entry = {"id": letter_id(k), "text": f"option {k + 1} of question {index + 1}"}
            if k != gold:
                entry["distractor_type"] = DISTRACTORS[(k + index) % len(DISTRACTORS)]
            choices.append(entry)
        record = {"item_id": f"{study}-{index + 1:05d}", "type": MCQ_TYPE,
                  "question_text": f"Synthetic question {index + 1} ({task or dimension}).", "choices": choices,
                  "answers": [{"id": letter_id(gold), "description": choices[gold]["text"]}], "language": "en",
                  "has_image": True, "image": path, "dimension": dimension,
                  "image_attributes": {"genre": genres[image_index % len(genres)],
                                       "figures": image_index % 6, "warm_ratio": round((image_index % 97) / 97, 3)}}
        if task:
            record["task"] = task
        records.append(record)
    return records, images


def synthetic_models(n: int, seed: int) -> tuple[StudyModel, ...]:
    """n study respondents: the demo panel, then seeded variations of it (distinct keys and names)."""
    rng = random.Random(f"synthetic-models|{seed}")
    out = []
    for i in range(n):
        base = STUDY_MODELS[i % len(STUDY_MODELS)]
        if i < len(STUDY_MODELS):
            out.append(base)
            continue
        copy = i // len(STUDY_MODELS)
        out.append(StudyModel(f"{base.key}-v{copy}", f"{base.display_name} v{copy}", base.family, base.access,
                              round(base.ability + rng.gauss(0, 0.4), 3), base.offsets, base.lure,
                              base.refusal_rate, base.prose_rate, base.bad_option_rate, base.fence_rate))
    return tuple(out)


def build_synthetic_study(store: Store, study: str, models: int, items: int, seed: int = 0,
                          dataset: str | None = None) -> str:
    """A benchmark-scale study dataset answered by ``models`` simulated respondents; returns its name."""
    from ..scoring.item_writes import upsert_items
    from ..store.runs import ensure_dataset
    from .demo import simulate_study

    dataset = dataset or f"synthetic-{study}"
    ensure_dataset(store, dataset, f"Synthetic {study} study ({items} items, simulated)", BENCHMARK_KIND,
                   simulated=True, description="Placeholder questions for benchmarks; not exam content.")
    records, images = synthetic_study_items(study, items, seed)
    with tempfile.TemporaryDirectory(prefix="eduart-synthetic-study-") as tmp:
        for rel, data in images.items():
            target = Path(tmp) / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        upsert_items(store, records, dataset, "simulate", images_root=tmp)
    simulate_study(store, dataset, seed, synthetic_models(models, seed))
    return dataset

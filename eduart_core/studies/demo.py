"""Building the study demos into a store: the scenes, the items, and the simulated runs.

Why one transaction per demo: the runs of all eleven simulated models on one demo (a few thousand
responses) are parsed and scored by the store in one bulk call, which keeps the first-start build
short; run ids are derived from dataset, model and seed, so building twice changes nothing.
"""
from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from ..store import Store
from ..vocab import DEFAULT_CONDITION, DEMO_KIND, DEMO_MUSE_DATASET, DEMO_VQA_DATASET
from .muse import PIECES_FOLDER, Draft, build_muse_drafts, finish_records
from .respondents import STUDY_MODELS, StudyModel, model_params, respond
from .scenes import crop_piece, make_scenes, render_scene, scene_attributes
from .vqa import SCENES_FOLDER, build_vqa_items, scene_file

Progress = Callable[[str], None]
STUDY_SEED = 2025
VQA_SCENES = 16
VQA_TITLE = "VQArt-style demo (generated scenes, simulated respondents)"
MUSE_SCENES = 16
MUSE_SEED = 2026
MUSE_TITLE = "MUSE-style demo (generated scenes, simulated respondents)"


def run_id_for(dataset: str, model: StudyModel, seed: int) -> str:
    return f"sim:{dataset}:{model.key}:{DEFAULT_CONDITION}:s{seed}"


def _in_turn_order(records: list[dict]) -> list[dict]:
    """Items by id, except that the turns of a dialogue follow one another in turn order."""
    return sorted(records, key=lambda r: (str(r.get("dialogue_id") or ""), int(r.get("turn") or 0),
                                          str(r["item_id"])))


def simulate_study(store: Store, dataset: str, seed: int, models: tuple[StudyModel, ...] = STUDY_MODELS,
                   respond_fn=respond) -> dict:
    """Every model answers every current item of ``dataset`` once (default condition); idempotent."""
    from ..scoring.responses import add_responses_con
    from ..store.runs import create_run_con, current_items_con, ensure_model_con, set_run_tokens_con
    from ..store.studies import set_model_access_con

    created, stored = 0, 0
    with store.transaction() as con:
        items = current_items_con(con, dataset)
        records = [{**record, "item_id": item_id} for item_id, (_v, record) in sorted(items.items())]
        for model in models:
            ensure_model_con(con, model.key, model.display_name, model.family, "simulated", None, simulated=True)
            set_model_access_con(con, model.key, model.access)
            run_id = run_id_for(dataset, model, seed)
            if not create_run_con(con, run_id, dataset, model.key, DEFAULT_CONDITION, "simulated",
                                  params=model_params(model, seed), status="completed", exist_ok=True):
                continue
            rows = []
            right_before: dict[str, bool] = {}  # dialogue id -> was the model's previous turn right?
            for record in _in_turn_order(records):
                dialogue = record.get("dialogue_id")
                raw, right = respond_fn(model, record, seed, right_before.get(dialogue) if dialogue else None)
                if dialogue:
                    right_before[dialogue] = right
                rows.append({"item_id": record["item_id"], "raw_text": raw, "request_key": record["item_id"],
                             "input_tokens": 300 + len(str(record.get("question_text") or "")) // 4,
                             "output_tokens": max(1, len(raw) // 4), "latency_s": 0.5, "image_sent": True})
            stored += add_responses_con(con, run_id, rows, items=items)
            set_run_tokens_con(con, run_id, sum(r["input_tokens"] for r in rows), sum(r["output_tokens"] for r in rows))
            created += 1
    return {"runs": created, "responses": stored}


#: Simulated scores of the demo panel on two made-up external benchmarks (labelled simulated by name).
EXTERNAL_BENCHMARKS = {"Sim general VQA (simulated)": 0.6, "Sim chart reading (simulated)": 1.2}
EXTERNAL_SOURCE = "demo (simulated)"


def simulated_external_scores(models: tuple[StudyModel, ...], seed: int):
    """What the demo panel 'scores' elsewhere: its ability plus benchmark-specific noise, in percent."""
    import math
    import random

    import pandas as pd

    rows = []
    for bench, noise in EXTERNAL_BENCHMARKS.items():
        rng = random.Random(f"external|{seed}|{bench}")
        for model in models:
            value = 100 / (1 + math.exp(-(model.ability + rng.gauss(0.0, noise))))
            rows.append({"model": model.display_name, "benchmark": bench, "score": round(value, 1)})
    return pd.DataFrame(rows)


def build_vqa_demo(store: Store, say: Progress) -> dict:
    """`demo-vqa`: 74 four-option questions in 7 dimensions (8 to 14 each) on 16 generated scenes, 11 simulated models."""
    from ..scoring.item_writes import upsert_items
    from ..store.runs import ensure_dataset

    say("demo: drawing scenes and writing the VQArt-style demo (demo-vqa)")
    ensure_dataset(store, DEMO_VQA_DATASET, VQA_TITLE, DEMO_KIND, simulated=True,
                   description="Original four-option questions in the seven VQArt-Bench reasoning dimensions on "
                               "generated scenes (answers right by construction), answered by simulated models.")
    scenes = make_scenes(VQA_SCENES, STUDY_SEED)
    with tempfile.TemporaryDirectory(prefix="eduart-scenes-") as tmp:
        root = Path(tmp)
        attributes = {}
        for scene in scenes:
            png = render_scene(scene)
            path = root / scene_file(scene)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(png)
            attributes[scene.scene_id] = scene_attributes(scene, png)
        records = build_vqa_items(scenes, attributes, STUDY_SEED)
        upsert_items(store, records, DEMO_VQA_DATASET, DEMO_KIND, images_root=root)
    say(f"demo: {len(records)} VQArt-style items; simulating {len(STUDY_MODELS)} models")
    sim = simulate_study(store, DEMO_VQA_DATASET, STUDY_SEED)
    from ..store.studies import write_external_scores

    write_external_scores(store, simulated_external_scores(STUDY_MODELS, STUDY_SEED), EXTERNAL_SOURCE)
    return {"vqa_items": len(records), "vqa_responses": sim["responses"]}


def build_muse_demo(store: Store, say: Progress) -> dict:
    """`demo-muse`: the twelve MUSE task kinds (5 questions each, a four-turn dialogue among them) on generated
    scenes, in every answer format they need, answered by the eleven simulated models."""
    from ..scoring.item_writes import upsert_items
    from ..store.runs import ensure_dataset

    say("demo: drawing scenes and writing the MUSE-style demo (demo-muse)")
    ensure_dataset(store, DEMO_MUSE_DATASET, MUSE_TITLE, DEMO_KIND, simulated=True,
                   description="Original questions of the twelve MUSE task kinds on generated scenes (answers right "
                               "by construction; counts, box options, three-part positions, entity/evidence pairs, "
                               "jigsaw pieces, free-text clues and causes, a four-turn dialogue), answered by "
                               "simulated models.")
    scenes = make_scenes(MUSE_SCENES, MUSE_SEED)
    drafts = build_muse_drafts(scenes, MUSE_SEED)
    with tempfile.TemporaryDirectory(prefix="eduart-muse-") as tmp:
        root = Path(tmp)
        rendered = {scene.scene_id: render_scene(scene) for scene in scenes}
        attributes = {scene.scene_id: scene_attributes(scene, rendered[scene.scene_id]) for scene in scenes}

        def write(rel: str, data: bytes) -> str:
            path = root / rel
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            return rel

        def image_of(draft: Draft) -> str:
            scene = draft.scene
            if draft.blank is None:
                return write(scene_file(scene), rendered[scene.scene_id])
            row, col = draft.blank
            return write(f"{SCENES_FOLDER}/{scene.scene_id}-gap-{row}{col}.png", render_scene(scene, blank=(row, col)))

        def piece_of(draft: Draft, option: str) -> str:
            scene, row, col, mirrored = draft.pieces[option]
            name = f"{PIECES_FOLDER}/{scene.scene_id}-{row}{col}{'-mirrored' if mirrored else ''}.png"
            return write(name, crop_piece(rendered[scene.scene_id], row, col, mirrored=mirrored))

        records = finish_records(drafts, image_of, piece_of, attributes)
        upsert_items(store, records, DEMO_MUSE_DATASET, DEMO_KIND, images_root=root)
    say(f"demo: {len(records)} MUSE-style items; simulating {len(STUDY_MODELS)} models (free text scored by "
        "sentence embeddings)")
    sim = simulate_study(store, DEMO_MUSE_DATASET, MUSE_SEED)
    return {"muse_items": len(records), "muse_responses": sim["responses"]}

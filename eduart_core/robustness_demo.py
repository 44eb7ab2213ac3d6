"""`demo-robust`: the VQArt-style demo items with rotation and image variants, answered by three
simulated models built to show what the invariance views find.

Why a dataset of its own: the existing demo's numbers are pinned by many tests and figures; a copy
of the `demo-vqa` items (the same images, stored once) carries the variants instead, so nothing
the other demo datasets show changes. The three models are labelled simulated in their names and
flags and behave by construction:

- *Sim Steady (simulated)* answers by the option's text (never by its position) and does worse
  without the image or on a small central crop;
- *Sim Position (simulated)* picks the first option most of the time, whatever it says (a strong
  position bias: its flip rate on rotations is high);
- *Sim Blind (simulated)* ignores the image: its answers are the same with or without it.

Building twice changes nothing (same items, same variants, run ids from dataset, model and seed).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from .store import Store
from .vocab import DEFAULT_CONDITION, DEMO_KIND, DEMO_VQA_DATASET, MCQ_TYPE

Progress = Callable[[str], None]
DEMO_ROBUST_DATASET = "demo-robust"
ROBUST_TITLE = "Robustness demo (VQArt-style items with option and image variants, simulated respondents)"
ROBUST_SEED = 4343
#: The variant kinds the demo makes and runs (rotations of the options; the image kinds).
ROBUST_KINDS = ("rotate", "no_image", "grayscale", "crop", "downscale", "mirror")


@dataclass(frozen=True)
class RobustModel:
    """A simulated respondent: probability of knowing the answer per variant kind ("source" for the
    item as written), whether it reads the image, and how often it just takes the first option."""

    key: str
    display_name: str
    know: dict[str, float]
    first_option_rate: float = 0.0


_STEADY = {"source": 0.8, "rotate": 0.8, "grayscale": 0.76, "mirror": 0.78, "downscale": 0.72, "crop": 0.55,
           "no_image": 0.3}
ROBUST_MODELS: tuple[RobustModel, ...] = (
    RobustModel("sim-robust-steady", "Sim Steady (simulated)", _STEADY),
    RobustModel("sim-robust-position", "Sim Position (simulated)", _STEADY, first_option_rate=0.75),
    RobustModel("sim-robust-blind", "Sim Blind (simulated)", {k: 0.5 for k in _STEADY}),
)


def _unit(*parts: object) -> float:
    """A deterministic draw in [0, 1) from its parts (no shared random state: order never matters)."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


def answer(model: RobustModel, record: dict, source: dict, seed: int) -> str:
    """The model's raw answer text to ``record`` (a source item or one of its variants).

    Knowing is drawn once per source item (so a variant is answered right exactly when the source
    would be at the variant's knowledge level); a wrong answer is the same distractor text on every
    variant; a position-biased draw takes the first option shown.
    """
    kind = (record.get("variant") or {}).get("kind", "source")
    choices = record.get("choices") or []
    key_ids = {str(a.get("id")) for a in record.get("answers") or []}
    if _unit(seed, model.key, record["item_id"], "first") < model.first_option_rate:
        chosen = str(choices[0]["id"])
    else:
        source_choices = source.get("choices") or []
        source_keys = {str(a.get("id")) for a in source.get("answers") or []}
        knows = _unit(seed, model.key, source["item_id"], "know") < model.know.get(kind, model.know["source"])
        wanted = [c["text"] for c in source_choices if (str(c["id"]) in source_keys) == knows]
        text = wanted[0] if wanted else source_choices[0]["text"]
        chosen = next((str(c["id"]) for c in choices if c.get("text") == text), str(choices[0]["id"]))
    if not key_ids:
        chosen = str(choices[0]["id"])
    return json.dumps({"Answers": [{"id": chosen}]})


def published_year(item_id: str, seed: int = ROBUST_SEED) -> str:
    """A made-up publication year (2018 to 2025) per item, so that the accuracy before and after a
    training cutoff (`show contamination_period --option cutoff=...`) has dates to read."""
    return str(2018 + int(_unit(seed, "published", item_id) * 8))


def _copy_items(store: Store) -> int:
    """The demo-vqa items (records and stored images) as the sources of demo-robust, each tagged with a
    made-up publication year."""
    from .items import check_item
    from .scoring.item_writes import store_prepared
    from .store.items import ImportReport, load_items, prepare_items

    frame = load_items(store, DEMO_VQA_DATASET)
    frame = frame[frame["variant_of"].isna() & (frame["type"] == MCQ_TYPE)]
    records = [{**r, "item_id": i, "tags": {**(r.get("tags") or {}), "published": published_year(i)}}
               for i, r in zip(frame["item_id"], frame["record"])]
    hashes = {i: h for i, h in zip(frame["item_id"], frame["image_hash"]) if h}
    report = ImportReport(dataset=DEMO_ROBUST_DATASET)
    with store.transaction() as con:
        prepared = prepare_items(con, store, records, None, report, image_hashes=hashes, check=check_item)
        store_prepared(con, prepared, DEMO_ROBUST_DATASET, DEMO_KIND, report, keep_invalid=False)
    return len(records)


def simulate_robust(store: Store, seed: int = ROBUST_SEED, models: tuple[RobustModel, ...] = ROBUST_MODELS) -> int:
    """Every model answers every current item (sources and variants) of demo-robust once; idempotent."""
    from .scoring.responses import add_responses_con
    from .store.runs import create_run_con, current_items_con, ensure_model_con, set_run_tokens_con

    stored = 0
    with store.transaction() as con:
        items = current_items_con(con, DEMO_ROBUST_DATASET)
        for model in models:
            ensure_model_con(con, model.key, model.display_name, "Sim Robustness", "simulated", None, simulated=True)
            run_id = f"sim:{DEMO_ROBUST_DATASET}:{model.key}:{DEFAULT_CONDITION}:s{seed}"
            params = {"simulated": True, "seed": seed, "know": model.know,
                      "first_option_rate": model.first_option_rate}
            if not create_run_con(con, run_id, DEMO_ROBUST_DATASET, model.key, DEFAULT_CONDITION, "simulated",
                                  params=params, status="completed", exist_ok=True):
                continue
            rows: list[dict] = []
            for item_id, (_version, record) in sorted(items.items()):
                record = {**record, "item_id": item_id}
                source_id = record.get("variant_of") or item_id
                source = {**items[source_id][1], "item_id": source_id} if source_id in items else record
                raw = answer(model, record, source, seed)
                rows.append({"item_id": item_id, "raw_text": raw, "request_key": item_id,
                             "input_tokens": 300 + len(str(record.get("question_text") or "")) // 4,
                             "output_tokens": max(1, len(raw) // 4), "latency_s": 0.5,
                             "image_sent": bool(record.get("has_image"))})
            stored += add_responses_con(con, run_id, rows, items=items)
            set_run_tokens_con(con, run_id, sum(r["input_tokens"] for r in rows),
                               sum(r["output_tokens"] for r in rows))
    return stored


def build_robustness_demo(store: Store, say: Progress) -> dict:
    """`demo-robust`: the demo-vqa option items, their rotation and image variants, three simulated models."""
    from .store.runs import ensure_dataset
    from .variants import make_variants

    if DEMO_VQA_DATASET not in _datasets(store):
        say("demo: no demo-vqa items to vary; the robustness demo is left out")
        return {}
    say("demo: the robustness demo (demo-robust): demo-vqa items with rotation and image variants")
    ensure_dataset(store, DEMO_ROBUST_DATASET, ROBUST_TITLE, DEMO_KIND, simulated=True,
                   description="The VQArt-style demo questions with every rotation of their options and perturbed or "
                               "missing images, answered by three simulated models built to be position-biased, "
                               "image-blind or steady.")
    sources = _copy_items(store)
    for kind in ROBUST_KINDS:
        make_variants(store, DEMO_ROBUST_DATASET, kind, origin=f"variants:{kind}", note="demo")
    responses = simulate_robust(store)
    return {"robust_items": sources, "robust_responses": responses}


def _datasets(store: Store) -> set[str]:
    with store.connect(read_only=True) as con:
        return {r[0] for r in con.execute("SELECT dataset FROM datasets").fetchall()}


__all__ = ["DEMO_ROBUST_DATASET", "ROBUST_KINDS", "ROBUST_MODELS", "RobustModel", "answer", "build_robustness_demo",
           "simulate_robust"]

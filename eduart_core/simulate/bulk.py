"""Writing simulated runs into the store, fast enough for 100 models x 10,000 items.

Why few, large transactions: the responses of a batch of models (about 50,000 rows, at least one
whole model with both conditions) are built in memory and handed to the store's bulk
``add_responses_con``, which parses and scores them with the real parser and scorer. A failure
leaves no half-written model behind, and re-running the same
simulation changes nothing (run ids are derived from dataset, model, condition and seed).
"""
from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from ..store import Store
from ..vocab import BENCHMARK_KIND, CONDITIONS
from .models import SIM_FAMILY, SIM_PROVIDER, SimModel
from .placeholders import PLACEHOLDER_IMAGE, placeholder_image, synthesise_items
from .respond import plan_items, simulate_run

Progress = Callable[[str], None]
# Responses written per transaction: big enough to amortise the connection, small enough for memory.
BATCH_RESPONSES = 50_000


def _quiet(_: str) -> None:
    return None


def run_id_for(dataset: str, model: SimModel, condition: str, seed: int) -> str:
    return f"sim:{dataset}:{model.key}:{condition}:s{seed}"


def model_params(model: SimModel, seed: int) -> dict:
    """What a page may show about a simulated run (the parameters it was generated from)."""
    return {"simulated": True, "seed": seed, "ability": model.ability,
            "format_offsets": model.format_offsets, "image_effect": model.image_effect,
            "motivation_shift": model.motivation_shift, "malformed_rate": model.malformed_rate,
            "multi_select_rate": model.multi_select_rate, "repeat_noise": model.repeat_noise}


def repeat_items(item_ids: Iterable[str], share: float, seed: int) -> list[str]:
    """The items a simulation asks again: a seeded ``share`` of them (at least one), sorted."""
    import random

    ids = sorted(item_ids)
    if not ids:
        return []
    k = max(1, round(share * len(ids)))
    return sorted(random.Random(f"repeat-items|{seed}").sample(ids, min(k, len(ids))))


def simulate_repeats_into_store(store: Store, dataset: str, models: list[SimModel], seed: int, repeats: int,
                                share: float, conditions: Iterable[str] = ("default",)) -> dict:
    """Repeats 1..``repeats``-1 of every model on a seeded ``share`` of the items (repeat 0 is the
    main run of `simulate_into_store`), one run per model x condition x repeat, like ``run --repeat``.

    Each repeat is a run with its repetition set (``sim:...:rep<k>``), so the stability views and the
    reproducibility table read it as they read a live repeat; idempotent like the main runs.
    """
    from ..scoring.responses import add_responses_con
    from ..store.runs import create_run_con, current_items_con, refresh_run_totals_con

    with store.connect(read_only=True) as con:
        items = current_items_con(con, dataset)
    chosen = set(repeat_items(items, share, seed))
    plans = []
    for item_id, (_version, record) in sorted(items.items()):
        if item_id in chosen:
            try:
                plans.extend(plan_items([{**record, "item_id": item_id}], seed))
            except (KeyError, TypeError, ValueError, AttributeError):
                continue
    created, stored = 0, 0
    with store.transaction() as con:  # one transaction, runs written completed: no per-run finishing step
        for model in models:
            for condition in conditions:
                for rep in range(1, repeats):
                    run_id = f"{run_id_for(dataset, model, condition, seed)}:rep{rep}"
                    if not create_run_con(con, run_id, dataset, model.key, condition, "simulated", repetition=rep,
                                          params={**model_params(model, seed), "condition": condition,
                                                  "repetition": rep, "items_repeated": len(plans)},
                                          status="completed", exist_ok=True):
                        continue
                    responses = simulate_run(model, plans, condition, seed, repetition=rep)
                    stored += add_responses_con(con, run_id, [r.to_row(request_key=r.item_id) for r in responses],
                                                items=items)
                    refresh_run_totals_con(con, run_id)
                    created += 1
    return {"repeat_runs": created, "repeat_responses": stored, "repeat_items": len(plans)}


def add_synthetic_items(store: Store, dataset: str, m: int, seed: int) -> int:
    """Create (or refresh) a simulated dataset of m placeholder items in the published mix."""
    from ..scoring.item_writes import upsert_items
    from ..store.runs import ensure_dataset

    ensure_dataset(store, dataset, f"Synthetic benchmark ({m} items, seed {seed})", BENCHMARK_KIND,
                   simulated=True, description="Placeholder items generated by `simulate --items`; "
                   "not exam content.")
    records = synthesise_items(m, seed)
    with tempfile.TemporaryDirectory(prefix="eduart-synthetic-") as tmp:
        image = Path(tmp) / PLACEHOLDER_IMAGE
        image.parent.mkdir(parents=True, exist_ok=True)
        image.write_bytes(placeholder_image())
        upsert_items(store, records, dataset, "simulate", images_root=tmp)
    return len(records)


def simulate_into_store(store: Store, dataset: str, models: list[SimModel], seed: int,
                        conditions: Iterable[str] = CONDITIONS, progress: Progress | None = None,
                        batch_responses: int = BATCH_RESPONSES) -> dict:
    """Simulate every model x condition on the current items of ``dataset`` and store the runs.

    ``batch_responses`` bounds the responses per transaction (at least one model per
    transaction); a small value gives one progress line per model, for the first-start screen.
    Returns counts: runs created, runs skipped (already present), responses stored, seconds.
    """
    from ..scoring.responses import add_responses_con
    from ..store.runs import create_run_con, current_items_con, ensure_model_con, finish_run

    say = progress or _quiet
    conditions = tuple(conditions)
    started = time.perf_counter()
    with store.connect(read_only=True) as con:
        items = current_items_con(con, dataset)
    if not items:
        from ..errors import UserError
        raise UserError(f"dataset {dataset!r} has no items to simulate on")
    records = []
    for item_id, (_version, record) in sorted(items.items()):
        records.append({**record, "item_id": item_id})
    plans = []
    for record in records:
        try:
            plans.extend(plan_items([record], seed))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue  # a defective imported record: no simulated answer rather than a crash
    created, skipped, stored = 0, 0, 0
    finished: list[tuple[str, dict]] = []
    per_model = max(1, len(plans) * len(conditions))
    batch_size = max(1, batch_responses // per_model)  # models per transaction
    for first in range(0, len(models), batch_size):
        batch = models[first:first + batch_size]
        with store.transaction() as con:
            for model in batch:
                ensure_model_con(con, model.key, model.display_name, SIM_FAMILY, SIM_PROVIDER, None,
                                 simulated=True)
                for condition in conditions:
                    run_id = run_id_for(dataset, model, condition, seed)
                    if not create_run_con(con, run_id, dataset, model.key, condition, "simulated",
                                          params={**model_params(model, seed), "condition": condition},
                                          exist_ok=True):
                        skipped += 1
                        continue
                    t0 = time.perf_counter()
                    responses = simulate_run(model, plans, condition, seed)
                    rows = [r.to_row(request_key=r.item_id) for r in responses]
                    stored += add_responses_con(con, run_id, rows, items=items)
                    created += 1
                    finished.append((run_id, {
                        "input_tokens": sum(r.input_tokens for r in responses),
                        "output_tokens": sum(r.output_tokens for r in responses),
                        "n_errors": 0, "cost_usd": 0.0,
                        "wall_seconds": round(time.perf_counter() - t0, 3),
                    }))
        for index, model in enumerate(batch, start=first + 1):
            say(f"simulated {model.display_name}: {index}/{len(models)} models")
    for run_id, totals in finished:
        finish_run(store, run_id, "completed", totals)
    return {"runs_created": created, "runs_skipped": skipped, "responses": stored,
            "items": len(plans), "seconds": round(time.perf_counter() - started, 2)}

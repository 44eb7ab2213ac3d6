"""`demo-rerun`: a second run of one simulated model beside its first, for the Compare runs section.

Why a dataset of its own: the main demo's numbers are pinned by many tests and figures, so a second
examinee there would move them. A copy of the demo items (the same plates, stored once) carries
three examinees instead, all simulated and labelled so:

- *Sim Atlas (simulated)*: the first run;
- *Sim Atlas run 2 (simulated)*: the same simulated model asked again offline with a changed
  prompt that hurts open completion (its ability there lowered) and a fifth of its answers drawn
  afresh (as a sampled model at a temperature above 0 would), the rest word for word as before;
- *Sim Borea (simulated)*: another model, so that N runs can be set against one baseline.

The second run is its own examinee (a model key of its own), so `show scores` lists both runs and
the Compare runs view reads them as it reads any two models. Building twice changes nothing (run
ids from dataset, model, condition and seed).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .simulate.models import SIM_FAMILY, SIM_PROVIDER, SimModel
from .store import Store
from .vocab import COMPLETION_OPEN_TYPE, CONDITIONS, DEFAULT_DATASET, DEMO_KIND

Progress = Callable[[str], None]
DEMO_RERUN_DATASET = "demo-rerun"
RERUN_TITLE = "Run diff demo (the demo items; a simulated model run twice, simulated respondents)"
RERUN_SEED = 4545
FIRST = SimModel("sim-rerun-atlas", "Sim Atlas (simulated)", 0.6, malformed_rate=0.02)
OTHER = SimModel("sim-rerun-borea", "Sim Borea (simulated)", 0.1, malformed_rate=0.03)
#: The second run: the first run's model with open completion made harder and a share of answers redrawn.
SECOND_KEY, SECOND_NAME = "sim-rerun-atlas-2", "Sim Atlas run 2 (simulated)"
SECOND_CHANGE: dict[str, Any] = {"format_offsets": {COMPLETION_OPEN_TYPE: -2.0}, "repeat_noise": 0.2}


def _copy_items(store: Store) -> int:
    """The main demo's current items (records and stored images) as the items of demo-rerun."""
    from .items import check_item
    from .scoring.item_writes import store_prepared
    from .store.items import ImportReport, load_items, prepare_items

    frame = load_items(store, DEFAULT_DATASET)
    records = [{**r, "item_id": i} for i, r in zip(frame["item_id"], frame["record"])]
    hashes = {i: h for i, h in zip(frame["item_id"], frame["image_hash"]) if h}
    report = ImportReport(dataset=DEMO_RERUN_DATASET)
    with store.transaction() as con:
        prepared = prepare_items(con, store, records, None, report, image_hashes=hashes, check=check_item)
        store_prepared(con, prepared, DEMO_RERUN_DATASET, DEMO_KIND, report, keep_invalid=False)
    return len(records)


def second_run(store: Store, seed: int = RERUN_SEED) -> int:
    """Ask the first run's model again (`SECOND_CHANGE`) and store it as its own examinee; idempotent.

    Drawn as a repeat of the first run (`simulate_run` with repetition 1): an answer not drawn afresh
    repeats the first run's draw, so only the changed format and the redrawn answers can differ."""
    from .scoring.responses import add_responses_con
    from .simulate.bulk import model_params
    from .simulate.respond import plan_items, simulate_run
    from .store.runs import create_run_con, current_items_con, ensure_model_con, refresh_run_totals_con

    changed = replace(FIRST, **SECOND_CHANGE)
    stored = 0
    with store.transaction() as con:
        items = current_items_con(con, DEMO_RERUN_DATASET)
        plans = plan_items([{**record, "item_id": i} for i, (_v, record) in sorted(items.items())], seed)
        ensure_model_con(con, SECOND_KEY, SECOND_NAME, SIM_FAMILY, SIM_PROVIDER, None, simulated=True)
        for condition in CONDITIONS:
            run_id = f"sim:{DEMO_RERUN_DATASET}:{SECOND_KEY}:{condition}:s{seed}"
            params = {**model_params(changed, seed), "condition": condition, "second_run_of": FIRST.key}
            if not create_run_con(con, run_id, DEMO_RERUN_DATASET, SECOND_KEY, condition, "simulated",
                                  params=params, status="completed", exist_ok=True):
                continue
            responses = simulate_run(changed, plans, condition, seed, repetition=1)
            stored += add_responses_con(con, run_id, [r.to_row(request_key=r.item_id) for r in responses],
                                        items=items)
            refresh_run_totals_con(con, run_id, "completed")
    return stored


def build_rerun_demo(store: Store, say: Progress) -> dict:
    """`demo-rerun`: the demo items answered by two simulated models, and a second run of one of them."""
    from .simulate import simulate_into_store
    from .store.runs import ensure_dataset

    say("demo: the run diff demo (demo-rerun): a simulated model run twice")
    ensure_dataset(store, DEMO_RERUN_DATASET, RERUN_TITLE, DEMO_KIND, simulated=True,
                   description="The demo items answered by two simulated models and by a second run of one of "
                               "them (a changed prompt that hurts open completion, a fifth of the answers redrawn).")
    n_items = _copy_items(store)
    sim = simulate_into_store(store, DEMO_RERUN_DATASET, [FIRST, OTHER], RERUN_SEED)
    return {"rerun_items": n_items, "rerun_responses": sim["responses"] + second_run(store)}


__all__ = ["DEMO_RERUN_DATASET", "FIRST", "OTHER", "RERUN_SEED", "SECOND_KEY", "SECOND_NAME", "build_rerun_demo",
           "second_run"]

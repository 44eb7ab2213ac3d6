"""The contamination probes of `demo-robust`, answered by its three simulated models and by a fourth
that has "seen" a tenth of the items.

Why in `demo-robust`: its items are the VQArt-style option items the probes apply to, and its
models (`robustness_demo`) are built never to have seen them, so they set the floor a probe hit is
read against. *Sim Leak (simulated)* is planted: the items it has seen (a tenth, drawn per item)
it answers right, and it writes their hidden text back on their probes most of the time; the
others it answers and probes like a model that never saw them. The views must tell the two sets
apart (`analysis.contamination.probe_auroc` against `leaked`).

Building twice changes nothing (same probes, run ids from dataset, model and seed; the probe
answers of the three earlier models are added to their runs only once).
"""
from __future__ import annotations

import json
from collections.abc import Callable

from .probes import BLANK, PROBE_KINDS, make_probes
from .robustness_demo import DEMO_ROBUST_DATASET, ROBUST_MODELS, ROBUST_SEED, _unit
from .store import Store
from .vocab import DEFAULT_CONDITION

Progress = Callable[[str], None]
LEAK_MODEL = "sim-robust-leak"
LEAK_NAME = "Sim Leak (simulated)"
LEAK_SHARE = 0.1        # of the source items, seen in training by the leak model
LEAK_RECALL = 0.9       # how often it writes a seen item's hidden text back on a probe
LEAK_KNOW = 0.6         # how often it answers an unseen item right
GUESS_HIT = 0.02        # how often a model that never saw an item writes its hidden text by chance


def leaked(item_id: str, seed: int = ROBUST_SEED, share: float = LEAK_SHARE) -> bool:
    """Whether the leak model has seen the source item (the simulation's truth)."""
    return _unit(seed, LEAK_MODEL, item_id, "seen") < share


def probe_answer(model_key: str, probe: dict, seed: int, seen: bool, recall: float = LEAK_RECALL) -> str:
    """A raw completion_open answer to a probe: the hidden text when the model recalls it, else a
    plausible wrong text (a shown option's, or a generic ending)."""
    hidden = str(probe["answers"][0]["description"])
    source = probe["variant_of"]
    if _unit(seed, model_key, source, probe["item_id"], "recall") < (recall if seen else GUESS_HIT):
        text = hidden
    else:
        kind = (probe.get("variant") or {}).get("kind")
        text = "of the painting shown in the exam" if kind == "complete_stem" else "a work of the same period"
    return json.dumps({"Answers": [{"id": BLANK, "text": text}]})


def source_answer(record: dict, seed: int, seen: bool) -> str:
    """The leak model's answer to a source item: right when seen, else right at ``LEAK_KNOW``."""
    choices = record.get("choices") or []
    keys = {str(a.get("id")) for a in record.get("answers") or [] if isinstance(a, dict)}
    right = seen or _unit(seed, LEAK_MODEL, record["item_id"], "know") < LEAK_KNOW
    pool = [str(c.get("id")) for c in choices if (str(c.get("id")) in keys) == right] or [str(choices[0].get("id"))]
    return json.dumps({"Answers": [{"id": pool[0]}]})


def simulate_probes(store: Store, seed: int = ROBUST_SEED) -> int:
    """The three robustness models answer every probe once; the leak model answers the sources and the probes."""
    from .scoring.responses import add_responses_con
    from .store.runs import create_run_con, current_items_con, ensure_model_con, set_run_tokens_con

    stored = 0
    with store.transaction() as con:
        items = current_items_con(con, DEMO_ROBUST_DATASET)
        probes = {i: {**r, "item_id": i} for i, (_v, r) in items.items()
                  if (r.get("variant") or {}).get("kind") in PROBE_KINDS}
        sources = {i: {**r, "item_id": i} for i, (_v, r) in items.items() if not r.get("variant_of")}
        ensure_model_con(con, LEAK_MODEL, LEAK_NAME, "Sim Robustness", "simulated", None, simulated=True)
        leak_run = f"sim:{DEMO_ROBUST_DATASET}:{LEAK_MODEL}:{DEFAULT_CONDITION}:s{seed}"
        plan: list[tuple[str, str, list[tuple[str, str]]]] = []
        if create_run_con(con, leak_run, DEMO_ROBUST_DATASET, LEAK_MODEL, DEFAULT_CONDITION, "simulated",
                          params={"simulated": True, "seed": seed, "leak_share": LEAK_SHARE, "recall": LEAK_RECALL},
                          status="completed", exist_ok=True):
            answers = [(i, source_answer(r, seed, leaked(i, seed))) for i, r in sorted(sources.items())]
            answers += [(i, probe_answer(LEAK_MODEL, p, seed, leaked(p["variant_of"], seed)))
                        for i, p in sorted(probes.items())]
            plan.append((leak_run, LEAK_MODEL, answers))
        for model in ROBUST_MODELS:
            run_id = f"sim:{DEMO_ROBUST_DATASET}:{model.key}:{DEFAULT_CONDITION}:s{seed}"
            asked = {r[0] for r in con.execute("SELECT item_id FROM responses WHERE run_id = ?", [run_id]).fetchall()}
            todo = [(i, probe_answer(model.key, p, seed, False)) for i, p in sorted(probes.items()) if i not in asked]
            if todo:
                plan.append((run_id, model.key, todo))
        for run_id, _model, answers in plan:
            rows = [{"item_id": i, "raw_text": raw, "request_key": i, "input_tokens": 200, "output_tokens": 12,
                     "latency_s": 0.4, "image_sent": bool(items[i][1].get("has_image"))} for i, raw in answers]
            stored += add_responses_con(con, run_id, rows, items=items)
            set_run_tokens_con(con, run_id, *con.execute(
                "SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0) FROM responses WHERE run_id = ?",
                [run_id]).fetchone())
    return stored


def build_contamination_demo(store: Store, say: Progress) -> dict:
    """The probes of every kind on the demo-robust sources, and their simulated answers."""
    from .robustness_demo import _datasets

    if DEMO_ROBUST_DATASET not in _datasets(store):
        return {}
    say("demo: contamination probes of demo-robust, and a simulated model that has seen a tenth of its items")
    made = 0
    for kind in PROBE_KINDS:
        made += len(make_probes(store, DEMO_ROBUST_DATASET, kind, note="demo").made)
    return {"probe_items": made, "probe_responses": simulate_probes(store)}


__all__ = ["LEAK_MODEL", "LEAK_NAME", "LEAK_SHARE", "build_contamination_demo", "leaked", "probe_answer",
           "simulate_probes", "source_answer"]

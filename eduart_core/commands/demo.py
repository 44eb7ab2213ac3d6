"""`demo` (build the built-in demo store) and `simulate` (simulated respondents at any scale)."""
from __future__ import annotations

import argparse
import time

from ..errors import UserError
from ..vocab import CONDITIONS, DEFAULT_DATASET


def _db_option(parser: argparse.ArgumentParser) -> None:
    from ..cli import add_db_option

    add_db_option(parser)


def register(sub) -> None:
    demo = sub.add_parser("demo", help="build the demo store: original items, plates, simulated runs, published results")
    _db_option(demo)
    demo.add_argument("--force", action="store_true",
                      help="discard the existing store (and its image/run folders) and rebuild it")
    demo.set_defaults(func=cmd_demo)

    sim = sub.add_parser("simulate", help="simulated respondents (2PL model) answering a dataset or synthetic items")
    _db_option(sim)
    sim.add_argument("--models", type=int, default=8, help="number of simulated models (default 8)")
    sim.add_argument("--items", type=int, default=None,
                     help="synthesise this many placeholder items in the published format mix first")
    sim.add_argument("--seed", type=int, default=0, help="random seed (same seed, same texts)")
    sim.add_argument("--dataset", default=None,
                     help="dataset to answer (default: 'synthetic-<items>-s<seed>' with --items, else 'demo')")
    sim.add_argument("--conditions", default="default,motivation",
                     help="comma-separated conditions (default: default,motivation)")
    sim.set_defaults(func=cmd_simulate)


def _print(line: str) -> None:
    print(line, flush=True)


def cmd_demo(args) -> int:
    from ..demo import build_demo
    from ..store import Store

    summary = build_demo(Store(args.db), force=args.force, progress=_print)
    studies = ""
    if "vqa_items" in summary or "muse_items" in summary:
        studies = (f"; studies: {summary.get('vqa_items', 0)} VQArt-style and {summary.get('muse_items', 0)} "
                   f"MUSE-style items, {summary.get('study_reference_cells', 0)} published cells")
    people = f", a simulated panel of {summary['people']} people" if summary.get("people") else ""
    print(f"demo store ready: {summary['items']} items, {summary['runs']} simulated runs{people}, "
          f"{summary['reference_models']} reference models{studies} ({summary['seconds']} s)")
    return 0


def cmd_simulate(args) -> int:
    from ..simulate import add_synthetic_items, make_models, simulate_into_store
    from ..store import Store

    if args.models < 1:
        raise UserError("--models must be at least 1")
    if args.items is not None and args.items < 1:
        raise UserError("--items must be at least 1")
    conditions = [c.strip() for c in args.conditions.split(",") if c.strip()]
    bad = [c for c in conditions if c not in CONDITIONS]
    if bad or not conditions:
        raise UserError(f"--conditions: unknown condition(s) {', '.join(bad) or '(none)'}; use {','.join(CONDITIONS)}")
    store = Store(args.db)
    started = time.perf_counter()
    if args.items is not None:
        dataset = args.dataset or f"synthetic-{args.items}-s{args.seed}"
        n = add_synthetic_items(store, dataset, args.items, args.seed)
        _print(f"synthesised {n} items into dataset {dataset!r}")
    else:
        dataset = args.dataset or DEFAULT_DATASET
        if not store.exists():
            raise UserError(f"no store at {store.path}; run 'python -m eduart_core demo' or use --items")
    result = simulate_into_store(store, dataset, make_models(args.models, args.seed), args.seed,
                                 conditions=conditions, progress=_print)
    total = time.perf_counter() - started
    print(f"simulated {result['runs_created']} runs ({result['runs_skipped']} already present), "
          f"{result['responses']} responses on {result['items']} items in {total:.1f} s")
    return 0

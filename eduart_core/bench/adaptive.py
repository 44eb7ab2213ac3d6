"""`bench adaptive`: the next item in a big bank, timed; and the adaptive test's simulated accuracy.

Speed target: choosing the next item (maximum information at the current EAP, content balanced,
randomesque) in a 15,000-item bank under 20 ms, so that a person never waits for the next question;
timed as the median over every step of `--steps`-item simulated tests (`--repeat` tests; the
engine's one-off information table is timed apart). Accuracy (simulated, post-hoc: examinees answer
the whole bank once, the adaptive test reads its answers from those; `analysis.adaptive_sim`): on a
simulated bank of 200 items (PCM and Rasch mixed, four formats), 30 examinees to SE <= target:
items used (target <= 25% of the bank), Spearman with the full-exam abilities (target >= 0.95); with
--max-items at 10% of the bank, in how many of 100 panels of 8 examinees the adaptive ranking keeps
the full exam's tie groups (target >= 90%): Holm-corrected pairwise z tests as on the leaderboard, and
"kept" means the adaptive groups only merge the full exam's (no order claimed that it does not carry). ``--db PATH`` runs the same on a stored bank version.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

BANK_ITEMS, TARGET_MS = 15_000, 20.0


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def time_choice(n_items: int, steps: int, repeat: int, balance: str) -> tuple[float, float]:
    """(median ms per choice over every step of ``repeat`` simulated tests, seconds to build the engine)."""
    import numpy as np

    from ..analysis.adaptive import Engine, Session, simulate_levels
    from ..analysis.adaptive_sim import simulated_bank

    bank = simulated_bank(n_items, seed=3)
    start = time.perf_counter()
    engine = Engine(bank, balance=balance)
    built = time.perf_counter() - start
    rng = np.random.default_rng(5)
    times = []
    for r in range(repeat):
        levels = simulate_levels(bank, rng.normal(0.0, 1.0, 1), rng)[0]
        session = Session(engine, 0.01, steps, f"bench/{r}")
        while True:
            t0 = time.perf_counter()
            item = session.next_item()
            times.append(time.perf_counter() - t0)
            if item is None:
                break
            session.record(item, int(levels[session.index[item]]))
    return 1000 * statistics.median(times), built


def _engine(args):
    from ..analysis.adaptive import Engine
    from ..analysis.adaptive_sim import simulated_bank

    if not args.db:
        return Engine(simulated_bank(200, seed=0), balance=args.balance), "simulated bank of 200 items"
    from ..runner.adaptive import prepare
    from ..store import Store

    setup = prepare(Store(args.db), args.dataset or "demo", {"bank": args.bank, "target_se": args.target_se,
                                                           "balance": args.balance})
    return setup.engine, f"{setup.dataset} bank version {setup.version}"


def main(args: argparse.Namespace) -> int:
    from ..analysis.adaptive_sim import efficiency, tie_study

    print(f"load average: {_load()}")
    for k in range(args.repeat):
        ms, built = time_choice(args.items, args.steps, 3, args.balance)
        print(f"next item in a {args.items:,}-item bank: median {ms:.2f} ms per choice over 3 tests of {args.steps} "
              f"items (target < {TARGET_MS:.0f} ms); information table built in {built:.2f} s (run {k + 1})")
    if args.examinees:
        engine, what = _engine(args)
        n = len(engine.bank)
        start = time.perf_counter()
        found = efficiency(engine, args.examinees, args.target_se, seed=args.seed)
        cap = max(1, round(0.10 * n))
        ties = tie_study(engine, cap, simulations=args.panels, seed=args.seed, target_se=args.target_se)
        print(f"{what} (simulated examinees, {engine.rules}):")
        print(f"  {found.n_examinees} examinees to SE <= {args.target_se}: {found.reached} reached it; mean "
              f"{found.mean_items:.1f} items = {100 * found.share_items:.1f}% of {n} (target <= 25%), most "
              f"{found.max_items_used}; Spearman with the full-exam abilities {found.spearman:.3f} (target >= 0.95)")
        print(f"  --max-items {cap} (10%), {ties.simulations} panels of 8: tie groups (Holm-corrected, as on the "
              f"leaderboard) kept, the adaptive groups only merging the full exam's, in {ties.groups_kept} (target >= "
              f"90%); with uncorrected pairwise tests in {ties.groups_kept_uncorrected}; no two examinees of different "
              f"full-exam groups ordered against them in {ties.order_kept}; groups per panel "
              f"{ties.mean_full_groups:.2f} full, {ties.mean_adaptive_groups:.2f} adaptive "
              f"({time.perf_counter() - start:.0f} s)")
    print(f"load average: {_load()}")
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser(
        "adaptive", help="time the next adaptive item in a 15,000-item bank; simulate adaptive accuracy",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=BANK_ITEMS, help=f"bank size to time (default {BANK_ITEMS})")
    parser.add_argument("--steps", type=int, default=40, help="items per timed test (default 40)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs, each a median over 3 tests")
    parser.add_argument("--balance", choices=("none", "formats"), default="formats")
    parser.add_argument("--examinees", type=int, default=30, help="simulated examinees (0: time only)")
    parser.add_argument("--panels", type=int, default=100, help="panels of 8 for the tie groups")
    parser.add_argument("--target-se", type=float, default=0.30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db", default=None, help="simulate on a stored bank version instead")
    parser.add_argument("--dataset", default=None, help="with --db (default demo)")
    parser.add_argument("--bank", type=int, default=1, help="with --db: the bank version (default 1)")
    parser.set_defaults(func=main)

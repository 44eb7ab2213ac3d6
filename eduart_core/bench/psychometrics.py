"""`bench psychometrics`: IRT fits at the published scale and at a large one, plus DIF.

Targets: Rasch at 871 items x 24 examinees (12 models x 2 conditions) under 2 s; the
exploratory 2PL at that size under 10 s; Rasch at 10,000 items x 200 examinees (100 models x 2
conditions) under 60 s and under 2 GB.

Each fit is the whole library call a view makes (`analysis.irt.fit_irt`: response matrix, fit,
standard errors, EAP abilities) on the synthetic long frame (`eduart_core.simulate.score_frames`, the
published format mix with partial credit, dichotomised at 0.5). Each scale runs in a fresh
child process, so its peak memory (the child's maximum resident set, synthetic frame included)
is that scale's alone. Every time is the median of --repeat runs; CPU seconds (the child, all
threads) are printed beside wall seconds because the machine is shared.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import time

PUBLISHED = (12, 871)
LARGE = (100, 10_000)
TARGETS = {"rasch 12x871": 2.0, "2pl 12x871": 10.0, "dif 12x871": None, "rasch 100x10000": 60.0}


def _time(call, repeat: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        call()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def _scale(models: int, items: int, calls: tuple[str, ...], repeat: int, seed: int) -> dict:
    """Run in a child: time each call at one scale; report the child's peak memory."""
    from ..analysis.dif import dif_analysis
    from ..analysis.irt import fit_irt
    from ..simulate.score_frames import synthetic_scores
    from ..vocab import IRT_2PL, IRT_RASCH

    frame = synthetic_scores(models, items, seed=seed)
    work = {"rasch": lambda: fit_irt(frame, IRT_RASCH), "2pl": lambda: fit_irt(frame, IRT_2PL),
            "dif": lambda: dif_analysis(frame)}
    fit = fit_irt(frame, IRT_RASCH)
    out = {name: _time(work[name], repeat) for name in calls}
    out["_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["_fit"] = (fit.n_examinees, fit.n_items_fitted, fit.se_method)
    return out


def main(args: argparse.Namespace) -> int:
    scales = [(PUBLISHED, ("rasch", "2pl", "dif"))] + ([] if args.quick else [(LARGE, ("rasch",))])
    print(f"bench psychometrics: median of {args.repeat} runs per fit; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    print(f"{'fit':<20}{'wall s':>9}{'CPU s':>9}{'target s':>10}{'peak MB':>10}  fitted")
    ctx = multiprocessing.get_context("spawn")
    for (models, items), calls in scales:
        with ctx.Pool(1) as pool:
            result = pool.apply(_scale, (models, items, calls, args.repeat, args.seed))
        n_ex, n_fit, se = result["_fit"]
        for name in calls:
            wall, cpu = result[name]
            key = f"{name} {models}x{items}"
            target = TARGETS.get(key)
            print(f"{key:<20}{wall:>9.2f}{cpu:>9.2f}{(f'{target:.0f}' if target else '-'):>10}"
                  f"{result['_peak_mb']:>10.0f}  {n_ex} examinees x {n_fit} informative items; SEs: {se}", flush=True)
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser(
        "psychometrics", help="time IRT fits (Rasch, 2PL) and DIF at the published and a large scale",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per fit (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="the published scale only")
    parser.set_defaults(func=main)

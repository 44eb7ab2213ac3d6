"""`bench analysis`: time every analysis function and the full suite on synthetic scores.

Targets: the full suite at published scale (12 models x 871 items x 2 conditions) in
under 2 s; at 100 models x 10,000 items x 2 conditions (2 million rows) in under 60 s and under
4 GB. `--growth` runs both scales and prints the ratio. Peak memory is the process high-water
mark (resource.getrusage ru_maxrss), which includes building the synthetic frame.
"""
from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import load

if TYPE_CHECKING:  # heavy imports wait until a benchmark runs, so the CLI starts fast
    import pandas as pd

PUBLISHED = (12, 871)
LARGE = (100, 10_000)


def suite(df: pd.DataFrame, paper: pd.DataFrame) -> dict[str, Callable[[], object]]:
    """Every public analysis call a page or report makes, by name."""
    from .. import analysis as A  # deferred: the CLI imports every bench module to build `bench --help`
    return {
        "type_scores": lambda: A.type_scores(df),
        "macro_scores": lambda: A.macro_scores(df),
        "leaderboard": lambda: A.leaderboard(df),
        "item_statistics": lambda: A.item_statistics(df),
        "item_statistics_summary": lambda: A.item_statistics_summary(df),
        "reliability": lambda: A.reliability(df),
        "logistic_regression": lambda: A.logistic_regression(df),
        "logistic_regression(item)": lambda: A.logistic_regression(df, cluster="item"),
        "motivation_effect": lambda: A.motivation_effect(df),
        "motivation_by_type": lambda: A.motivation_by_type(df),
        "motivation_by_model_type": lambda: A.motivation_by_model_type(df),
        "image_effect": lambda: A.image_effect(df),
        "format_spread": lambda: A.format_spread(df),
        "profile_impact": lambda: A.profile_impact(df, paper),
    }


def _median_seconds(call: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_rss_mb() -> float:
    """Process high-water resident memory in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(models: int, items: int, repeat: int, seed: int = 0, out=sys.stdout) -> float:
    """Print the per-function table for one scale; return the full-suite median in seconds."""
    start = time.perf_counter()
    from ..simulate.score_frames import synthetic_scores  # deferred, timed: part of building the frame

    df = synthetic_scores(models, items, seed=seed)
    paper = df.assign(score=df["score"].round())  # a second profile that differs on partial credit
    built = time.perf_counter() - start
    print(f"\n{models} models x {items} items x 2 conditions = {len(df):,} rows "
          f"(synthetic frame built in {built:.2f} s)", file=out)
    calls = suite(df, paper)
    print(f"{'function':<28}{'median s':>10}", file=out)
    for name, call in calls.items():
        print(f"{name:<28}{_median_seconds(call, repeat):>10.3f}", file=out, flush=True)
    total = _median_seconds(lambda: [c() for c in calls.values()], repeat)
    print(f"{'FULL SUITE':<28}{total:>10.3f}   (median of {repeat})", file=out)
    print(f"peak memory (process max RSS): {peak_rss_mb():,.0f} MB", file=out, flush=True)
    return total


def main(args: argparse.Namespace) -> int:
    if args.study:  # the VQArt-Bench / MUSE study analyses and their page (it drives the Tasks page)
        return load("studies").main(args)
    scales = [PUBLISHED, LARGE] if args.growth else [(args.models, args.items)]
    totals = [run(m, i, args.repeat, args.seed) for m, i in scales]
    if args.growth:
        rows = [m * i * 2 for m, i in scales]
        print(f"\ngrowth: {rows[1] / rows[0]:.0f}x rows -> {totals[1] / totals[0]:.1f}x time "
              f"({totals[0]:.2f} s -> {totals[1]:.2f} s)")
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser(
        "analysis", help="time the analysis functions on synthetic scores",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=PUBLISHED[0], help="default: 12")
    parser.add_argument("--items", type=int, default=PUBLISHED[1], help="default: 871")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per function (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--growth", action="store_true",
                        help="run 12x871 and 100x10000 and print the growth ratio")
    parser.add_argument("--db", default=None, help="with --study: a bench store to reuse (built there when missing)")
    parser.add_argument("--study", choices=("vqa", "muse"), default=None,
                        help="time the study analyses and the Tasks page instead (e.g. --study muse --models 30 "
                             "--items 2400, --study vqa --models 14 --items 14463)")
    parser.set_defaults(func=main)

"""`bench ranking`: the leaderboard with intervals, rank intervals and tie groups, timed; and its error rates.

Speed target: `show leaderboard`'s computation at 50 models x 5,000 items x 3 repeats under 2 s
(median of 3). The timed call is what the view does after reading the store: average each
model's repeats per item, then `analysis.leaderboard` (macro, micro, multiple choice, and the
ranking: cluster-robust macro intervals, every pair's paired t test with Holm, possible ranks,
tie groups) on a synthetic frame (`simulate.score_frames`, one image per three items).
``--db PATH`` times `views.leaderboard` on a stored dataset instead (cold caches).

Error rates (``--panels N``, N panels each; `simulate.ranking_panels` says how panels are made):
null panels (8 models of one true accuracy, 120 items, 7 formats, 3 repeats): share with two
models in different tie groups (target <= 5%); gap panels (300 items, true 10-point gap between
the first and last model): share separated (target >= 80%); coverage of the macro interval over
120-item panels (target 93-97%).
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas loads with the benchmark, not with `bench --help`
    import pandas as pd

MODELS, ITEMS, REPEATS = 50, 5000, 3
TARGET_S = 2.0


def synthetic_repeats(models: int, items: int, repeats: int, seed: int = 0):
    """A long frame with ``repeats`` rows per model x item (one condition) and an image per three items."""
    import numpy as np

    from ..simulate.score_frames import synthetic_scores

    base = synthetic_scores(models, items, seed=seed, conditions=("default",), categorical=True)
    rng = np.random.default_rng(seed)
    parts = []
    for k in range(repeats):  # each repeat flips about 8% of the answers: run-to-run noise
        flip = rng.random(len(base)) < 0.08
        score = np.where(flip, 1.0 - base["score"].to_numpy(), base["score"].to_numpy())
        parts.append(base.assign(score=score, repeat=k))
    import pandas as pd

    frame = pd.concat(parts, ignore_index=True)
    codes = pd.factorize(frame["item_id"])[0]
    return frame.assign(cluster=codes // 3)


def leaderboard_call(frame):
    """What `show leaderboard` computes once the rows are read: repeats averaged per item, then the board."""
    from .. import analysis

    keys = ["model", "condition", "item_id", "type", "cluster"]
    averaged = frame.groupby(keys, sort=False, observed=True)["score"].mean().reset_index()
    return analysis.leaderboard(averaged)


def _median(call: Callable[[], pd.DataFrame], repeat: int) -> tuple[float, pd.DataFrame]:
    """Median seconds of ``repeat`` calls (at least one) and the last call's table."""
    times: list[float] = []
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(args: argparse.Namespace) -> int:
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.db:
        from .. import views
        from ..selection import Selection

        src = views.Source.of(args.db)
        sel = Selection(dataset=args.dataset) if args.dataset else Selection()

        def cold():
            views.clear_caches()
            return views.leaderboard(src, sel)

        seconds, board = _median(cold, args.repeat)
        print(f"views.leaderboard on {args.db} ({len(board)} models): median {seconds:.3f} s of {args.repeat}")
    else:
        frame = synthetic_repeats(args.models, args.items, args.repeats, args.seed)
        seconds, board = _median(lambda: leaderboard_call(frame), args.repeat)
        groups = int(board["tie_group"].max())
        print(f"{args.models} models x {args.items} items x {args.repeats} repeats = {len(frame):,} rows: "
              f"leaderboard with intervals, ranks and tie groups median {seconds:.3f} s of {args.repeat} "
              f"(target < {TARGET_S} s); {groups} tie groups, first group of {int((board['tie_group'] == 1).sum())}")
    if args.panels:
        from ..simulate import ranking_panels as panels

        start = time.perf_counter()
        null = panels.null_rate(args.panels)
        gap = panels.gap_power(args.panels)
        first, every = panels.coverage(args.panels)
        print(f"{args.panels} panels each ({time.perf_counter() - start:.0f} s): null panels with any separation "
              f"{100 * null:.1f}% (target <= 5%); 10-point gap separated {100 * gap:.1f}% (target >= 80%); "
              f"macro interval coverage {100 * first:.1f}% (first model), {100 * every:.1f}% (every model) "
              "(target 93-97%)")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser(
        "ranking", help="time the leaderboard with intervals, ranks and tie groups; check its error rates",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=MODELS, help=f"default: {MODELS}")
    parser.add_argument("--items", type=int, default=ITEMS, help=f"default: {ITEMS}")
    parser.add_argument("--repeats", type=int, default=REPEATS, help=f"answers per model and item (default {REPEATS})")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--panels", type=int, default=0,
                        help="also simulate N null, gap and coverage panels (1000/300/500 for the issue's targets)")
    parser.add_argument("--db", default=None, help="time views.leaderboard on this store instead of a synthetic frame")
    parser.add_argument("--dataset", default=None, help="with --db: the dataset (default: the selection's default)")
    parser.set_defaults(func=main)

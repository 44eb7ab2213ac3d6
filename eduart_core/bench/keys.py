"""`bench keys`: how often the key auditor finds planted wrong keys (simulated banks).

Target: with 5% of the keys of a 300-item bank planted wrong and 12 examinees, recall
>= 80% among the top 10% of items ranked by the combined signal, median of 20 seeds; precision is
reported beside it (at most 50% here: 15 planted items in a top of 30). The banks are simulated
(`simulate.wrong_keys` says how), so the numbers describe the auditor on that model of answering.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

TARGET_RECALL = 0.80


def main(args: argparse.Namespace) -> int:
    from ..errors import UserError
    from ..simulate.wrong_keys import measure

    if args.seeds < 1 or args.items < 20 or args.examinees < 3 or not 0 < args.wrong < 1:
        raise UserError("bench keys needs --seeds >= 1, --items >= 20, --examinees >= 3 and 0 < --wrong < 1")

    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    start = time.perf_counter()
    result = measure(args.seeds, args.seed, n_items=args.items, n_examinees=args.examinees,
                     wrong_share=args.wrong, ability_sd=args.ability_sd)
    seconds = time.perf_counter() - start
    recalls = [r["recall"] for r in result["runs"]]
    planted = result["runs"][0]["planted"] if result["runs"] else 0
    top = result["runs"][0]["top"] if result["runs"] else 0
    print(f"simulated banks: {args.items} four-option items, {args.examinees} examinees (abilities N(0, "
          f"{args.ability_sd:g})), {planted} planted wrong keys ({args.wrong:.0%}); top {top} by the combined signal")
    quartiles = statistics.quantiles(recalls, n=4) if len(recalls) > 1 else recalls * 3
    print(f"recall median {result['recall']:.1%} of {args.seeds} seeds (target >= {TARGET_RECALL:.0%}; range "
          f"{min(recalls):.1%}-{max(recalls):.1%}, quartiles {quartiles[0]:.1%}-{quartiles[2]:.1%}); "
          f"precision median {result['precision']:.1%} "
          f"(at most {min(1, planted / max(top, 1)):.0%} here); {seconds:.0f} s "
          f"({seconds / max(args.seeds, 1):.1f} s per bank)")
    print("each signal ranking alone, recall median: " + ", ".join(f"{name} {value:.1%}"
                                                                  for name, value in result["alone"].items()))
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser("keys", help="recall and precision of the key auditor on banks with planted wrong keys",
                                  description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=20, help="simulated banks (median over them; default 20)")
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--items", type=int, default=300, help="items per bank (default 300)")
    parser.add_argument("--examinees", type=int, default=12, help="examinees (default 12)")
    parser.add_argument("--wrong", type=float, default=0.05, help="share of keys planted wrong (default 0.05)")
    parser.add_argument("--ability-sd", type=float, default=1.0, help="SD of the abilities in logits (default 1)")
    parser.set_defaults(func=main)

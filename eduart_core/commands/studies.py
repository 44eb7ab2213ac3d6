"""`import-external FILE.csv`: scores of the same models on other benchmarks, to correlate with tasks."""
from __future__ import annotations

import sys

from ..errors import UserError

MAX_LISTED = 20


def cmd_import_external(args) -> int:
    from ..store import Store
    from ..studies.external import import_external

    store = Store(args.db)
    if not store.exists():
        raise UserError(f"no store at {store.path} (build one with `python -m eduart_core demo`)")
    result = import_external(store, args.file)
    print(f"external scores: {result['added']} added, {result['replaced']} replaced, "
          f"{result['benchmarks']} benchmark(s); `show external_correlations --dataset NAME` correlates them")
    if result["skipped"]:
        print(f"skipped {len(result['skipped'])} row(s):", file=sys.stderr)
        for shown, (where, reason) in enumerate(result["skipped"]):
            if shown == MAX_LISTED:
                print(f"  ... and {len(result['skipped']) - MAX_LISTED} more", file=sys.stderr)
                break
            print(f"  {where}: {reason}", file=sys.stderr)
        return 2
    return 0


def register(sub) -> None:
    from ..cli import add_db_option

    p = sub.add_parser("import-external", help="import scores of models on other benchmarks (model, benchmark, score)",
                       description="Read a CSV with the columns model, benchmark, score (one row per model and "
                                   "benchmark); bad rows are named and skipped (exit 2), good ones kept. Models "
                                   "are matched to the store's models by name when correlating.")
    p.add_argument("file", help="CSV file with columns model, benchmark, score")
    add_db_option(p)
    p.set_defaults(func=cmd_import_external)

"""`bench NAME`: performance benchmarks, one module per name in ``eduart_core.bench``."""
from __future__ import annotations

import importlib

#: Every benchmark, one module each in ``eduart_core.bench`` (imported only when the CLI is built).
BENCHES = ["analysis", "runner", "pages", "parsing", "scoring", "batch", "review", "psychometrics", "humans",
           "judges", "team", "import", "ranking", "keys", "adaptive", "variants", "capture", "extract"]
#: A bench whose name is a Python keyword lives in a module named otherwise.
MODULES = {"import": "imports"}


def register(sub) -> None:
    parser = sub.add_parser("bench", help=f"measure performance ({', '.join(BENCHES)})")
    bench_sub = parser.add_subparsers(dest="bench", metavar="NAME")
    for name in BENCHES:
        importlib.import_module(f"eduart_core.bench.{MODULES.get(name, name)}").register(bench_sub)
    parser.set_defaults(func=lambda args: parser.print_help() or 1)

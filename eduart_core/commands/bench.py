"""`bench NAME`: performance benchmarks, one module per name in ``eduart_core.bench``."""
from __future__ import annotations

import importlib

BENCHES = ["analysis", "runner", "pages"]


def register(sub) -> None:
    parser = sub.add_parser("bench", help="measure performance (analysis, runner, pages)")
    bench_sub = parser.add_subparsers(dest="bench", metavar="NAME")
    for name in BENCHES:
        module_name = f"eduart_core.bench.{name}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        module.register(bench_sub)
    parser.set_defaults(func=lambda args: parser.print_help() or 1)

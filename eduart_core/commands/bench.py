"""`bench NAME`: performance benchmarks, one module per name (``eduart_core.bench.load`` finds it)."""
from __future__ import annotations

from ..bench import load
from ..errors import UserError

#: Every benchmark, one module each in ``eduart_core.bench`` or, for those that drive the pages, the
#: checkout's ``benchmarks`` package (``bench.OUTSIDE``); imported only when the CLI is built.
BENCHES = ["analysis", "runner", "pages", "parsing", "scoring", "batch", "review", "psychometrics", "humans",
           "judges", "team", "import", "ranking", "keys", "adaptive", "variants", "capture", "extract"]
#: A bench whose name is a Python keyword lives in a module named otherwise.
MODULES = {"import": "imports"}


def register(sub) -> None:
    parser = sub.add_parser("bench", help=f"measure performance ({', '.join(BENCHES)})")
    bench_sub = parser.add_subparsers(dest="bench", metavar="NAME")
    for name in BENCHES:
        try:
            load(MODULES.get(name, name)).register(bench_sub)
        except UserError as exc:  # a page benchmark outside the checkout: say so when it is asked for
            _unavailable(bench_sub, name, str(exc))
    parser.set_defaults(func=lambda args: parser.print_help() or 1)


def _unavailable(bench_sub, name: str, reason: str) -> None:
    def refuse(args) -> int:
        raise UserError(reason)

    bench_sub.add_parser(name, help=f"(not here: {reason})").set_defaults(func=refuse)

"""Performance benchmarks: one module per `bench NAME` (``commands.bench.BENCHES`` lists the names).

The library's own benchmarks are modules of this package. Those that drive the app's pages with
Streamlit's test harness (AppTest) need the app and Streamlit, so they live in the checkout's
top-level ``benchmarks`` package, outside the library (which never imports Streamlit); ``OUTSIDE``
names their modules and ``load`` finds them by module path, so `bench NAME` stays one registry.
"""
from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import UserError

#: Benchmark modules outside the library (they drive the pages), by module name.
OUTSIDE = {"pages": "benchmarks.pages", "review": "benchmarks.review", "team": "benchmarks.team",
           "studies": "benchmarks.studies"}


def load(module: str) -> ModuleType:
    """The benchmark module ``module`` (a name of this package or of ``OUTSIDE``).

    A page benchmark needs the checkout (app.py, pages/, benchmarks/) on the import path, as it is
    when the CLI runs from the checkout's folder; elsewhere it is one clear line, not a traceback."""
    path = OUTSIDE.get(module, f"{__name__}.{module}")
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError as exc:
        if module not in OUTSIDE or not (exc.name and path.startswith(exc.name)):
            raise
        raise UserError(f"this benchmark drives the app's pages ({path}): run it from the studio's folder "
                        "(the one with app.py and benchmarks/)") from None

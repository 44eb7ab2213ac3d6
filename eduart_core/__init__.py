"""EduArt Studio's library: items, store, scoring, runs, extraction and analysis.

Importable without Streamlit; the app's pages only call into it. From Python (a notebook, a
script), the numbers of every table and chart are one call away::

    from eduart_core import Source, Selection, run_view, VIEWS, scores

    src = Source.of("data/eduart.duckdb")            # the store at its current data version
    sel = Selection(dataset="demo", profile="strict")  # the sidebar's filters
    board = run_view("leaderboard", src, sel)          # the frame the Overview draws
    frame = scores(src, sel)                           # one row per model, condition and item

``VIEWS`` lists every view with its options (``python -m eduart_core show --list`` prints it).
These names, the view names, their options and their columns are the stable surface: they
change only with a major version, and a new column or option is added, never renamed. The rest
of the package (modules, helpers) may move between versions.

The names are looked up when first used, so ``import eduart_core.text`` stays as light as that
module and the package root imports none of its rooms.
"""
from __future__ import annotations

import importlib
from typing import Any

#: The stable Python API: name -> module that defines it.
API = {
    "Source": "eduart_core.views",
    "Selection": "eduart_core.selection",
    "run_view": "eduart_core.views",
    "VIEWS": "eduart_core.views",
    "scores": "eduart_core.api",
    "UserError": "eduart_core.errors",
}

__all__ = ["__version__", *API]


def _version() -> str:
    """The version of the installed distribution, else the one in the checkout's pyproject.toml."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("eduart-studio")
    except PackageNotFoundError:  # run from a checkout, not pip-installed
        import tomllib
        from pathlib import Path

        try:
            project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text("utf-8"))
            return str(project["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "0+unknown"


__version__ = _version()


def __getattr__(name: str) -> Any:
    if name in API:
        value = getattr(importlib.import_module(API[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'eduart_core' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *API})

"""`python -m eduart_core COMMAND`: one argparse tree assembled from the command modules.

Each module in ``eduart_core.commands`` owns its commands: it exposes
``register(subparsers)`` and sets ``func(args) -> int`` on each parser it adds. Errors the user
can act on (``UserError``, ``StoreError`` and friends) print as one line on stderr with a
non-zero exit; ``--debug`` shows the traceback instead.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from pathlib import Path

from .errors import UserError
from .store import StoreError, default_db_path, store_location

# Command modules in the order their commands appear in --help.
COMMAND_MODULES = [
    "eduart_core.commands.data",        # import-items, import-eduart, score, stats, export-scores
    "eduart_core.commands.demo",        # demo, simulate
    "eduart_core.commands.run",         # run
    "eduart_core.commands.extract",     # extract, review helpers
    "eduart_core.commands.review",      # review-status, review-import, review-export, review-round
    "eduart_core.commands.team",        # roles grant|revoke|list, team-trial
    "eduart_core.commands.studies",     # import-external
    "eduart_core.commands.show",        # show VIEW: the data behind every table and chart
    "eduart_core.commands.report",      # report
    "eduart_core.commands.storecopy",   # store-copy --from X --to Y
    "eduart_core.commands.judges",      # judge, grades-import, grades-export, grading-round, judge-gate
    "eduart_core.commands.bench",       # bench analysis|runner|pages
]


def db_argument(text: str) -> Path | str:
    """``--db``: a DuckDB file path, or a postgresql:// URL (a malformed URL is a usage error)."""
    try:
        return store_location(text)
    except StoreError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _default_store() -> str:
    try:
        return str(default_db_path())
    except StoreError as exc:
        return f"unusable ({exc})"


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """The --db option every command that touches the store shares."""
    parser.add_argument(
        "--db", type=db_argument, default=None,
        help=f"store: a DuckDB file or a postgresql:// URL (default: $EDUART_DATABASE_URL, $EDUART_DB or "
             f"data/eduart.duckdb; now {_default_store()})",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m eduart_core",
        description="EduArt Studio: art-history exam benchmark for multimodal language models.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # the room is not built yet
                continue
            raise
        module.register(sub)
    return parser


def configure_logging(debug: bool) -> None:
    """Library warnings go to stderr only when asked: a command's error stays one line.

    ``--debug`` shows everything; ``EDUART_LOG_LEVEL`` (e.g. WARNING, INFO) sets the level otherwise
    (default ERROR). The dashboard leaves logging to Streamlit's server log.
    """
    level = "DEBUG" if debug else os.environ.get("EDUART_LOG_LEVEL", "ERROR").upper()
    logging.basicConfig(level=level if level in logging.getLevelNamesMapping() else "ERROR",
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr, force=True)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.debug)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        return int(args.func(args) or 0)
    except (UserError, StoreError) as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # last resort: still one line unless --debug
        if args.debug:
            raise
        logging.getLogger(__name__).debug("unexpected error in %s", args.command, exc_info=True)
        print(f"error: {type(exc).__name__}: {exc} (run with --debug for details)", file=sys.stderr)
        return 1

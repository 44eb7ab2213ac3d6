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
from .pandas_mode import use_python_strings
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
    "eduart_core.commands.bank",        # bank (freeze an item bank version)
    "eduart_core.commands.errata",      # errata (create and apply errata releases)
    "eduart_core.commands.variants",    # variants (rotated options, perturbed images), probe
    "eduart_core.commands.capture",     # capture (exercise pages -> screenshots), exercise-site
    "eduart_core.commands.harness",     # import-harness, import-predictions
    "eduart_core.commands.cards",       # export-card, export-eee, import-card
    "eduart_core.commands.inspect_logs",  # import-inspect (Inspect AI logs; needs inspect-ai)
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


def add_actor_options(parser: argparse.ArgumentParser, by: str | None = None) -> None:
    """``--for NAME`` on every command that writes (the operator acts for NAME: both are recorded),
    and ``--by NAME`` where a command took a typed name before (single-machine stores only)."""
    parser.add_argument("--for", dest="acting_for", metavar="NAME",
                        help="record that the operator ($EDUART_USER or the login name) acts for NAME")
    if by is not None:
        parser.add_argument("--by", metavar="NAME", help=by + "; refused on a team store (use --for)")


def actor(args: argparse.Namespace, store):
    """Who acts for this command (``team.cli_identity``): the operator, for someone when --for says so."""
    from .team import cli_identity

    return cli_identity(store, getattr(args, "by", None), getattr(args, "acting_for", None))


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


def print_start_notices(args: argparse.Namespace) -> None:
    """Before a command on a store runs: an import that was interrupted (or still runs elsewhere),
    and how to finish it (``importers.unfinished``). Never stops the command: a store that cannot be
    read here is the command's own business."""
    if not hasattr(args, "db"):
        return
    from .importers.unfinished import notices
    from .store import Store

    try:
        lines = notices(Store(args.db, lock_timeout_s=0.5))
    except Exception as exc:  # a locked, missing or damaged store: the command itself says so
        logging.getLogger(__name__).debug("import notices not read: %s", exc)
        return
    for line in lines:
        print(line, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    use_python_strings()  # every table as the app computes it (eduart_core.pandas_mode)
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.debug)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    print_start_notices(args)
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

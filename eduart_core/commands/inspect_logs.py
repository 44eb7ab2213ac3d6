"""``import-inspect LOGS...``: Inspect AI evaluation logs in (``importers.inspect_import``).

Thin wrapper: parse arguments, import, print a summary; every skipped file or sample is one line
on stderr and the exit code is 2 when anything was skipped. Inspect itself (``inspect-ai``) is
needed only here: without it the command says how to install it, in one line.
"""
from __future__ import annotations

import argparse
import sys

from ..cli import add_db_option
from ..store import Store
from ..vocab import PROFILES


def _progress(report) -> None:
    print(f"import-inspect: {report.samples:,} sample(s) read, {report.responses_added:,} answer(s) stored, "
          f"{report.n_skipped:,} skipped", file=sys.stderr, flush=True)


def cmd_import_inspect(args: argparse.Namespace) -> int:
    from ..importers.inspect_import import import_inspect

    report = import_inspect(Store(args.db), args.logs, dataset=args.dataset, language=args.language,
                            progress=_progress, batch=args.batch)
    print(f"{report.files} log(s), {report.samples} sample(s) read: {len(report.items)} item(s) "
          f"({report.items_added} added, {report.items_updated} updated), {report.images_added} new image(s); "
          f"{report.responses_added} new answer(s) scored under {' and '.join(PROFILES)}; "
          f"{report.scores_stored} Inspect score(s) stored")
    if report.runs:
        print(f"runs: {', '.join(report.runs)}; models: {', '.join(report.models)}")
    if report.profiles:
        print(f"Inspect scorers as profiles: {', '.join(sorted(report.profiles))}")
    for scorer, count in sorted(report.unusable_scores.items()):
        print(f"warning: scorer {scorer}: {count} value(s) are not one number (a list or a dict of values) "
              "and were not stored", file=sys.stderr)
    if not report.n_skipped:
        return 0
    print(f"skipped {report.n_skipped} file(s) or sample(s); the rest was imported:", file=sys.stderr)
    for spot, reason in report.skipped:
        print(f"  {spot}: {reason}", file=sys.stderr)
    if report.n_skipped > len(report.skipped):
        print(f"  ... and {report.n_skipped - len(report.skipped)} more", file=sys.stderr)
    return 2


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import-inspect", help="import Inspect AI logs (.eval, .json; files or folders): items, "
                                              "answers scored by our formats, and Inspect's own scores")
    p.add_argument("logs", nargs="+", metavar="LOGS", help="Inspect log files or folders of them")
    p.add_argument("--dataset", help="dataset to import into (default: the log's task name)")
    p.add_argument("--language", default="en", help="ISO 639-1 code of the samples' language (default: en)")
    p.add_argument("--batch", type=int, default=2_000, help="samples written per transaction (default: 2000)")
    add_db_option(p)
    p.set_defaults(func=cmd_import_inspect)

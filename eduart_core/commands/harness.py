"""Harness commands: import-harness (lm-eval / lmms-eval samples), import-predictions (VLMEvalKit tables).

Thin wrappers: parse arguments, call ``eduart_core.importers``, print a short summary; every
skipped file, line or row is one line on stderr and the exit code is 2.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..cli import actor, add_actor_options, add_db_option
from ..errors import UserError
from ..store import Store
from ..vocab import PROFILES


def _skipped(skipped: list[tuple[str, str]], warnings: Sequence[str] = ()) -> int:
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    if not skipped:
        return 0
    print(f"skipped {len(skipped)} file(s), line(s) or row(s); the rest was imported:", file=sys.stderr)
    for spot, reason in skipped:
        print(f"  {spot}: {reason}", file=sys.stderr)
    return 2


def cmd_import_harness(args: argparse.Namespace) -> int:
    from ..importers.harness import import_harness

    store = Store(args.db)
    report = import_harness(store, args.paths, dataset=args.dataset, language=args.language, model=args.model,
                            actor=actor(args, store))
    if not report.datasets:
        _skipped(report.skipped)
        raise UserError("nothing imported: every file or sample was skipped (see the lines above)")
    items = report.items
    print(f"{report.files} file(s), {report.samples} sample(s): dataset(s) {', '.join(report.datasets)}; "
          f"{len(items.added)} item(s) added, {len(items.updated)} updated, {len(items.unchanged)} unchanged")
    print(f"{report.added} new answer(s), {report.unchanged} already stored, each scored under "
          f"{' and '.join(PROFILES)}; {report.recorded} harness score(s) under "
          f"{', '.join(report.profiles) or '(none)'}")
    print("models: " + ", ".join(report.models))
    return _skipped(report.skipped, report.warnings)


def cmd_import_predictions(args: argparse.Namespace) -> int:
    from ..importers.vlmeval_predictions import import_predictions

    store = Store(args.db)
    report = import_predictions(store, args.paths, dataset=args.dataset, model=args.model, actor=actor(args, store))
    if not report.models:
        _skipped(report.skipped)
        raise UserError("nothing imported: every table or row was skipped (see the lines above)")
    print(f"{report.files} table(s), {report.rows} row(s): {report.added} new answer(s), {report.unchanged} "
          f"already stored, each scored under {' and '.join(PROFILES)}; models: {', '.join(report.models)}")
    return _skipped(report.skipped)


def register(sub) -> None:
    p = sub.add_parser("import-harness", help="import lm-evaluation-harness / lmms-eval logged samples "
                       "(samples_*.jsonl): items, answers scored by our formats, the harness's metrics",
                       description="Reads --log_samples output as plain JSON (no torch, no harness needed): "
                                   "samples_<task>_<date>.jsonl (lm-eval) or <date>_samples_<task>.jsonl "
                                   "(lmms-eval), the model's name from the results JSON beside them. Each task "
                                   "is a dataset (or --dataset), each doc_id an item (multiple choice where "
                                   "options and gold are found, else open text against the target), each "
                                   "sample's metric a score under the profile harness:<metric>[,<filter>]. "
                                   "Bad lines and samples are skipped and named (exit 2); the rest is imported. "
                                   "Importing again adds nothing.")
    p.add_argument("paths", nargs="+", type=Path, metavar="FILE", help="samples files or folders holding them")
    p.add_argument("--dataset", default=None, help="one dataset for every task (item ids <task>/<doc_id>); "
                                                   "default: a dataset per task")
    p.add_argument("--language", default="en", metavar="CODE", help="ISO 639-1 language of the items (default en)")
    p.add_argument("--model", default=None, metavar="NAME", help="the model's key (default: from the results JSON)")
    add_actor_options(p)
    add_db_option(p)
    p.set_defaults(func=cmd_import_harness)

    p = sub.add_parser("import-predictions", help="import VLMEvalKit prediction tables (.xlsx, .tsv) as answers "
                       "to the items of an imported VLMEvalKit TSV",
                       description="Each row's prediction is the model's answer to the item whose id is the "
                                   "row's index in --dataset (imported from the benchmark's TSV with "
                                   "import-items); a row whose question differs from the item's is refused. "
                                   "Answers are scored under every built-in profile. Bad rows and tables are "
                                   "skipped and named (exit 2). Importing again adds nothing.")
    p.add_argument("paths", nargs="+", type=Path, metavar="TABLE", help="<model>_<benchmark>.xlsx or .tsv")
    p.add_argument("--dataset", required=True, help="the dataset the benchmark's TSV was imported into")
    p.add_argument("--model", default=None, metavar="NAME",
                   help="the model's key (default: the file name before _<benchmark>)")
    add_actor_options(p)
    add_db_option(p)
    p.set_defaults(func=cmd_import_predictions)

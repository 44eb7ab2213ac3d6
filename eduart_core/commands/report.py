"""`report`: write the stakeholder report as one self-contained HTML file."""
from __future__ import annotations

from ..errors import UserError
from ..vocab import CONDITIONS, DEFAULT_CONDITION, DEFAULT_DATASET, DEFAULT_PROFILE, PROFILES


def run(args) -> int:
    from ..report import write_report
    from ..store import Store

    store = Store(args.db)
    if not store.exists():
        raise UserError(f"no store at {store.path}: run `python -m eduart_core demo` or pass --db")
    size = write_report(str(store.path), args.out, profile=args.profile, dataset=args.dataset,
                        condition=args.condition)
    print(f"wrote {args.out} ({size / 1024:.0f} kB; opens offline)")
    return 0


def register(sub) -> None:
    from ..cli import add_db_option

    parser = sub.add_parser("report", help="write a self-contained HTML report (figures, findings, methods)")
    add_db_option(parser)
    parser.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE, help="scoring profile")
    parser.add_argument("--dataset", default=DEFAULT_DATASET, help=f"dataset to report on (default: {DEFAULT_DATASET})")
    parser.add_argument("--condition", choices=CONDITIONS, default=DEFAULT_CONDITION)
    parser.add_argument("--out", required=True, help="output HTML file")
    parser.set_defaults(func=run)

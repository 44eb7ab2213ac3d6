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
                        condition=args.condition, reference=parse_references(args.reference),
                        baselines=args.baselines)
    print(f"wrote {args.out} ({size / 1024:.0f} kB; opens offline)")
    return 0


#: `--reference NAME=VALUE` names -> the `regression` view's options.
REFERENCE_OPTIONS = {"model": "ref_model", "type": "ref_type", "language": "ref_language", "image": "ref_image"}


def parse_references(pairs: list[str]) -> dict[str, str]:
    """``model=Claude Opus 4.6`` / ``type=true_false`` / ``language=it`` / ``image=with`` -> view options."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or name not in REFERENCE_OPTIONS or not value:
            raise UserError(f"--reference {pair!r}: use NAME=VALUE with NAME one of {', '.join(REFERENCE_OPTIONS)}")
        out[REFERENCE_OPTIONS[name]] = value
    return out


def register(sub) -> None:
    from ..cli import add_db_option

    parser = sub.add_parser("report", help="write a self-contained HTML report (figures, findings, methods)")
    add_db_option(parser)
    parser.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE, help="scoring profile")
    parser.add_argument("--dataset", default=DEFAULT_DATASET, help=f"dataset to report on (default: {DEFAULT_DATASET})")
    parser.add_argument("--condition", choices=CONDITIONS, default=DEFAULT_CONDITION)
    parser.add_argument("--reference", action="append", default=[], metavar="NAME=VALUE",
                        help="regression reference level, NAME one of model, type, language, image (with|without); "
                             "repeatable (default: the published references where the data have them)")
    parser.add_argument("--baselines", action="store_true",
                        help="count baseline models (such as chance) as examinees (default: reference marks only)")
    parser.add_argument("--out", required=True, help="output HTML file")
    parser.set_defaults(func=run)

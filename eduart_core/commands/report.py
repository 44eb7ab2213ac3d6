"""`report`: write the stakeholder report as one self-contained HTML file."""
from __future__ import annotations

from ..errors import UserError
from ..vocab import DEFAULT_DATASET


def run(args) -> int:
    from ..report import write_report
    from ..selection import Selection
    from ..store import Store

    store = Store(args.db)
    if not store.exists():
        raise UserError(f"no store at {store.path}: run `python -m eduart_core demo` or pass --db")
    sel = Selection.from_args(args, dataset=args.dataset or DEFAULT_DATASET)  # the report's default dataset
    size = write_report(str(store.path), args.out, selection=sel, reference=parse_references(args.reference))
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
    from ..selection import Selection

    parser = sub.add_parser("report", help="write a self-contained HTML report (figures, findings, methods)")
    add_db_option(parser)
    Selection.add_arguments(parser)  # the sidebar's selection, as `show` takes it
    parser.add_argument("--reference", action="append", default=[], metavar="NAME=VALUE",
                        help="regression reference level, NAME one of model, type, language, image (with|without); "
                             "repeatable (default: the published references where the data have them)")
    parser.add_argument("--out", required=True, help="output HTML file")
    parser.set_defaults(func=run)

"""Card commands: export-card, export-eee, import-card (thin wrappers over `eduart_core.cards`)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import UserError
from ..vocab import DEFAULT_PROFILE


def _card(args: argparse.Namespace) -> dict:
    from ..cards.build import build_card
    from ..store import Store

    store = Store(args.db)
    if not store.exists():
        raise UserError(f"no store at {store.path}: run `python -m eduart_core demo` or pass --db")
    card = build_card(str(store.path), args.dataset, args.profile)
    if card["scoring"]["warning"]:  # numbers under a judge that has not passed: said here as `show` says it
        print(f"warning: {card['scoring']['warning']}", file=sys.stderr)
    return card


def _folder(path: Path) -> Path:
    if path.exists() and not path.is_dir():
        raise UserError(f"--out {path} is a file, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot make folder {path}: {exc.strerror or exc}") from None
    return path


def _json(value: dict) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, allow_nan=False) + "\n"


def cmd_export_card(args: argparse.Namespace) -> int:
    from ..cards.eee import slug
    from ..cards.page import render_page
    from ..fileio import atomic_write

    card = _card(args)
    out = _folder(args.out)
    stem = f"{slug(args.dataset)}.card"
    atomic_write(out / f"{stem}.json", _json(card))
    atomic_write(out / f"{stem}.html", render_page(card))
    print(f"wrote {out / (stem + '.json')} and {out / (stem + '.html')} ({len(card['models'])} model(s), "
          f"{len(card['scores']['rows'])} format score(s))")
    return 0


def cmd_export_eee(args: argparse.Namespace) -> int:
    from ..cards.eee import EEE_SCHEMA_VERSION, eee_logs
    from ..fileio import atomic_write

    logs = eee_logs(_card(args))
    if not logs:
        raise UserError(f"dataset {args.dataset!r} has no model with scores to export")
    out = _folder(args.out)
    for relative, log in logs:
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, _json(log))
    print(f"wrote {len(logs)} Every Eval Ever log(s) (schema {EEE_SCHEMA_VERSION}) under {out / 'data'}")
    return 0


def cmd_import_card(args: argparse.Namespace) -> int:
    from ..cards.reimport import import_card
    from ..cli import actor
    from ..store import Store

    store = Store(args.db)
    done = import_card(store, args.path, actor(args, store).columns(), dataset=args.dataset)
    print(f"dataset {done['dataset']}: {done['rows']} published format score(s) of {done['models']} model(s) "
          "stored (aggregates only)")
    return 0


def register(sub) -> None:
    from ..cli import add_actor_options, add_db_option

    for name, func, helptext, out in (
            ("export-card", cmd_export_card, "write a dataset's exam card: JSON and a readable HTML page", "."),
            ("export-eee", cmd_export_eee, "write a dataset's results as Every Eval Ever logs (one per model)",
             "eee")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("--dataset", required=True, help="the dataset")
        p.add_argument("--profile", default=DEFAULT_PROFILE,
                       help=f"scoring profile: strict, paper or a judge profile judge:JUDGE/RUBRIC "
                            f"(default: {DEFAULT_PROFILE})")
        p.add_argument("--out", type=Path, default=Path(out), metavar="DIR", help=f"output folder (default: {out})")
        add_db_option(p)
        p.set_defaults(func=func)

    p = sub.add_parser("import-card", help="store an exam card's results as a published (aggregates-only) dataset")
    p.add_argument("path", type=Path, metavar="CARD.json", help="a card written by export-card")
    p.add_argument("--dataset", default=None, help="dataset name in this store (default: the card's dataset)")
    add_actor_options(p)
    add_db_option(p)
    p.set_defaults(func=cmd_import_card)

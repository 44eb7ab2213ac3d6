"""`show VIEW`: the machine-readable twin of every table and chart on the pages.

Why: researchers script against the numbers, and a number in a script must be the number on the
page. `show` takes the sidebar's selection as flags, runs the same named view the page runs
(`eduart_core.views.VIEWS`) and prints it as JSON (a list of records, numbers unrounded) or CSV.
``--caption`` prints instead the caption the story figure of that view carries on its page and in
the report (`eduart_core.panels`): the same words, built from the same frame.
"""
from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np
import pandas as pd

from ..errors import UserError

FORMATS = ("json", "csv")


def register(sub) -> None:
    from ..cli import add_db_option
    from ..selection import Selection

    p = sub.add_parser("show", help="print the data behind a table or chart of the pages (JSON or CSV)",
                       description="Print one named view for a selection: the same rows and numbers the page "
                                   "draws. `show --list` lists the views and their options.")
    p.add_argument("view", nargs="?", help="view name (see --list)")
    p.add_argument("--list", action="store_true", help="list the views, one line each")
    p.add_argument("--format", choices=FORMATS, default="json", help="output format (default: json)")
    p.add_argument("--caption", action="store_true",
                   help="print the caption of the story figure drawn from this view (pages and report)")
    p.add_argument("--where", metavar="EXPR", default=None,
                   help='keep the rows an expression keeps, e.g. --where \'score < 0.5 and model ~ "Sim"\' '
                        "(the filter language: README, `show`)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="a view option, e.g. --option examinees=models or --option item=0042 (repeatable)")
    Selection.add_arguments(p)
    add_db_option(p)
    p.set_defaults(func=cmd_show)


def cmd_show(args: argparse.Namespace) -> int:
    from .. import views

    if args.list:
        for spec in views.VIEWS.values():
            opts = ", ".join(f"{k}={v!r}" for k, v in spec.options.items())
            print(f"{spec.name:26} {spec.summary}" + (f" [options: {opts}]" if opts else "")
                  + f" <- {spec.shows}")
        return 0
    if not args.view:
        raise UserError("name a view (`show --list` lists them)")
    if args.caption:
        if args.where:
            raise UserError("--where keeps rows of a view; --caption prints a sentence (use one or the other)")
        sys.stdout.write(caption(args) + "\n")
        return 0
    if args.where is not None:
        from .. import filterexpr

        filterexpr.parse(args.where)  # a mistake in the expression is named before any data is read
    frame = run(args)
    if args.where is not None:
        frame = where(frame, args.view, args.where)
    sys.stdout.write(render(frame, args.format))
    return 0


def _source_and_selection(args: argparse.Namespace):
    """The store at its current version and the selection the flags name (one-line errors)."""
    from .. import views
    from ..links import not_found
    from ..selection import Selection
    from ..store import Store
    from ..vocab import default_dataset

    if args.view not in views.VIEWS:
        raise UserError(f"unknown view {args.view!r}; `show --list` lists them")
    store = Store(args.db)
    if not store.exists():
        raise UserError(f"no store at {store.path} (build one with `python -m eduart_core demo`)")
    src = views.Source.of(store)
    names = list(views.datasets(src)["dataset"])
    dataset = args.dataset or default_dataset(names)
    if dataset not in names:
        raise UserError(not_found("dataset", dataset, where=str(store.path), available=names))
    return src, Selection.from_args(args, dataset=dataset)


def run(args: argparse.Namespace) -> pd.DataFrame:
    """The frame of the view the flags name (one-line errors for unknown views, options, datasets).
    Numbers under an uncalibrated judge profile, and models whose answers are often invalid, say so on
    stderr (the JSON on stdout stays clean)."""
    from .. import views

    src, sel = _source_and_selection(args)
    options = parse_options(args.option, views.VIEWS[args.view].options)
    frame = views.run_view(args.view, src, sel, **options)
    warning = views.profile_warning(src, sel)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    for line in views.invalid_warnings(src, sel):  # a model's scores that measure its output format
        print(f"warning: {line}", file=sys.stderr)
    return frame


def where(frame: object, view: str, expression: str) -> pd.DataFrame:
    """The rows of a view's frame the filter expression keeps (one-line errors name the view's columns)."""
    from .. import filterexpr

    if not isinstance(frame, pd.DataFrame):
        raise UserError(f"view {view!r} is no table of rows, so --where cannot filter it")
    try:
        return filterexpr.apply(frame, expression)
    except filterexpr.FilterError as exc:
        raise UserError(f"--where on view {view!r}: {exc}") from None


def caption(args: argparse.Namespace) -> str:
    """The caption of the story figure drawn from the view the flags name, for that selection."""
    from .. import panels

    src, sel = _source_and_selection(args)
    if not any(p.view == args.view for p in panels.PANELS.values()):
        # a table that is no story figure may carry its own caption (`power`)
        from .. import views

        frame = views.run_view(args.view, src, sel, **parse_options(args.option, views.VIEWS[args.view].options))
        if frame.attrs.get("caption"):
            return views.data_label(src, sel).finding_prefix() + str(frame.attrs["caption"])
    panel = panels.for_view(args.view)
    return panel.describe(src, sel, **parse_options(args.option, panel.options)).caption


def parse_options(pairs: list[str], known: dict[str, object]) -> dict[str, object]:
    """``NAME=VALUE`` strings -> typed options (the type of each option's default)."""
    out: dict[str, object] = {}
    for pair in pairs:
        if "=" not in pair:
            raise UserError(f"--option {pair!r} is not NAME=VALUE")
        name, value = (s.strip() for s in pair.split("=", 1))
        if name not in known:
            raise UserError(f"unknown option {name!r} (options: {', '.join(known) or 'none'})")
        out[name] = _typed(name, value, known[name])
    return out


def _typed(name: str, value: str, default: object) -> object:
    if isinstance(default, bool):
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise UserError(f"option {name} takes true or false, not {value!r}")
    if isinstance(default, int):
        try:
            return int(value)
        except ValueError:
            raise UserError(f"option {name} takes a whole number, not {value!r}") from None
    if isinstance(default, float):
        try:
            return float(value)
        except ValueError:
            raise UserError(f"option {name} takes a number, not {value!r}") from None
    return value


def render(frame: pd.DataFrame, fmt: str) -> str:
    """JSON (a list of records; NaN as null; numbers unrounded) or CSV."""
    if fmt == "csv":
        from .. import csvsafe

        return csvsafe.to_csv(frame)
    records = [{str(k): _plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]
    return json.dumps(records, ensure_ascii=False, indent=1) + "\n"


def _plain(value: object) -> object:
    """A JSON-ready Python value: numpy scalars unwrapped, NaN/NA as None, containers kept."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value

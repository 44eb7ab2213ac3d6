"""`variants`: make linked variant items (rotated options, perturbed or missing images) of a dataset;
`probe`: make (and ask) its contamination probes."""
from __future__ import annotations

import argparse
import sys

from ..cli import actor, add_actor_options, add_db_option


def _note(args: argparse.Namespace, store) -> str:
    """Who made the linked items, for their version note."""
    who = actor(args, store)
    return f"made by {who.name}" + (f" for {who.acting_for}" if who.acting_for else "")


def _said(report, noun: str = "variant(s)") -> int:
    """The refused items on stderr, the summary on stdout; exit code 2 when an item was refused."""
    lines = report.lines()
    for line in lines[:-1]:
        print(line, file=sys.stderr)
    print(lines[-1].replace("variant(s)", noun))
    return 2 if report.refused else 0


def cmd_variants(args: argparse.Namespace) -> int:
    from ..store import Store
    from ..variants import check_kind, make_variants

    check_kind(args.kind)  # an unknown kind is one line before the store is opened
    store = Store(args.db)
    return _said(make_variants(store, args.dataset, args.kind, args.items, fraction=args.crop,
                               long_side=args.long_side, origin=f"variants:{args.kind}", note=_note(args, store)))


def register(sub) -> None:
    from ..variants import CROP_FRACTION, DOWNSCALE_LONG_SIDE, KINDS

    p = sub.add_parser(
        "variants", help="make linked variant items: rotated or relabelled options, perturbed or missing images",
        description="Write variant items of a dataset's items, each with variant_of (its source) and variant (kind and "
                    "parameter) in its record and the key transformed with it; ids <item_id>~<kind> (-k for the k-th). "
                    "Ask them with an ordinary run (run --items variant=rotate); their scores stay out of the "
                    "dataset's leaderboard and item statistics (show invariance reads them). An item the kind does "
                    "not apply to is named with the reason, the rest is made, and the exit code is 2. Making them "
                    "again writes nothing twice.")
    p.add_argument("--dataset", required=True, help="the dataset whose items get variants")
    p.add_argument("--kind", required=True, metavar="KIND", help=f"one of: {', '.join(KINDS)}")
    p.add_argument("--items", default=None, metavar="FILTER",
                   help="which items, as run --items (e.g. type=multiple_choice_radio,image=with)")
    p.add_argument("--crop", type=float, default=CROP_FRACTION,
                   help=f"crop: the central detail kept, as a fraction of width and height (default {CROP_FRACTION})")
    p.add_argument("--long-side", type=int, default=DOWNSCALE_LONG_SIDE,
                   help=f"downscale: the long side in pixels (default {DOWNSCALE_LONG_SIDE})")
    add_actor_options(p)
    add_db_option(p)
    p.set_defaults(func=cmd_variants)
    register_probe(sub)


def cmd_probe(args: argparse.Namespace) -> int:
    from ..cli import main
    from ..probes import check_probe_kind, make_probes
    from ..store import Store

    check_probe_kind(args.kind)  # an unknown kind is one line before the store is opened
    store = Store(args.db)
    code = _said(make_probes(store, args.dataset, args.kind, args.items, note=_note(args, store)), "probe(s)")
    if not args.model:
        print(f"ask them: python -m eduart_core run --dataset {args.dataset} --model KEY --items variant={args.kind}; "
              f"then: python -m eduart_core show contamination --dataset {args.dataset}")
        return code
    argv = ["run", "--db", str(args.db), "--dataset", args.dataset, "--items", f"variant={args.kind}"]
    for model in args.model:
        argv += ["--model", model]
    if args.acting_for:
        argv += ["--for", args.acting_for]
    return max(code, main(argv))  # the ordinary run: resumable, cached, its own exit codes


def register_probe(sub) -> None:
    from ..probes import PROBE_KINDS

    p = sub.add_parser(
        "probe", help="contamination probes: a hidden wrong option or the end of the question, asked for",
        description="Write a contamination probe of each item as a linked item (id <item_id>~<kind>, variant_of its "
                    "source): mask_option hides a wrong option's text (after the TS-Guessing probe of Deng et al., "
                    "2024), complete_stem shows the first half of the question; a model that never saw the item "
                    "should not write the hidden text. With --model, the probes are asked at once by an ordinary run "
                    "(else: run --items variant=KIND). show contamination reads the answers. An item the kind does "
                    "not apply to is named with the reason, the rest is made, exit code 2; making them again writes "
                    "nothing twice.")
    p.add_argument("--dataset", required=True, help="the dataset whose items are probed")
    p.add_argument("--kind", required=True, metavar="KIND", help=f"one of: {', '.join(PROBE_KINDS)}")
    p.add_argument("--items", default=None, metavar="FILTER", help="which items, as run --items")
    p.add_argument("--model", action="append", default=[], metavar="KEY",
                   help="ask the probes with this model of the registry now (repeatable)")
    add_actor_options(p)
    add_db_option(p)
    p.set_defaults(func=cmd_probe)

"""`variants`: make linked variant items (rotated options, perturbed or missing images) of a dataset."""
from __future__ import annotations

import argparse
import sys

from ..cli import actor, add_actor_options, add_db_option


def cmd_variants(args: argparse.Namespace) -> int:
    from ..store import Store
    from ..variants import check_kind, make_variants

    check_kind(args.kind)  # an unknown kind is one line before the store is opened
    store = Store(args.db)
    who = actor(args, store)
    note = f"made by {who.name}" + (f" for {who.acting_for}" if who.acting_for else "")
    report = make_variants(store, args.dataset, args.kind, args.items, fraction=args.crop,
                           long_side=args.long_side, origin=f"variants:{args.kind}", note=note)
    lines = report.lines()
    for line in lines[:-1]:
        print(line, file=sys.stderr)
    print(lines[-1])
    return 2 if report.refused else 0


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

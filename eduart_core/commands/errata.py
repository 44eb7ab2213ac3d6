"""`errata`: group accepted key corrections into a named, dated errata release, and apply it.

The work is `eduart_core.errata` (the permission, the grouping, the rescoring and its diff); this
module reads the flags and prints what happened. `show errata` lists the releases and, with
``--option release=NAME``, one release's score diff.
"""
from __future__ import annotations

import argparse

from ..errors import UserError


def cmd_errata(args: argparse.Namespace) -> int:
    from .. import errata
    from ..cli import actor
    from ..store import Store

    store = Store(args.db)
    if not store.exists():
        raise UserError(f"no store at {store.path}; run 'python -m eduart_core demo' or an import first")
    if not args.dataset:
        raise UserError("name the dataset: --dataset D")
    if not (args.name or "").strip():
        raise UserError("name the errata release: --name NAME")
    who = actor(args, store)
    if args.action == "apply":
        done = errata.apply_release(store, args.dataset, args.name, who)
        diff = done["diff"]
        if not done["applied"]:
            print(f"{args.dataset}: errata release {args.name} was applied already; nothing changed")
            return 0
        changed = diff[diff["changed"] > 0]
        print(f"{args.dataset}: errata release {args.name} applied: {done['rescored']} score row(s) re-scored; "
              f"{int(diff['changed'].sum())} response score(s) changed in {len(changed)} model x condition x format "
              f"x profile cell(s); `show errata --dataset {args.dataset} --option release={args.name}` shows the diff")
        for r in changed.itertuples():
            print(f"  {r.model} · {r.condition} · {r.type} · {r.profile}: {r.score_before:.4f} -> {r.score_after:.4f} "
                  f"({r.changed} of {r.responses} responses changed)")
        return 0
    items = [i for i in (args.items or "").split(",") if i.strip()] or None
    release_id, entries = errata.create_release(store, args.dataset, args.name, who, items)
    print(f"{args.dataset}: errata release {args.name} (#{release_id}) with {len(entries)} key correction(s); "
          f"apply it with `errata apply --dataset {args.dataset} --name {args.name}`")
    for r in entries.itertuples():
        print(f"  {r.item_id}: version {r.old_version} -> {r.new_version}, key {r.old_key} -> {r.new_key}, accepted by "
              f"{r.accepted_by}" + (f": {r.reason}" if isinstance(r.reason, str) else ""))
    return 0


def register(sub) -> None:
    from ..cli import add_actor_options, add_db_option

    p = sub.add_parser(
        "errata", help="group accepted key corrections into a named errata release (errata apply: rescore, diff)",
        description="errata --dataset D --name NAME [--items A,B]: group the key corrections accepted in the "
                    "suspect-key queue and not released yet (or those of the named items) into a named, dated "
                    "release. errata apply --dataset D --name NAME: re-score every stored response of the release's "
                    "items and store the diff per model, condition, format and profile (applying again changes "
                    "nothing). Needs the researcher or adjudicator role on a team store.")
    p.add_argument("action", nargs="?", choices=("create", "apply"), default="create",
                   help="create (default) or apply a release")
    p.add_argument("--dataset", default=None, help="the dataset")
    p.add_argument("--name", default=None, help="the release's name (e.g. 2026-12)")
    p.add_argument("--items", default=None, help="create: only these items (comma-separated)")
    add_actor_options(p, by="who creates or applies the release (single-machine stores)")
    add_db_option(p)
    p.set_defaults(func=cmd_errata)

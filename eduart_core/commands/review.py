"""`review-status`, `review-import`, `review-export`, `review-round`, `review-repair`: the review page's CLI twin.

For bulk and offline work and scripting: a reviewer can decide in a spreadsheet or a script and
import the decisions, a lead can check a round's progress and agreement from a terminal, and
every decision leaves the store with its provenance. `overrides-export` writes the human score
overrides with theirs.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import UserError


def _store(args):
    from ..store import Store
    from ..store import extraction as db

    store = Store(args.db)
    if not store.exists():
        raise UserError(f"no store at {store.path}; run 'python -m eduart_core demo' or an import first")
    db.ensure_schema(store)
    return store


def _num(value) -> str:
    return "—" if value is None else f"{value:.3f}"


def cmd_status(args) -> int:
    from ..extraction.review import load_state
    from ..extraction.stats import status_report

    report = status_report(load_state(_store(args)))
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return 0
    if not report["rounds"]:
        print("no extraction rounds in this store yet")
        return 0
    print(f"{'dataset':20} {'round':>5} {'pages':>5} {'queued':>6} {'resolved':>8} {'promoted':>8} {'open':>5} "
          f"{'adjud.':>6} {'units':>5} {'agree%':>6} {'value%':>6} {'alpha':>6}  alpha 95% CI")
    for r in report["rounds"]:
        a = r["agreement"]
        percent = "—" if a["percent"] is None else f"{100 * a['percent']:.0f}"
        value = "—" if a.get("value_percent") is None else f"{100 * a['value_percent']:.0f}"
        ci = a["alpha_ci"]
        interval = "—" if ci[0] is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"
        if r.get("agreement_withheld"):
            interval = "blind round under way: agreement once settled"
        adjudication = "—" if r["adjudication_pending"] is None else r["adjudication_pending"]
        print(f"{r['dataset']:20} {r['round']:>5} {r['pages']:>5} {r['queued']:>6} {r['resolved']:>8} "
              f"{r['promoted']:>8} {r['open_fields']:>5} {adjudication:>6} {a['units']:>5} "
              f"{percent:>6} {value:>6} {_num(a['krippendorff_alpha']):>6}  {interval}")
    if any(r["agreement"]["units"] for r in report["rounds"]):
        print("\nagree%: share of fields on which all reviewers made the same choice (A, B, an edit, a flag); "
              "value%: on which they all chose the same final value; alpha: Krippendorff's alpha on the choices")
    if any(r.get("agreement_withheld") for r in report["rounds"]):
        print("blind rounds under way show neither agreement nor which fields wait for the adjudicator "
              "until every field is settled")
    if report["open"]:
        print(f"\n{len(report['open'])} field(s) still waiting; `review-status --json` lists them")
    return 0


def cmd_import(args) -> int:
    from ..cli import actor
    from ..extraction.exchange import import_file

    store = _store(args)
    result = import_file(store, args.file, actor=actor(args, store))
    for number, problem in result.errors:
        print(f"{args.file}:{number}: skipped: {problem}")
    print(result.summary())
    return 2 if result.errors else 0  # like import-responses: the good lines are in, the bad ones named


def cmd_export(args) -> int:
    from ..extraction.exchange import blind_notice, export_file, unsettled_blind_rounds
    from ..team import operator

    store = _store(args)
    include = bool(args.include_unsettled_blind)
    if include:
        notice = blind_notice(unsettled_blind_rounds(store))
        if notice:  # the first line says so, before anything is written
            print(f"warning: {notice}")
    result = export_file(store, args.out, include_unsettled_blind=include, actor=operator())
    print(f"wrote {result.written} decision(s) to {args.out}")
    if result.included:
        print(f"the export of {', '.join(f'{d} round {r}' for d, r in result.included)} is recorded in the audit "
              f"log under {operator().name}")
    if result.withheld:
        rounds = ", ".join(f"{d} round {r} ({n})" for (d, r), n in sorted(result.withheld.items()))
        print(f"left out the decisions of blind rounds not yet settled: {rounds}; pass --include-unsettled-blind "
              "to export them (recorded in the audit log)")
    return 0


def cmd_round(args) -> int:
    from ..cli import actor
    from ..extraction.review_gold import set_reviewers_seeded

    store = _store(args)
    change = set_reviewers_seeded(store, args.dataset, args.round, args.reviewers, set_by=actor(args, store),
                           blind_adjudication=args.blind_adjudication, seed_gold=args.seed_gold)
    mode = "single review" if args.reviewers == 1 else f"blind review by {args.reviewers} reviewers per page"
    if args.blind_adjudication:
        mode += "; adjudicators see the decisions without reviewer names"
    print(f"{args.dataset} round {args.round}: {mode}")
    for line in change.sentences():  # what the new setting did to the decisions already made
        print(f"  {line}")
    if change.seeded is not None:
        done = change.seeded
        print(f"  seeded gold: {done['seeded']} adjudicated page(s) of {done['pool']} that could be seeded, among "
              f"{done['pages']} page(s) to review (rate {args.seed_gold:g}); reviewers cannot tell them apart")
    return 0


def cmd_repair(args) -> int:
    from ..extraction.review import repair_promotions
    from ..team import operator

    done = repair_promotions(_store(args), actor=operator())
    if not done:
        print("nothing to repair: every settled page has its gold version (or a reason why not)")
        return 0
    for (page_id, rnd), (version, error) in sorted(done.items()):
        print(f"{page_id} round {rnd}: " + (f"promoted as gold version {version}" if version is not None
                                            else f"not promoted: {error}"))
    print(f"repaired {sum(v is not None for v, _ in done.values())} of {len(done)} page(s); recorded in the audit log")
    return 0


def cmd_overrides_export(args) -> int:
    from ..overrides import export_overrides

    n = export_overrides(_store(args), Path(args.out), dataset=args.dataset)
    print(f"wrote {n} score override(s) to {args.out}")
    return 0


def register(sub) -> None:
    from ..cli import add_actor_options, add_db_option

    status = sub.add_parser("review-status", help="review progress and reviewer agreement per dataset and round")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    add_db_option(status)
    status.set_defaults(func=cmd_status)

    imp = sub.add_parser("review-import", help="import review decisions from a JSONL file (one per line)")
    imp.add_argument("file", type=Path, help='JSONL: {"dataset","page","round","field","reviewer",'
                                             '"decision": "A"|"B"|"edit", "value", "note"} per line')
    add_actor_options(imp)
    add_db_option(imp)
    imp.set_defaults(func=cmd_import)

    exp = sub.add_parser("review-export", help="export every review decision as JSONL, with timestamps "
                                               "(blind rounds once settled)")
    exp.add_argument("--out", type=Path, required=True)
    exp.add_argument("--include-unsettled-blind", action="store_true",
                     help="also export the decisions of blind rounds not yet settled (they name every reviewer's "
                          "choice; the export is recorded in the audit log)")
    add_db_option(exp)
    exp.set_defaults(func=cmd_export)

    rnd = sub.add_parser("review-round", help="how many independent (blind) reviewers each page of a round needs")
    rnd.add_argument("--dataset", required=True)
    rnd.add_argument("--round", type=int, required=True)
    rnd.add_argument("--reviewers", type=int, required=True, help="1 = single review; 2 or more = blind review")
    rnd.add_argument("--blind-adjudication", action="store_true",
                     help="adjudicators see the round's decisions without reviewer names")
    rnd.add_argument("--seed-gold", type=float, default=None, metavar="RATE",
                     help="seed already adjudicated pages of other rounds as gold, about RATE (0-1) of the round's "
                          "pages; a reviewer's decisions on them are gold checks, never promoted or counted")
    rnd.add_argument("--by", dest="ignored_by", default=None, help=argparse.SUPPRESS)  # older scripts pass it
    add_actor_options(rnd)
    add_db_option(rnd)
    rnd.set_defaults(func=cmd_round)

    rep = sub.add_parser("review-repair", help="promote settled pages whose promotion was interrupted (a store "
                                               "written by an older version)")
    add_db_option(rep)
    rep.set_defaults(func=cmd_repair)

    ov = sub.add_parser("overrides-export", help="export human score overrides as JSONL, with their provenance")
    ov.add_argument("--out", type=Path, required=True)
    ov.add_argument("--dataset", default=None)
    add_db_option(ov)
    ov.set_defaults(func=cmd_overrides_export)

"""`roles grant|revoke|list`: the roles table of team mode from the command line; `team-trial`:
team mode tried on one machine (`eduart_core.team_trial`).

The command line acts as the machine's operator (who can open the store file anyway): it may
change roles, and every change records the OS user as the one who made it.
"""
from __future__ import annotations

import json

from ..errors import UserError


def _store(args):
    from ..store import Store

    store = Store(args.db)
    if not store.exists():
        raise UserError(f"no store at {store.path}; run 'python -m eduart_core demo' or an import first")
    with store.connect():  # migrations (the roles table) before the first read
        pass
    return store


def cmd_grant(args) -> int:
    from ..cli import actor
    from ..team.roles import grant

    store = _store(args)
    changed = grant(store, args.subject, args.role, actor(args, store), note=args.note)
    print(f"{args.subject}: {args.role} granted" if changed else f"{args.subject} already has {args.role}")
    return 0


def cmd_revoke(args) -> int:
    from ..cli import actor
    from ..team.roles import revoke

    store = _store(args)
    changed = revoke(store, args.subject, args.role, actor(args, store), note=args.note)
    print(f"{args.subject}: {args.role} revoked" if changed
          else f"{args.subject} has no {args.role} role in the roles table (a role from the token's claim is "
               "revoked at the identity provider)")
    return 0


def cmd_list(args) -> int:
    from ..team.roles import list_roles

    frame = list_roles(_store(args))
    if args.json:
        rows = [{"subject": r["subject"], "role": r["role"], "granted_by": r["actor_name"],
                 "granted_by_subject": r["actor_subject"], "note": r["note"],
                 "granted_at": r["changed_at"].isoformat() if hasattr(r["changed_at"], "isoformat") else None}
                for r in frame.to_dict("records")]
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    if frame.empty:
        print("no roles granted in this store (roles may also come from the identity token's claim)")
        return 0
    for row in frame.to_dict("records"):
        print(f"{row['subject']:24} {row['role']:12} granted by {row['actor_name'] or '?'}")
    return 0


def cmd_trial(args) -> int:
    from pathlib import Path

    from .. import team_trial as trial

    if not 1 <= args.port <= 65535:
        raise UserError(f"--port must be between 1 and 65535, not {args.port}")
    folder = Path(args.dir) if args.dir else trial.default_folder()
    return trial.run(folder, args.port, fresh=args.fresh, say=lambda line: print(line, flush=True))


def register(sub) -> None:
    from ..cli import add_actor_options, add_db_option
    from ..team import ROLES

    roles = sub.add_parser("roles", help="grant, revoke and list team roles (sign-in mode)",
                           description="Roles of team mode: " + "; ".join(f"{k}: {v}" for k, v in ROLES.items()))
    actions = roles.add_subparsers(dest="roles_command", metavar="ACTION", required=True)
    for name, func, verb in (("grant", cmd_grant, "grant"), ("revoke", cmd_revoke, "revoke")):
        p = actions.add_parser(name, help=f"{verb} a role to the person with this OIDC subject")
        p.add_argument("subject", help="the sub claim of the person's identity token")
        p.add_argument("role", help=", ".join(ROLES))
        p.add_argument("--note", default=None, help="why (kept with the change)")
        add_actor_options(p)
        add_db_option(p)
        p.set_defaults(func=func)
    listing = actions.add_parser("list", help="who holds which role in the roles table")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    add_db_option(listing)
    listing.set_defaults(func=cmd_list)

    team_trial = sub.add_parser(
        "team-trial", help="try team mode on this machine: PostgreSQL, a local sign-in provider and the studio",
        description="Starts, on 127.0.0.1, a PostgreSQL cluster in a folder (loaded with the demo on the first "
                    "start), a local OpenID Connect provider with five people to sign in as (an admin, two "
                    "reviewers, an adjudicator, a presenter; their roles granted in the store) and the studio "
                    "with sign-in on. Ctrl-C stops all three. The folder is kept: the next start continues "
                    "where the last one stopped.")
    team_trial.add_argument("--dir", default=None,
                            help="the trial's folder (default: $EDUART_WORK_DIR/team-trial or data/team-trial)")
    team_trial.add_argument("--port", type=int, default=8501, help="the studio's port on 127.0.0.1 (default 8501)")
    team_trial.add_argument("--fresh", action="store_true",
                            help="delete the trial folder's cluster, store and logs first and start over")
    team_trial.set_defaults(func=cmd_trial)

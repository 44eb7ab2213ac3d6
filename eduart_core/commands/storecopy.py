"""`store-copy --from X --to Y`: move a whole store between a DuckDB file and a PostgreSQL database;
`store-migrate`: bring a store's schema up to this code's.

store-copy prints, per table, the rows and content hash on both sides; exits 0 only when they are
equal, and refuses a target that holds rows unless ``--replace``. store-migrate is what a database
owner runs when the studio's own database user may read and write rows but not create tables.
"""
from __future__ import annotations

import argparse


def register(sub) -> None:
    from ..cli import add_db_option, db_argument

    p = sub.add_parser("store-copy", help="copy a store between a DuckDB file and a PostgreSQL database, verified",
                       description="Copy every table of one store into another (a DuckDB file or a postgresql:// "
                                   "URL, either direction) in one transaction, then compare row counts and content "
                                   "hashes table by table and print both. A target holding rows is refused unless "
                                   "--replace. Images are named by content in both stores: point the target at the "
                                   "same EDUART_IMAGES, or copy the image folder. Exit codes: 0 equal, 1 a table "
                                   "differs, 2 usage or store error.")
    p.add_argument("--from", dest="source", type=db_argument, required=True, metavar="STORE",
                   help="the store to copy (file path or postgresql:// URL)")
    p.add_argument("--to", dest="target", type=db_argument, required=True, metavar="STORE",
                   help="the store to write (file path or postgresql:// URL)")
    p.add_argument("--replace", action="store_true", help="empty a target that already holds rows first")
    p.add_argument("--quiet", action="store_true", help="print only the summary line")
    p.set_defaults(func=cmd_store_copy)

    m = sub.add_parser("store-migrate", help="apply the schema migrations this version knows to a store",
                       description="Create or upgrade the store's tables to this EduArt Studio's schema (any "
                                   "write does it too; run this as the database owner when the studio's user "
                                   "may not create tables). Prints the schema version it has now.")
    add_db_option(m)
    m.set_defaults(func=cmd_store_migrate)


def cmd_store_copy(args: argparse.Namespace) -> int:
    from ..store import Store
    from ..store.copy import copy_store

    say = (lambda _line: None) if args.quiet else print
    report = copy_store(Store(args.source), Store(args.target), replace=args.replace, progress=say)
    if not args.quiet:
        print(f"{'table':24} {'rows (from)':>11} {'rows (to)':>11}  {'hash (from)':16} {'hash (to)':16}")
        for t in report.tables:
            mark = "" if t.equal else "  DIFFERS"
            print(f"{t.table:24} {t.source_rows:>11} {t.target_rows:>11}  {t.source_hash[:16]} {t.target_hash[:16]}{mark}")
        print(f"images: both stores name them by content; the source's are in {report.images}")
    verdict = "equal" if report.equal else "NOT equal"
    print(f"store-copy: {len(report.tables)} tables, {report.rows} rows copied from {report.source} to "
          f"{report.target}: counts and hashes {verdict}")
    return 0 if report.equal else 1


def cmd_store_migrate(args: argparse.Namespace) -> int:
    from ..store import Store
    from ..store.core import check_schema, pending_migrations

    store = Store(args.db)
    with store.connect() as con:  # a write connection applies what is missing
        version, missing = check_schema(con, store.path), pending_migrations(con)
    if missing:  # pragma: no cover - connect() raises instead
        print(f"store-migrate: {store.path} still lacks migrations {missing}")
        return 1
    print(f"store-migrate: {store.path} is at schema version {version}, this EduArt Studio's latest")
    return 0

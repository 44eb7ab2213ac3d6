"""Moving a store between backends: every table copied, then checked by row counts and content hashes.

Why a copy tool: a researcher who started on a DuckDB file moves to a team's PostgreSQL store
(and back, for a single-machine archive). The copy brings the source up to this version's
schema, writes every table of the target in ONE transaction (all or nothing), moves each id
sequence past the copied ids, and then compares, table by table, the number of rows and a hash
of their content computed the same way on both sides (an order-independent sum of one sha256
per row over values normalised to text), so "equal" means the same rows, not only as many.
The data version (a cache counter in ``meta``) is left out of the comparison: the copy bumps it.

Images are not rows: both stores name them by content hash; point the target at the same
image location (``EDUART_IMAGES``) or copy the folder (the command says where they are).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pandas as pd

from ..errors import UserError
from .connection import Connection
from .core import Store
from .schema import MIGRATIONS, store_objects

#: Rows left out of the comparison: (table, SQL condition that keeps the compared rows).
_EXCLUDED = {"meta": "key <> 'data_version'"}
_CHUNK = 20_000
_MODULUS = 2 ** 256


@dataclass
class TableCheck:
    table: str
    source_rows: int
    target_rows: int
    source_hash: str
    target_hash: str

    @property
    def equal(self) -> bool:
        return self.source_rows == self.target_rows and self.source_hash == self.target_hash


@dataclass
class CopyReport:
    source: str
    target: str
    tables: list[TableCheck] = field(default_factory=list)
    images: str = ""

    @property
    def equal(self) -> bool:
        return all(t.equal for t in self.tables)

    @property
    def rows(self) -> int:
        return sum(t.target_rows for t in self.tables)


def _text(value: Any) -> str:
    """One value as text, the same whichever engine returned it."""
    if value is None:
        return "\x00"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Decimal):
        return repr(float(value)) if value != value.to_integral_value() else str(int(value))
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return "\\x" + bytes(value).hex()
    if isinstance(value, list | tuple):
        return "[" + ",".join(_text(v) for v in value) + "]"
    return str(value)


def row_digest(row: tuple) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(_text(v) for v in row).encode()).digest(), "big")


def _common_columns(source: Connection, target: Connection, table: str) -> list[str]:
    theirs = {name for name, _ in target.columns(table)}
    return sorted(name for name, _ in source.columns(table) if name in theirs)


def table_check(con: Connection, table: str, columns: list[str]) -> tuple[int, str]:
    """(rows, content hash) of a table over ``columns``."""
    where = f" WHERE {_EXCLUDED[table]}" if table in _EXCLUDED else ""
    cursor = con.execute(f"SELECT {', '.join(columns)} FROM {table}{where}")
    total, count = 0, 0
    while True:
        rows = cursor.fetchmany(_CHUNK)
        if not rows:
            break
        for row in rows:
            total = (total + row_digest(tuple(row))) % _MODULUS
        count += len(rows)
    return count, f"{total:064x}"


def _tables(con: Connection) -> list[str]:
    """The store's tables present on this connection, in migration order."""
    ours, _ = store_objects()
    present = set(con.tables())
    return [t for t in ours if t in present]


def _sequence_columns() -> dict[str, tuple[str, str]]:
    """sequence -> (table, id column) from the migrations' ``DEFAULT nextval('...')`` columns."""
    found: dict[str, tuple[str, str]] = {}
    for _, _, statements in MIGRATIONS:
        for statement in statements:
            text = statement if isinstance(statement, str) else statement.duckdb
            table = re.search(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", text, re.I)
            alter = re.search(r"ALTER\s+TABLE\s+(\w+)", text, re.I)
            owner = table or alter
            for column, sequence in re.findall(r"(\w+)\s+BIGINT[^,]*?DEFAULT\s+nextval\('(\w+)'\)", text, re.I):
                if owner:
                    found[sequence] = (owner.group(1), column)
    return found


def non_empty_tables(store: Store) -> dict[str, int]:
    """Tables of ``store`` that hold rows (its bookkeeping tables do not count)."""
    if not store.exists():
        return {}
    with store.connect(read_only=True) as con:
        counts = {}
        for table in _tables(con):
            if table in ("meta", "schema_version"):
                continue
            n = int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            if n:
                counts[table] = n
    return counts


def copy_store(source: Store, target: Store, replace: bool = False,
               progress: Callable[[str], None] | None = None) -> CopyReport:
    """Copy every table of ``source`` into ``target`` and verify the copy (see the module docstring)."""
    say = progress or (lambda _line: None)
    if str(source.path) == str(target.path):
        raise UserError("--from and --to name the same store")
    if not source.exists():
        raise UserError(f"no store at {source.path} to copy from")
    filled = non_empty_tables(target)
    if filled and not replace:
        shown = ", ".join(f"{t} ({n})" for t, n in list(filled.items())[:4])
        raise UserError(f"target store {target.path} is not empty ({sum(filled.values())} rows: {shown}); "
                        "pass --replace to overwrite it")
    if filled or (replace and target.exists()):
        say(f"store-copy: emptying {target.path} (--replace)")
        target.drop_all()
    with source.connect():  # the source at this version's schema (a write would do the same)
        pass
    report = CopyReport(str(source.path), str(target.path))
    sequences = _sequence_columns()
    with source.connect(read_only=True) as src, target.transaction() as dst:
        for table in _tables(src):
            columns = _common_columns(src, dst, table)
            json_columns = [name for name, kind in dst.columns(table) if kind.upper() == "JSON"]
            dst.execute(f"DELETE FROM {table}")
            cursor = src.execute(f"SELECT {', '.join(columns)} FROM {table}")
            copied = 0
            while True:
                rows = cursor.fetchmany(_CHUNK)
                if not rows:
                    break
                frame = pd.DataFrame([list(r) for r in rows], columns=columns, dtype=object)
                dst.insert_frame(table, frame, json_columns=[c for c in json_columns if c in columns])
                copied += len(rows)
            say(f"store-copy: {table}: {copied} row(s)")
        for sequence, (table, column) in sequences.items():
            if dst.has_table(table):
                top = dst.execute(f"SELECT max({column}) FROM {table}").fetchone()[0]
                if top is not None:
                    dst.advance_sequence(sequence, int(top))
    with source.connect(read_only=True) as src, target.connect(read_only=True) as dst:
        for table in _tables(src):
            columns = _common_columns(src, dst, table)
            rows_a, hash_a = table_check(src, table, columns)
            rows_b, hash_b = table_check(dst, table, columns)
            report.tables.append(TableCheck(table, rows_a, rows_b, hash_a, hash_b))
    report.images = source.images.describe()
    return report

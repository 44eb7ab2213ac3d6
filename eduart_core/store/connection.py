"""The one connection interface every SQL statement of the store goes through, on either backend.

Why an interface of our own: the store runs on a DuckDB file (one researcher, zero set-up) or on
PostgreSQL (a team: many servers and processes writing at once). The feature modules write
their SQL once, in the portable subset below, and call these methods for the few things the
two engines do differently; each backend (``store.duckdb_file``, ``store.postgres``)
implements them in one place.

The portable subset (checked by running the store tests on both backends):
- ``?`` placeholders, positional; standard types in upper case (TEXT, INTEGER, BIGINT, DOUBLE,
  BOOLEAN, TIMESTAMP, JSON, BLOB). PostgreSQL reads DOUBLE as DOUBLE PRECISION, BLOB as BYTEA
  and gives TEXT columns the "C" collation, so text sorts by code point as in DuckDB.
- No QUALIFY (a subquery with ``row_number()``), no GROUP BY ALL, no INSERT OR REPLACE
  (``INSERT ... ON CONFLICT (...) DO UPDATE/NOTHING``), no ``rowid``, no DuckDB-only functions:
  ``array_agg``, ``array_position``, ``string_agg``, ``generate_series``, ``col = ANY(?)`` with a
  Python list, ``record->>'key'`` for a JSON field as text, ``count(*) FILTER (WHERE ...)``.
- Bulk rows go in with ``insert_frame`` (a DataFrame) or ``insert_columns`` (Python lists), results come out with ``frame``/``numpy``; table and
  column checks use ``has_table``/``has_column``; ``lock(key)`` serialises concurrent writers
  of one thing (PostgreSQL; the DuckDB file has one writer anyway).
- A statement that cannot be portable is written as ``Variants(duckdb=..., postgres=...)`` next
  to where it is used, and picked with ``con.sql(variants)``: the difference lives in one place.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

DUCKDB = "duckdb"
POSTGRES = "postgres"
DIALECTS = (DUCKDB, POSTGRES)


@dataclass(frozen=True)
class Variants:
    """One statement in the two dialects (only where the portable subset cannot say it)."""

    duckdb: str
    postgres: str

    def of(self, dialect: str) -> str:
        return self.duckdb if dialect == DUCKDB else self.postgres


class Connection:
    """What store code may ask of an open connection; ``store.connect()`` yields one.

    ``execute`` returns a cursor-like result (``fetchone``, ``fetchall``, ``description``).
    """

    dialect: str = ""

    def execute(self, sql: str, params: Sequence[Any] | None = None):  # pragma: no cover - interface
        raise NotImplementedError

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:  # pragma: no cover
        raise NotImplementedError

    def frame(self, sql: str, params: Sequence[Any] | None = None, *,
              large: bool = False) -> pd.DataFrame:  # pragma: no cover
        """The result as a DataFrame with DuckDB's column types (views read the same frames);
        ``large``: a hint that many rows of text come back (a backend may read them another way)."""
        raise NotImplementedError

    def numpy(self, sql: str, params: Sequence[Any] | None = None) -> dict[str, np.ndarray]:  # pragma: no cover
        """The result as one numpy array per column."""
        raise NotImplementedError

    def insert_frame(self, table: str, frame: pd.DataFrame, json_columns: Iterable[str] = ()) -> None:
        """INSERT every row of ``frame`` (its columns are the table's) in one bulk operation."""
        raise NotImplementedError  # pragma: no cover

    def insert_columns(self, table: str, columns: dict[str, list], types: dict[str, str] | None = None,
                       json_columns: Iterable[str] = ()) -> None:
        """INSERT rows given column by column (Python lists of one length, None where missing) in one
        bulk operation. ``types`` names the SQL type of each column that is not TEXT (BIGINT, INTEGER,
        DOUBLE, BOOLEAN); ``json_columns`` hold JSON text.

        Why beside ``insert_frame``: a writer that builds its rows in Python (answers by the tens of
        thousands) pays more for a DataFrame of Python objects than for the insert itself.
        """
        raise NotImplementedError  # pragma: no cover

    def has_table(self, table: str) -> bool:  # pragma: no cover
        raise NotImplementedError

    def has_column(self, table: str, column: str) -> bool:  # pragma: no cover
        raise NotImplementedError

    def tables(self) -> list[str]:  # pragma: no cover
        """Base tables of the store (not views, not temporary tables), sorted."""
        raise NotImplementedError

    def columns(self, table: str) -> list[tuple[str, str]]:  # pragma: no cover
        """(column name, type name) of a table, in table order."""
        raise NotImplementedError

    def keys(self, values: Sequence[Any], sql_type: str = "BIGINT"):  # pragma: no cover
        """A context manager naming a one-column table (``key``) holding ``values``, for joins against
        many keys (``x IN (SELECT key FROM <name>)``) where a list parameter would be slow."""
        raise NotImplementedError

    def begin(self) -> None:
        self.execute("BEGIN TRANSACTION")

    def commit(self, last: str | None = None) -> None:
        """Run ``last`` (a statement without parameters) and commit."""
        if last:
            self.execute(last)
        self.execute("COMMIT")

    def write_at_commit(self, sql: str, params: Sequence[Any] | None = None) -> None:
        """A write whose result nobody reads, sent with the COMMIT (PostgreSQL: in its round trip; an error
        fails the commit, and the transaction with it). Here it simply runs now."""
        self.execute(sql, params)

    def after_commit(self) -> None:
        """Upkeep once a write transaction has committed (PostgreSQL: statistics after bulk writes)."""

    def lock(self, key: str) -> None:
        """Hold ``key`` until the transaction ends, so concurrent writers of one thing take turns."""

    def next_ids(self, sequence: str, n: int) -> list[int]:
        """``n`` fresh values of a sequence (ids for bulk inserts)."""
        if n <= 0:
            return []
        rows = self.execute(f"SELECT nextval('{sequence}') FROM generate_series(1, ?)", [int(n)]).fetchall()
        return [int(r[0]) for r in rows]

    def advance_sequence(self, sequence: str, above: int) -> None:  # pragma: no cover
        """Make the sequence's next value larger than ``above`` (after copying rows with their ids)."""
        raise NotImplementedError

    def sql(self, variants: Variants | str) -> str:
        """The text of a statement for this connection's dialect."""
        return variants if isinstance(variants, str) else variants.of(self.dialect)

    def close(self) -> None:  # pragma: no cover
        raise NotImplementedError


def as_connection(con: Any) -> Connection:
    """A ``Connection`` for ``con`` (a raw DuckDB connection is wrapped: tools and tests open files
    with ``duckdb.connect`` and hand them to ``migrate``)."""
    if isinstance(con, Connection):
        return con
    for accepts, wrap in _WRAPPERS:
        if accepts(con):
            return wrap(con)
    raise TypeError(f"not a store connection: {type(con).__name__}")


#: (accepts a raw driver connection, wraps it): each backend module adds its own when imported.
_WRAPPERS: list[tuple[Callable[[Any], bool], Callable[[Any], Connection]]] = []


def register_wrapper(accepts: Callable[[Any], bool], wrap: Callable[[Any], Connection]) -> None:
    """Let `as_connection` wrap a backend's raw driver connection (its module calls this)."""
    _WRAPPERS.append((accepts, wrap))

"""The PostgreSQL side of the connection interface: SQL text, result types and bulk writes.

Why apart from ``store.postgres`` (connections, pools, errors): this is what makes one SQL text
and one set of frames serve both backends. The store's portable SQL (``?`` placeholders,
DOUBLE, BLOB) is translated once per statement text (``translate``: ``%s``, DOUBLE PRECISION,
BYTEA; TEXT columns get the "C" collation so that text sorts by code point as in DuckDB); JSON
columns come back as text and numeric as numbers, as DuckDB returns them; ``frame`` builds
pandas frames with the column types DuckDB's ``.df()`` gives; bulk rows go in with COPY.
"""
from __future__ import annotations

import functools
import itertools
import logging
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

from .connection import POSTGRES, Connection

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- SQL translation

_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/|[?%]|[^'\"?%/-]+|.", re.S)
_TYPE_WORDS = [(re.compile(r"\bDOUBLE\b(?!\s+PRECISION)"), "DOUBLE PRECISION"),
               (re.compile(r"\bBLOB\b"), "BYTEA"),
               (re.compile(r"\bTINYINT\b"), "SMALLINT")]
_TEXT_COLUMN = re.compile(r"\bTEXT\b")
_DDL = re.compile(r"^\s*(CREATE\s+TABLE|ALTER\s+TABLE)\b", re.I)


@functools.lru_cache(maxsize=4096)
def translate(sql: str) -> str:
    """The store's portable SQL as PostgreSQL (with psycopg's ``%s`` placeholders) reads it.

    Outside string literals, quoted names and comments: ``?`` becomes ``%s``; DOUBLE, BLOB and
    TINYINT become DOUBLE PRECISION, BYTEA and SMALLINT; in CREATE/ALTER TABLE, TEXT columns get
    ``COLLATE "C"``. Every ``%`` is doubled (psycopg formats the whole text).
    """
    ddl = bool(_DDL.match(sql))
    out: list[str] = []
    plain: list[str] = []

    def flush() -> None:
        if plain:
            text = "".join(plain)
            for pattern, word in _TYPE_WORDS:
                text = pattern.sub(word, text)
            if ddl:
                text = _TEXT_COLUMN.sub('TEXT COLLATE "C"', text)
            out.append(text)
            plain.clear()

    for token in _TOKENS.findall(sql):
        if token == "?":
            flush()
            out.append("%s")
        elif token == "%":
            flush()
            out.append("%%")
        elif token[:1] in ("'", '"') or token.startswith("--") or token.startswith("/*"):
            flush()
            out.append(token.replace("%", "%%"))
        else:
            plain.append(token)
    flush()
    return "".join(out)


# ---------------------------------------------------------------- result types

_BOOL, _BYTEA, _INT8, _INT2, _INT4, _TEXT, _JSON, _FLOAT4, _FLOAT8 = 16, 17, 20, 21, 23, 25, 114, 700, 701
_VARCHAR, _TIMESTAMP, _TIMESTAMPTZ, _NUMERIC, _JSONB, _NAME, _DATE = 1043, 1114, 1184, 1700, 3802, 19, 1082
_ARRAYS = {1000, 1005, 1007, 1009, 1015, 1016, 1021, 1022, 199, 3807}
_INTS = {_INT2: ("int32", "Int32"), _INT4: ("int32", "Int32"), _INT8: ("int64", "Int64")}
_FLOATS = {_FLOAT4, _FLOAT8, _NUMERIC}
_STRINGS = {_TEXT, _VARCHAR, _JSON, _JSONB, _NAME}


def _column(values: list, oid: int) -> Any:
    """One result column with the dtype DuckDB's ``.df()`` gives the same SQL type."""
    has_null = None in values
    if oid in _INTS:
        plain, nullable = _INTS[oid]
        return pd.array(values, dtype=nullable) if has_null else np.asarray(values, dtype=plain)
    if oid in _FLOATS:
        return np.asarray([np.nan if v is None else float(v) for v in values], dtype="float64")
    if oid == _BOOL:
        return pd.array(values, dtype="boolean") if has_null else np.asarray(values, dtype=bool)
    if oid in _STRINGS:  # as DuckDB: pandas strings, but objects (None) when nothing is set
        if values.count(None) < len(values):
            return pd.array(values, dtype="str")
    if oid in (_TIMESTAMP, _TIMESTAMPTZ, _DATE):
        return pd.to_datetime(pd.Series(values, dtype=object)).astype("datetime64[us]").to_numpy() if values \
            else np.asarray(values, dtype="datetime64[us]")
    out = np.empty(len(values), dtype=object)
    if oid in _ARRAYS:  # DuckDB gives a list column as numpy arrays
        for index, value in enumerate(values):
            out[index] = None if value is None else np.asarray(value, dtype=object)
        return out
    out[:] = values
    return out


def _numpy_column(values: list, oid: int) -> np.ndarray:
    has_null = None in values
    if oid in _INTS and not has_null:
        return np.asarray(values, dtype=_INTS[oid][0])
    if oid in _FLOATS and not has_null:
        return np.asarray(values, dtype="float64")
    if oid in _FLOATS or oid in _INTS:
        return np.asarray([np.nan if v is None else float(v) for v in values], dtype="float64")
    if oid == _BOOL and not has_null:
        return np.asarray(values, dtype=bool)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


@functools.lru_cache(maxsize=1)
def _loaders() -> tuple:
    from psycopg.adapt import Loader
    from psycopg.types.string import TextLoader

    class NumberLoader(Loader):
        """numeric (sum of BIGINT, avg) as int when whole, else float: DuckDB gives numbers, not Decimals."""

        def load(self, data):
            text = bytes(data).decode()
            return int(text) if _WHOLE.fullmatch(text) else float(text)

    return TextLoader, NumberLoader


_WHOLE = re.compile(r"-?\d+")


def configure(raw) -> None:
    """Per connection: JSON as text (as DuckDB returns it, in either result format), numeric as int
    or float."""
    from psycopg.types.string import TextBinaryLoader

    text, number = _loaders()
    for name in ("json", "jsonb"):
        raw.adapters.register_loader(name, text)
    raw.adapters.register_loader("json", TextBinaryLoader)
    raw.adapters.register_loader("numeric", number)


_KEY_NAMES = itertools.count(1)
_PRESENT: set[tuple] = set()  # (connection dsn, table, column or None) known to exist


def forget_present_tables() -> None:
    """After tables were dropped (``Store.drop_all``): they must be asked for again."""
    _PRESENT.clear()


#: Rows bulk-inserted into a table by one transaction after which its statistics are refreshed.
ANALYZE_AFTER_ROWS = 1000


class PgConnection(Connection):
    """``Connection`` over a psycopg connection (autocommit; transactions are explicit BEGIN/COMMIT)."""

    dialect = POSTGRES

    def __init__(self, raw):
        self.raw = raw
        self._grown: dict[str, int] = {}  # rows bulk-inserted per table by this transaction
        #: BEGIN and advisory locks not sent yet: they travel with the transaction's first statement
        #: in one pipeline (one round trip instead of three for a single decision's transaction)
        self._deferred: list[tuple[str, list]] = []
        #: writes that travel with the COMMIT (``write_at_commit``), bound here in the client
        self._at_commit: list[str] = []

    def execute(self, sql: str, params: Sequence[Any] | None = None):
        values = list(params) if params is not None else []
        if sql == "ROLLBACK":
            self._at_commit = []  # never sent
        if not self._deferred:
            return self.raw.execute(translate(sql), values)
        deferred, self._deferred = self._deferred, []
        if sql == "ROLLBACK":  # nothing was sent: there is nothing to roll back
            return self.raw.cursor()
        with self.raw.pipeline():
            for statement, args in deferred:
                self.raw.execute(statement, args)
            cur = self.raw.execute(translate(sql), values)
        return cur

    def _send_deferred(self) -> None:
        """Send what `begin` and `lock` deferred, before a statement that cannot join their pipeline."""
        if self._deferred:
            deferred, self._deferred = self._deferred, []
            with self.raw.pipeline():
                for statement, args in deferred:
                    self.raw.execute(statement, args)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = [list(r) for r in rows]
        self._send_deferred()
        if rows:
            with self.raw.cursor() as cur:
                cur.executemany(translate(sql), rows)

    def frame(self, sql: str, params: Sequence[Any] | None = None, *, large: bool = False) -> pd.DataFrame:
        cur = self._bulk(sql, params)
        names = [d.name for d in cur.description]
        oids = [d.type_code for d in cur.description]
        rows = cur.fetchall()
        columns = list(zip(*rows)) if rows else [() for _ in names]
        data = {index: _column(list(columns[index]), oid) for index, oid in enumerate(oids)}
        frame = pd.DataFrame(data, index=pd.RangeIndex(len(rows)))
        frame.columns = names
        return frame

    def _bulk(self, sql: str, params: Sequence[Any] | None):
        """A cursor for a bulk read. Outside a transaction the rows come in PostgreSQL's binary
        format, which psycopg reads several times faster than text (values bound by the server);
        a statement the server cannot type that way (``? IS NULL``) is read as text."""
        import psycopg

        self._send_deferred()
        if self.raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            try:
                cur = psycopg.Cursor(self.raw)
                cur.execute(translate(sql), list(params) if params is not None else None, binary=True)
                return cur
            except (psycopg.errors.IndeterminateDatatype, psycopg.errors.AmbiguousFunction,
                    psycopg.errors.UndefinedFunction):
                pass
        return self.execute(sql, params)

    def numpy(self, sql: str, params: Sequence[Any] | None = None) -> dict[str, np.ndarray]:
        cur = self._bulk(sql, params)
        rows = cur.fetchall()
        columns = list(zip(*rows)) if rows else [() for _ in cur.description]
        return {d.name: _numpy_column(list(columns[i]), d.type_code) for i, d in enumerate(cur.description)}

    def insert_frame(self, table: str, frame: pd.DataFrame, json_columns: Iterable[str] = ()) -> None:
        """COPY the rows in (JSON columns arrive as text, which the json type reads as it is)."""
        if frame.empty:
            return
        cols = list(frame.columns)
        columns = [_python_values(frame[c]) for c in cols]
        self._send_deferred()
        with self.raw.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as copy:
            for row in zip(*columns):
                copy.write_row(row)
        self._grown[table] = self._grown.get(table, 0) + len(frame)

    def insert_columns(self, table: str, columns: dict[str, list], types: dict[str, str] | None = None,
                       json_columns: Iterable[str] = ()) -> None:
        """COPY the rows in straight from the lists; numbers as plain Python values, NaN as NULL (as
        ``insert_frame`` does)."""
        n = len(next(iter(columns.values()))) if columns else 0
        if not n:
            return
        types = types or {}
        values = [[None if v is None or (isinstance(v, float) and math.isnan(v)) else _plain(v) for v in column]
                  if types.get(name, "TEXT") != "TEXT" else column for name, column in columns.items()]
        self._send_deferred()
        with self.raw.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in zip(*values):
                copy.write_row(row)
        self._grown[table] = self._grown.get(table, 0) + n

    def after_commit(self) -> None:
        """ANALYZE the database after a transaction that bulk-filled a table. Without statistics the
        planner takes fresh tables for empty and joins 20,000 responses with runs, models and items
        by nested loops (30-40 s instead of 0.2 s for the score table); autovacuum would analyze
        them only later, and never a table as small as ``runs``."""
        grown = any(rows >= ANALYZE_AFTER_ROWS for rows in self._grown.values())
        self._grown.clear()
        if grown:
            try:
                self.raw.execute("ANALYZE")
            except Exception as exc:  # noqa: BLE001 - the write is committed; autovacuum will catch up
                logger.warning("ANALYZE after a bulk write failed: %s", exc)

    @contextmanager
    def keys(self, values: Sequence[Any], sql_type: str = "BIGINT") -> Iterator[str]:
        """A temporary table filled by COPY (inside the caller's transaction)."""
        name = f"_keys_{next(_KEY_NAMES)}"
        self.execute(f"CREATE TEMP TABLE {name} (key {sql_type})")
        try:
            with self.raw.cursor() as cur, cur.copy(f"COPY {name} (key) FROM STDIN") as copy:
                for value in values:
                    copy.write_row([_plain(value)])
            yield name
        finally:
            try:
                self.execute(f"DROP TABLE IF EXISTS {name}")
            except Exception as exc:  # noqa: BLE001 - an aborted transaction drops it with the rollback
                logger.debug("dropping %s: %s", name, exc)

    def has_table(self, table: str) -> bool:
        return self._present((table, None), "SELECT count(*) FROM information_schema.tables WHERE table_name = ? "
                             "AND table_schema = current_schema()", [table])

    def has_column(self, table: str, column: str) -> bool:
        return self._present((table, column), "SELECT count(*) FROM information_schema.columns WHERE table_name = ? "
                             "AND column_name = ? AND table_schema = current_schema()", [table, column])

    def _present(self, what: tuple[str, str | None], sql: str, params: list) -> bool:
        """Whether a table or column exists. A found one is remembered for this database: tables and
        columns are only ever added (by migrations), and the information schema is slow to ask."""
        key = (self.raw.info.dsn, *what)
        if key in _PRESENT:
            return True
        found = bool(self.execute(sql, params).fetchone()[0])
        if found:
            _PRESENT.add(key)
        return found

    def tables(self) -> list[str]:
        return [r[0] for r in self.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_type = 'BASE TABLE' ORDER BY 1").fetchall()]

    def columns(self, table: str) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
            "AND table_schema = current_schema() ORDER BY ordinal_position", [table]).fetchall()]

    def begin(self) -> None:
        """BEGIN, sent with the transaction's first statement (see ``execute``)."""
        self._deferred = [("BEGIN", [])]
        self._at_commit = []

    def write_at_commit(self, sql: str, params: Sequence[Any] | None = None) -> None:
        """Bound now (psycopg's client-side binding, as every statement here), sent with the COMMIT."""
        import psycopg

        if not self._deferred and self.raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            self.execute(sql, params)  # no transaction open: nothing to travel with
            return
        bound = self.raw.cursor().mogrify(translate(sql), list(params) if params is not None else [])
        self._at_commit.append(bound.replace("%", "%%"))  # the COMMIT's text is formatted once more

    def commit(self, last: str | None = None) -> None:
        """The writes kept for it, ``last`` and COMMIT in one round trip (a decision's commit is most of its
        latency)."""
        self._send_deferred()
        head = [*self._at_commit, *([translate(last)] if last else [])]
        self._at_commit = []
        self.raw.execute("; ".join([*head, "COMMIT"]), [])

    def lock(self, key: str) -> None:
        """The transaction's advisory lock on ``key``; inside a transaction it is sent with the next statement."""
        statement = translate("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))")
        if self._deferred:
            self._deferred.append((statement, [key]))
        else:
            self.raw.execute(statement, [key]).fetchall()

    def advance_sequence(self, sequence: str, above: int) -> None:
        if above >= 1:
            self.execute(f"SELECT setval('{sequence}', ?)", [int(above)]).fetchall()

    def close(self) -> None:
        self.raw.close()


def _python_values(column: pd.Series) -> list:
    """A frame column as Python values COPY can write, missing values as None (column-wise: a bulk
    insert of tens of thousands of rows should not convert value by value through pandas)."""
    kind = column.dtype.kind
    if kind in "iub" and not isinstance(column.dtype, pd.api.extensions.ExtensionDtype):
        return column.tolist()
    if kind == "f" and not isinstance(column.dtype, pd.api.extensions.ExtensionDtype):
        return [None if math.isnan(v) else v for v in column.tolist()]
    if kind == "M":
        return [None if pd.isna(v) else v.to_pydatetime() for v in column]
    values = column.astype(object).tolist()
    return [None if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and math.isnan(v)) else _plain(v)
            for v in values]


def _plain(value: Any) -> Any:
    """A value COPY can write: numpy scalars as Python numbers, pandas timestamps as datetimes."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    return value

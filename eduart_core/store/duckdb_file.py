"""The DuckDB file backend: the one-writer lock, the read pool and the stat-signature data version.

DuckDB lets one process hold a file read-write, or several read-only, never both. Long jobs
therefore never keep a connection open: every caller opens a short-lived connection through
``Store.connect``/``Store.transaction``, which retries briefly while another process holds the
lock and then fails with one clear line (``StoreLockedError``).

Every other way a store can fail to open or write is one line too: a file that is not a DuckDB
store (a SQLite file, a text file) is refused before DuckDB looks at it, and extension
auto-install/auto-load are off so DuckDB never reaches for the network; a store written by a
newer EduArt Studio (a schema version we do not know) is refused rather than written to; a full
disk says "no space left on device" with the path, instead of the rollback error that used to
hide it.

Reading is pooled: opening a DuckDB file costs 20-150 ms (more on a busy machine), and one page
render used to open it five to ten times. ``_ReadPool`` keeps one read-only "anchor" connection
per file while reads come in and hands every caller its own cheap connection to the same
database instance; the anchor closes after a short idle time, so a writer in another process
(a run's ingest, the CLI) waits at most that long for the lock. A write in this process closes
the anchor first. ``data_version`` is answered from the files' stat signature when nothing has
changed on disk, so checking for new data costs no connection at all.

A job that owns its file (a fresh demo build into its temporary file) holds it instead
(``DuckDBStore.held``): one read-write connection for the whole job, each transaction a cursor of
it, so a build of a few hundred transactions pays one open and one checkpoint.
"""
from __future__ import annotations

import atexit
import itertools
import logging
import os
import threading
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from ..fileio import is_disk_full
from .connection import DUCKDB, Connection, register_wrapper
from .core import Backend, Store, check_schema, is_database_url, migrate, register_backend
from .errors import StoreConflictError, StoreError, StoreFullError, StoreLockedError

logger = logging.getLogger(__name__)

#: DuckDB must never download or load an extension because of a file's content (a SQLite file as
#: --db made it try to fetch the sqlite scanner over the network).
DUCKDB_CONFIG: dict[str, str | bool | int | float | list[str]] = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
#: Bytes 8-11 of every DuckDB database file.
DUCKDB_MAGIC = b"DUCK"
SQLITE_MAGIC = b"SQLite format 3\x00"


_KEY_NAMES = itertools.count(1)


_ARROW_TEXT = {"string", "large_string"}
_ARROW_NUMBERS = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float", "double"}


def _text_dtype() -> Any:
    return pd.Series(["x"]).dtype  # the dtype pandas gives text (df() gives the same)


def arrow_frame(table: Any) -> pd.DataFrame:
    """A DataFrame of an Arrow result with ``df()``'s dtypes: text and null-free numbers converted by
    Arrow, any other column through DuckDB's own conversion."""
    names = list(table.column_names)
    text = _text_dtype()
    if len(set(names)) != len(names) or table.num_rows == 0 or not isinstance(text, pd.StringDtype):
        return duckdb.from_arrow(table).df()
    # df() gives an all-NULL text column as objects: those go the slow way too
    fast = [n for n, f in zip(names, table.schema)
            if (str(f.type) in _ARROW_TEXT and table.column(n).null_count < table.num_rows)
            or (str(f.type) in _ARROW_NUMBERS and table.column(n).null_count == 0)]
    # one chunk per column, as df() gives (a result arrives in many batches; pandas reads a chunked
    # column more slowly on every later take and factorize)
    out = (table.select(fast).combine_chunks().to_pandas(types_mapper=lambda t: text if str(t) in _ARROW_TEXT
                                                         else None)
           if fast else pd.DataFrame(index=pd.RangeIndex(table.num_rows)))
    rest = [n for n in names if n not in set(fast)]
    if rest:
        slow = duckdb.from_arrow(table.select(rest)).df()
        for n in rest:
            out[n] = slow[n]
    return out[names]


class DuckConnection(Connection):
    """``Connection`` over a DuckDB connection (``raw``); results are DuckDB's own."""

    dialect = DUCKDB

    def __init__(self, raw: duckdb.DuckDBPyConnection):
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] | None = None):
        return self.raw.execute(sql, params) if params is not None else self.raw.execute(sql)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = [list(r) for r in rows]
        if rows:
            self.raw.executemany(sql, rows)

    def frame(self, sql: str, params: Sequence[Any] | None = None, *, large: bool = False) -> pd.DataFrame:
        """The result as DuckDB's own ``df()`` gives it; ``large``: text columns through Arrow.

        Why: ``df()`` builds a Python object per text value and pandas then packs them back into
        Arrow strings (0.6 s of a 500,000-answer read); an Arrow result hands pandas the strings as
        they are. Columns of other types (or a result with repeated names) keep ``df()``'s conversion,
        so every dtype is the one ``df()`` gives. Only for large reads: on a small result the Arrow
        round trip costs a few milliseconds more than ``df()``."""
        if not large:
            return self.execute(sql, params).df()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Arrow output on a DB-API result makes an extra copy"
            table = self.execute(sql, params).to_arrow_table()
        return arrow_frame(table)

    def numpy(self, sql: str, params: Sequence[Any] | None = None) -> dict[str, np.ndarray]:
        return self.execute(sql, params).fetchnumpy()

    def insert_frame(self, table: str, frame: pd.DataFrame, json_columns: Iterable[str] = ()) -> None:
        """One INSERT ... SELECT over the registered frame (DuckDB reads it directly: fast for bulk)."""
        if frame.empty:
            return
        self._insert_registered(table, frame, list(frame.columns), json_columns)

    def insert_columns(self, table: str, columns: dict[str, list], types: dict[str, str] | None = None,
                       json_columns: Iterable[str] = ()) -> None:
        """One INSERT ... SELECT over an Arrow table built from the lists (converted in C, read by
        DuckDB without a copy); a NaN number is stored as NULL, as ``insert_frame`` does."""
        if not columns or not len(next(iter(columns.values()))):
            return
        import pyarrow as pa

        arrow_types = {"BIGINT": pa.int64(), "INTEGER": pa.int32(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_(),
                       "TEXT": pa.string()}
        types = types or {}
        data = pa.table({name: pa.array(values, type=arrow_types[types.get(name, "TEXT")], from_pandas=True)
                         for name, values in columns.items()})
        self._insert_registered(table, data, list(columns), json_columns)

    def _insert_registered(self, table: str, data: Any, cols: list[str], json_columns: Iterable[str]) -> None:
        """INSERT ... SELECT over ``data`` (a DataFrame or an Arrow table) registered for the statement."""
        json_columns = set(json_columns)
        select = ", ".join(f"CAST({c} AS JSON)" if c in json_columns else c for c in cols)
        name = f"_bulk_{table}"
        self.raw.register(name, data)
        try:
            self.raw.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {select} FROM {name}")
        finally:
            self.raw.unregister(name)

    @contextmanager
    def keys(self, values: Sequence[Any], sql_type: str = "BIGINT") -> Iterator[str]:
        name = f"_keys_{next(_KEY_NAMES)}"
        self.raw.register(name, pd.DataFrame({"key": list(values)}, dtype=object if sql_type == "TEXT" else None))
        try:
            yield name
        finally:
            self.raw.unregister(name)

    def has_table(self, table: str) -> bool:
        return bool((self.raw.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ? "
                                     "AND table_schema = 'main'", [table]).fetchone() or (0,))[0])

    def has_column(self, table: str, column: str) -> bool:
        return bool((self.raw.execute("SELECT count(*) FROM information_schema.columns WHERE table_name = ? "
                                     "AND column_name = ? AND table_schema = 'main'", [table, column]).fetchone() or (0,))[0])

    def tables(self) -> list[str]:
        return [r[0] for r in self.raw.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
            "AND table_type = 'BASE TABLE' ORDER BY 1").fetchall()]

    def columns(self, table: str) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.raw.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
            "AND table_schema = 'main' ORDER BY ordinal_position", [table]).fetchall()]

    def advance_sequence(self, sequence: str, above: int) -> None:
        # DuckDB has no setval: draw values until the sequence has passed ``above``.
        current = int((self.raw.execute(f"SELECT nextval('{sequence}')").fetchone() or (0,))[0])
        if current < above:
            self.raw.execute(f"SELECT max(nextval('{sequence}')) FROM range(?)", [int(above - current)]).fetchall()

    def close(self) -> None:
        self.raw.close()


#: A DuckDB file opens with a main header and two database headers of 4 KiB each: a file shorter
#: than that with DuckDB's magic bytes was cut short (a partial copy or download).
DUCKDB_HEADERS_BYTES = 3 * 4096


def foreign_file_reason(path: Path) -> str | None:
    """Why ``path`` is not a complete DuckDB store, from its headers and size; None when it may be one.

    The headers cannot tell a cut-short file from a whole one beyond them (DuckDB may give back free
    blocks at the end of a file), so a cut past the headers is found when DuckDB reads the block that is missing.
    """
    try:
        with open(path, "rb") as handle:
            head = handle.read(DUCKDB_HEADERS_BYTES)
        size = path.stat().st_size
    except OSError:
        return None  # unreadable: let the open report the cause
    if not head:
        return None  # an empty file: DuckDB starts a new database in it
    if head.startswith(SQLITE_MAGIC):
        return "it is a SQLite database, not an EduArt store (DuckDB)"
    if len(head) < 12 or head[8:12] != DUCKDB_MAGIC:
        return "it is not a DuckDB database file"
    if size < DUCKDB_HEADERS_BYTES:
        return f"the file ends after {size} bytes, inside DuckDB's headers: truncated or not fully copied"
    return None


def incomplete_store(path: Path, reason: str) -> StoreError:
    """The one line for a file that is not a whole store; the file itself is left exactly as it is."""
    return StoreError(f"{path} is not a complete EduArt Studio store ({reason}; the file was left untouched)")


def _damage_reason(exc: BaseException) -> str | None:
    """Why DuckDB could not read the file, when the file itself is cut short or damaged; else None."""
    text = str(exc)
    if "Could not read enough bytes" in text:
        return "the file ends early: truncated or not fully copied"
    if "Corrupt database file" in text or "checksum" in text.lower():
        return "a block fails its checksum: the file is damaged"
    if "not a valid DuckDB database file" in text or "database file with version number" in text.lower():
        return "its header is not a DuckDB header this version reads"
    return None


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return "lock" in text and ("conflicting" in text or "could not set" in text)


def _is_mode_clash(exc: Exception) -> bool:
    """Another thread of this process holds the file in the other mode (read-only vs read-write)."""
    return "different configuration" in str(exc).lower()


def _signature(path: Path) -> tuple | None:
    """What the file system says about the store and its WAL: changes whenever DuckDB writes."""
    parts: list[tuple[int, int, int] | None] = []
    for file in (path, path.with_name(path.name + ".wal")):
        try:
            st = file.stat()
        except FileNotFoundError:
            parts.append(None)
            continue
        except OSError:
            return None
        parts.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(parts) if parts[0] is not None else None


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


class _Anchor:
    """The pooled read-only connection of one file and who is using it."""

    def __init__(self, con: duckdb.DuckDBPyConnection, inode: int | None):
        self.con = con
        self.inode = inode
        self.users = 0
        self.opened = time.monotonic()
        self.last_used = self.opened
        self.timer: threading.Timer | None = None


class _ReadPool:
    """One read-only anchor connection per store file, shared by every thread of the process.

    Callers get their own connection to the anchor's database instance (DuckDB hands those out in
    microseconds while an instance is open) and close it when done. The anchor closes ``idle_s``
    after its last user left, or as soon as no one uses it once it is ``max_age_s`` old; after such
    a close, reads take plain short connections for ``gap_s`` (as before the pool), so a process
    that reads without pause (a page following a run) still leaves the writer of that run its
    chances to take the lock.
    """

    def __init__(self, idle_s: float = 0.3, max_age_s: float = 1.0, gap_s: float = 0.5):
        self.idle_s = idle_s
        self.max_age_s = max_age_s
        self.gap_s = gap_s
        self._anchors: dict[str, _Anchor] = {}
        self._gaps: dict[str, float] = {}
        self._cond = threading.Condition()
        self._closing = False

    def lease(self, key: str, open_anchor) -> tuple[duckdb.DuckDBPyConnection, bool]:
        """(a connection of the caller's own, pooled?): a cursor of the pooled instance (opening the
        anchor if needed), or a plain connection while exiting or in the gap after a long use."""
        inode = _inode(key)
        with self._cond:
            plain = self._closing or (key not in self._anchors and time.monotonic() < self._gaps.get(key, 0.0))
        if plain:
            return open_anchor(), False
        with self._cond:
            anchor = self._anchors.get(key)
            if anchor is not None and anchor.inode != inode and not anchor.users:
                self._close(key)  # the file was replaced (a rebuilt demo): never read the old one
                anchor = None
            if anchor is None:
                anchor = self._anchors[key] = _Anchor(open_anchor(), inode)
            anchor.users += 1
            try:
                return anchor.con.cursor(), True
            except duckdb.Error:
                anchor.users -= 1
                raise

    def release(self, key: str, con: duckdb.DuckDBPyConnection, pooled: bool = True) -> None:
        try:
            con.close()
        finally:
            if pooled:
                self._left(key)

    def _left(self, key: str) -> None:
        with self._cond:
            if self._closing:
                return
            anchor = self._anchors.get(key)
            if anchor is None:
                return
            anchor.users -= 1
            anchor.last_used = time.monotonic()
            if anchor.users == 0:
                self._cond.notify_all()
                if anchor.last_used - anchor.opened >= self.max_age_s:
                    self._close(key)
                    self._gaps[key] = time.monotonic() + self.gap_s
                elif anchor.timer is None:
                    self._arm(key, anchor, self.idle_s)

    def _arm(self, key: str, anchor: _Anchor, delay: float) -> None:
        timer = threading.Timer(delay, self._expire, args=(key, anchor))
        # Not a daemon: Python joins it before exiting (at most ``idle_s``). A daemon thread still
        # inside DuckDB when the interpreter finalises is stopped there and aborts the process
        # ("FATAL: exception not rethrown").
        timer.daemon = False
        anchor.timer = timer
        timer.start()

    def _expire(self, key: str, anchor: _Anchor) -> None:
        with self._cond:
            if self._anchors.get(key) is not anchor:
                return
            anchor.timer = None
            if anchor.users:
                return  # the last user to leave arms a new timer
            left = self.idle_s - (time.monotonic() - anchor.last_used)
            if left > 0.01:
                self._arm(key, anchor, left)
            else:
                self._close(key)

    def _close(self, key: str) -> None:
        anchor = self._anchors.pop(key, None)
        if anchor is None:
            return
        if anchor.timer is not None:
            anchor.timer.cancel()
        try:
            anchor.con.close()
        except duckdb.Error as exc:  # closing a connection that failed: nothing left to free
            logger.info("closing the pooled read connection of %s: %s", key, exc)

    def close(self, key: str, wait_s: float = 10.0) -> None:
        """Close the anchor of one file once its current readers are done (before a write)."""
        deadline = time.monotonic() + wait_s
        with self._cond:
            while key in self._anchors and self._anchors[key].users:
                left = deadline - time.monotonic()
                if left <= 0:
                    logger.warning("store %s: %d reader(s) still busy; writing alongside them",
                                   key, self._anchors[key].users)
                    return
                self._cond.wait(left)
            self._close(key)

    def close_all(self) -> None:
        with self._cond:
            for key in list(self._anchors):
                if not self._anchors[key].users:
                    self._close(key)

    def shutdown(self) -> None:
        """At interpreter exit: close every anchor still open from the main thread, so no DuckDB
        instance outlives the interpreter."""
        with self._cond:
            self._closing = True
            for key in list(self._anchors):
                self._close(key)


_POOL = _ReadPool()
atexit.register(_POOL.shutdown)
#: Data version last read per store file, with the file signature it was read at.
_VERSIONS: dict[str, tuple[tuple, int]] = {}
_VERSIONS_LOCK = threading.Lock()


#: Write connections held open by `DuckDBStore.held`, per store file: every connection of this process
#: to that file is then a cursor of it (no open, no checkpoint per transaction).
_HELD: dict[str, duckdb.DuckDBPyConnection] = {}
_HELD_LOCK = threading.Lock()


def _held_cursor(key: str) -> duckdb.DuckDBPyConnection | None:
    """A new cursor of the connection `DuckDBStore.held` keeps for ``key`` (None: the file is not held).
    Made under the lock, as the read pool makes its cursors: the connection is shared by threads."""
    with _HELD_LOCK:
        held = _HELD.get(key)
        return held.cursor() if held is not None else None


def release_readers(path: Path | str | None = None) -> None:
    """Close the pooled read connection(s) now (tests and tools that open the file themselves)."""
    if path is None:
        _POOL.close_all()
    else:
        _POOL.close(str(path))


class DuckDBStore(Store):
    """A store file plus the folders that live next to it (images, run journals, cache)."""

    is_file = True
    path: Path

    def __init__(self, path: str | os.PathLike | None = None, lock_timeout_s: float = 10.0):
        from .core import default_db_path

        self.path = Path(path).expanduser() if path else Path(default_db_path())
        self.lock_timeout_s = lock_timeout_s

    @property
    def local_base(self) -> Path:
        # Folders kept next to the DB file, named after it so two stores in one folder never mix.
        return self.path.parent / self.path.stem

    def exists(self) -> bool:
        return self.path.exists()

    def _open(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        if self.path.exists():
            reason = foreign_file_reason(self.path)
            if reason:
                raise incomplete_store(self.path, reason)
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.05
        while True:
            try:
                return duckdb.connect(str(self.path), read_only=read_only, config=DUCKDB_CONFIG)
            except duckdb.Error as exc:  # IOException on lock conflicts
                if read_only and _is_mode_clash(exc):
                    # This process already writes the file: a read-write connection reads too.
                    try:
                        return duckdb.connect(str(self.path), read_only=False, config=DUCKDB_CONFIG)
                    except duckdb.Error:
                        pass
                busy = _is_lock_error(exc) or _is_mode_clash(exc)
                if not busy or time.monotonic() >= deadline:
                    if busy:
                        raise StoreLockedError(
                            f"store {self.path} is locked by another process; try again when it finishes"
                        ) from None
                    raise _one_line_error(self.path, exc) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator[DuckConnection]:
        """A short-lived connection, migrated to the current schema; closed on exit.

        Read-only connections come from the process's read pool (see the module docstring); a
        read-write one first closes this file's pooled reader, since DuckDB cannot hold one file
        in both modes in one process.
        """
        if read_only and not self.path.exists():
            raise StoreError(f"no store at {self.path}; run 'python -m eduart_core demo' or an import first")
        key = str(self.path)
        cursor = _held_cursor(key)
        if cursor is not None:  # a build holds the file: a cursor of its connection, read or write
            try:
                yield DuckConnection(cursor)
            finally:
                cursor.close()
            return
        if read_only:
            con, pooled = _POOL.lease(key, self._open_reader)
            try:
                yield DuckConnection(con)
            except duckdb.Error as exc:  # a block past the end of a cut-short file, or a damaged one
                damage = _damage_reason(exc)
                if damage:
                    raise incomplete_store(self.path, damage) from None
                raise
            finally:
                _POOL.release(key, con, pooled)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _POOL.close(key, wait_s=self.lock_timeout_s)
        con = self._open(read_only)
        try:
            try:
                migrate(con, self.path)
            except duckdb.Error as exc:
                raise _one_line_error(self.path, exc) from None
            yield DuckConnection(con)
        finally:
            con.close()

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold one read-write connection to the file while the block runs; every connection of this
        process to the file is a cursor of it meanwhile, and it closes (one checkpoint) at the end.

        Only for a job that owns the file (a fresh demo build into its temporary file): another process
        cannot open it meanwhile (it waits, then fails with one line), unlike between short
        transactions. Nested holds of one file are one hold."""
        key = str(self.path)
        with _HELD_LOCK:
            nested = key in _HELD
        if nested:
            yield
            return
        # opened outside the lock: closing this file's readers may wait, and other files' connections
        # ask the lock whether they are held
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _POOL.close(key, wait_s=self.lock_timeout_s)
        con = self._open(False)
        try:
            migrate(con, self.path)
        except duckdb.Error as exc:
            con.close()
            raise _one_line_error(self.path, exc) from None
        with _HELD_LOCK:
            _HELD[key] = con
        try:
            yield
        finally:
            with _HELD_LOCK:
                _HELD.pop(key, None)
            con.close()

    def _open_reader(self) -> duckdb.DuckDBPyConnection:
        """A read-only connection whose schema this code knows (checked once per pooled anchor)."""
        con = self._open(True)
        try:
            check_schema(con, self.path)
        except BaseException as exc:
            con.close()
            if isinstance(exc, duckdb.Error):
                raise _one_line_error(self.path, exc) from None
            raise
        return con

    def _write_error(self, exc: BaseException) -> StoreError | None:
        """Every DuckDB error escaping a write as one line: disk full, a concurrent write (try again),
        else the database's own first line."""
        if not isinstance(exc, duckdb.Error):
            return None
        damage = _damage_reason(exc)
        if damage:
            return incomplete_store(self.path, damage)
        if is_disk_full(exc):
            return StoreFullError(f"no space left on device writing store {self.path}; "
                                  "nothing of this change was saved")
        if isinstance(exc, duckdb.TransactionException):
            return StoreConflictError(f"another session changed store {self.path} at the same moment; "
                                      "nothing of this change was saved, try again")
        text = str(exc).strip()
        return StoreError(f"could not write store {self.path}: {text.splitlines()[0] if text else type(exc).__name__}; "
                          "nothing of this change was saved")

    def data_version(self) -> int:
        """A counter bumped by every committed write: the cache key for analysis results.

        Answered without opening the file when its stat signature (and its WAL's) is the one the
        version was last read at: any write changes the signature.
        """
        key = str(self.path)
        before = _signature(self.path)
        if before is None:
            return -1
        with _VERSIONS_LOCK:
            seen = _VERSIONS.get(key)
        if seen is not None and seen[0] == before:
            return seen[1]
        with self.connect(read_only=True) as con:
            try:
                row = con.execute("SELECT value FROM meta WHERE key = 'data_version'").fetchone()
            except duckdb.Error:
                return -1
        version = int(row[0]) if row else -1
        if _signature(self.path) == before:  # nothing was written while we read
            with _VERSIONS_LOCK:
                _VERSIONS[key] = (before, version)
        return version

    def side_files(self) -> list[Path]:
        """The store file and its DuckDB WAL."""
        return [self.path, self.path.with_name(self.path.name + ".wal")]

    def drop_all(self) -> None:
        release_readers(self.path)
        for path in self.side_files():
            path.unlink(missing_ok=True)


#: A write that collided with another transaction of this process (DuckDB's optimistic concurrency).
CONFLICT_ERRORS = (duckdb.TransactionException, StoreConflictError)


def _one_line_error(path: Path, exc: BaseException) -> StoreError:
    """The StoreError for a DuckDB failure: the cause on one line, disk full named as such."""
    if is_disk_full(exc):
        return StoreFullError(f"no space left on device writing store {path}")
    damage = _damage_reason(exc)
    if damage:
        return incomplete_store(path, damage)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return StoreError(f"cannot open store {path}: {text}")


register_backend(Backend(DUCKDB, DuckDBStore, lambda location: not is_database_url(location), release_readers))
register_wrapper(lambda con: isinstance(con, duckdb.DuckDBPyConnection), DuckConnection)

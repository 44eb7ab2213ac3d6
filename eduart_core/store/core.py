"""Opening the DuckDB store: paths, migrations, short transactions and the one-writer lock.

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
"""
from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ..fileio import is_disk_full
from .schema import MIGRATIONS

logger = logging.getLogger(__name__)

#: DuckDB must never download or load an extension because of a file's content (a SQLite file as
#: --db made it try to fetch the sqlite scanner over the network).
DUCKDB_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
#: Bytes 8-11 of every DuckDB database file.
DUCKDB_MAGIC = b"DUCK"
SQLITE_MAGIC = b"SQLite format 3\x00"

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DB = PROJECT_ROOT / "data" / "eduart.duckdb"


class StoreError(Exception):
    """A store problem the user can act on; the message is one readable line."""


class StoreLockedError(StoreError):
    """Another process holds the write lock for longer than we are willing to wait."""


class StoreFullError(StoreError):
    """The disk under the store is full; nothing of the failed transaction was written."""


class StoreVersionError(StoreError):
    """The store was written by a newer EduArt Studio (its schema is newer than ours)."""


def latest_schema_version() -> int:
    return max(number for number, _, _ in MIGRATIONS)


def foreign_file_reason(path: Path) -> str | None:
    """Why ``path`` is not a DuckDB store, from its first bytes; None when it may be one."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(16)
    except OSError:
        return None  # unreadable: let the open report the cause
    if not head:
        return None  # an empty file: DuckDB starts a new database in it
    if head.startswith(SQLITE_MAGIC):
        return "it is a SQLite database, not an EduArt store (DuckDB)"
    if len(head) < 12 or head[8:12] != DUCKDB_MAGIC:
        return "it is not a DuckDB database file"
    return None


def default_db_path() -> Path:
    """The store used when no --db is given: $EDUART_DB, else data/eduart.duckdb."""
    env = os.environ.get("EDUART_DB")
    return Path(env).expanduser() if env else DEFAULT_DB


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return "lock" in text and ("conflicting" in text or "could not set" in text)


def _is_mode_clash(exc: Exception) -> bool:
    """Another thread of this process holds the file in the other mode (read-only vs read-write)."""
    return "different configuration" in str(exc).lower()


class Store:
    """A store file plus the folders that live next to it (images, run journals, cache)."""

    def __init__(self, path: str | os.PathLike | None = None, lock_timeout_s: float = 10.0):
        self.path = Path(path).expanduser() if path else default_db_path()
        self.lock_timeout_s = lock_timeout_s

    # Folders kept next to the DB file, named after it so two stores in one folder never mix.
    @property
    def images_dir(self) -> Path:
        return self.path.parent / f"{self.path.stem}_images"

    @property
    def runs_dir(self) -> Path:
        return self.path.parent / f"{self.path.stem}_runs"

    @property
    def cache_dir(self) -> Path:
        return self.path.parent / f"{self.path.stem}_cache"

    def exists(self) -> bool:
        return self.path.exists()

    def _open(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        if self.path.exists():
            reason = foreign_file_reason(self.path)
            if reason:
                raise StoreError(f"cannot open store {self.path}: {reason}")
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
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A short-lived connection, migrated to the current schema; closed on exit."""
        if read_only and not self.path.exists():
            raise StoreError(f"no store at {self.path}; run 'python -m eduart_core demo' or an import first")
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        con = self._open(read_only)
        try:
            try:
                if read_only:
                    check_schema(con, self.path)
                else:
                    migrate(con, self.path)
            except duckdb.Error as exc:
                raise _one_line_error(self.path, exc) from None
            yield con
        finally:
            con.close()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-write connection inside one transaction: all or nothing, and bumps data_version."""
        with self.connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
                con.execute(
                    "UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) WHERE key = 'data_version'"
                )
                con.execute("COMMIT")
            except BaseException as exc:
                _rollback(con)
                if isinstance(exc, duckdb.Error) and is_disk_full(exc):
                    raise StoreFullError(f"no space left on device writing store {self.path}; "
                                         "nothing of this change was saved") from None
                raise

    def data_version(self) -> int:
        """A counter bumped by every committed write: the cache key for analysis results."""
        if not self.path.exists():
            return -1
        with self.connect(read_only=True) as con:
            try:
                row = con.execute("SELECT value FROM meta WHERE key = 'data_version'").fetchone()
            except duckdb.Error:
                return -1
        return int(row[0]) if row else -1


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back if a transaction is still open. A failed COMMIT has already ended it, and the
    "cannot rollback - no transaction is active" error must never replace the real cause."""
    try:
        con.execute("ROLLBACK")
    except duckdb.Error as exc:
        logger.debug("rollback after a failed transaction: %s", exc)


def _one_line_error(path: Path, exc: BaseException) -> StoreError:
    """The StoreError for a DuckDB failure: the cause on one line, disk full named as such."""
    if is_disk_full(exc):
        return StoreFullError(f"no space left on device writing store {path}")
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return StoreError(f"cannot open store {path}: {text}")


def check_schema(con: duckdb.DuckDBPyConnection, path: Path | None = None) -> int:
    """The store's schema version (0 for a new file); StoreVersionError when it is newer than ours."""
    exists = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version' "
                         "AND table_schema = 'main'").fetchone()[0]
    if not exists:
        return 0
    row = con.execute("SELECT max(version) FROM main.schema_version").fetchone()
    current = int(row[0]) if row and row[0] is not None else 0
    _refuse_newer(current, path)
    return current


def _refuse_newer(current: int, path: Path | None) -> None:
    known = latest_schema_version()
    if current > known:
        where = f"store {path}" if path else "this store"
        raise StoreVersionError(f"{where} was made by a newer EduArt Studio (schema version {current}, this "
                                f"version knows up to {known}); upgrade EduArt Studio to open it")


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT, "
        "applied_at TIMESTAMP DEFAULT current_timestamp)"
    )
    row = con.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def migrate(con: duckdb.DuckDBPyConnection, path: Path | None = None) -> int:
    """Apply every migration the store has not recorded yet; each in its own transaction.

    A store newer than this code is refused (``StoreVersionError``) before anything is written.
    Recorded numbers, not just the highest one, decide: a store that lacks an earlier migration
    (branches that each added one, merged in another order) still gets it.
    """
    current = check_schema(con, path) or schema_version(con)
    applied = {int(row[0]) for row in con.execute("SELECT version FROM schema_version").fetchall()}
    for number, name, statements in MIGRATIONS:
        if number in applied:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            for sql in statements:
                con.execute(sql)
            con.execute("INSERT INTO schema_version (version, name) VALUES (?, ?)", [number, name])
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)
            raise
        current = max(current, number)
    return current

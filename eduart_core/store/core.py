"""Opening the DuckDB store: paths, migrations, short transactions and the one-writer lock.

DuckDB lets one process hold a file read-write, or several read-only, never both. Long jobs
therefore never keep a connection open: every caller opens a short-lived connection through
``Store.connect``/``Store.transaction``, which retries briefly while another process holds the
lock and then fails with one clear line (``StoreLockedError``).
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from .schema import MIGRATIONS

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DB = PROJECT_ROOT / "data" / "eduart.duckdb"


class StoreError(Exception):
    """A store problem the user can act on; the message is one readable line."""


class StoreLockedError(StoreError):
    """Another process holds the write lock for longer than we are willing to wait."""


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
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.05
        while True:
            try:
                return duckdb.connect(str(self.path), read_only=read_only)
            except duckdb.Error as exc:  # IOException on lock conflicts
                if read_only and _is_mode_clash(exc):
                    # This process already writes the file: a read-write connection reads too.
                    try:
                        return duckdb.connect(str(self.path), read_only=False)
                    except duckdb.Error:
                        pass
                busy = _is_lock_error(exc) or _is_mode_clash(exc)
                if not busy or time.monotonic() >= deadline:
                    if busy:
                        raise StoreLockedError(
                            f"store {self.path} is locked by another process; try again when it finishes"
                        ) from None
                    raise StoreError(f"cannot open store {self.path}: {exc}") from None
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
            if not read_only:
                migrate(con)
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
            except BaseException:
                con.execute("ROLLBACK")
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


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT, "
        "applied_at TIMESTAMP DEFAULT current_timestamp)"
    )
    row = con.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def migrate(con: duckdb.DuckDBPyConnection) -> int:
    """Apply every migration newer than the store's version; each in its own transaction."""
    current = schema_version(con)
    for number, name, statements in MIGRATIONS:
        if number <= current:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            for sql in statements:
                con.execute(sql)
            con.execute("INSERT INTO schema_version (version, name) VALUES (?, ?)", [number, name])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        current = number
    return current

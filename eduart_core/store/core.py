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

Reading is pooled: opening a DuckDB file costs 20-150 ms (more on a busy machine), and one page
render used to open it five to ten times. ``_ReadPool`` keeps one read-only "anchor" connection
per file while reads come in and hands every caller its own cheap connection to the same
database instance; the anchor closes after a short idle time, so a writer in another process
(a run's ingest, the CLI) waits at most that long for the lock. A write in this process closes
the anchor first. ``data_version`` is answered from the files' stat signature when nothing has
changed on disk, so checking for new data costs no connection at all.
"""
from __future__ import annotations

import atexit
import logging
import os
import threading
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


class StoreConflictError(StoreError):
    """Another session wrote the same rows at the same moment; the transaction was rolled back (try again)."""


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


def _signature(path: Path) -> tuple | None:
    """What the file system says about the store and its WAL: changes whenever DuckDB writes."""
    parts = []
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


def release_readers(path: str | os.PathLike | None = None) -> None:
    """Close the pooled read connection(s) now (tests and tools that open the file themselves)."""
    if path is None:
        _POOL.close_all()
    else:
        _POOL.close(str(Path(path).expanduser()))


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
        """A short-lived connection, migrated to the current schema; closed on exit.

        Read-only connections come from the process's read pool (see the module docstring); a
        read-write one first closes this file's pooled reader, since DuckDB cannot hold one file
        in both modes in one process.
        """
        if read_only and not self.path.exists():
            raise StoreError(f"no store at {self.path}; run 'python -m eduart_core demo' or an import first")
        key = str(self.path)
        if read_only:
            con, pooled = _POOL.lease(key, self._open_reader)
            try:
                yield con
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
            yield con
        finally:
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
                if isinstance(exc, duckdb.TransactionException):
                    raise StoreConflictError(f"another session changed store {self.path} at the same moment; "
                                             "nothing of this change was saved, try again") from exc
                if isinstance(exc, duckdb.Error):  # the database's own words, on one line
                    raise StoreError(f"could not write store {self.path}: {_first_line(exc)}; "
                                     "nothing of this change was saved") from exc
                raise

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


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back if a transaction is still open. A failed COMMIT has already ended it, and the
    "cannot rollback - no transaction is active" error must never replace the real cause."""
    try:
        con.execute("ROLLBACK")
    except duckdb.Error as exc:
        logger.debug("rollback after a failed transaction: %s", exc)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


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

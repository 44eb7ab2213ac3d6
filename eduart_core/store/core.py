"""Opening the store: which backend, migrations, short transactions, and the folders beside it.

A store is a DuckDB file (the zero-setup default, one writer at a time) or a PostgreSQL database
(a team: several app servers, imports and runs writing at once). ``Store(location)`` picks the
backend from the location: ``postgresql://...`` (or ``postgres://``) is a database URL, anything
else a file path. Both backends hand out the same ``Connection`` interface
(``store.connection``), so every feature module writes its SQL once.

Every caller opens a short-lived connection through ``Store.connect``/``Store.transaction``;
a transaction is all or nothing and bumps the data version that keys every cache. The
backend-specific behaviour lives in ``store.duckdb_file`` (the one-writer lock, the read pool,
the stat-signature data version, foreign-file and disk-full messages) and ``store.postgres``
(connection pools, one-line connection errors that never show the password, advisory locks
for concurrent writers).

Folders: images are content-addressed in one place per store (``store.images``: a folder, or
S3-compatible storage with ``EDUART_IMAGES=s3://bucket/prefix``; ``EDUART_IMAGES=path`` names a
shared folder); run journals and the response cache are always local files of the machine that
runs (``runs_dir``, ``cache_dir``): next to a DuckDB file, or under ``EDUART_WORK_DIR`` (default
``data/``) in a folder named after the database for a URL store.

Adding a migration (``store/schema.py``): append ``(number, name, [statements])`` in the
portable subset of ``store.connection``; both backends run the same statements.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .connection import Connection, as_connection
from .errors import (
    StoreBusyError,
    StoreConflictError,
    StoreError,
    StoreFullError,
    StoreLockedError,
    StoreUnavailableError,
    StoreVersionError,
)
from .schema import MIGRATIONS

if TYPE_CHECKING:
    from .images import ImageStore

logger = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DB = PROJECT_ROOT / "data" / "eduart.duckdb"
DEFAULT_WORK_DIR = PROJECT_ROOT / "data"
URL_SCHEMES = ("postgresql://", "postgres://")

__all__ = ["DEFAULT_DB", "PROJECT_ROOT", "Store", "StoreBusyError", "StoreConflictError", "StoreError",
           "StoreFullError", "StoreLockedError", "StoreUnavailableError", "StoreVersionError", "check_schema",
           "default_db_path", "is_database_url", "latest_schema_version", "migrate", "release_readers", "store_location",
           "schema_version"]


def is_database_url(location: object) -> bool:
    """True for a PostgreSQL URL (``postgresql://`` or ``postgres://``)."""
    return isinstance(location, str) and location.strip().lower().startswith(URL_SCHEMES)


def store_name(location: str | os.PathLike) -> str:
    """The store as a stakeholder may see it: a file's name ("eduart.duckdb"), or a PostgreSQL
    database's name ("eduart (PostgreSQL)"), never a folder of this machine, a host, a user or a
    password. Why not the location: pages and reports travel; the full location stays with the
    operator's tools (`stats`, error messages)."""
    text = str(location).strip()
    if is_database_url(text):
        from urllib.parse import unquote, urlsplit

        try:
            parts = urlsplit(text)
            database = unquote(parts.path.lstrip("/")) or unquote(parts.username or "") or "postgres"
        except ValueError:
            database = "unnamed"
        return f"{database} (PostgreSQL)"
    return Path(text).name


def latest_schema_version() -> int:
    return max(number for number, _, _ in MIGRATIONS)


def default_db_path() -> Path | str:
    """The store used when no --db is given: $EDUART_DATABASE_URL, else $EDUART_DB (a file or a URL),
    else data/eduart.duckdb. A URL comes back without its password (the process remembers it)."""
    env = os.environ.get("EDUART_DATABASE_URL", "").strip() or os.environ.get("EDUART_DB", "").strip()
    if not env:
        return DEFAULT_DB
    if is_database_url(env):
        return _backend(env).remember(env)
    return Path(env).expanduser()


def store_location(text: str | os.PathLike) -> Path | str:
    """``--db`` as given on the command line: a file path, or a database URL (kept as text; a
    malformed one fails with one line when the store is opened)."""
    if is_database_url(str(text)):
        return str(text).strip()
    return Path(text).expanduser()


def release_readers(path: str | os.PathLike | None = None) -> None:
    """Close pooled connections now (tests and tools that open the store themselves, a rebuilt demo)."""
    for backend in _BACKENDS:
        if path is None:
            backend.release(None)
        elif backend.serves(str(path)):
            backend.release(store_location(path))


@dataclass(frozen=True)
class Backend:
    """One kind of store: its `Store` subclass, which locations it serves, how it closes its pooled
    connections and how it keeps a location (a URL's password stays in the process).

    Why a table: the generic store (this module) names no backend module; each backend module
    registers itself when imported (`eduart_core.store` imports both), so the arrows point one way.
    """

    name: str
    store_class: type
    serves: Callable[[str], bool]
    release: Callable[[Path | str | None], None]
    remember: Callable[[str], str] = str


_BACKENDS: list[Backend] = []


def register_backend(backend: Backend) -> None:
    """Add a kind of store (its module calls this when imported)."""
    _BACKENDS[:] = [b for b in _BACKENDS if b.name != backend.name] + [backend]


def _backend(location: str) -> Backend:
    for backend in _BACKENDS:
        if backend.serves(location):
            return backend
    raise StoreError(f"no store backend serves {location!r}")


class Store:
    """A store (a DuckDB file or a PostgreSQL database) plus its images and local folders.

    ``Store(path)`` returns the backend's subclass. ``path`` is the file's ``Path``, or for a URL
    store the URL without its password (a ``str``; ``Store(str(store.path))`` opens the same
    store again in this process).
    """

    #: True for a DuckDB file, False for a database server.
    is_file: bool = True
    path: Path | str
    lock_timeout_s: float

    @property
    def shared(self) -> bool:
        """A team store: a database server that several people write (a DuckDB file has one writer)."""
        return not self.is_file

    def __new__(cls, path: str | os.PathLike | None = None, lock_timeout_s: float = 10.0):
        if cls is Store:
            location = path if path else default_db_path()
            return super().__new__(_backend(str(location)).store_class)
        return super().__new__(cls)

    def __init__(self, path: str | os.PathLike | None = None, lock_timeout_s: float = 10.0):  # pragma: no cover
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"

    # ---------------------------------------------------------------- folders
    @property
    def local_base(self) -> Path:
        """The stem the local folders are named after (``<stem>_runs``, ``<stem>_cache``)."""
        raise NotImplementedError  # pragma: no cover

    @property
    def images(self) -> ImageStore:
        """Where this store's image files live ($EDUART_IMAGES: a folder or s3://bucket/prefix)."""
        from .images import image_store

        return image_store(self)

    @property
    def images_dir(self) -> Path:
        """The folder of the image files (for S3 storage: the local read-through copy)."""
        return self.images.local_root

    @property
    def default_images_dir(self) -> Path:
        base = self.local_base
        return base.parent / f"{base.name}_images"

    @property
    def runs_dir(self) -> Path:
        base = self.local_base
        return base.parent / f"{base.name}_runs"

    @property
    def cache_dir(self) -> Path:
        base = self.local_base
        return base.parent / f"{base.name}_cache"

    # ---------------------------------------------------------------- connections
    def exists(self) -> bool:
        raise NotImplementedError  # pragma: no cover

    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator[Connection]:  # pragma: no cover
        raise NotImplementedError
        yield

    @contextmanager
    def held(self) -> Iterator[None]:
        """Keep this process's write connection open across the transactions inside (a fresh demo
        build that owns its file). Why: a DuckDB file costs about 20 ms to open and a checkpoint to
        close, paid by every short transaction; a server needs no such thing, so here it is nothing."""
        yield

    @contextmanager
    def transaction(self, bump: bool = True) -> Iterator[Connection]:
        """A read-write connection inside one transaction: all or nothing, and bumps data_version.

        ``bump=False``: a write no cached frame depends on (a work queue's holds), which must not make
        every page read the store again nor make every writer wait for the one counter row."""
        with self.connect() as con:
            con.begin()
            try:
                yield con
                con.commit(BUMP_DATA_VERSION if bump else None)
            except BaseException as exc:
                _rollback(con)
                translated = self._write_error(exc)
                if translated is not None:
                    raise translated from None
                raise
            con.after_commit()

    def _write_error(self, exc: BaseException) -> StoreError | None:
        """The one-line StoreError for a failed transaction, when the backend knows the cause."""
        return None

    @contextmanager
    def exclusive(self, key: str) -> Iterator[None]:
        """Hold ``key`` across several transactions of this process (read, decide, write), so that
        concurrent writers of one thing take turns. One DuckDB writer needs nothing here."""
        yield

    def data_version(self) -> int:
        raise NotImplementedError  # pragma: no cover

    def drop_all(self) -> None:
        """Remove every table of the store (``demo --force``, ``store-copy --replace``)."""
        raise NotImplementedError  # pragma: no cover

    def child_env(self) -> dict[str, str]:
        """Environment a process started for this store needs to open it (a database password)."""
        return {}

    def side_files(self) -> list[Path]:
        """Files that make up the store besides its folders (a DuckDB file and its WAL; none for a server)."""
        return []


#: The last statement of every write transaction: the data version that keys every cache.
BUMP_DATA_VERSION = "UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) WHERE key = 'data_version'"


def _rollback(con: Connection) -> None:
    """Roll back if a transaction is still open. A failed COMMIT has already ended it, and the
    "cannot rollback - no transaction is active" error must never replace the real cause."""
    try:
        con.execute("ROLLBACK")
    except Exception as exc:  # noqa: BLE001 - whatever the engine says, the first error is the one to report
        logger.debug("rollback after a failed transaction: %s", exc)


def check_schema(con, path: object | None = None) -> int:
    """The store's schema version (0 for a new store); StoreVersionError when it is newer than ours."""
    con = as_connection(con)
    if not con.has_table("schema_version"):
        return 0
    row = con.execute("SELECT max(version) FROM schema_version").fetchone()
    current = int(row[0]) if row and row[0] is not None else 0
    _refuse_newer(current, path)
    return current


def _refuse_newer(current: int, path: object | None) -> None:
    known = latest_schema_version()
    if current > known:
        where = f"store {path}" if path else "this store"
        raise StoreVersionError(f"{where} was made by a newer EduArt Studio (schema version {current}, this "
                                f"version knows up to {known}); upgrade EduArt Studio to open it")


def schema_version(con) -> int:
    con = as_connection(con)
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT, "
        "applied_at TIMESTAMP DEFAULT current_timestamp)"
    )
    row = con.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def pending_migrations(con) -> list[int]:
    """Numbers of the migrations this code knows and the store has not recorded (a store older than the code)."""
    con = as_connection(con)
    if not con.has_table("schema_version"):
        return [number for number, _, _ in MIGRATIONS]
    applied = {int(row[0]) for row in con.execute("SELECT version FROM schema_version").fetchall()}
    return [number for number, _, _ in MIGRATIONS if number not in applied]


def migrate(con, path: object | None = None) -> int:
    """Apply every migration the store has not recorded yet; each in its own transaction.

    A store newer than this code is refused (``StoreVersionError``) before anything is written.
    Recorded numbers, not just the highest one, decide: a store that lacks an earlier migration
    (branches that each added one, merged in another order) still gets it.
    """
    con = as_connection(con)
    current = check_schema(con, path) or schema_version(con)
    applied = {int(row[0]) for row in con.execute("SELECT version FROM schema_version").fetchall()}
    for number, name, statements in MIGRATIONS:
        if number in applied:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            for sql in statements:
                con.execute(con.sql(sql))
            con.execute("INSERT INTO schema_version (version, name) VALUES (?, ?)", [number, name])
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)
            raise
        current = max(current, number)
    return current

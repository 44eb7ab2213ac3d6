"""The PostgreSQL backend: a team's shared store, written by many processes at once.

Why PostgreSQL: a review team runs several app servers, imports and model runs against one
store at the same moment; a DuckDB file admits one writer. Each process keeps one connection
pool per database (psycopg 3 + psycopg-pool); connections are checked when taken from the
pool, so a server restart costs the action that was running when it went down (one clear line)
and the next action reconnects.

What differs from the DuckDB file lives here and in ``store.pg_connection`` (SQL text, frames,
bulk writes), once:
- Concurrency: ``lock(key)`` is a transaction-scoped advisory lock, ``Store.exclusive(key)`` a
  session-scoped one; writers of one thing (a field's decisions, a run's responses, a dataset's
  item versions) take turns instead of failing.
- Errors: a wrong URL, host, database or password gives one line naming host, port and database,
  never the password (the password is kept out of ``store.path`` and every message).
"""
from __future__ import annotations

import atexit
import logging
import os
import re
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from .connection import POSTGRES
from .core import (
    DEFAULT_WORK_DIR,
    Backend,
    Store,
    check_schema,
    is_database_url,
    latest_schema_version,
    migrate,
    pending_migrations,
    register_backend,
)
from .errors import StoreConflictError, StoreError, StoreUnavailableError, StoreVersionError
from .pg_connection import PgConnection, configure, forget_present_tables

logger = logging.getLogger(__name__)

#: Full URLs (with password) by their redacted form, for ``Store(str(store.path))`` in this process.
_FULL_URLS: dict[str, str] = {}
_URLS_LOCK = threading.Lock()


# ---------------------------------------------------------------- URLs and secrets

class DatabaseURL:
    """A parsed ``postgresql://user:password@host:port/database?options`` URL."""

    def __init__(self, url: str):
        text = url.strip()
        try:
            parts = urlsplit(text)
            port = parts.port
        except ValueError:
            raise StoreError("cannot open store: the PostgreSQL URL is malformed (expected "
                             "postgresql://user:password@host:port/database)") from None
        self.scheme = parts.scheme.lower()
        self.user = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password is not None else None
        self.host = parts.hostname or ""
        self.port = port or 5432
        self.database = unquote(parts.path.lstrip("/")) if parts.path.strip("/") else (self.user or "postgres")
        self.options = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "password"]
        query_password = dict(parse_qsl(parts.query)).get("password")
        if self.password is None and query_password:
            self.password = query_password
        if self.scheme not in ("postgresql", "postgres"):
            raise StoreError(f"cannot open store: {self.scheme}:// is not a PostgreSQL URL")

    @property
    def where(self) -> str:
        """host:port/database, for messages."""
        return f"{self.host or 'localhost'}:{self.port}/{self.database}"

    def redacted(self) -> str:
        """The URL without its password: safe for messages, logs, argv and ``store.path``."""
        user = f"{quote(self.user, safe='')}@" if self.user else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        query = f"?{urlencode(self.options)}" if self.options else ""
        return f"postgresql://{user}{host}:{self.port}/{quote(self.database, safe='')}{query}"

    def with_database(self, database: str) -> str:
        """The full URL (password included) of another database on the same server."""
        auth = ""
        if self.user:
            auth = quote(self.user, safe="") + (f":{quote(self.password, safe='')}" if self.password is not None else "")
            auth += "@"
        host = f"[{self.host}]" if ":" in self.host else self.host
        query = f"?{urlencode(self.options)}" if self.options else ""
        return f"postgresql://{auth}{host}:{self.port}/{quote(database, safe='')}{query}"

    def connect_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"dbname": self.database, "port": self.port, "connect_timeout": 5,
                                  "application_name": "eduart"}
        if self.host:
            kwargs["host"] = self.host
        if self.user:
            kwargs["user"] = self.user
        if self.password is not None:
            kwargs["password"] = self.password
        for key, value in self.options:
            kwargs[key] = value
        return kwargs


def remember_url(url: str, replace: bool = True) -> str:
    """Keep a full URL for this process and return its redacted form (what the code passes on).

    ``replace=False`` keeps a URL already remembered (one that connected) over an untried one."""
    parsed = DatabaseURL(url)
    redacted = parsed.redacted()
    if parsed.password is not None:
        with _URLS_LOCK:
            if replace or redacted not in _FULL_URLS:
                _FULL_URLS[redacted] = url.strip()
    return redacted


def _full_url(location: str) -> str:
    """The URL to connect with: as given, else the remembered one, else $EDUART_DATABASE_URL when it
    names the same database (a background process started from the app), else as given (libpq then
    reads PGPASSWORD or ~/.pgpass)."""
    parsed = DatabaseURL(location)
    if parsed.password is not None:
        return location.strip()
    redacted = parsed.redacted()
    with _URLS_LOCK:
        if redacted in _FULL_URLS:
            return _FULL_URLS[redacted]
    for name in ("EDUART_DATABASE_URL", "EDUART_DB"):
        env = os.environ.get(name, "").strip()
        if is_database_url(env):
            try:
                if DatabaseURL(env).redacted() == redacted:
                    return env
            except StoreError:
                continue
    return location.strip()


def _scrub(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


# ---------------------------------------------------------------- pools

class _Pools:
    """One psycopg connection pool per database URL in this process."""

    def __init__(self):
        self._pools: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()
        self.migrated: set[str] = set()
        self.known: set[str] = set()  # databases whose schema this code has checked

    def get(self, key: str, url: DatabaseURL, timeout_s: float):
        """The pool of ``key`` (the redacted URL) for exactly these credentials: a pool opened with
        one password never serves a store opened with another."""
        pool_key = _pool_key(key, url)
        with self._lock:
            pool = self._pools.get(pool_key)
        if pool is not None:
            return pool
        probe(url)  # a wrong password or database fails here, in one line, before any pool retries
        if url.password is not None:
            remember_url(url.with_database(url.database))  # it connected: the one to reopen with
        from psycopg import ClientCursor
        from psycopg_pool import ConnectionPool

        kwargs = {**url.connect_kwargs(), "autocommit": True, "cursor_factory": ClientCursor}
        created = ConnectionPool(kwargs=kwargs, min_size=1, max_size=int(os.environ.get("EDUART_PG_POOL", "8")),
                                 configure=configure, check=_check_if_idle, reset=_mark_used, open=False,
                                 name=url.where, timeout=timeout_s, reconnect_timeout=30.0, max_idle=300.0)
        with self._lock:
            if pool_key in self._pools:
                return self._pools[pool_key]
            created.open(wait=False)
            self._pools[pool_key] = created
            return created

    def drop(self, key: str | None) -> None:
        """Close the pools of one redacted URL (every credential), or all."""
        with self._lock:
            keys = list(self._pools) if key is None else [k for k in self._pools if k[0] == key]
            pools = [self._pools.pop(k) for k in keys]
            if key is None:
                self.migrated.clear()
                self.known.clear()
            else:
                self.migrated.discard(key)
                self.known.discard(key)
        for pool in pools:
            try:
                pool.close(timeout=1.0)
            except Exception as exc:  # noqa: BLE001 - closing a pool whose server went away
                logger.debug("closing pool: %s", exc)


#: A pooled connection idle longer than this is checked (one round trip) before it is handed out:
#: after a server restart its socket is dead. One used moments ago is handed out as it is; should it
#: still have died, the action fails with one line and the pool drops it.
CHECK_IDLE_S = 2.0
_LAST_USED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _mark_used(raw) -> None:
    _LAST_USED[raw] = time.monotonic()


def _check_if_idle(raw) -> None:
    from psycopg_pool import ConnectionPool

    if time.monotonic() - _LAST_USED.get(raw, 0.0) > CHECK_IDLE_S:
        ConnectionPool.check_connection(raw)


def _pool_key(redacted: str, url: DatabaseURL) -> tuple[str, str]:
    import hashlib

    return redacted, hashlib.sha256((url.password or "").encode()).hexdigest()


_POOLS = _Pools()
atexit.register(_POOLS.drop, None)


def release_pools(location: Path | str | None = None) -> None:
    """Close this process's pool of one database URL (or of all)."""
    _POOLS.drop(None if location is None else DatabaseURL(str(location)).redacted())


def probe(url: DatabaseURL) -> None:
    """Open and close one connection; StoreError (one line, no password) when that fails."""
    import psycopg

    try:
        psycopg.connect(**url.connect_kwargs(), autocommit=True).close()
    except psycopg.Error as exc:
        raise connection_error(url, exc) from None


def _cause(exc: BaseException, secret: str | None) -> str:
    """The server's reason in one line, without libpq's "connection to server at ... failed:" prefix."""
    text = str(exc).strip() or type(exc).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    reasons = []
    for line in lines:
        line = re.sub(r"^connection (?:to server at|failed:)[^:]*?(?:failed|\d+):\s*", "", line)
        line = re.sub(r"^(?:connection failed:\s*)", "", line)
        line = re.sub(r"^(?:FATAL|ERROR):\s*", "", line)
        if line and line not in reasons and not line.startswith(("HINT", "DETAIL", "Multiple connection")):
            reasons.append(line)
    return _scrub("; ".join(reasons[:2]) or type(exc).__name__, secret)


def connection_error(url: DatabaseURL, exc: BaseException) -> StoreError:
    """The one line for a failed connection: host, port and database named, never the password."""
    cause = _cause(exc, url.password)
    low = cause.lower()
    if "password authentication failed" in low or "no password supplied" in low:
        return StoreError(f"cannot open store {url.redacted()}: {cause} (check the password for host "
                          f"{url.host}, database {url.database})")
    if "does not exist" in low and "database" in low:
        return StoreError(f"cannot open store {url.redacted()}: database {url.database!r} does not exist on "
                          f"{url.host}:{url.port}; create it first (createdb)")
    return StoreUnavailableError(f"cannot reach PostgreSQL at {url.where}: {cause}")


def _one_line(url: DatabaseURL, exc: BaseException, writing: bool) -> StoreError:
    """The StoreError for a failure while a connection was in use."""
    import psycopg
    from psycopg import errors

    if isinstance(exc, (errors.SerializationFailure, errors.DeadlockDetected)):
        return StoreConflictError(f"store {url.redacted()}: {_cause(exc, url.password)}; nothing of this change "
                                  "was saved, try again")
    if isinstance(exc, psycopg.OperationalError) or getattr(exc, "sqlstate", "") in ("57P01", "57P02", "57P03"):
        saved = "; nothing of this change was saved" if writing else ""
        return StoreUnavailableError(f"lost the connection to PostgreSQL at {url.where} "
                                     f"({_cause(exc, url.password)}){saved}; try again")
    return StoreError(f"store {url.redacted()}: {_cause(exc, url.password)}")


def _work_dir() -> Path:
    env = os.environ.get("EDUART_WORK_DIR", "").strip()
    return Path(env).expanduser() if env else DEFAULT_WORK_DIR


class PostgresStore(Store):
    """A PostgreSQL database as the store; run journals and the response cache stay local."""

    is_file = False
    path: str  # the URL without its password

    def __init__(self, path: str | os.PathLike | None = None, lock_timeout_s: float = 10.0):
        from .core import default_db_path

        location = str(path) if path else str(default_db_path())
        self._url = DatabaseURL(_full_url(location))
        if self._url.password is not None:
            remember_url(_full_url(location), replace=False)
        self.path = self._url.redacted()
        self.lock_timeout_s = lock_timeout_s

    @property
    def url(self) -> DatabaseURL:
        return self._url

    def child_env(self) -> dict[str, str]:
        """The full URL for a process this one starts (the environment, never its argv)."""
        full = _full_url(self.path)
        return {"EDUART_DATABASE_URL": full} if DatabaseURL(full).password is not None else {}

    @property
    def local_base(self) -> Path:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"pg-{self._url.host or 'local'}-{self._url.port}-{self._url.database}")
        return _work_dir() / name

    # ---------------------------------------------------------------- connections
    def _pool(self):
        return _POOLS.get(self.path, self._url, self._wait_s())

    def _wait_s(self) -> float:
        return max(0.5, min(float(self.lock_timeout_s), 10.0))

    @contextmanager
    def _raw(self) -> Iterator[Any]:
        """A pooled connection; a pool that cannot deliver in time is asked why (one line)."""
        from psycopg_pool import PoolClosed, PoolTimeout

        for attempt in (1, 2):
            pool = self._pool()
            lease = pool.connection(timeout=self._wait_s())
            try:
                raw = lease.__enter__()
            except PoolClosed:  # another thread found the server gone and dropped this pool
                if attempt == 2:
                    raise StoreUnavailableError(f"cannot reach PostgreSQL at {self._url.where}; try again") from None
                continue
            except PoolTimeout:
                probe(self._url)  # raises the real reason when the server is still away
                _POOLS.drop(self.path)  # the server is back: start again with fresh connections
                if attempt == 2:
                    raise StoreUnavailableError(f"cannot reach PostgreSQL at {self._url.where}: no connection "
                                                f"within {self._wait_s():.0f} s; try again") from None
                continue
            with ExitStack() as stack:
                stack.push(lease)
                yield raw
            return

    def exists(self) -> bool:
        """Whether the database holds a store (a schema); StoreError when it cannot be reached."""
        if self.path in _POOLS.known:
            return True
        with self._raw() as raw:
            found = PgConnection(raw).has_table("schema_version")
        if found:
            with self.connect(read_only=True):
                pass  # checks the schema once
        return found

    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator[PgConnection]:
        """A pooled connection (migrated to the current schema before the first write of this process)."""
        import psycopg

        try:
            with self._raw() as raw:
                con = PgConnection(raw)
                if read_only and self.path not in _POOLS.known:
                    version = check_schema(con, self.path)
                    if not version:
                        raise StoreError(f"no store at {self.path}; run 'python -m eduart_core demo' or an "
                                         "import first")
                    if self.path not in _POOLS.migrated and pending_migrations(con):
                        self._upgrade(con)
                    _POOLS.known.add(self.path)
                elif not read_only and self.path not in _POOLS.migrated:
                    self._upgrade(con)
                yield con
        except psycopg.Error as exc:
            raise self._failure(exc, writing=not read_only) from exc

    def _failure(self, exc: BaseException, writing: bool) -> StoreError:
        """The one-line error; after a lost connection the pool is replaced, since its other idle
        connections died with the server too (the next action starts afresh)."""
        error = _one_line(self._url, exc, writing=writing)
        if isinstance(error, StoreUnavailableError):
            _POOLS.drop(self.path)
        return error

    def _migrate(self, con: PgConnection) -> None:
        """Apply pending migrations under a session lock (two processes starting at once take turns)."""
        con.execute("SELECT pg_advisory_lock(hashtextextended('eduart:migrations', 0))").fetchall()
        try:
            migrate(con, self.path)
        finally:
            con.execute("SELECT pg_advisory_unlock(hashtextextended('eduart:migrations', 0))").fetchall()
        _POOLS.migrated.add(self.path)
        _POOLS.known.add(self.path)

    def _upgrade(self, con: PgConnection) -> None:
        """Migrate before the first write, and before the first read of a store older than this code:
        on a shared database the app servers that got the new code are usually the first to open it,
        and every page would otherwise meet missing tables. A database user that may not create
        tables gets one line saying what to run instead."""
        import psycopg

        version = check_schema(con, self.path)  # a newer store is refused here, before any write
        try:
            self._migrate(con)
        except psycopg.Error as exc:
            if not isinstance(exc, psycopg.errors.InsufficientPrivilege):
                raise
            missing = ", ".join(str(n) for n in pending_migrations(con))
            state = (f"has schema version {version} and lacks migration(s) {missing} of this EduArt Studio (schema "
                     f"version {latest_schema_version()})" if version else "is empty")
            raise StoreVersionError(
                f"store {self.path} {state}; its tables cannot be created or changed by this database user "
                f"({_cause(exc, self._url.password)}): run 'python -m eduart_core store-migrate --db "
                f"{self.path}' as the database's owner") from None

    @contextmanager
    def exclusive(self, key: str) -> Iterator[None]:
        """A session advisory lock on a connection of its own, held for the whole block."""
        import psycopg

        try:
            with self._raw() as raw:
                raw.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", [key]).fetchall()
                try:
                    yield
                finally:
                    try:
                        raw.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [key]).fetchall()
                    except psycopg.Error as exc:  # the connection died: the server released the lock
                        logger.debug("advisory unlock: %s", exc)
        except psycopg.Error as exc:
            raise self._failure(exc, writing=True) from exc

    def data_version(self) -> int:
        """The counter every committed transaction bumps (one small read; the app caches it a second)."""
        try:
            with self.connect(read_only=True) as con:
                if not con.has_table("meta"):
                    return -1
                row = con.execute("SELECT value FROM meta WHERE key = 'data_version'").fetchone()
        except StoreError as exc:
            if str(exc).startswith("no store at"):
                return -1
            raise
        return int(row[0]) if row else -1

    def drop_all(self) -> None:
        """Drop the tables and sequences the migrations create (and nothing else in the database)."""
        from .schema import store_objects

        tables, sequences = store_objects()
        with self.connect() as con:
            present = set(con.tables())
            con.execute("BEGIN")
            try:
                doomed = [t for t in tables if t in present]
                if doomed:
                    con.execute(f"DROP TABLE IF EXISTS {', '.join(doomed)} CASCADE")
                for sequence in sequences:
                    con.execute(f"DROP SEQUENCE IF EXISTS {sequence} CASCADE")
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        _POOLS.migrated.discard(self.path)
        _POOLS.known.discard(self.path)
        forget_present_tables()


def wait_for_server(store: PostgresStore, timeout_s: float = 30.0) -> None:
    """Wait until the store's server accepts connections (tools after a restart)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            probe(store.url)
            return
        except StoreError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.2)


register_backend(Backend(POSTGRES, PostgresStore, is_database_url, release_pools, remember_url))

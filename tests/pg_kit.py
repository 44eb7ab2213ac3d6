"""A real PostgreSQL server for the tests: one per test session, a fresh database per test.

The server is Debian's PostgreSQL (``eduart_core.bench.pgserver.TempPostgres``: initdb and pg_ctl
in a temp dir, a free 127.0.0.1 port, password authentication). Every test database is a copy
of a template that already holds the migrated schema (``CREATE DATABASE ... TEMPLATE`` takes
milliseconds), so a test starts from an empty store as fast as a new DuckDB file.

A test module whose ``store`` tests run on both backends binds the fixtures at module level:

    import pg_kit
    backend, store = pg_kit.backend, pg_kit.store  # every test here runs on DuckDB and PostgreSQL

A store built once per module (``build_once``) is copied per test with ``Built.copy``.

The PostgreSQL runs carry the ``postgres`` marker (``pytest -m postgres`` runs only them,
``-m "not postgres"`` only the DuckDB ones). Without server binaries they skip with one line,
unless ``EDUART_REQUIRE_POSTGRES=1`` (CI), which turns the skip into a failure.
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REQUIRE = "EDUART_REQUIRE_POSTGRES"
TEMPLATE = "eduart_template"
DUCKDB, POSTGRES = "duckdb", "postgres"
#: The ``backend`` parameters: the PostgreSQL one is marked.
BACKENDS = [DUCKDB, pytest.param(POSTGRES, marks=pytest.mark.postgres)]
_NAMES = itertools.count(1)


def require_or_skip(reason: str) -> None:
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{REQUIRE}=1 but {reason}")
    pytest.skip(f"{reason}: PostgreSQL tests skipped (set {REQUIRE}=1 to require them)")


@pytest.fixture(scope="session")
def pg_server():
    """The session's PostgreSQL server, with a migrated template database."""
    from eduart_core.bench.pgserver import TempPostgres, missing_reason
    from eduart_core.store import Store, release_readers

    reason = missing_reason()
    if reason:
        require_or_skip(reason)
    server = TempPostgres(durable=False)
    try:
        server.start()
    except RuntimeError as exc:
        server.cleanup()
        require_or_skip(f"the PostgreSQL server did not start ({str(exc).splitlines()[0]})")
    try:
        url = server.create_database(TEMPLATE)
        with Store(url).connect():
            pass  # migrates the template once
        release_readers(url)
        yield server
    finally:
        from eduart_core.store import release_readers as release

        release(None)
        server.cleanup()


def new_database(server, template: str = TEMPLATE) -> tuple[str, str]:
    """(name, URL) of a new database copied from ``template``."""
    name = f"t{os.getpid()}_{next(_NAMES)}"
    return name, server.create_database(name, template=template)


def drop_database(server, name: str, url: str) -> None:
    from eduart_core.store import release_readers

    release_readers(url)
    server.drop_database(name)


@pytest.fixture
def pg_url(pg_server, monkeypatch, tmp_path) -> Iterator[str]:
    """A fresh, migrated, empty database; its local folders (run journals, images) in ``tmp_path``."""
    monkeypatch.setenv("EDUART_WORK_DIR", str(tmp_path / "work"))
    monkeypatch.setenv("PGPASSWORD", pg_server.password)  # processes the test starts get only the URL
    name, url = new_database(pg_server)
    yield url
    drop_database(pg_server, name, url)


@pytest.fixture
def pg_empty_url(pg_server, monkeypatch, tmp_path) -> Iterator[str]:
    """A new database without the store's schema (what an administrator hands over)."""
    monkeypatch.setenv("EDUART_WORK_DIR", str(tmp_path / "work"))
    name = f"e{os.getpid()}_{next(_NAMES)}"
    url = server_url = pg_server.create_database(name, template="template0")
    yield server_url
    drop_database(pg_server, name, url)


@pytest.fixture
def pg_store(pg_url):
    from eduart_core.store import Store

    return Store(pg_url)


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    """duckdb or postgres: the backend of this run of the test."""
    return request.param


@pytest.fixture
def store(request, backend: str, store_path: Path):
    """A new empty store on the test's backend (overrides conftest's DuckDB-only ``store``)."""
    from eduart_core.store import Store

    if backend == POSTGRES:
        return Store(request.getfixturevalue("pg_url"))
    return Store(store_path)


@pytest.fixture
def db(request, backend: str, store_path: Path) -> str:
    """The ``--db`` value of a new empty store on the test's backend (a file path or a URL)."""
    if backend == POSTGRES:
        return request.getfixturevalue("pg_url")
    return str(store_path)


# ---------------------------------------------------------------- stores built once, copied per test

class Built:
    """A store built once (per module or session) on one backend, to be copied for each test."""

    def __init__(self, backend: str, location: str, images: Path | None = None, name: str | None = None):
        self.backend, self.location, self.images, self.name = backend, location, images, name

    def copy(self, request, target_dir: Path) -> str:
        """A private copy for one test; returns its ``--db`` location (a file path or a URL)."""
        from review_fixtures import copy_store

        if self.backend == DUCKDB:
            return str(copy_store(Path(self.location), target_dir))
        monkeypatch = request.getfixturevalue("monkeypatch")
        server = request.getfixturevalue("pg_server")
        monkeypatch.setenv("EDUART_IMAGES", str(self.images))  # a shared image folder, as a team has
        monkeypatch.setenv("PGPASSWORD", server.password)
        monkeypatch.setenv("EDUART_WORK_DIR", str(request.getfixturevalue("tmp_path") / "pg-work"))
        name, url = new_database(server, template=self.name)
        request.addfinalizer(lambda: drop_database(server, name, url))
        return url


def build_once(request, tmp_path_factory, backend: str, build, label: str) -> Built:
    """Run ``build(store)`` on a new store of ``backend`` (for a module- or session-scoped fixture)."""
    from eduart_core.store import Store, release_readers

    folder = tmp_path_factory.mktemp(f"{label}-{backend}")
    if backend == DUCKDB:
        path = folder / "eduart.duckdb"
        store = Store(path)
        with store.held():  # a fixture's build: one open of the file, not one per write
            build(store)
        return Built(DUCKDB, str(path))
    server = request.getfixturevalue("pg_server")
    name, url = new_database(server)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EDUART_IMAGES", str(folder / "images"))
        patch.setenv("EDUART_WORK_DIR", str(folder / "work"))
        build(Store(url))
    release_readers(url)  # a template database must have no connections
    request.addfinalizer(lambda: drop_database(server, name, url))
    return Built(POSTGRES, url, folder / "images", name)

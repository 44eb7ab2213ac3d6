"""The store: every SQL statement of the project, over a DuckDB file or a PostgreSQL database.

Feature modules (``items``, ``runs``, ``scores``, ``reference``, ``extraction``, ...) hold the
SQL of one room each and take a ``Store`` as their first argument; they talk to the database
only through ``store.connection.Connection``, which both backends implement.
"""
# the two kinds of store register themselves with `core` (a file path or a postgresql:// URL)
from . import duckdb_file, postgres  # noqa: E402, F401
from .core import (
    DEFAULT_DB,
    Store,
    StoreBusyError,
    StoreConflictError,
    StoreError,
    StoreFullError,
    StoreLockedError,
    StoreUnavailableError,
    StoreVersionError,
    default_db_path,
    is_database_url,
    migrate,
    release_readers,
    store_location,
    store_name,
)

__all__ = ["DEFAULT_DB", "Store", "StoreBusyError", "StoreConflictError", "StoreError", "StoreFullError",
           "StoreLockedError", "StoreUnavailableError", "StoreVersionError", "default_db_path", "is_database_url",
           "migrate", "release_readers", "store_location", "store_name"]

"""The DuckDB store: one file, short transactions, every SQL statement of the project.

Feature modules (``items``, ``runs``, ``scores``, ``reference``, ``extraction``) hold the SQL
of one room each and take a ``Store`` as their first argument.
"""
from .core import (
    DEFAULT_DB,
    Store,
    StoreConflictError,
    StoreError,
    StoreFullError,
    StoreLockedError,
    StoreVersionError,
    default_db_path,
    migrate,
    release_readers,
)

__all__ = ["DEFAULT_DB", "Store", "StoreConflictError", "StoreError", "StoreFullError", "StoreLockedError", "StoreVersionError",
           "default_db_path", "migrate", "release_readers"]

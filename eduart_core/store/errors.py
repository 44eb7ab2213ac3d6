"""The store's errors: one readable line each, whichever backend raised them."""
from __future__ import annotations


class StoreError(Exception):
    """A store problem the user can act on; the message is one readable line."""


class StoreBusyError(StoreError):
    """The store cannot be written right now, and waiting may cure it."""


class StoreLockedError(StoreBusyError):
    """Another process holds the write lock for longer than we are willing to wait (DuckDB file)."""


class StoreUnavailableError(StoreLockedError):
    """The database server cannot be reached right now (restarting, network); try again.

    A kind of ``StoreLockedError`` so that every "try again later" path (a run's ingest, the
    final run totals) waits for the server as it waits for a DuckDB lock.
    """


class StoreConflictError(StoreError):
    """A concurrent transaction touched the same rows; the write was rolled back and may be retried."""


class StoreFullError(StoreError):
    """The disk under the store is full; nothing of the failed transaction was written."""


class StoreVersionError(StoreError):
    """The store's schema is not one this code can use: written by a newer EduArt Studio, or older
    than this code and not upgradable by this process (a database user without CREATE rights)."""

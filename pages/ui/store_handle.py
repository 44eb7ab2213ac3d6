"""The store the app shows: its path, its data version (the views' cache key) and the handle for writes.

Why here: pages read through `eduart_core.views` with `source()` and hand `store()` to the domain
modules that write; they never import the store. The data version is reused for one second, since a
page run asks for it several times."""
from __future__ import annotations

import logging
import time

import streamlit as st

from eduart_core import views
from eduart_core.errors import UserError
from eduart_core.selection import Selection
from eduart_core.views import StoreError
from eduart_core.vocab import default_dataset
from pages.ui.failures import guard
from pages.ui.query import requested_dataset

logger = logging.getLogger(__name__)


def store_path() -> str:
    """The store the app shows: $EDUART_DATABASE_URL (without its password), $EDUART_DB or data/eduart.duckdb."""
    return views.store_path()


def store(lock_timeout_s: float = 10.0):
    """The store handle a page passes to the domain modules that write (runner, review, suspects,
    overrides); reads go through `views` with `source()`."""
    return views.open_store(store_path(), lock_timeout_s=lock_timeout_s)


_VERSION_TTL_S = 1.0
_versions: dict[str, tuple[float, int]] = {}


def data_version() -> int:
    """Cache key of the store; a clear error line (never a traceback) when it cannot be read.

    Reading it opens a connection (~40 ms), and one page run asks several times, so the value
    is reused for one second: a store change shows up on the next interaction.
    """
    path = store_path()
    with guard():  # a locked, unreachable or unreadable store: one clear line, then stop
        if not views.open_store(path).exists():
            st.error(f"No store at {path}. Build one with `python -m eduart_core demo` or restart the app.")
            st.stop()
        return store_version(path)


def store_version(path: str) -> int:
    """The data version of the store at ``path``, reused for one second (see `data_version`)."""
    seen = _versions.get(path)
    now = time.monotonic()
    if seen and now - seen[0] < _VERSION_TTL_S:
        return seen[1]
    version = views.Source.of(path, lock_timeout_s=3.0).version
    _versions[path] = (now, version)
    return version


def source() -> views.Source:
    """The store at its current data version: the first argument of every view."""
    return views.Source(store_path(), data_version())


def data_changed() -> None:
    """Forget the store's cached data version after a write, so the next read sees the write."""
    _versions.pop(store_path(), None)


def dataset_features() -> views.StudyFeatures | None:
    """What the dataset this run shows (`requested_dataset`) offers: tasks, conditions, item-level data;
    for the menu, before the sidebar. None before a store exists or when it cannot be read (the menu
    then shows every page and the page says what is wrong)."""
    dataset = requested_dataset()
    path = store_path()
    try:
        if not views.open_store(path).exists():
            return None
        src = views.Source(path, store_version(path))
        names = views.analysable_datasets(src)
        chosen = dataset if dataset in names else default_dataset(names)
        return views.study_features(src, chosen) if chosen else None
    except (UserError, StoreError) as exc:
        logger.warning("menu shows every page: the features of dataset %s could not be read (%s)", dataset, exc)
        return None


def first_build_pending() -> bool:
    """True before the first start has built the demo store (no store yet at `store_path`); a store
    that cannot be read is not pending (its page says what is wrong)."""
    try:
        return not views.open_store(store_path()).exists()
    except StoreError:
        return False


def families() -> dict[str, str]:
    """Display name -> family for chart colours."""
    return views.family_map(source())


def flags(sel: Selection) -> views.DatasetFlags:
    """Kind, simulated and aggregate-only flags of the selected dataset."""
    return views.dataset_flags(source(), sel.dataset)

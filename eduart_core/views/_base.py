"""The data-access layer's plumbing: a `Source`, the one cache, and the frames every view starts from.

Why a cache here rather than in Streamlit: the pages, the report and `python -m eduart_core show`
call the same named views; one process-wide cache keyed by the store's data version, the
selection and the options serves all of them, so a page re-render, a second browser tab and a
report reuse the same computation. Every store transaction bumps the data version, so an entry is
invalidated exactly when the data change. Views only load and key; statistics live in `analysis`.
"""
from __future__ import annotations

import functools
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pandas as pd

from ..errors import UserError
from ..selection import Selection
from ..store import Store, default_db_path
from ..store import store_name as name_of
from ..vocab import BASELINE_KIND, HUMAN_KIND, MODEL_KIND

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])


class ItemLevelUnavailable(UserError):
    """The dataset holds only published aggregates; item-level views cannot be drawn."""


class EmptySelection(UserError):
    """The selection leaves no rows to analyse."""


@dataclass(frozen=True)
class Source:
    """A store (a file path or a database URL without its password) at one data version: what every
    cached value is computed from."""

    path: str
    version: int

    @classmethod
    def of(cls, path: str | Store, *, lock_timeout_s: float = 10.0) -> Source:
        """The store's current version (opens one short read-only connection)."""
        store = path if isinstance(path, Store) else Store(path, lock_timeout_s=lock_timeout_s)
        return cls(str(store.path), int(store.data_version()))

    @property
    def store(self) -> Store:
        return Store(self.path)


def store_path() -> str:
    """The store the app and the CLI use when none is named: $EDUART_DATABASE_URL (shown without its
    password), $EDUART_DB, else data/eduart.duckdb."""
    return str(default_db_path())


def store_name(path: str | None = None) -> str:
    """The store's name for pages and reports: the file name, or a PostgreSQL database's name
    (`store.store_name`); the full location is the operator's (`stats`)."""
    return name_of(path or store_path())


def open_store(path: str | None = None, *, lock_timeout_s: float = 10.0) -> Store:
    """A handle on the store, for the domain modules that write (runner, review, suspects, overrides).

    Pages never import the store: they read through views and pass this handle to the modules that
    write, so a page holds no SQL and no knowledge of the backend.
    """
    return Store(path or store_path(), lock_timeout_s=lock_timeout_s)


def _copy(value: Any) -> Any:
    """Callers get their own frame objects, so a caller that adds a column never edits the cache."""
    if isinstance(value, pd.DataFrame | pd.Series):
        return value.copy(deep=False)
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value


def cached(maxsize: int = 64) -> Callable[[F], F]:
    """Memoise ``fn(source, *args, **options)`` on every argument (all hashable), LRU per function.

    Exceptions are not cached: an empty selection is recomputed (cheaply) when asked again.
    """
    def decorate(fn: F) -> F:
        entries: OrderedDict = OrderedDict()
        lock = threading.Lock()

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = (args, tuple(sorted(kwargs.items())))
            with lock:
                if key in entries:
                    entries.move_to_end(key)
                    return _copy(entries[key])
            value = fn(*args, **kwargs)
            with lock:
                entries[key] = value
                entries.move_to_end(key)
                while len(entries) > maxsize:
                    entries.popitem(last=False)
            return _copy(value)

        wrapper.cache_clear = entries.clear  # type: ignore[attr-defined]
        _REGISTRY.append(entries)
        return wrapper  # type: ignore[return-value]
    return decorate


_REGISTRY: list[OrderedDict] = []


def clear_caches() -> None:
    """Forget every cached value (benchmarks measure cold renders with it)."""
    for entries in _REGISTRY:
        entries.clear()


# ---------------------------------------------------------------- store reads (cached)

@cached(maxsize=16)
def datasets(src: Source) -> pd.DataFrame:
    """Datasets in the store with their flags (kind, simulated, aggregate_only, title, has_answers)."""
    from ..store import catalog

    return catalog.dataset_catalog(src.store)


@cached(maxsize=16)
def models(src: Source) -> pd.DataFrame:
    """Models with display name, family, simulated flag and the datasets they have data in."""
    from ..store import catalog

    return catalog.model_catalog(src.store)


@cached(maxsize=8)
def item_keys(src: Source, dataset: str) -> pd.DataFrame:
    """Current items of a dataset without their records (item_id, type, language, has_image, image_hash)."""
    from ..store import catalog

    return catalog.item_keys(src.store, dataset)


@dataclass(frozen=True)
class DatasetFlags:
    """What a page needs to know about a dataset before drawing anything."""

    dataset: str
    exists: bool
    title: str
    kind: str | None
    simulated: bool
    aggregate_only: bool


@cached(maxsize=64)
def dataset_flags(src: Source, dataset: str) -> DatasetFlags:
    """Flags of one dataset (exists=False for an unknown name); asked many times per page run."""
    frame = datasets(src)
    row = frame[frame["dataset"] == dataset]
    if row.empty:
        return DatasetFlags(dataset, False, dataset, None, False, False)
    r = row.iloc[0]
    return DatasetFlags(dataset, True, str(r.get("title") or dataset), r.get("kind"),
                        bool(r.get("simulated") or False), bool(r.get("aggregate_only") or False))


@cached(maxsize=4)
def score_table(src: Source, dataset: str, reviewed: bool = True, variants: bool = False) -> pd.DataFrame:
    """Every profile's scores of a dataset in one read, keys encoded once (see `load_score_table`);
    ``reviewed``: a reviewer's score override replaces the computed score; ``variants``: variant items
    (`eduart_core.variants`) are counted too (off: only the source items, as every statistic wants)."""
    from ..store import scores as store_scores

    return store_scores.load_score_table(src.store, dataset, overrides=reviewed, variants=variants)


@cached(maxsize=8)
def scores(src: Source, profile: str, dataset: str, reviewed: bool = True, variants: bool = False) -> pd.DataFrame:
    """The long score frame of one dataset and profile (every model, every condition).

    Derived from the shared `score_table`, so switching the profile never reads the store again.
    """
    from ..store import scores as store_scores

    return store_scores.long_scores(score_table(src, dataset, reviewed, variants), profile)


@cached(maxsize=8)
def items(src: Source, dataset: str) -> pd.DataFrame:
    """Current item versions of a dataset (one row per item)."""
    from ..store import items as store_items

    return store_items.load_items(src.store, dataset)


@cached(maxsize=4)
def published_type_means(src: Source, dataset: str) -> pd.DataFrame:
    """Published per-model per-format means of an aggregate-only dataset (fractions, intervals set)."""
    from .. import analysis
    from ..store import reference

    return analysis.published_type_means(reference.read_reference_type_scores(src.store, dataset))


@cached(maxsize=4)
def published_pooled_motivation(src: Source, dataset: str) -> pd.DataFrame:
    """The published pooled paired motivation comparison (fractions)."""
    from .. import analysis
    from ..store import reference

    return analysis.pooled_motivation_fractions(reference.read_reference_motivation(src.store, dataset))


# ---------------------------------------------------------------- the selected rows

@cached(maxsize=32)
def selected_scores(src: Source, sel: Selection, all_conditions: bool = False, variants: bool = False) -> pd.DataFrame:
    """The long score frame restricted to the selection: the input of every item-level analysis.

    Variant items are left out unless ``variants`` (the leaderboard's ``--option variants=include``).

    Raises ItemLevelUnavailable for an aggregate-only dataset and EmptySelection when nothing is left.
    """
    if dataset_flags(src, sel.dataset).aggregate_only:
        raise ItemLevelUnavailable(f"Dataset '{sel.dataset}' holds only the published aggregates: "
                                   "item-level data are not available for it.")
    everything = scores(src, sel.profile, sel.dataset, sel.reviewed, variants)
    frame = sel.apply(everything, all_conditions=all_conditions)
    if frame.empty:
        if not sel.baselines and not sel.with_(baselines=True).apply(everything, all_conditions=all_conditions).empty:
            raise EmptySelection("Only baseline models (such as chance) answered in this selection, and baselines are "
                                 "references, not examinees: switch baselines in (sidebar, or --baselines) to count "
                                 "them.")
        if not sel.humans and not sel.with_(humans=True).apply(everything, all_conditions=all_conditions).empty:
            raise EmptySelection("Only people (respondents who sat the exam) answered in this selection, and "
                                 "people are left out unless switched in: switch people in (sidebar, or "
                                 "--humans) to count them.")
        raise EmptySelection("No scores match the current selection: widen the filters.")
    return frame


@cached(maxsize=8)
def family_map(src: Source) -> dict[str, str]:
    """Display name -> family; simulated models without a family are 'Simulated'."""
    frame = models(src)
    out = {}
    for name, family, simulated in zip(frame["display_name"], frame["family"], frame["simulated"]):
        fam = family if isinstance(family, str) and family else ("Simulated" if simulated else "Other")
        out[str(name)] = str(fam)
    return out


def item_text(record: Any) -> str:
    """Title, instructions and stem of an item record as one readable line (hovers and search)."""
    if not isinstance(record, dict):
        return ""
    parts = [record.get("question_title"), record.get("instructions"), record.get("question_text")]
    return " ".join(str(p) for p in parts if p)


def languages(src: Source, dataset: str) -> list[str]:
    """Language codes of a dataset's items, sorted (empty for an aggregate-only dataset)."""
    frame = item_keys(src, dataset)
    return sorted(frame["language"].dropna().unique())


def _in_dataset(ds: Any, dataset: str) -> bool:
    # `datasets` is a list per model, or NA for a model without runs
    return not isinstance(ds, type(pd.NA)) and ds is not None and dataset in list(ds)


def models_with_data(src: Source, dataset: str, baselines: bool = False, humans: bool = False) -> list[str]:
    """Display names of the models that have data in a dataset (published models for a reference dataset).

    Baseline models (kind `baseline`) are references, not examinees: they are listed only with
    ``baselines=True`` (the selection's switch), so a model picker never offers them by accident;
    people (kind `human`, by pseudonym) only with ``humans=True``.
    """
    table = models(src)
    kinds = table["kind"] if "kind" in table else pd.Series(MODEL_KIND, index=table.index)
    names = [name for name, ds, kind in zip(table["display_name"], table["datasets"], kinds)
             if _in_dataset(ds, dataset) and (baselines or kind != BASELINE_KIND) and (humans or kind != HUMAN_KIND)]
    if not names and dataset_flags(src, dataset).aggregate_only:
        names = sorted(published_type_means(src, dataset)["model"].unique())
    if not names and dataset_flags(src, dataset).aggregate_only:  # a published per-task table (studies)
        ref = study_reference(src, dataset)
        names = sorted(ref[0]["model"].unique()) if ref is not None else []
    return names


def baseline_models(src: Source, dataset: str) -> list[str]:
    """Display names of the baseline models (kind `baseline`) with data in a dataset."""
    table = models(src)
    if "kind" not in table:
        return []
    return [name for name, ds, kind in zip(table["display_name"], table["datasets"], table["kind"])
            if kind == BASELINE_KIND and _in_dataset(ds, dataset)]


def human_models(src: Source, dataset: str) -> list[str]:
    """Pseudonyms of the people (kind `human`) with answers in a dataset."""
    table = models(src)
    if "kind" not in table:
        return []
    return [name for name, ds, kind in zip(table["display_name"], table["datasets"], table["kind"])
            if kind == HUMAN_KIND and _in_dataset(ds, dataset)]


@cached(maxsize=8)
def study_reference(src: Source, dataset: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame] | None:
    """(cells, columns, statements) of a printed per-task / per-dimension table, or None when the dataset has none."""
    from ..store import studies as store_studies

    columns = store_studies.read_reference_columns(src.store, dataset)
    if columns.empty:
        return None
    return (store_studies.read_reference_cells(src.store, dataset), columns,
            store_studies.read_reference_statements(src.store, dataset))

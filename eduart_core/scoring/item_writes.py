"""Item writes that rescore: validate records, store them as versions, and rescore the responses of
every item whose record changed, in the writer's one transaction.

Why here and not in the store: validating a record needs the item formats (``items.check_item``)
and rescoring needs the scorers; the store writes the versions (``store.items``) and the score rows
this stage computes.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ..errors import UserError
from ..items import ItemValidationError, check_item
from ..store.connection import Connection
from ..store.core import Store
from ..store.items import ImportReport, PreparedItem, current_version_con, link_warnings, prepare_items, write_items
from ..store.runs import ensure_dataset_con
from ..vocab import BENCHMARK_KIND
from .rescore import rescore_con


def validation_error(item: PreparedItem) -> ItemValidationError:
    """The ItemValidationError for a defective prepared item (message names item and field)."""
    pairs = []
    for problem in item.problems:
        match = re.match(r"item .*?: field ([^:]+): (.*)$", problem, re.S)
        pairs.append((match.group(1), match.group(2)) if match else ("record", problem))
    return ItemValidationError(item.item_id, pairs)


def store_prepared(con: Connection, items: list[PreparedItem], dataset: str, origin: str,
                   report: ImportReport, keep_invalid: bool, note: str | None = None,
                   title: str | None = None) -> None:
    """Write prepared items inside the caller's transaction, refusing defects unless keep_invalid, and
    rescore the responses of the items whose record changed."""
    if not keep_invalid:
        for item in items:
            if item.problems:
                raise validation_error(item)
    ensure_dataset_con(con, dataset, title=title or dataset, kind=BENCHMARK_KIND)
    changed = write_items(con, items, dataset, origin, note, report)
    if changed:
        report.rescored += rescore_con(con, dataset=dataset, item_ids=changed)
    report.warnings.extend(link_warnings(con, dataset, [item.item_id for item in items]))


def upsert_items(store: Store, records: Iterable[dict], dataset: str, origin: str,
                 images_root: Path | str | None = None, keep_invalid: bool = False,
                 note: str | None = None) -> ImportReport:
    """Store item records in ``dataset`` in one transaction (all or nothing).

    Records with validation problems are stored flagged (``data_issue``) when ``keep_invalid``;
    otherwise the first defective item aborts the import with ``ItemValidationError`` and
    nothing is written. Items whose record changed get a new version and are re-scored.
    """
    report = ImportReport(dataset=dataset)
    records = list(records)
    with store.transaction() as con:
        items = prepare_items(con, store, records, Path(images_root) if images_root else None, report,
                              check=check_item)
        store_prepared(con, items, dataset, origin, report, keep_invalid, note)
    return report


def save_item_version(store: Store, dataset: str, record: dict, origin: str, note: str | None) -> int:
    """Save an edited record as the item's new current version and re-score its responses.

    Problems found by ``check_item`` are kept with the version (flagged as a data issue) rather
    than refused, so a reviewer can store a partial fix. Saving an unchanged record returns the
    current version number and writes nothing.
    """
    item_id = str(record.get("item_id") or "").strip()
    if not item_id:
        raise UserError("record has no item_id")
    report = ImportReport(dataset=dataset)
    with store.transaction() as con:
        if current_version_con(con, dataset, item_id) is None:
            raise UserError(f"no item {item_id} in dataset {dataset}")
        items = prepare_items(con, store, [record], None, report, check=check_item)
        write_items(con, items, dataset, origin, note, report)  # keeps the stored image
        if report.updated:
            rescore_con(con, dataset=dataset, item_ids=[item_id])
        version = current_version_con(con, dataset, item_id)
    assert version is not None  # checked above, and a write never removes the current version
    return version

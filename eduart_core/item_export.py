"""`export-items`: a dataset's current items as JSON Lines in the `import-items` format, canary first.

Why: items leave the store for review, for sharing with a data owner or for another store; every such
file carries the store's canary (`eduart_core.canary`) as its first line so the items can be traced,
and `import-items` reads the file back unchanged (the canary line is skipped, never stored). Records are
the stored current versions; images stay in the store (the record keeps its image reference).
"""
from __future__ import annotations

import json
from pathlib import Path

from .canary import header_record, store_canary
from .errors import UserError
from .store import Store
from .store.items import current_item_records
from .team import Identity


def export_lines(store: Store, dataset: str, actor: Identity | None = None) -> list[str]:
    """The export's lines: the canary header, then one item record per line (by item id)."""
    records = current_item_records(store, dataset)
    if not records:
        raise UserError(f"no items in dataset {dataset!r}")
    line = store_canary(store, actor)
    return [json.dumps(header_record(line), ensure_ascii=False)] + [
        json.dumps(record, ensure_ascii=False) for record in records]


def export_items(store: Store, dataset: str, out: Path, actor: Identity | None = None) -> int:
    """Write the export to ``out`` (atomically); returns the number of items written."""
    from .fileio import atomic_write

    lines = export_lines(store, dataset, actor)
    if out.parent and not out.parent.exists():
        raise UserError(f"folder {out.parent} does not exist")
    atomic_write(out, "\n".join(lines) + "\n")
    return len(lines) - 1

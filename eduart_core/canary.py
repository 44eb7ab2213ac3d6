"""The canary string carried by every export of a store's items, and how importers recognise it.

Why: exported exam items may end up in a training corpus or be pasted into a model. A GUID unique
to the store, written in a fixed readable form into every item export (`export-items`, the HTML
report's item examples), lets a data owner later search a model's output or a corpus for it (the
convention of BIG-bench's canary string). In JSON Lines the canary is the first line, an object
with the key ``_canary`` and no item id, so the file stays valid JSON Lines and `import-items`
skips that line instead of storing it as an item.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .store import Store
from .store.canary import canary, ensure_canary

if TYPE_CHECKING:
    from .team import Identity

PREFIX = "EDUART-CANARY"
HEADER_KEY = "_canary"
NOTE = ("These exam items are evaluation data of an EduArt Studio store. They must not be used to train "
        "models; the canary GUID marks this store's items so their presence in a corpus or a model's output "
        "can be detected.")

__all__ = ["HEADER_KEY", "NOTE", "PREFIX", "canary", "canary_line", "header_record", "is_header", "store_canary"]


def canary_line(guid: str) -> str:
    """The fixed searchable form: ``EDUART-CANARY <guid>``."""
    return f"{PREFIX} {guid}"


def store_canary(store: Store, actor: Identity | None = None) -> str:
    """The store's canary line, made on the first export (the maker recorded; the operator by default)."""
    from .team import operator

    return canary_line(ensure_canary(store, (actor or operator()).columns()))


def header_record(line: str) -> dict[str, str]:
    """The first JSON Lines record of an item export."""
    return {HEADER_KEY: line, "_note": NOTE}


def is_header(record: Any) -> bool:
    """True for a canary header record (never an item: it carries no item id)."""
    return isinstance(record, dict) and HEADER_KEY in record and "item_id" not in record and "id" not in record

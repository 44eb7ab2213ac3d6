"""The items table: one row per item with its format, language, image and metadata.

Why a function of its own: other benchmarks are read per task and per reasoning dimension
(VQArt-Bench reports per dimension, MUSE per task), and their tags (difficulty, cognitive level,
granularity) are how a researcher picks a subset. The inspector, `show items` and the runner's
``--items`` filter all need the same columns and the same matching rule, so both live here.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import pandas as pd

from .errors import UserError
from .store import Store
from .store.items import load_items
from .vocab import ALL_ITEMS, image_wanted

#: Columns of `items_table`, in order.
ITEM_TABLE_COLUMNS: tuple[str, ...] = (
    "item_id", "type", "language", "has_image", "task", "dimension", "tags", "parallel_of",
    "dialogue_id", "turn", "data_issue", "version",
)


def tags_text(tags: Mapping | None) -> str | None:
    """Tags as compact JSON with sorted keys (machine-readable in CSV and stable); None when absent."""
    if not tags:
        return None
    return json.dumps(dict(tags), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def tag_value_matches(tags: Mapping | None, name: str, values: Iterable[str]) -> bool:
    """True when tag ``name`` is set and its value, as text, is one of ``values``.

    Numbers compare by their text ("3" matches 3 and 3.0 does not), so a filter typed on the
    command line means what it says.
    """
    if not isinstance(tags, Mapping) or name not in tags:
        return False
    return str(tags[name]) in {str(v) for v in values}


def filter_items(frame: pd.DataFrame, *, types: Iterable[str] = (), languages: Iterable[str] = (),
                 tasks: Iterable[str] = (), dimensions: Iterable[str] = (),
                 tags: Mapping[str, Iterable[str]] | None = None, image: str = ALL_ITEMS) -> pd.DataFrame:
    """Rows of a ``load_items`` frame (or the items table) matching every given criterion.

    Empty criteria keep everything; several values of one criterion are alternatives; ``tags``
    maps a tag name to its accepted values.
    """
    mask = pd.Series(True, index=frame.index)
    for column, values in (("type", types), ("language", languages), ("task", tasks), ("dimension", dimensions)):
        values = [str(v) for v in values]
        if values:
            mask &= frame[column].isin(values)
    wanted = image_wanted(image)
    if wanted is not None:
        mask &= frame["has_image"].astype(bool) == wanted
    for name, values in (tags or {}).items():
        values = list(values)
        mask &= pd.Series([_tag_dict(t) is not None and tag_value_matches(_tag_dict(t), name, values)
                           for t in frame["tags"]], index=frame.index)
    return frame[mask]


def _tag_dict(value) -> Mapping | None:
    """Tags as a dict, from a ``load_items`` frame (dict) or the items table (JSON text)."""
    if isinstance(value, Mapping):
        return value
    if isinstance(value, str) and value:
        try:
            loaded = json.loads(value)
        except ValueError:
            return None
        return loaded if isinstance(loaded, dict) else None
    return None


def parse_tag_filter(text: str) -> dict[str, list[str]]:
    """``"difficulty=hard|medium,level=2"`` -> {"difficulty": ["hard", "medium"], "level": ["2"]}."""
    out: dict[str, list[str]] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, sep, values = part.partition("=")
        if not sep or not name.strip():
            raise UserError(f"tag filter {part.strip()!r} is not NAME=VALUE (several values with |)")
        out.setdefault(name.strip(), []).extend(v.strip() for v in values.split("|"))
    return out


def items_table(store: Store, dataset: str, **criteria) -> pd.DataFrame:
    """One row per current item of ``dataset`` with ``ITEM_TABLE_COLUMNS``, filtered by ``criteria``.

    ``criteria`` are those of `filter_items`. ``tags`` is returned as JSON text (see `tags_text`).
    """
    return metadata_table(filter_items(load_items(store, dataset), **criteria))


def metadata_table(frame: pd.DataFrame) -> pd.DataFrame:
    """A ``load_items`` frame as the items table (``ITEM_TABLE_COLUMNS``, tags as JSON text)."""
    out = frame.loc[:, [c for c in ITEM_TABLE_COLUMNS if c != "tags"]].copy()
    out.insert(ITEM_TABLE_COLUMNS.index("tags"), "tags",
               pd.Series([tags_text(t) for t in frame["tags"]], dtype=object, index=frame.index))
    out["version"] = out["version"].astype(int)
    return out.reset_index(drop=True)

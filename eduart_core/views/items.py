"""Views of items and responses: the inspector's list and card, and the dataset at a glance."""
from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd

from .. import analysis
from ..selection import Selection
from ..store import StoreError
from ..vocab import HUMAN_KIND
from ._base import (
    EmptySelection,
    ItemLevelUnavailable,
    Source,
    cached,
    dataset_flags,
    item_text,
    items,
    published_type_means,
    selected_scores,
)

logger = logging.getLogger(__name__)


@cached()
def item_table(src: Source, sel: Selection) -> pd.DataFrame:
    """One row per item: format, language, image, p, r_pb, mean score, models right, text (selected condition)."""
    frame = selected_scores(src, sel)
    stats = analysis.item_statistics(frame, corrected=True)
    table = analysis.item_overview(frame, stats)
    table["text"] = table["item_id"].map(item_texts(src, sel.dataset)).fillna("")
    return table


def _catalogue(src: Source, dataset: str) -> pd.DataFrame:
    """The dataset's items; a dataset without items says why (only published aggregates, or empty)."""
    catalogue = items(src, dataset)
    if catalogue.empty:
        if dataset_flags(src, dataset).aggregate_only:
            raise ItemLevelUnavailable(f"Dataset '{dataset}' holds only the published aggregates: "
                                       "item-level data are not available for it.")
        raise EmptySelection(f"Dataset '{dataset}' has no items.")
    return catalogue


@cached()
def item_list(src: Source, sel: Selection) -> pd.DataFrame:
    """Every item the format, language and image filters keep, with its statistics when models answered it.

    The inspector's list: items nobody has answered yet are listed too (their statistics are empty).
    """
    catalogue = _catalogue(src, sel.dataset)
    keep = ["item_id", "type", "language", "has_image", "version", "data_issue"]
    out = sel.apply(catalogue[[c for c in keep if c in catalogue]])
    if out.empty:
        raise EmptySelection("No items match the current selection: widen the filters.")
    try:
        stats = item_table(src, sel).drop(columns=["type", "language", "has_image", "text"])
    except EmptySelection:  # nobody has answered these items yet: list them without statistics
        stats = pd.DataFrame(columns=["item_id", "p", "r_pb", "mean_score", "models_right", "n_models"])
    out = out.merge(stats, on="item_id", how="left")
    out["models_right"] = out["models_right"].fillna(0).astype(int)
    out["n_models"] = out["n_models"].fillna(0).astype(int)
    out["text"] = out["item_id"].map(item_texts(src, sel.dataset)).fillna("")
    return out.sort_values("item_id").reset_index(drop=True)


@cached()
def item_metadata(src: Source, sel: Selection, task: str = "", dimension: str = "", tag: str = "") -> pd.DataFrame:
    """Every item with its task, dimension, tags, parallel form and dialogue turn (format, language, image filters).

    Options narrow further: ``task`` / ``dimension`` (several values with |), ``tag`` as
    ``NAME=VALUE`` (``difficulty=hard|medium,level=2``). ``tags`` is JSON text.
    """
    from ..item_table import filter_items, metadata_table, parse_tag_filter

    catalogue = _catalogue(src, sel.dataset)
    chosen = filter_items(sel.apply(catalogue), tasks=[v for v in task.split("|") if v],
                          dimensions=[v for v in dimension.split("|") if v], tags=parse_tag_filter(tag))
    if chosen.empty:
        raise EmptySelection("No items match the current selection: widen the filters.")
    return metadata_table(chosen)


@cached(maxsize=8)
def item_texts(src: Source, dataset: str) -> Mapping[str, str]:
    """item_id -> readable text (title, instructions, stem) for hovers and search.

    Read-only (a mapping proxy), so the cache hands out the same mapping without copying 5,000
    entries on every call."""
    frame = items(src, dataset)
    return MappingProxyType(dict(zip(frame["item_id"].astype(object), map(item_text, frame["record"]))))


@cached()
def responses(src: Source, sel: Selection, item: str = "") -> pd.DataFrame:
    """Every stored response in the selection (one item with option item=<id>), scores of both profiles.

    Raw text, parsed answer, motivation and errors included; ``is_latest`` marks the response the
    statistics use. The selection's models, formats, languages, image filter and condition apply.
    """
    from ..store import scores as store_scores

    _require_items(src, sel.dataset)
    frame = store_scores.load_responses(src.store, sel.dataset, item or None)
    meta = items(src, sel.dataset)[["item_id", "type", "language", "has_image"]]
    frame = frame.merge(meta, on="item_id", how="left")
    return sel.apply(frame).reset_index(drop=True)


@cached(maxsize=32)
def item_detail(src: Source, dataset: str, item_id: str) -> dict:
    """The item record (current version) with its image path, or {} when unknown.

    Cached like every view (per data version): the inspector asks on every rerun, and a store read
    each time cost a connection; callers read the record, never edit it."""
    from ..store import items as store_items

    record = store_items.get_item(src.store, dataset, item_id)
    if not record:
        return {}
    record = dict(record)
    image_hash = record.get("image_hash")
    record["_image_path"] = None
    if image_hash:
        try:
            record["_image_path"] = str(store_items.image_path(src.store, image_hash))
        except (StoreError, OSError, KeyError) as exc:
            logger.warning("item %s/%s: image %s not found (%s)", dataset, item_id, image_hash, exc)
    return record


@cached(maxsize=16)
def item_responses(src: Source, dataset: str, item_id: str, humans: bool = False) -> pd.DataFrame:
    """Every model x condition response to one item, with scores under both profiles (people's
    answers, kind human, only with ``humans``: the selection's switch); read once per data version
    (the inspector asks on every rerun)."""
    from ..store import scores as store_scores

    frame = store_scores.load_responses(src.store, dataset, item_id)
    return frame if humans else frame[frame["kind"] != HUMAN_KIND].reset_index(drop=True)


@cached()
def item_history(src: Source, sel: Selection, item: str = "") -> pd.DataFrame:
    """Every stored version of one item (option item=<id>), oldest first: who changed the gold, when, why."""
    from ..errors import UserError
    from ..store import items as store_items

    if not item:
        raise UserError("item_history needs the option item=<id>")
    frame = store_items.item_history(src.store, sel.dataset, item)
    return frame[[c for c in ("version", "is_current", "origin", "note", "created_at") if c in frame]]


# ---------------------------------------------------------------- the dataset at a glance

def _require_items(src: Source, dataset: str) -> None:
    if dataset_flags(src, dataset).aggregate_only:
        raise ItemLevelUnavailable(f"Dataset '{dataset}' holds only the published aggregates: "
                                   "item-level data are not available for it.")


@cached(maxsize=8)
def _glance(src: Source, dataset: str) -> dict:
    _require_items(src, dataset)
    it = items(src, dataset)
    words = it["text_words"] if "text_words" in it else it["record"].map(lambda r: len(item_text(r).split()))
    tokens, method = _token_lengths(it["record"])
    hashes = it["image_hash"].dropna().unique() if "image_hash" in it else []
    images = _image_sizes(src, hashes)
    lengths = pd.concat([analysis.length_summary(words, "words (stem plus options)"),
                         analysis.length_summary(tokens, f"tokens ({method})")], ignore_index=True)
    return {"n_items": len(it), "by_type": analysis.counts_by(it, "type"),
            "by_language": analysis.counts_by(it, "language"), "by_image": analysis.counts_by(it, "has_image"),
            "lengths": lengths, "images": images, "image_summary": analysis.image_summary(images),
            "distinct_images": len(hashes)}


def items_by_format(src: Source, sel: Selection) -> pd.DataFrame:
    """Items per format in the dataset (published Table 2); for published aggregates, the n behind them."""
    if dataset_flags(src, sel.dataset).aggregate_only:
        counts, _ = analysis.published_items_by_format(published_type_means(src, sel.dataset), sel.condition)
        return counts.rename("items").rename_axis("type").reset_index()
    return _glance(src, sel.dataset)["by_type"]


def items_by_language(src: Source, sel: Selection) -> pd.DataFrame:
    """Items per language in the dataset."""
    return _glance(src, sel.dataset)["by_language"]


def items_by_image(src: Source, sel: Selection) -> pd.DataFrame:
    """Items with and without an image in the dataset."""
    return _glance(src, sel.dataset)["by_image"]


def item_lengths(src: Source, sel: Selection) -> pd.DataFrame:
    """Item length in words and in tokens of the model-ready text: mean, SD, min, median, max (Table 2)."""
    return _glance(src, sel.dataset)["lengths"]


def image_sizes(src: Source, sel: Selection) -> pd.DataFrame:
    """Width, height (pixels) and file size (kB) of the distinct images: mean, min, median, max (Table 3)."""
    return _glance(src, sel.dataset)["image_summary"]


def dataset_glance(src: Source, dataset: str) -> dict:
    """Everything the Overview's "dataset at a glance" shows, computed once per data version."""
    return _glance(src, dataset)


def _token_lengths(records) -> tuple[list[float], str]:
    """Tokens of each item's model-ready text (published Table 2), with the counter used."""
    from ..items import render_prompt_text
    from ..tokens import token_counter

    counter = token_counter()
    counts = []
    for record in records:
        try:
            counts.append(counter.count(render_prompt_text(record)) if isinstance(record, dict) else np.nan)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a defective imported record
            logger.info("item without a token length (%s)", exc)
            counts.append(np.nan)
    return counts, counter.method


def _image_sizes(src: Source, hashes) -> pd.DataFrame:
    from PIL import Image, UnidentifiedImageError

    from ..store import items as store_items

    rows = []
    for h in hashes:
        try:
            path = Path(store_items.image_path(src.store, h))
            with Image.open(path) as im:
                width, height = im.size
            rows.append({"image_hash": h, "width": width, "height": height, "kb": path.stat().st_size / 1024})
        except (OSError, UnidentifiedImageError, StoreError, KeyError) as exc:
            logger.warning("image %s left out of the size summary: %s", h, exc)
    return pd.DataFrame(rows, columns=["image_hash", "width", "height", "kb"])


@cached(maxsize=4)
def canary(src: Source, sel: Selection) -> pd.DataFrame:
    """The store's canary, carried by every export of its items (one row; `made` false until the first export).

    A data owner searches a corpus or a model's output for ``canary_line``; ``created_by`` and
    ``created_at`` say who made it, on which export."""
    from .. import canary as canary_words
    from ..store.canary import canary_record

    found = canary_record(src.store)
    guid = found["canary"]
    return pd.DataFrame([{"made": bool(guid), "canary_line": canary_words.canary_line(guid) if guid else "",
                          "guid": guid, "created_by": found["canary_created_by"],
                          "created_at": found["canary_created_at"]}])

"""Choosing the items of a run: ``--items`` filters, ``--limit`` and stratified ``--sample``.

Why deterministic: a resumed launch must ask exactly the same items, so the selection depends
only on the items and the options (the sample is seeded), and the chosen ids are saved with the
launch.
"""
from __future__ import annotations

import random

import pandas as pd

from ..errors import UserError
from ..item_table import filter_items
from ..vocab import ALL_ITEMS, IMAGE_FILTERS, image_wanted

_FIELDS = {"type": "type", "language": "language", "lang": "language", "image": "has_image",
           "has_image": "has_image", "item": "item_id", "item_id": "item_id", "task": "task",
           "dimension": "dimension", "dialogue": "dialogue_id", "dialogue_id": "dialogue_id",
           "variant": "variant", "variant_of": "variant_of"}
#: ``tag.NAME=VALUE`` selects on one tag of the item's ``tags``.
_TAG_PREFIX = "tag."
_NAMES = "type, language, image, item_id, task, dimension, dialogue, variant, variant_of, tag.NAME"
#: Filters that name variants (or single items) themselves; without one, variant items stay out of a run.
_VARIANT_COLUMNS = ("variant", "variant_of", "item_id")
#: ``image=`` takes the vocabulary's image filter (with, without) or a yes/no word.
_IMAGE_WORDS = {**{w: True for w in ("true", "1", "yes", "y")}, **{w: False for w in ("false", "0", "no", "n")},
                **{name: image_wanted(name) for name in IMAGE_FILTERS if name != ALL_ITEMS}}


def parse_filter(text: str | None) -> dict[str, list]:
    """``type=completion_open|positioning,language=it,image=with`` -> {column: [values]}."""
    result: dict[str, list] = {}
    if not text:
        return result
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise UserError(f"--items: '{part}' is not NAME=VALUE (names: {_NAMES})")
        name, value = (s.strip() for s in part.split("=", 1))
        column: str | None
        if name.lower().startswith(_TAG_PREFIX) and len(name) > len(_TAG_PREFIX):
            column = _TAG_PREFIX + name[len(_TAG_PREFIX):]  # tag names keep their case
        else:
            column = _FIELDS.get(name.lower())
        if column is None:
            raise UserError(f"--items: unknown field '{name}' (use {_NAMES})")
        values: list = []
        for v in value.split("|"):
            if column == "has_image":
                if v.lower() not in _IMAGE_WORDS:
                    raise UserError(f"--items: image={v} must be with or without (or true/false)")
                values.append(_IMAGE_WORDS[v.lower()])
            else:
                values.append(v)
        result.setdefault(column, []).extend(values)
    return result


def apply_filter(items: pd.DataFrame, text: str | None) -> pd.DataFrame:
    """The items ``text`` selects. Variant items (``variant_of`` set, see `eduart_core.variants`) are
    asked only when the filter names them (``variant=rotate``, ``variant_of=ID``, ``item=ID~rotate-1``):
    a plain run of a dataset is a run of its source items, as its leaderboard is."""
    frame = items
    wanted = parse_filter(text)
    if "variant_of" in frame and not any(c in wanted for c in _VARIANT_COLUMNS):
        frame = frame[frame["variant_of"].isna()]
    for column, values in wanted.items():
        if column.startswith(_TAG_PREFIX):
            frame = filter_items(frame, tags={column[len(_TAG_PREFIX):]: values})
        else:
            frame = frame[frame[column].isin(values)]
    return frame


def stratified_sample(items: pd.DataFrame, n: int, seed: int = 2026) -> pd.DataFrame:
    """``n`` items spread over (type, language, has_image) strata in proportion, at least one each
    while there is room, drawn with a fixed seed."""
    if n >= len(items):
        return items
    rng = random.Random(seed)
    strata = ["type", "language", "has_image"]
    # only the ids are split: splitting every column (item records included) costs more than the sample
    groups = {key: sorted(frame["item_id"]) for key, frame in items[[*strata, "item_id"]].groupby(strata)}
    keys = sorted(groups, key=str)
    quota = {k: 0 for k in keys}
    for k in sorted(keys, key=lambda k: -len(groups[k]))[:n]:
        quota[k] = 1
    remaining = n - sum(quota.values())
    total = len(items)
    shares = sorted(keys, key=lambda k: -(len(groups[k]) * n / total - quota[k]))
    while remaining > 0:
        progressed = False
        for k in shares:
            if remaining and quota[k] < len(groups[k]) and quota[k] < round(len(groups[k]) * n / total + 0.5):
                quota[k] += 1
                remaining -= 1
                progressed = True
        if not progressed:
            for k in shares:
                if remaining and quota[k] < len(groups[k]):
                    quota[k] += 1
                    remaining -= 1
    chosen = [i for k in keys for i in rng.sample(groups[k], quota[k])]
    return items[items["item_id"].isin(chosen)]


def select_items(items: pd.DataFrame, filter_text: str | None, limit: int | None, sample: int | None,
                 seed: int = 2026) -> pd.DataFrame:
    frame = apply_filter(items, filter_text).sort_values("item_id")
    if sample and len(frame) and sample > len(frame):  # a sample is of the items there are: more is a typo, not "all"
        raise UserError(f"stratified sample size (--sample): {sample} is more than the {len(frame)} items this "
                        f"selection holds; use at most {len(frame)}, or no sample for all of them")
    if sample:
        frame = stratified_sample(frame, sample, seed).sort_values("item_id")
    if limit is not None:
        frame = frame.head(limit)
    if frame.empty:
        raise UserError("no items match the selection (check --items, --limit and --dataset)")
    return frame

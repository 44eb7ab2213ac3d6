"""Contamination probes read beside the answers to their source items.

Why beside the sources: a probe hit alone says a model can reproduce text of the item (a hidden wrong
option, the end of the question), which a model that never saw the item should not; the question a
researcher asks next is whether the model's accuracy on the items it "knows" that way is higher
than on the others. So per model, condition and probe kind: the share of probed items whose probe
is scored right, and the accuracy on the source items of the probe hits and of the probe misses,
each with a 95% Wilson interval over items. No sentence here ranks models: the intervals are the
claim. ``probe_auroc`` measures how well probe hits separate items known to be leaked (a
simulation's truth) from clean ones.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .intervals import wilson_interval

SUMMARY_COLUMNS = ["model", "condition", "kind", "n_items", "n_hits", "hit_share", "hit_low", "hit_high",
                   "accuracy_hit", "accuracy_hit_low", "accuracy_hit_high", "accuracy_miss", "accuracy_miss_low",
                   "accuracy_miss_high"]
ITEM_COLUMNS = ["item_id", "kind", "n_models", "n_hits", "models_hit"]
PERIOD_COLUMNS = ["model", "condition", "cutoff", "period", "n_items", "accuracy", "accuracy_low", "accuracy_high"]


def probe_pairs(scores: pd.DataFrame, links: pd.DataFrame, kinds: tuple[str, ...]) -> pd.DataFrame:
    """One row per model x condition x probe: the probe's correctness (``hit``) and the source's
    (``source_correct``: 1.0, 0.0, or NaN when the model was not asked the source). ``links``:
    item_id, variant_of, variant (kind) of the catalogue; the probes of ``kinds`` only."""
    frame = scores[["model", "condition", "item_id", "correct"]].copy()
    for column in ("model", "condition", "item_id"):
        frame[column] = frame[column].astype(str)
    link = links.loc[links["variant_of"].notna() & links["variant"].isin(kinds), ["item_id", "variant_of", "variant"]]
    link = link.astype(str)
    probes = frame.merge(link, on="item_id", how="inner").rename(columns={"correct": "hit", "item_id": "probe_id",
                                                                          "variant": "kind"})
    sources = frame.rename(columns={"item_id": "variant_of", "correct": "source_correct"})
    out = probes.merge(sources, on=["model", "condition", "variant_of"], how="left")
    out["hit"] = out["hit"].astype(bool)
    out["source_correct"] = out["source_correct"].astype(float)
    return out.rename(columns={"variant_of": "item_id"})


def _share(k: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """k of n with its Wilson interval (NaN where n is 0)."""
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.asarray(k, dtype=float) / np.where(n > 0, n, np.nan)
    low, high = wilson_interval(p, n)
    return p, low, high


def probe_summary(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per model, condition and kind: probe hit share over the probed items, and source accuracy on the
    hits vs the misses over those whose source the model answered too (Wilson 95%; NaN where none)."""
    if pairs.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    answered = pairs["source_correct"].notna()
    right = pairs["source_correct"].fillna(0.0) > 0.5
    pairs = pairs.assign(asked_hit=pairs["hit"] & answered, asked_miss=~pairs["hit"] & answered,
                         right_hit=pairs["hit"] & right, right_miss=~pairs["hit"] & right)
    table = pairs.groupby(["model", "condition", "kind"], sort=True).agg(
        n_items=("item_id", "size"), n_hits=("hit", "sum"), asked_hit=("asked_hit", "sum"),
        asked_miss=("asked_miss", "sum"), right_hit=("right_hit", "sum"), right_miss=("right_miss", "sum")
    ).reset_index()
    table["hit_share"], table["hit_low"], table["hit_high"] = _share(table["n_hits"], table["n_items"])
    table["accuracy_hit"], table["accuracy_hit_low"], table["accuracy_hit_high"] = _share(
        table["right_hit"], table["asked_hit"])
    table["accuracy_miss"], table["accuracy_miss_low"], table["accuracy_miss_high"] = _share(
        table["right_miss"], table["asked_miss"])
    table["n_hits"] = table["n_hits"].astype(int)
    return table[SUMMARY_COLUMNS].reset_index(drop=True)


def probe_items(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per source item and kind: how many models (x conditions) were probed, and which hit, named."""
    if pairs.empty:
        return pd.DataFrame(columns=ITEM_COLUMNS)
    pairs = pairs.assign(examinee=pairs["model"] + np.where(pairs["condition"] == "default", "",
                                                            " (" + pairs["condition"] + ")"))
    rows = []
    for (item, kind), group in pairs.groupby(["item_id", "kind"], sort=True):
        hit = sorted(set(group.loc[group["hit"], "examinee"]))
        rows.append({"item_id": item, "kind": kind, "n_models": group["examinee"].nunique(), "n_hits": len(hit),
                     "models_hit": ", ".join(hit)})
    table = pd.DataFrame(rows, columns=ITEM_COLUMNS)
    return table.sort_values(["n_hits", "item_id"], ascending=[False, True], kind="stable").reset_index(drop=True)


def probe_auroc(leaked: np.ndarray, hit: np.ndarray) -> float:
    """Area under the ROC curve of ``hit`` (probe scores, higher = more likely seen) for telling the
    ``leaked`` items (True) from the clean ones: the chance that a leaked item outscores a clean one,
    ties counting half (the Mann-Whitney statistic over n_leaked x n_clean). NaN without both kinds."""
    leaked = np.asarray(leaked, dtype=bool)
    hit = np.asarray(hit, dtype=float)
    pos, neg = hit[leaked], hit[~leaked]
    if not len(pos) or not len(neg):
        return float("nan")
    ranks = pd.Series(np.concatenate([pos, neg])).rank(method="average").to_numpy()
    return float((ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def period_accuracy(scores: pd.DataFrame, published: dict[str, str], cutoffs: dict[str, str]) -> pd.DataFrame:
    """Per model with a training cutoff (``cutoffs`` by model key, the ``model_key`` column where the
    frame has one): accuracy on the items published before it and on those
    published after it (Wilson 95%), over the items with a publication date. Dates compare as ISO
    text (``2024`` < ``2024-06`` < ``2025-01-01``): an item published in the cutoff's own period
    counts as before it. A model that knows the older items only scores higher before its cutoff."""
    key = "model_key" if "model_key" in scores else "model"
    frame = scores[["model", "condition", "item_id", "correct"]].assign(key=scores[key].astype(str))
    frame["item_id"] = frame["item_id"].astype(str)
    frame = frame[frame["key"].isin(cutoffs) & frame["item_id"].isin(published)]
    if frame.empty:
        return pd.DataFrame(columns=PERIOD_COLUMNS)
    frame["cutoff"] = frame["key"].map(cutoffs)
    frame["published"] = frame["item_id"].map(published)
    before = [str(p)[:len(str(c))] <= str(c) for p, c in zip(frame["published"], frame["cutoff"])]
    frame["period"] = np.where(before, "before cutoff", "after cutoff")
    table = frame.groupby(["model", "condition", "cutoff", "period"], sort=True).agg(
        n_items=("item_id", "size"), right=("correct", "sum")).reset_index()
    table["accuracy"], table["accuracy_low"], table["accuracy_high"] = _share(
        table["right"].to_numpy(dtype=float), table["n_items"].to_numpy())
    return table[PERIOD_COLUMNS].reset_index(drop=True)


__all__ = ["ITEM_COLUMNS", "PERIOD_COLUMNS", "SUMMARY_COLUMNS", "period_accuracy", "probe_auroc", "probe_items",
           "probe_pairs", "probe_summary"]

"""Invariance under variants: flip rates, consistency-adjusted accuracy, position bias and image reliance.

Why these measures: a model that knows the answer keeps it when the options are rotated or the
image is perturbed; one that knows the layout does not. For each model, condition and variant
kind (`eduart_core.variants`):

- **flip rate**: the share of source items on which the model's answer to at least one variant of
  the kind is scored differently (right vs wrong) from its answer to the source, with a 95% Wilson
  interval over those items (items are the independent units; the variants of one item are not);
- **consistency-adjusted accuracy**: the share of source items answered right on the source and on
  every variant of the kind, as CircularEval (VLMEvalKit, Liu et al. 2023, MMBench) counts an item
  right only when every circular rotation is answered right;
- **position bias** (`position_bias`): the share of answers that chose the option in each position
  against the share of items whose key is in that position;
- **image reliance** (`image_reliance`): the accuracy drop from the source to the variant (without
  the image, or with the image perturbed) on the same items, with Newcombe's paired interval
  (method 10, Newcombe 1998). A model "scores the same without the image" only when the whole
  interval of its drop lies within +/- `SAME_MARGIN`.

Pure: frames in, frames out (no store, no Streamlit).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .intervals import Z95, wilson_interval

#: A drop whose 95% interval lies within +/- this margin counts as "the same" (5 percentage points).
SAME_MARGIN = 0.05

INVARIANCE_COLUMNS = ["model", "condition", "kind", "n_items", "n_variants", "n_flipped", "flip_rate", "flip_low",
                      "flip_high", "source_accuracy", "consistent_accuracy", "consistent_low", "consistent_high"]
ITEM_COLUMNS = ["item_id", "kind", "n_models", "n_flipping", "flip_share", "models_flipping", "variants"]
POSITION_COLUMNS = ["model", "condition", "position", "n_answers", "chosen", "chosen_share", "chosen_low",
                    "chosen_high", "key_share"]
RELIANCE_COLUMNS = ["model", "condition", "kind", "n_items", "source_accuracy", "variant_accuracy", "drop",
                    "drop_low", "drop_high", "same"]


def _pairs(scores: pd.DataFrame, links: pd.DataFrame) -> pd.DataFrame:
    """One row per model x condition x variant with the source's and the variant's correctness.

    ``links``: item_id, variant_of, variant (kind) of the variant items. Rows where either answer is
    missing are left out (a variant that was not asked says nothing about flipping).
    """
    frame = scores[["model", "condition", "item_id", "correct"]].copy()
    frame["item_id"] = frame["item_id"].astype(str)
    frame["model"] = frame["model"].astype(str)
    frame["condition"] = frame["condition"].astype(str)
    link = links.loc[links["variant_of"].notna(), ["item_id", "variant_of", "variant"]].copy()
    link["item_id"] = link["item_id"].astype(str)
    link["variant_of"] = link["variant_of"].astype(str)
    link["variant"] = link["variant"].fillna("unnamed").astype(str)
    var = frame.merge(link, on="item_id", how="inner").rename(columns={"correct": "variant_correct",
                                                                        "item_id": "variant_id"})
    src = frame.rename(columns={"item_id": "variant_of", "correct": "source_correct"})
    out = var.merge(src, on=["model", "condition", "variant_of"], how="inner")
    out["source_correct"] = out["source_correct"].astype(bool)
    out["variant_correct"] = out["variant_correct"].astype(bool)
    return out.rename(columns={"variant": "kind"})


def invariance(scores: pd.DataFrame, links: pd.DataFrame) -> pd.DataFrame:
    """Per model, condition and kind: flip rate and consistency-adjusted accuracy (CircularEval) with
    95% Wilson intervals over the source items (see the module docstring)."""
    pairs = _pairs(scores, links)
    if pairs.empty:
        return pd.DataFrame(columns=INVARIANCE_COLUMNS)
    pairs["flip"] = pairs["source_correct"] != pairs["variant_correct"]
    per_item = pairs.groupby(["model", "condition", "kind", "variant_of"], sort=True).agg(
        flipped=("flip", "any"), source=("source_correct", "first"), every=("variant_correct", "all"),
        n_variants=("variant_id", "size")).reset_index()
    per_item["consistent"] = per_item["source"] & per_item["every"]
    table = per_item.groupby(["model", "condition", "kind"], sort=True).agg(
        n_items=("variant_of", "size"), n_variants=("n_variants", "sum"), n_flipped=("flipped", "sum"),
        source_accuracy=("source", "mean"), consistent=("consistent", "sum")).reset_index()
    n = table["n_items"].to_numpy(dtype=float)
    table["flip_rate"] = table["n_flipped"] / n
    table["flip_low"], table["flip_high"] = wilson_interval(table["flip_rate"].to_numpy(), n)
    table["consistent_accuracy"] = table["consistent"] / n
    table["consistent_low"], table["consistent_high"] = wilson_interval(table["consistent_accuracy"].to_numpy(), n)
    table["n_flipped"] = table["n_flipped"].astype(int)
    return table[INVARIANCE_COLUMNS].reset_index(drop=True)


def item_invariance(scores: pd.DataFrame, links: pd.DataFrame) -> pd.DataFrame:
    """Per source item and kind: how many models (x conditions) answered it and its variants, and how
    many of them flip (right on the source and wrong on a variant, or the other way), named."""
    pairs = _pairs(scores, links)
    if pairs.empty:
        return pd.DataFrame(columns=ITEM_COLUMNS)
    pairs["flip"] = pairs["source_correct"] != pairs["variant_correct"]
    pairs["examinee"] = pairs["model"] + np.where(pairs["condition"] == "default", "", " (" + pairs["condition"] + ")")
    per = pairs.groupby(["variant_of", "kind", "examinee"], sort=True).agg(
        flipped=("flip", "any"), variants=("variant_id", "nunique")).reset_index()
    rows = []
    for (item, kind), group in per.groupby(["variant_of", "kind"], sort=True):
        flipping = sorted(group.loc[group["flipped"], "examinee"])
        rows.append({"item_id": item, "kind": kind, "n_models": len(group), "n_flipping": len(flipping),
                     "flip_share": len(flipping) / len(group), "models_flipping": ", ".join(flipping),
                     "variants": int(group["variants"].max())})
    table = pd.DataFrame(rows, columns=ITEM_COLUMNS)
    return table.sort_values(["n_flipping", "item_id"], ascending=[False, True], kind="stable").reset_index(drop=True)


def position_bias(choices: pd.DataFrame, options: dict[str, list[str]], keys: dict[str, set[str]]) -> pd.DataFrame:
    """Per model, condition and option position (1 = first): the share of single-option answers that
    chose the option there (95% Wilson interval) and the share of those answers whose key is there.

    ``choices``: model, condition, item_id, answers (parsed answer list); ``options``: item id ->
    option ids in shown order; ``keys``: item id -> key ids. Only answers naming exactly one option
    of a single-key item count (a multiple-answer item has no one key position).
    """
    rows = []
    for model, condition, item_id, answers in zip(choices["model"], choices["condition"], choices["item_id"],
                                                  choices["answers"]):
        order = options.get(str(item_id))
        key = keys.get(str(item_id))
        if not order or not key or len(key) != 1 or not isinstance(answers, list):
            continue
        picked = {str(a.get("id")).strip().upper() for a in answers if isinstance(a, dict) and a.get("id")}
        ids = [str(o).strip().upper() for o in order]
        if len(picked) != 1 or next(iter(picked)) not in ids:
            continue
        rows.append((str(model), str(condition), ids.index(next(iter(picked))) + 1,
                     ids.index(next(iter(key)).strip().upper()) + 1 if next(iter(key)).strip().upper() in ids else 0))
    if not rows:
        return pd.DataFrame(columns=POSITION_COLUMNS)
    frame = pd.DataFrame(rows, columns=["model", "condition", "chosen_position", "key_position"])
    out = []
    for (model, condition), group in frame.groupby(["model", "condition"], sort=True):
        n = len(group)
        for position in range(1, int(max(group["chosen_position"].max(), group["key_position"].max())) + 1):
            chosen = int((group["chosen_position"] == position).sum())
            low, high = wilson_interval(chosen / n, n)
            out.append({"model": model, "condition": condition, "position": position, "n_answers": n,
                        "chosen": chosen, "chosen_share": chosen / n, "chosen_low": low, "chosen_high": high,
                        "key_share": float((group["key_position"] == position).mean())})
    return pd.DataFrame(out, columns=POSITION_COLUMNS)


def _margin_interval(p: float, n: int, z: float) -> tuple[float, float]:
    """One margin's score interval (analysis.intervals' formula), as plain floats."""
    low, high = wilson_interval(p, n, z)
    return float(low), float(high)


def newcombe_paired(a: int, b: int, c: int, d: int, z: float = Z95) -> tuple[float, float, float]:
    """(difference p1 - p2, low, high) of two paired proportions by Newcombe's method 10 (1998):
    a = both right, b = first right only, c = second right only, d = both wrong. Wilson intervals of
    each margin combined with the continuity-corrected phi of the 2x2 table."""
    n = a + b + c + d
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = _margin_interval(p1, n, z)
    l2, u2 = _margin_interval(p2, n, z)
    denominator = math.sqrt(float((a + b) * (c + d) * (a + c) * (b + d)))
    if denominator == 0:
        phi = 0.0
    else:
        cross = a * d - b * c
        numerator = max(cross - n / 2, 0.0) if cross > 0 else float(cross)
        phi = numerator / denominator
    delta = p1 - p2
    low = delta - math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    high = delta + math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    return delta, max(low, -1.0), min(high, 1.0)


def image_reliance(scores: pd.DataFrame, links: pd.DataFrame, kinds: tuple[str, ...],
                   margin: float = SAME_MARGIN) -> pd.DataFrame:
    """Per model, condition and image kind: accuracy on the source items and on their variant, the drop
    (source minus variant) with Newcombe's paired 95% interval, and ``same``: True when the whole
    interval lies within +/- ``margin`` (the model scores the same with and without that change)."""
    pairs = _pairs(scores, links)
    pairs = pairs[pairs["kind"].isin(kinds)]
    out = []
    for (model, condition, kind), g in pairs.groupby(["model", "condition", "kind"], sort=True):
        s, v = g["source_correct"].to_numpy(), g["variant_correct"].to_numpy()
        a, b, c, d = (int((s & v).sum()), int((s & ~v).sum()), int((~s & v).sum()), int((~s & ~v).sum()))
        drop, low, high = newcombe_paired(a, b, c, d)
        out.append({"model": model, "condition": condition, "kind": kind, "n_items": len(g),
                    "source_accuracy": float(s.mean()), "variant_accuracy": float(v.mean()), "drop": drop,
                    "drop_low": low, "drop_high": high, "same": bool(-margin <= low and high <= margin)})
    return pd.DataFrame(out, columns=RELIANCE_COLUMNS)


__all__ = ["INVARIANCE_COLUMNS", "ITEM_COLUMNS", "POSITION_COLUMNS", "RELIANCE_COLUMNS", "SAME_MARGIN",
           "image_reliance", "invariance", "item_invariance", "newcombe_paired", "position_bias"]

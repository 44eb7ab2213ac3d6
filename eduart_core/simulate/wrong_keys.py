"""Simulated banks with planted wrong keys: how often the key auditor finds them (`bench keys`).

Why simulate: on real data nobody knows which keys are wrong, so the auditor's recall can only be
measured where the truth is planted. The bank (simulated data, labelled so wherever reported):

- ``n_items`` four-option multiple-choice items (options A-D), Rasch difficulties ~ N(0, 1);
- ``n_examinees`` examinees (one condition), abilities ~ N(0, ``ability_sd``);
- an examinee knows an item's true answer with the Rasch probability; otherwise it picks one of
  the three other options at random (a guess among wrong options);
- a share ``wrong_share`` of the items (rounded) get a planted wrong key: one of the three other
  options at random. Scores are computed against the stored (possibly wrong) key, as the studio does.

The auditor then sees exactly what it sees on a store: the long score frame, the chosen options
and the keys; it ranks every item by the combined signal (`analysis.keyflags.key_signal`).
Recall = planted items among the top ``top_share`` of the ranking / planted items; precision =
planted items among the top / items in the top (at most planted / top: 15 / 30 = 50% by default).
Each signal's recall when it ranks alone is reported beside it (what each signal contributes).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..vocab import DEFAULT_CONDITION, MCQ_TYPE

OPTIONS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class KeyBank:
    """What the auditor sees (scores, choices, keys) and the truth (``planted``)."""

    scores: pd.DataFrame
    choices: pd.DataFrame
    keys: dict[str, set[str]]
    planted: set[str]


def planted_bank(seed: int, n_items: int = 300, n_examinees: int = 12, wrong_share: float = 0.05,
                 ability_sd: float = 1.0) -> KeyBank:
    """One simulated bank with ``round(wrong_share * n_items)`` planted wrong keys."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, ability_sd, n_examinees)
    b = rng.normal(0.0, 1.0, n_items)
    truth = rng.integers(0, 4, n_items)
    planted_idx = rng.choice(n_items, int(round(wrong_share * n_items)), replace=False)
    key = truth.copy()
    key[planted_idx] = (truth[planted_idx] + rng.integers(1, 4, len(planted_idx))) % 4
    knows = rng.random((n_examinees, n_items)) < 1.0 / (1.0 + np.exp(-(theta[:, None] - b[None, :])))
    guess = (truth[None, :] + rng.integers(1, 4, (n_examinees, n_items))) % 4
    chosen = np.where(knows, truth[None, :], guess)
    right = chosen == key[None, :]
    ids = [f"s{i:04d}" for i in range(n_items)]
    models = [f"sim-{e:02d}" for e in range(n_examinees)]
    grid_ex, grid_it = np.meshgrid(np.arange(n_examinees), np.arange(n_items), indexing="ij")
    ex, it = grid_ex.ravel(), grid_it.ravel()
    scores = pd.DataFrame({"model": [models[e] for e in ex], "condition": DEFAULT_CONDITION,
                           "item_id": [ids[i] for i in it], "type": MCQ_TYPE,
                           "score": right.ravel().astype(float), "correct": right.ravel()})
    choices = pd.DataFrame({"model": scores["model"], "condition": DEFAULT_CONDITION, "item_id": scores["item_id"],
                            "ids": [[OPTIONS[c]] for c in chosen.ravel()]})
    keys = {ids[i]: {OPTIONS[key[i]]} for i in range(n_items)}
    return KeyBank(scores, choices, keys, {ids[i] for i in planted_idx})


def audit(bank: KeyBank, top_share: float = 0.10) -> dict:
    """Rank the bank's items by the combined signal; recall and precision among the top ``top_share``."""
    from ..analysis.keyflags import FlagContext, key_signal

    context = FlagContext(choices=bank.choices, keys=bank.keys)
    ranked = key_signal(bank.scores, context)
    n_top = int(round(top_share * len(ranked)))
    top = set(ranked["item_id"].head(n_top))
    found = len(top & bank.planted)
    alone = {}  # each signal ranking on its own (an item without it last): what each contributes
    for column in [c for c in ranked.columns if c.startswith("z_") and ranked[c].notna().any()]:
        order = ranked.assign(_z=ranked[column].fillna(-np.inf)).sort_values(["_z", "item_id"], ascending=[False, True])
        alone[column[2:]] = len(set(order["item_id"].head(n_top)) & bank.planted) / max(len(bank.planted), 1)
    return {"recall": found / max(len(bank.planted), 1), "precision": found / max(len(top), 1),
            "found": found, "planted": len(bank.planted), "top": len(top), "alone": alone}


def measure(seeds: int = 20, first_seed: int = 0, **bank_options) -> dict:
    """Median recall and precision over ``seeds`` simulated banks (and each seed's result)."""
    runs = [audit(planted_bank(seed, **bank_options)) for seed in range(first_seed, first_seed + seeds)]
    signals = sorted({name for r in runs for name in r["alone"]})
    return {"recall": statistics.median(r["recall"] for r in runs),
            "precision": statistics.median(r["precision"] for r in runs),
            "alone": {name: statistics.median(r["alone"].get(name, 0.0) for r in runs) for name in signals},
            "runs": runs}


__all__ = ["KeyBank", "audit", "measure", "planted_bank"]

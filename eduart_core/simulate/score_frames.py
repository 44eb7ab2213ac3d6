"""A fast, vectorised generator of a synthetic long score frame for benchmarks and tests.

Not a respondent simulator (the demo room has that): it only needs the shape and rough texture
of real data (published format mix, partial credit, easy and impossible items, a motivation
condition that mostly repeats the default answer) at any size, in well under a second per
million rows.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import expit

from ..formats import AnswerFormat, find_format
from ..vocab import CONDITIONS, DEFAULT_CONDITION, DEFAULT_PROFILE, EDUART_FORMATS

# Published item counts per format (871 items), in published order.
PUBLISHED_MIX: dict[str, int] = dict(zip(EDUART_FORMATS, (370, 117, 83, 108, 69, 75, 49)))
def _format_of(name: str) -> AnswerFormat:
    """The format's entry (its synthetic parts and shift; the defaults for an unknown name)."""
    return find_format(name) or AnswerFormat()


def scaled_mix(items: int) -> dict[str, int]:
    """The published format mix scaled to `items` (largest remainder, sums exactly)."""
    total = sum(PUBLISHED_MIX.values())
    raw = np.array(list(PUBLISHED_MIX.values()), dtype=float) * items / total
    counts = np.floor(raw).astype(int)
    for i in np.argsort(-(raw - counts), kind="stable")[: items - counts.sum()]:
        counts[i] += 1
    return dict(zip(PUBLISHED_MIX, counts.tolist()))


def synthetic_scores(models: int | Sequence[str], items: int, seed: int = 0,
                     conditions: Sequence[str] = CONDITIONS,
                     categorical: bool = False) -> pd.DataFrame:
    """One row per model x condition x item with the long score-frame columns.

    `models` is a count (names "Sim Model 001"...) or a list of names. Scores are 0/1 for
    single-answer formats and k/parts for partial-credit formats. About 4% of items are answered
    right by everyone and 1% by no one, as in the publication. `categorical=True` returns
    category dtypes (smaller, faster); the default plain strings match what the store returns.
    """
    rng = np.random.default_rng(seed)
    names = ([f"Sim Model {i + 1:03d}" for i in range(models)] if isinstance(models, int)
             else list(models))
    n_m, n_i, n_c = len(names), int(items), len(conditions)
    mix = scaled_mix(n_i)
    types = np.repeat(np.array(list(mix)), list(mix.values()))
    item_ids = np.array([f"syn-{i + 1:05d}" for i in range(n_i)])
    language = np.where(rng.random(n_i) < 0.85, "it", "en")
    has_image = rng.random(n_i) < 0.3
    difficulty = rng.normal(-0.8, 1.4, n_i)
    extremes = rng.random(n_i)
    difficulty[extremes < 0.04] = -12.0   # everyone right
    difficulty[extremes > 0.99] = 12.0    # no one right
    slope = rng.lognormal(0.0, 0.3, n_i)
    shift = np.array([_format_of(t).synthetic_shift for t in types]) - 0.4 * has_image
    parts = np.array([_format_of(t).synthetic_parts for t in types])
    ability = np.sort(rng.normal(0.0, 1.0, n_m))[::-1]
    motivation_shift = rng.normal(-0.1, 0.25, n_m)

    logits = slope * (ability[:, None] - difficulty) + shift          # models x items
    prob = expit(logits)
    base = rng.binomial(np.broadcast_to(parts, prob.shape), prob) / parts
    blocks = []
    for c, cond in enumerate(conditions):
        if c == 0 or cond == DEFAULT_CONDITION:
            scores = base
        else:
            fresh = rng.binomial(np.broadcast_to(parts, prob.shape),
                                 expit(logits + motivation_shift[:, None])) / parts
            scores = np.where(rng.random(prob.shape) < 0.15, fresh, base)
        blocks.append(scores.ravel())
    score = np.concatenate(blocks)

    n_rows = n_m * n_i * n_c
    model_codes = np.tile(np.repeat(np.arange(n_m), n_i), n_c)
    item_codes = np.tile(np.arange(n_i), n_m * n_c)
    cond_codes = np.repeat(np.arange(n_c), n_m * n_i)

    def column(values: np.ndarray, codes: np.ndarray):
        """Expand unique `values` by `codes`, as categories or as plain strings."""
        if categorical:
            return pd.Categorical.from_codes(codes, categories=values)
        return np.asarray(values, dtype=object)[codes]

    type_cats, type_codes = np.unique(types, return_inverse=True)
    lang_cats, lang_codes = np.unique(language, return_inverse=True)
    frame = pd.DataFrame({
        "model": column(np.array(names), model_codes),
        "condition": column(np.array(list(conditions)), cond_codes),
        "item_id": column(item_ids, item_codes),
        "type": column(type_cats, type_codes[item_codes]),
        "language": column(lang_cats, lang_codes[item_codes]),
        "has_image": has_image[item_codes],
        "profile": DEFAULT_PROFILE,
        "score": score,
        "correct": score >= 0.5,
        "family": "Simulated",
        "simulated": True,
        "dataset": "synthetic",
    })
    assert len(frame) == n_rows
    return frame



def synthetic_parts(frame: pd.DataFrame) -> dict[str, int]:
    """item_id -> part count of a `synthetic_scores` frame: the simulated parts of the formats that
    give partial credit (`AnswerFormat.partial_credit`), one part for the others."""
    first = frame.drop_duplicates("item_id")
    out = {}
    for item_id, name in zip(first["item_id"].astype(str), first["type"].astype(str)):
        fmt = find_format(name)
        out[item_id] = fmt.synthetic_parts if fmt is not None and fmt.partial_credit else 1
    return out

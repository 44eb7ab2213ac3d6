"""Runs against a baseline: per format and overall deltas with paired intervals, and the items that changed.

Why paired: a run and its baseline answer the same items, so the interval of their difference is
computed on the per-item differences over the items both answered (a paired bootstrap: items are
resampled with replacement, the pairs kept together). Two separate intervals would hide a real
change under the item-to-item spread they share. Overall is the macro average (mean of the format
means, as the leaderboard ranks) with items resampled within each format (as
`paired_macro_difference` does); per format it is the mean difference over that format's items.
The resamples are drawn as multinomial counts over the distinct differences (the same bootstrap
distribution, fast for any number of items). The seed is fixed, so the page and `show run_diff`
print the same interval.

Words never claim more than the interval carries: "higher" or "lower" only when the whole interval
lies above or below 0, else "interval includes 0". Each interval is 95% on its own (not adjusted
for the number of rows compared).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from ..errors import UserError
from ..vocab import format_rank
from ._frame import prepare
from .paired import N_BOOT, SEED

#: The `scope` of the overall row (the macro average), beside the format rows.
OVERALL = "overall (macro average)"
#: How the interval is computed, for captions and the view's attrs.
INTERVAL = (f"paired bootstrap over the items both answered ({N_BOOT} resamples, percentile 95% interval; "
            "overall: items resampled within each format)")
#: The per-item filters: every changed item, or one direction.
ITEM_FILTERS = {"changed": "every item whose score changed", "regressions": "regressions (score went down)",
                "improvements": "improvements (score went up)"}
REGRESSION, IMPROVEMENT = "regression", "improvement"
_EPS = 1e-9


class _Answers(NamedTuple):
    """One model's checked answers, one per item (its last), sorted by item id."""

    item_id: np.ndarray
    type: np.ndarray
    score: np.ndarray


def _by_model(df: pd.DataFrame) -> dict[str, _Answers]:
    """Each model's checked rows (the last answer of an item), split once per call however many runs
    are compared. Plain arrays: pairing a run is then an intersection of sorted ids, not a join."""
    d, _ = prepare(df, ["model", "item_id", "type", "score"])
    codes, models = pd.factorize(d["model"].astype(str))  # models in order of first appearance
    items = d["item_id"].astype(str).to_numpy(dtype=object)
    types = d["type"].astype(str).to_numpy(dtype=object)
    scores = d["score"].to_numpy(dtype=float)
    order = np.argsort(codes, kind="stable")  # each model's rows together, in their own order
    out = {}
    for model, rows in zip(models, np.split(order, np.flatnonzero(np.diff(codes[order])) + 1)):
        # the last answer of each item: the first of it in reverse order, then sorted by item id
        ids, first = np.unique(items[rows][::-1], return_index=True)
        last = rows[::-1][first]
        out[str(model)] = _Answers(ids, types[last], scores[last])
    return out


_NO_ANSWERS = _Answers(np.array([], dtype=object), np.array([], dtype=object), np.array([], dtype=float))


def _pairs(models: dict[str, _Answers], baseline: str, run: str) -> pd.DataFrame:
    a, b = models.get(baseline, _NO_ANSWERS), models.get(run, _NO_ANSWERS)
    ids, at_a, at_b = np.intersect1d(a.item_id, b.item_id, assume_unique=True, return_indices=True)
    base, other = a.score[at_a], b.score[at_b]
    return pd.DataFrame({"item_id": ids, "type": a.type[at_a], "baseline_score": base, "run_score": other,
                         "change": other - base})


def paired_pairs(df: pd.DataFrame, baseline: str, run: str) -> pd.DataFrame:
    """The items both ``baseline`` and ``run`` answered: item_id, type, baseline_score, run_score, change
    (run minus baseline), sorted by item. Input: the long frame of one condition."""
    return _pairs(_by_model(df), baseline, run)


def _resampled_means(diff: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``n_boot`` bootstrap means of ``diff`` (items drawn with replacement), drawn as multinomial counts
    over its distinct values: the same distribution as resampling items one by one, in time that grows
    with the distinct differences (a handful for right/wrong scores), not with the items."""
    values, counts = np.unique(diff, return_counts=True)
    draws = rng.multinomial(len(diff), counts / counts.sum(), size=n_boot)
    return draws @ values / len(diff)


def _group_draws(groups: list[np.ndarray], n_boot: int, seed: int) -> list[np.ndarray]:
    """Each group's bootstrap means, drawn in order from one generator seeded with ``seed``."""
    rng = np.random.default_rng(seed)
    return [_resampled_means(g, n_boot, rng) for g in groups]


def _interval_of(draws: list[np.ndarray], level: float) -> tuple[float, float]:
    """Percentile interval of the mean of the groups' bootstrap means."""
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(np.mean(draws, axis=0), [tail, 1.0 - tail])
    return float(low), float(high)


def paired_interval(groups: list[np.ndarray], *, n_boot: int = N_BOOT, seed: int = SEED,
                    level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the mean of the group means of paired differences, items resampled within
    each group (one group: the mean difference; one group per format: the macro-average difference).

    Fewer than two pairs in all give no interval (NaN, NaN), rather than a zero-width one."""
    groups = [np.asarray(g, dtype=float) for g in groups if len(g)]
    if sum(len(g) for g in groups) < 2:
        return float("nan"), float("nan")
    return _interval_of(_group_draws(groups, n_boot, seed), level)


def change_words(delta: float, low: float, high: float, n_changed: int) -> str:
    """What the interval carries, in words: a direction only when the whole interval is on one side of 0."""
    if n_changed == 0:
        return "same score on every item"
    if np.isnan(low) or np.isnan(high):
        return "too few items for an interval"
    if low > 0:
        return "higher (interval above 0)"
    if high < 0:
        return "lower (interval below 0)"
    return "interval includes 0"


def _row(run: str, baseline: str, scope: str, fmt: str | None, base: np.ndarray, other: np.ndarray,
         change: np.ndarray, delta: float, low: float, high: float) -> dict:
    up = int((change > _EPS).sum())
    down = int((change < -_EPS).sum())
    return {"run": run, "baseline": baseline, "scope": scope, "type": fmt, "n_items": int(len(change)),
            "baseline_mean": float(base.mean()), "run_mean": float(other.mean()),
            "delta": float(delta), "ci_low": low, "ci_high": high, "n_improved": up, "n_regressed": down,
            "change": change_words(delta, low, high, up + down)}


RUN_DELTA_COLUMNS = ["run", "baseline", "scope", "type", "n_items", "baseline_mean", "run_mean", "delta", "ci_low",
                     "ci_high", "n_improved", "n_regressed", "change"]


def paired_runs(df: pd.DataFrame, baseline: str, runs: list[str]) -> dict[str, pd.DataFrame]:
    """Each run's pairs with ``baseline`` (`paired_pairs`), the baseline itself left out: what
    `run_deltas` and `run_item_changes` read, so a caller asking both pairs the runs once."""
    d = _by_model(df)
    return {run: _pairs(d, baseline, run) for run in dict.fromkeys(runs) if run != baseline}


def run_deltas(df: pd.DataFrame, baseline: str, runs: list[str], *, n_boot: int = N_BOOT, seed: int = SEED,
               level: float = 0.95, pairs: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """Per run: the overall (macro) delta against ``baseline`` and the delta per format, each with its
    paired interval (`INTERVAL`). Rows of a run that shares no item with the baseline are left out.
    ``pairs``: `paired_runs` of the same frame, when already known.

    ``baseline_mean`` and ``run_mean`` are over the paired items only (micro within the row; the
    overall row's ``delta`` is the difference of macro averages, its means are micro)."""
    rows: list[dict] = []
    paired = pairs if pairs is not None else paired_runs(df, baseline, runs)
    for run in runs:
        if run == baseline or run not in paired:
            continue
        both = paired[run]
        if both.empty:
            continue
        # plain arrays: this runs once per run and format, on every profile switch of the Runs page
        types = both["type"].to_numpy(dtype=object)
        base, other = both["baseline_score"].to_numpy(dtype=float), both["run_score"].to_numpy(dtype=float)
        change = both["change"].to_numpy(dtype=float)
        formats = sorted({t for t in types if isinstance(t, str)}, key=format_rank)
        parts = [types == fmt for fmt in formats]
        changes = [change[part] for part in parts]
        macro = float(np.mean([c.mean() for c in changes]))
        # the overall interval draws each format in turn from one fresh generator, and each format's
        # own interval draws from a fresh generator too: the first format's draws are the same numbers
        draws = _group_draws(changes, n_boot, seed) if sum(len(c) for c in changes) >= 2 else None
        low, high = _interval_of(draws, level) if draws is not None else (float("nan"), float("nan"))
        rows.append(_row(run, baseline, OVERALL, None, base, other, change, macro, low, high))
        for k, (fmt, part) in enumerate(zip(formats, parts)):
            if k == 0 and draws is not None and len(changes[0]) >= 2:
                low, high = _interval_of(draws[:1], level)
            else:
                low, high = paired_interval([changes[k]], n_boot=n_boot, seed=seed, level=level)
            rows.append(_row(run, baseline, "format", fmt, base[part], other[part], changes[k],
                             float(changes[k].mean()), low, high))
    return pd.DataFrame(rows, columns=RUN_DELTA_COLUMNS)


RUN_ITEM_COLUMNS = ["run", "baseline", "item_id", "type", "baseline_score", "run_score", "change", "direction"]


def run_item_changes(df: pd.DataFrame, baseline: str, runs: list[str], only: str = "changed",
                     pairs: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """The items whose score changed between ``baseline`` and each run (both answered), largest drop first.

    ``direction`` is "regression" (the run scored lower) or "improvement"; ``only`` is one of
    `ITEM_FILTERS` (changed, regressions, improvements). ``pairs``: `paired_runs` of the same frame,
    when already known."""
    if only not in ITEM_FILTERS:
        raise UserError(f"unknown item filter {only!r}; use one of {', '.join(ITEM_FILTERS)}")
    parts = []
    paired = pairs if pairs is not None else paired_runs(df, baseline, runs)
    for run in runs:
        if run == baseline or run not in paired:
            continue
        both = paired[run]
        changed = both[both["change"].abs() > _EPS]
        parts.append(changed.assign(run=run, baseline=baseline))
    frame = pd.concat(parts) if parts else pd.DataFrame(columns=RUN_ITEM_COLUMNS)
    if frame.empty:
        return pd.DataFrame(columns=RUN_ITEM_COLUMNS)
    frame["direction"] = np.where(frame["change"] < 0, REGRESSION, IMPROVEMENT)
    if only == "regressions":
        frame = frame[frame["direction"] == REGRESSION]
    elif only == "improvements":
        frame = frame[frame["direction"] == IMPROVEMENT]
    frame = frame.sort_values(["change", "run", "item_id"], kind="mergesort")
    return frame[RUN_ITEM_COLUMNS].reset_index(drop=True)

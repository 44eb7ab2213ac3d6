"""The failure explorer's statistics: cell states of the model x condition matrix, per-item flags
behind the explorer's filters, and the comparison of two models on the same items.

Why here and not in the page: "all models wrong", "wrong only with justification" or "A right, B
wrong" are counts over the score frame; the inspector, `show failure_matrix` / `show item_flags`
/ `show compare_models` and the tests must agree on them, so they are computed once, here, from
the long frames the views load. Pure functions, DataFrame in, DataFrame out.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from ..vocab import DEFAULT_CONDITION, MOTIVATION_CONDITION
from ._frame import finish, prepare
from .items import FULL_CREDIT

RIGHT, PARTIAL, WRONG, MISSING = "right", "partial", "wrong", "missing"
#: Cell states of the matrix, with the words a page shows (full credit, some credit, none, no answer).
CELL_STATES: dict[str, str] = {
    RIGHT: "right (score 1)",
    PARTIAL: "partial (0 < score < 1)",
    WRONG: "wrong (score 0)",
    MISSING: "no answer recorded",
}
_EPS = 1e-9


def cell_state(score: float | None) -> str:
    """right (full credit), partial (some), wrong (none) or missing (no score)."""
    if score is None or pd.isna(score):
        return MISSING
    if score >= 1 - _EPS:
        return RIGHT
    if score <= _EPS:
        return WRONG
    return PARTIAL


_STATE_NAMES = np.array([PARTIAL, RIGHT, WRONG, MISSING], dtype=object)  # indexed by the codes below


def cell_states(scores: pd.Series) -> pd.Series:
    """Vectorised `cell_state`.

    Why integer codes: the matrix states every answer of the list (500,000 at 50 models x 5,000
    items); choosing among strings with `np.where` builds fixed-width text arrays and then objects."""
    s = pd.to_numeric(scores, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    code = np.zeros(len(s), dtype=np.intp)  # partial unless full, none or missing
    code[s >= 1 - _EPS] = 1
    code[s <= _EPS] = 2
    code[np.isnan(s)] = 3
    return pd.Series(_STATE_NAMES[code], index=scores.index, dtype=object)


def failure_matrix(df: pd.DataFrame, items: Iterable[str] | None = None) -> pd.DataFrame:
    """One row per item x model x condition: score, correct (score >= 0.5) and cell state.

    ``items`` keeps those items, in that order (the page's current list); pairs without a score
    are left out (the chart shows them as "no answer").
    """
    d, dropped = prepare(df, ["model", "condition", "item_id", "score"])
    if items is not None:
        order = {item: i for i, item in enumerate(items)}
        d = d[d["item_id"].isin(order)].assign(_order=lambda x: x["item_id"].map(order))
        d = d.sort_values(["_order", "model", "condition"], kind="stable").drop(columns="_order")
    else:
        d = d.sort_values(["item_id", "model", "condition"], kind="stable")
    out = d.assign(correct=d["score"] >= 0.5, state=cell_states(d["score"]))
    return finish(out[["item_id", "model", "condition", "score", "correct", "state"]], dropped)


def item_flags(by_profile: Mapping[str, pd.DataFrame], profile: str, condition: str,
               baselines: Iterable[str] = (), count_baselines: bool = False) -> pd.DataFrame:
    """Per item, the counts behind the explorer's filters.

    ``by_profile`` holds the long frame of each profile with both conditions (selection applied,
    baseline rows included). Right means full credit (score 1), as in the item list's "models
    right", so the counts agree with the difficulty p. Columns: item_id; in the selected
    ``profile`` and ``condition``: n_models and models_right over the examinees (baselines only
    with ``count_baselines``, the selection's switch), baselines_right; ``n_wrong_with_justification``
    (examinees right in the default condition, not right in the motivation condition);
    ``n_profile_changes`` (examinees whose score differs between the profiles in the selected
    condition); ``baseline_only_right`` (a baseline right and no other model right).

    Why integer codes: every model filter change recounts 500,000 rows at 50 models x 5,000 items,
    and joins and group-bys on text keys took a second there; counts over an item x model grid
    give the same numbers. A frame in which a (model, condition, item) repeats goes the way of
    joins (`_item_flags_joined`), whose counts then multiply as a join does.
    """
    frame, dropped = prepare(by_profile[profile], ["model", "condition", "item_id", "score"])
    frames = {name: (frame if name == profile else prepare(f, ["model", "condition", "item_id", "score"])[0])
              for name, f in by_profile.items()}
    baselines = set(baselines)
    item_codes, item_values = pd.factorize(frame["item_id"])
    model_codes, model_values = pd.factorize(frame["model"])
    condition_codes, _ = pd.factorize(frame["condition"])
    triples = (item_codes * len(model_values) + model_codes) * (condition_codes.max(initial=0) + 1) + condition_codes
    if (item_codes < 0).any() or (model_codes < 0).any() or (condition_codes < 0).any() or (
            len(triples) and np.bincount(triples).max() > 1):  # a missing key or a repeated one: joins
        return _item_flags_joined(by_profile, profile, condition, baselines, count_baselines)
    items_sorted = sorted(set(np.asarray(item_values, dtype=object)))
    all_items = pd.Index(items_sorted, name="item_id")
    position = pd.Index(np.asarray(item_values, dtype=object)).get_indexer(all_items)  # sorted -> code
    n_items, n_models = len(item_values), len(model_values)
    base_model = np.isin(np.asarray(model_values, dtype=object), list(baselines))
    right = frame["score"].to_numpy(dtype=float) >= FULL_CREDIT - _EPS
    base = base_model[model_codes]
    conditions = np.asarray(frame["condition"] == condition), np.asarray(frame["condition"] == DEFAULT_CONDITION), \
        np.asarray(frame["condition"] == MOTIVATION_CONDITION)
    in_cond = conditions[0]
    counted = in_cond if count_baselines else in_cond & ~base

    def per_item(mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        return np.bincount(item_codes[mask], weights=None if weights is None else weights[mask], minlength=n_items)

    pairs = np.zeros(n_items * n_models, dtype=bool)
    pairs[item_codes[counted] * n_models + model_codes[counted]] = True
    columns = {"n_models": pairs.reshape(n_items, n_models).sum(axis=1),
               "models_right": per_item(counted & right),
               "baselines_right": per_item(in_cond & base & right)}
    pool = np.ones(len(frame), dtype=bool) if count_baselines else ~base
    hurt_a = pool & conditions[1] & right
    hurt_b = pool & conditions[2] & ~right
    grid_a = np.bincount(item_codes[hurt_a] * n_models + model_codes[hurt_a], minlength=n_items * n_models)
    grid_b = np.bincount(item_codes[hurt_b] * n_models + model_codes[hurt_b], minlength=n_items * n_models)
    columns["n_wrong_with_justification"] = (grid_a * grid_b).reshape(n_items, n_models).sum(axis=1)
    if len(frames) >= 2:
        leave_out = () if count_baselines else baselines
        changes = _profile_change_counts(frames, condition, leave_out, item_values, model_values)
        if changes is None:  # a pair repeats in another profile's frame
            return _item_flags_joined(by_profile, profile, condition, baselines, count_baselines)
        columns["n_profile_changes"] = changes
    others_right = per_item(in_cond & ~base & right)
    per = pd.DataFrame({name: np.asarray(values)[position] for name, values in columns.items()}, index=all_items)
    for column in ("n_models", "models_right", "baselines_right", "n_wrong_with_justification", "n_profile_changes"):
        per[column] = per[column].astype(int) if column in per else 0
    per["baseline_only_right"] = (per["baselines_right"] > 0) & (others_right[position] == 0)
    return finish(per.reset_index(), dropped, baselines=sorted(baselines), profile=profile, condition=condition)


def _positions(values: pd.Series, index: pd.Index) -> np.ndarray:
    """Position of each value in ``index`` (-1 when absent); a categorical column looks up its few
    categories, not each of its rows."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        lookup = np.append(index.get_indexer(np.asarray(values.cat.categories, dtype=object)), -1)
        return lookup[values.cat.codes.to_numpy()]  # code -1 (missing) reads the appended -1
    return index.get_indexer(values.astype(object).to_numpy())


def _profile_change_counts(frames: Mapping[str, pd.DataFrame], condition: str, leave_out: Iterable[str],
                           item_values, model_values) -> np.ndarray | None:
    """Per item (in the codes of ``item_values``): the models whose score differs between the profiles
    in ``condition``, over the (model, item) pairs every profile scored; None when a pair repeats."""
    n_items, n_models = len(item_values), len(model_values)
    items_index = pd.Index(np.asarray(item_values, dtype=object))
    models_index = pd.Index(np.asarray(model_values, dtype=object))
    leave_out = set(leave_out)
    low = np.full(n_items * n_models, np.inf)
    high = np.full(n_items * n_models, -np.inf)
    seen = np.zeros(n_items * n_models, dtype=np.int64)
    for frame in frames.values():
        keep = np.asarray(frame["condition"] == condition) & ~np.asarray(frame["model"].isin(list(leave_out)))
        i = _positions(frame["item_id"], items_index)[keep]
        m = _positions(frame["model"], models_index)[keep]
        score = frame["score"].to_numpy(dtype=float)[keep]
        known = (i >= 0) & (m >= 0)  # a pair the selected profile lacks joins nothing
        key, score = i[known] * n_models + m[known], score[known]
        if len(key) and np.bincount(key).max() > 1:
            return None
        np.minimum.at(low, key, score)
        np.maximum.at(high, key, score)
        seen[key] += 1
    both = seen == len(frames)
    differ = both & ((high - low) > _EPS)
    return differ.reshape(n_items, n_models).sum(axis=1)


def _item_flags_joined(by_profile: Mapping[str, pd.DataFrame], profile: str, condition: str,
               baselines: Iterable[str] = (), count_baselines: bool = False) -> pd.DataFrame:
    """`item_flags` by joins on the keys: the reference, and the way when a (model, condition, item) repeats.

    Same inputs and columns as `item_flags`.
    """
    frame, dropped = prepare(by_profile[profile], ["model", "condition", "item_id", "score"])
    frame = _plain_keys(frame)
    baselines = set(baselines)
    frame = frame.assign(right=frame["score"] >= FULL_CREDIT - _EPS, base=frame["model"].isin(baselines))
    cond = frame[frame["condition"] == condition]
    examinees = cond if count_baselines else cond[~cond["base"]]
    per = examinees.groupby("item_id").agg(n_models=("model", "nunique"), models_right=("right", "sum"))
    per["baselines_right"] = cond[cond["base"]].groupby("item_id")["right"].sum()
    others_right = cond[~cond["base"]].groupby("item_id")["right"].sum()
    keys = ["item_id", "model"]
    pool = frame if count_baselines else frame[~frame["base"]]
    right_default = pool.loc[(pool["condition"] == DEFAULT_CONDITION) & pool["right"], keys]
    not_right_motivation = pool.loc[(pool["condition"] == MOTIVATION_CONDITION) & ~pool["right"], keys]
    hurt = right_default.merge(not_right_motivation, on=keys)  # right without, not with the justification
    per["n_wrong_with_justification"] = hurt.groupby("item_id").size()
    changes = _profile_changes(by_profile, condition, () if count_baselines else baselines)
    if changes is not None:
        per["n_profile_changes"] = changes
    all_items = pd.Index(sorted(set(frame["item_id"])), name="item_id")
    per = per.reindex(all_items)
    for column in ("n_models", "models_right", "baselines_right", "n_wrong_with_justification", "n_profile_changes"):
        per[column] = per[column].fillna(0).astype(int) if column in per else 0
    others = others_right.reindex(all_items).fillna(0)
    per["baseline_only_right"] = (per["baselines_right"] > 0) & (others == 0)
    return finish(per.reset_index(), dropped, baselines=sorted(baselines), profile=profile, condition=condition)


def _plain_keys(frame: pd.DataFrame) -> pd.DataFrame:
    """Key columns as plain objects: the counts below are aligned on item ids across sub-frames,
    and categorical keys (the views' encoded read) would carry different category sets there."""
    keys = {c: frame[c].astype(object) for c in ("model", "condition", "item_id")
            if isinstance(frame[c].dtype, pd.CategoricalDtype)}
    return frame.assign(**keys) if keys else frame


def _profile_changes(by_profile: Mapping[str, pd.DataFrame], condition: str,
                     leave_out: Iterable[str] = ()) -> pd.Series | None:
    if len(by_profile) < 2:
        return None
    keys = ["model", "item_id"]
    leave_out = set(leave_out)
    merged = None
    for name, frame in by_profile.items():
        d, _ = prepare(frame, ["model", "condition", "item_id", "score"])
        d = _plain_keys(d)
        d = d[(d["condition"] == condition) & ~d["model"].isin(leave_out)][keys + ["score"]].rename(
            columns={"score": name})
        merged = d if merged is None else merged.merge(d, on=keys)
    values = merged[[c for c in merged.columns if c not in keys]].to_numpy(dtype=float)
    differ = (np.nanmax(values, axis=1) - np.nanmin(values, axis=1)) > _EPS
    return pd.Series(differ, index=merged.index).groupby(merged["item_id"]).sum()


def mark_unexpected(table: pd.DataFrame, residuals: pd.DataFrame) -> pd.DataFrame:
    """The item table with one examinee's IRT residuals: irt_level, irt_expected, irt_z, irt_unexpected.

    ``residuals``: that examinee's rows of `irt_fit.residuals` (level, expected level, z,
    unexpected). Items outside the fit (non-informative, unanswered) get no residual and are not
    unexpected. The "aberrant for this model" filter keeps the unexpected ones, most surprising first.
    """
    mine = residuals[["item_id", "level", "expected", "z", "unexpected"]].rename(
        columns={"level": "irt_level", "expected": "irt_expected", "z": "irt_z", "unexpected": "irt_unexpected"})
    out = table.merge(mine.assign(item_id=mine["item_id"].astype(str)), on="item_id", how="left")
    out["irt_unexpected"] = out["irt_unexpected"].astype("boolean").fillna(False).astype(bool)
    order = out["irt_z"].abs().fillna(-1.0)
    out = out.iloc[np.argsort(-order.to_numpy(), kind="stable")].reset_index(drop=True)
    out.attrs.update(table.attrs)
    out.attrs.update(residuals.attrs)
    return out


# ---------------------------------------------------------------- two models on the same items

#: What the comparison lists, with the words a page shows ({a} and {b} are the model names).
COMPARE_FILTERS: dict[str, str] = {
    "differ": "Every item where their scores differ",
    "a_right_b_wrong": "{a} right, {b} wrong",
    "b_right_a_wrong": "{b} right, {a} wrong",
}


def compare_models(df: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Items both models answered (one condition, one profile), with both scores side by side.

    Columns: item_id, type, score_a, score_b, correct_a, correct_b (score >= 0.5), state_a,
    state_b, difference (a - b), outcome (a_right_b_wrong, b_right_a_wrong, both_right,
    both_wrong), differ (scores differ).
    """
    d, dropped = prepare(df, ["model", "item_id", "type", "score"])
    left = d[d["model"] == a][["item_id", "type", "score"]]
    right = d[d["model"] == b][["item_id", "score"]]
    both = left.merge(right, on="item_id", suffixes=("_a", "_b")).sort_values("item_id", kind="stable")
    both["correct_a"] = both["score_a"] >= 0.5
    both["correct_b"] = both["score_b"] >= 0.5
    both["state_a"] = cell_states(both["score_a"])
    both["state_b"] = cell_states(both["score_b"])
    both["difference"] = both["score_a"] - both["score_b"]
    both["outcome"] = np.select(
        [both["correct_a"] & ~both["correct_b"], ~both["correct_a"] & both["correct_b"], both["correct_a"]],
        ["a_right_b_wrong", "b_right_a_wrong", "both_right"], default="both_wrong")
    both["differ"] = both["difference"].abs() > _EPS
    return finish(both, dropped, model_a=a, model_b=b)


def filter_comparison(comparison: pd.DataFrame, kind: str) -> pd.DataFrame:
    """Rows of `compare_models` kept by one of `COMPARE_FILTERS`."""
    if kind not in COMPARE_FILTERS:
        raise ValueError(f"unknown comparison filter {kind!r}; use one of {', '.join(COMPARE_FILTERS)}")
    keep = comparison["differ"] if kind == "differ" else comparison["outcome"] == kind
    return comparison[keep.to_numpy(dtype=bool)]


def comparison_summary(comparison: pd.DataFrame) -> dict:
    """Counts of the comparison and the exact McNemar test on the discordant items (score >= 0.5).

    ``p_mcnemar`` is the two-sided exact binomial test of the A-only vs B-only counts (None when
    the two models never disagree on right/wrong).
    """
    a_only = int((comparison["outcome"] == "a_right_b_wrong").sum())
    b_only = int((comparison["outcome"] == "b_right_a_wrong").sum())
    discordant = a_only + b_only
    p = float(binomtest(min(a_only, b_only), discordant, 0.5).pvalue) if discordant else None
    return {"n_items": int(len(comparison)), "n_differ": int(comparison["differ"].sum()),
            "a_right_b_wrong": a_only, "b_right_a_wrong": b_only,
            "both_right": int((comparison["outcome"] == "both_right").sum()),
            "both_wrong": int((comparison["outcome"] == "both_wrong").sum()),
            "mean_a": float(comparison["score_a"].mean()) if len(comparison) else float("nan"),
            "mean_b": float(comparison["score_b"].mean()) if len(comparison) else float("nan"),
            "p_mcnemar": p}

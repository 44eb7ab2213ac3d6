"""Accuracy per format and per model: type means, macro/micro averages, leaderboard, spreads.

The published leaderboard ranks models by the macro average (unweighted mean of the 7 format
means), so a format with few items counts as much as multiple choice; `micro` (pooled over items)
is reported next to it so a reader can see the difference.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import UserError
from ..vocab import MCQ_TYPE
from ._frame import finish, prepare, sort_frame
from .intervals import wilson_interval
from .ranking import RANKING_COLUMNS, ranking_from_type_means
from .ranking import ranking as rank_models

KEYS = ["model", "condition"]
MACRO_COLUMNS = ["model", "condition", "macro", "micro", "mcq", "mcq_ci_low", "mcq_ci_high",
                 "n_items", "n_mcq", "n_types"]
LEADERBOARD_COLUMNS = ["model", "condition", "macro", "macro_ci_low", "macro_ci_high", "micro", "mcq",
                       "mcq_ci_low", "mcq_ci_high", "rank", "rank_best", "rank_worst", "tie_group", "n_items",
                       "n_mcq", "n_types", "n_common"]


def type_scores(df: pd.DataFrame) -> pd.DataFrame:
    """Mean item score per model x condition x type, with a Wilson 95% interval on n items.

    Columns: model, condition, type, n, mean, ci_low, ci_high. attrs["n_dropped"]: rows without
    a score that were left out.
    """
    d, dropped = prepare(df, ["model", "condition", "type", "score"])
    out = (d.groupby(KEYS + ["type"], sort=False, observed=True)["score"]
           .agg(n="count", mean="mean").reset_index())
    out["ci_low"], out["ci_high"] = wilson_interval(out["mean"].to_numpy(), out["n"].to_numpy())
    out["n"] = out["n"].astype(int)
    return finish(sort_frame(out, KEYS + ["type"]), dropped)


def _macro_from_types(types: pd.DataFrame, micro: pd.Series, n_items: pd.Series) -> pd.DataFrame:
    """Combine per-type means (model, condition, type, mean, n[, ci_low, ci_high]) into one row
    per model x condition; shared by raw-score and aggregate-only inputs."""
    grouped = types.groupby(KEYS, sort=False, observed=True)
    out = grouped["mean"].mean().rename("macro").to_frame()
    out["n_types"] = grouped["type"].nunique()
    out["micro"] = micro
    out["n_items"] = n_items
    mcq = types.loc[types["type"] == MCQ_TYPE].set_index(KEYS)
    out["mcq"] = mcq["mean"]
    out["n_mcq"] = mcq["n"]
    low, high = wilson_interval(out["mcq"].to_numpy(dtype=float),
                                out["n_mcq"].to_numpy(dtype=float, na_value=np.nan))
    if "ci_low" in mcq.columns and "ci_high" in mcq.columns:
        given_low = mcq["ci_low"].reindex(out.index).to_numpy(dtype=float)
        given_high = mcq["ci_high"].reindex(out.index).to_numpy(dtype=float)
        low = np.where(np.isnan(given_low), low, given_low)
        high = np.where(np.isnan(given_high), high, given_high)
    out["mcq_ci_low"], out["mcq_ci_high"] = low, high
    out["n_mcq"] = out["n_mcq"].fillna(0).astype(int)
    out["n_items"] = out["n_items"].astype(int)
    return sort_frame(out.reset_index()[MACRO_COLUMNS], KEYS)


def macro_scores(df: pd.DataFrame) -> pd.DataFrame:
    """Macro (unweighted mean of type means), micro (pooled item mean) and MCQ accuracy.

    Columns: model, condition, macro, micro, mcq, mcq_ci_low, mcq_ci_high, n_items, plus n_mcq
    (the n of the MCQ interval) and n_types (how many formats the macro averages; < 7 means the
    macro is not comparable with the published one). mcq is NaN without MCQ items.
    """
    d, dropped = prepare(df, ["model", "condition", "type", "score"])
    types = type_scores(d)
    pooled = d.groupby(KEYS, sort=False, observed=True)["score"]
    return finish(_macro_from_types(types, pooled.mean(), pooled.count()), dropped)


def macro_from_type_means(frame: pd.DataFrame) -> pd.DataFrame:
    """The `macro_scores` columns from aggregate type means only (e.g. the published reference).

    Input: model, condition, type, mean (fraction), n, optional ci_low/ci_high (used for the MCQ
    interval when present, Wilson otherwise). For convenience the percent columns `mean_pct`,
    `ci_low_pct`/`ci_high_pct` (or `wilson_ci_*_pct`) and `display_name` (as model, when there
    is no model column) are accepted too. micro is the
    n-weighted mean of the type means.
    """
    f = frame.copy()
    if "model" not in f.columns and "display_name" in f.columns:
        f["model"] = f["display_name"]
    for pct, frac in (("mean_pct", "mean"), ("ci_low_pct", "ci_low"), ("ci_high_pct", "ci_high"),
                      ("wilson_ci_low_pct", "ci_low"), ("wilson_ci_high_pct", "ci_high")):
        if frac not in f.columns and pct in f.columns:
            f[frac] = pd.to_numeric(f[pct], errors="coerce") / 100.0
    missing = [c for c in ("model", "condition", "type", "mean", "n") if c not in f.columns]
    if missing:
        raise UserError(f"type-means frame lacks column(s): {', '.join(missing)}")
    f["mean"] = pd.to_numeric(f["mean"], errors="coerce")
    f["n"] = pd.to_numeric(f["n"], errors="coerce")
    bad = f["mean"].isna() | f["n"].isna()
    f = f.loc[~bad]
    if ((f["mean"] < 0) | (f["mean"] > 1)).any():
        raise UserError("type-means frame: mean must be a fraction in [0, 1] "
                        "(name the column mean_pct for percent)")
    weighted = (f["mean"] * f["n"]).groupby([f["model"], f["condition"]], sort=False).sum()
    n_items = f.groupby(KEYS, sort=False)["n"].sum()
    return finish(_macro_from_types(f, weighted / n_items, n_items), int(bad.sum()))


def leaderboard(df: pd.DataFrame, *, extra_variance: pd.DataFrame | None = None) -> pd.DataFrame:
    """Models ordered by macro average within each condition, with the uncertainty of that order.

    Accepts the long score frame (has `score`; an optional `cluster` column names the image an
    item shows) or an aggregate type-means frame (has `mean` or `mean_pct`), so the published
    reference gets the same leaderboard as live data. `rank` is the order of the point estimates
    (ties share a rank); what the data can carry is in `rank_best`/`rank_worst` (the ranks a model
    could hold) and `tie_group` (1 = the models that cannot be told from the first), from
    `ranking.ranking` (method there); `macro_ci_low`/`macro_ci_high` are the macro's 95% interval.
    Aggregate-only input has the interval but no rank interval or tie group (no item answers to
    pair). ``extra_variance`` goes to `ranking.ranking`.
    Columns: `LEADERBOARD_COLUMNS` (n_common: the items of the paired tests).
    """
    if "score" in df.columns:
        macro = macro_scores(df)
        ranks = rank_models(df, extra_variance=extra_variance)
    else:
        macro = macro_from_type_means(df)
        ranks = ranking_from_type_means(_type_means_frame(df))
    dropped = macro.attrs.get("n_dropped", 0)
    keep = ["model", "condition", *RANKING_COLUMNS, "n_common"]
    if extra_variance is not None and "shift" in extra_variance.columns and "score" in df.columns:
        # a corrected format mean (a judge's shift) moves the macro average: the ranking's is the corrected one
        keep.append("macro")
        macro = macro.drop(columns="macro")
    macro = macro.merge(ranks[keep], on=KEYS, how="left")
    macro["rank"] = point_ranks(macro)
    out = sort_frame(macro, ["condition", "rank", "model"])[LEADERBOARD_COLUMNS]
    return finish(out, dropped)


def point_ranks(macro: pd.DataFrame) -> pd.Series:
    """The leaderboard's `rank`: the order of the macro averages within each condition, highest first,
    ties sharing the lower rank (what the data can carry is in the ranking's intervals, not here)."""
    return macro.groupby("condition", sort=False)["macro"].rank(ascending=False, method="min").astype("Int64")


def _type_means_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """model, condition, type, mean (fraction), n from an aggregate frame (percent columns accepted)."""
    f = frame.copy()
    if "model" not in f.columns and "display_name" in f.columns:
        f["model"] = f["display_name"]
    if "mean" not in f.columns and "mean_pct" in f.columns:
        f["mean"] = pd.to_numeric(f["mean_pct"], errors="coerce") / 100.0
    return f.assign(mean=pd.to_numeric(f["mean"], errors="coerce"), n=pd.to_numeric(f["n"], errors="coerce"))


def format_spread(df: pd.DataFrame) -> pd.DataFrame:
    """Per model x condition the best and worst format and the spread (best - worst mean).

    Columns: model, condition, best_type, best_mean, worst_type, worst_mean, spread, n_types.
    Ties go to the format earlier in the published order.
    """
    types = type_scores(df)
    rows = []
    for (model, condition), g in types.groupby(KEYS, sort=False):
        best = g.loc[g["mean"].idxmax()]
        worst = g.loc[g["mean"].idxmin()]
        rows.append({"model": model, "condition": condition,
                     "best_type": best["type"], "best_mean": best["mean"],
                     "worst_type": worst["type"], "worst_mean": worst["mean"],
                     "spread": best["mean"] - worst["mean"], "n_types": len(g)})
    cols = ["model", "condition", "best_type", "best_mean", "worst_type", "worst_mean",
            "spread", "n_types"]
    out = pd.DataFrame(rows, columns=cols)
    return finish(sort_frame(out, KEYS), types.attrs.get("n_dropped", 0))


def profile_impact(df_strict: pd.DataFrame, df_paper: pd.DataFrame) -> pd.DataFrame:
    """How much the scoring profile moves each model x condition x type mean (paper - strict).

    Only items scored under both profiles are compared. Columns: model, condition, type, n,
    strict_mean, paper_mean, delta, n_changed (items whose score differs between profiles).
    """
    keys = ["model", "condition", "item_id"]
    s, drop_s = prepare(df_strict, keys + ["type", "score"])
    p, drop_p = prepare(df_paper, keys + ["score"])
    s = s.drop_duplicates(keys, keep="last")
    p = p.drop_duplicates(keys, keep="last")
    m = s.merge(p, on=keys, suffixes=("_strict", "_paper"))
    m["changed"] = ~np.isclose(m["score_strict"], m["score_paper"], rtol=0, atol=1e-9)
    out = (m.groupby(KEYS + ["type"], sort=False, observed=True)
           .agg(n=("score_strict", "size"), strict_mean=("score_strict", "mean"),
                paper_mean=("score_paper", "mean"), n_changed=("changed", "sum"))
           .reset_index())
    out["delta"] = out["paper_mean"] - out["strict_mean"]
    out = out[["model", "condition", "type", "n", "strict_mean", "paper_mean", "delta",
               "n_changed"]]
    out["n_changed"] = out["n_changed"].astype(int)
    return finish(sort_frame(out, KEYS + ["type"]), drop_s + drop_p,
                  n_dropped_strict=drop_s, n_dropped_paper=drop_p)


def type_scores_by(df: pd.DataFrame, by: str) -> pd.DataFrame:
    """``type_scores`` within each value of a column (e.g. language), the column kept in the result."""
    parts = []
    for value, sub in df.groupby(by, sort=True):
        ts = type_scores(sub)
        ts[by] = value
        parts.append(ts)
    if not parts:
        return pd.DataFrame(columns=[*KEYS, "type", "n", "mean", "ci_low", "ci_high", by])
    return finish(pd.concat(parts, ignore_index=True), sum(p.attrs.get("n_dropped", 0) for p in parts))


def mcq_vs_macro(board: pd.DataFrame) -> pd.DataFrame:
    """Multiple-choice accuracy against the macro average per model (published Table 5).

    Columns: rank, model, mcq, mcq_ci_low, mcq_ci_high, macro, micro, mcq_minus_macro (how much
    higher a model looks when judged by multiple choice alone).
    """
    out = board[["rank", "model", "mcq", "mcq_ci_low", "mcq_ci_high", "macro", "micro"]].copy()
    out["mcq_minus_macro"] = out["mcq"] - out["macro"]
    return finish(out, board.attrs.get("n_dropped", 0))


def profile_differences(df_strict: pd.DataFrame, df_paper: pd.DataFrame, limit: int = 3) -> pd.DataFrame:
    """Responses scored differently by the two profiles, the largest differences first, ``limit`` per format.

    Columns: model, condition, item_id, type, score_strict, score_paper, difference (paper - strict).
    """
    keys = ["model", "condition", "item_id"]
    s, drop_s = prepare(df_strict, keys + ["type", "score"])
    p, drop_p = prepare(df_paper, keys + ["score"])
    both = s[keys + ["type", "score"]].merge(p[keys + ["score"]], on=keys, suffixes=("_strict", "_paper"))
    both["difference"] = both["score_paper"] - both["score_strict"]
    both = both[both["difference"].abs() > 1e-9]
    both = both.reindex(both["difference"].abs().sort_values(ascending=False, kind="stable").index)
    return finish(both.groupby("type", sort=False).head(limit), drop_s + drop_p)

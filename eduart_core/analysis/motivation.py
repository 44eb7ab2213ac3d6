"""Paired comparison of the motivation condition against the default condition.

Every delta is motivation minus default, on items a model answered in both conditions only (an
item missing in one condition would bias the difference). A model without one of the conditions
keeps a row with n_paired = 0 and NaN statistics, so a page can say why it has no effect.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import special, stats
from statsmodels.stats.contingency_tables import mcnemar

from ..vocab import CONDITIONS, DEFAULT_CONDITION, MOTIVATION_CONDITION
from ._frame import finish, prepare, sort_frame
from .intervals import t_interval

EFFECT_COLUMNS = [
    "model", "n_paired", "default_macro", "motivation_macro", "delta_macro", "default_micro",
    "motivation_micro", "delta_micro", "delta_micro_ci_low", "delta_micro_ci_high", "p_ttest",
    "p_wilcoxon", "rank_biserial", "p_mcnemar", "p_holm", "n_improved", "n_same", "n_degraded", "n_discordant",
]
_TOL = 1e-9


def paired_scores(df: pd.DataFrame) -> tuple[pd.DataFrame, int, list]:
    """(model, item_id, type, default, motivation) for items answered in both conditions,
    rows dropped for a missing score, and every model seen).

    A model x item grid of row numbers replaces a merge: with the keys encoded once per load
    (categoricals) pairing 250,000 rows takes milliseconds. When a key repeats, its last row wins.
    """
    d, dropped = prepare(df, ["model", "condition", "item_id", "type", "score"])
    models = list(pd.unique(d["model"]))
    m_codes, m_names = pd.factorize(d["model"])
    i_codes, i_names = pd.factorize(d["item_id"])
    rows = np.arange(len(d))
    last = {}
    for condition in CONDITIONS:
        grid = np.full((len(m_names), len(i_names)), -1, dtype=np.int64)
        chosen = rows[(d["condition"] == condition).to_numpy()]
        np.maximum.at(grid, (m_codes[chosen], i_codes[chosen]), chosen)
        last[condition] = grid
    base = last[DEFAULT_CONDITION]
    base_rows = np.sort(base[base >= 0])
    treat_rows = last[MOTIVATION_CONDITION][m_codes[base_rows], i_codes[base_rows]]
    both = treat_rows >= 0
    base_rows, treat_rows = base_rows[both], treat_rows[both]
    score = d["score"].to_numpy(dtype=float)
    paired = d.iloc[base_rows][["model", "item_id", "type"]].reset_index(drop=True)
    paired[DEFAULT_CONDITION] = score[base_rows]
    paired[MOTIVATION_CONDITION] = score[treat_rows]
    return paired, dropped, models


def holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (same as statsmodels multipletests(method="holm"),
    which costs a full gc.collect() per call)."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p, kind="stable")
    m = len(p)
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


def wilcoxon_p(nonzero: np.ndarray) -> float:
    """Two-sided p of scipy's ``wilcoxon(nonzero)`` (defaults: zeros dropped, no continuity
    correction), computed directly for more than 50 differences, where scipy uses the normal
    approximation with the tie correction, and for at most 13 tied differences, where it
    enumerates every sign flip (`_sign_flip_p`); the other small samples go to scipy.

    Why: scipy's call costs a few milliseconds of input handling, times every model on every
    cold Overview and Motivation page.
    """
    n = len(nonzero)
    magnitude = np.abs(nonzero)
    _, inverse, ties = np.unique(magnitude, return_inverse=True, return_counts=True)
    tied = len(ties) < n
    if n <= _SIGN_FLIP_MAX_N and tied:
        return _sign_flip_p(nonzero, inverse, ties)
    if n <= 50:
        return float(stats.wilcoxon(nonzero).pvalue)
    upper = np.cumsum(ties)
    ranks = (upper - (ties - 1) / 2.0)[inverse]  # average ranks of |d|
    r_plus = float(ranks[nonzero > 0].sum())
    mean = n * (n + 1.0) * 0.25
    var = (n * (n + 1.0) * (2.0 * n + 1.0) - float((ties.astype(float) ** 3 - ties).sum()) / 2.0) / 24.0
    if var <= 0:
        return float("nan")
    z = (r_plus - mean) / np.sqrt(var)
    return float(min(1.0, 2.0 * special.ndtr(-abs(z))))  # = 2 * stats.norm.sf(|z|)


#: Up to this many tied differences scipy's ``wilcoxon`` enumerates every sign flip (2**13 < its 9,999 resamples).
_SIGN_FLIP_MAX_N = 13


def _sign_flip_p(nonzero: np.ndarray, inverse: np.ndarray, ties: np.ndarray) -> float:
    """Exact two-sided p of the signed-rank sum over all 2**n sign flips: what scipy's ``wilcoxon``
    does for at most 13 differences with ties (an exhaustive ``permutation_test``, no +1 adjustment).

    Why: scipy's general permutation machinery takes about 0.1 s for 13 differences, paid for every
    model with few changed items on every cold Overview and Motivation page; the same
    enumeration as one array is under a millisecond.
    """
    n = len(nonzero)
    upper = np.cumsum(ties)
    ranks = (upper - (ties - 1) / 2.0)[inverse]
    observed = float(ranks[nonzero > 0].sum())
    signs = (np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1  # every subset of positive signs
    null = signs @ ranks
    gamma = abs(np.finfo(float).eps * 100 * observed)  # scipy's tolerance for equal sums
    total = float(len(null))
    less = np.count_nonzero(null <= observed + gamma) / total
    greater = np.count_nonzero(null >= observed - gamma) / total
    return float(min(1.0, 2.0 * min(less, greater)))


def rank_biserial(nonzero: np.ndarray) -> float:
    """Matched-pairs rank-biserial correlation (R+ - R-) / (R+ + R-) of the non-zero differences.

    Why: it is the effect the signed-rank test tests, with its sign (positive: the ranks of the
    rises outweigh those of the drops), so a sentence about a significant Wilcoxon result can say
    which way it goes without borrowing the direction of a pooled mean difference.
    """
    ranks = stats.rankdata(np.abs(nonzero))
    total = float(ranks.sum())
    return float((ranks[nonzero > 0].sum() - ranks[nonzero < 0].sum()) / total) if total else float("nan")


def paired_t_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p of scipy's ``ttest_rel(b, a)``, from its formula (t = mean difference over its
    standard error, n - 1 degrees of freedom) without scipy's per-call input handling."""
    diff = b - a
    n = len(diff)
    if n < 2:
        return float("nan")
    sd = diff.std(ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = diff.mean() / (sd / np.sqrt(n))
    if np.isnan(t):
        return float("nan")
    return float(min(1.0, 2.0 * special.stdtr(n - 1, -abs(t))))


def _model_row(model: str, a: np.ndarray, b: np.ndarray, threshold: float) -> dict:
    """Paired statistics for one model's default scores `a` and motivation scores `b`."""
    diff = b - a
    nonzero = diff[np.abs(diff) > _TOL]
    row = {"model": model, "n_paired": len(a),
           "default_micro": a.mean(), "motivation_micro": b.mean(),
           "delta_micro": diff.mean(),
           "n_improved": int((diff > _TOL).sum()), "n_same": int((np.abs(diff) <= _TOL).sum()),
           "n_degraded": int((diff < -_TOL).sum())}
    row["delta_micro_ci_low"], row["delta_micro_ci_high"] = t_interval(diff)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row["p_ttest"] = paired_t_p(a, b) if len(a) >= 2 and nonzero.size else np.nan
        row["p_wilcoxon"] = wilcoxon_p(nonzero) if nonzero.size else np.nan
    row["rank_biserial"] = rank_biserial(nonzero) if nonzero.size else np.nan
    ra, rb = a >= threshold, b >= threshold
    right_wrong = int((ra & ~rb).sum())
    wrong_right = int((~ra & rb).sum())
    discordant = right_wrong + wrong_right
    table = [[int((ra & rb).sum()), right_wrong], [wrong_right, int((~ra & ~rb).sum())]]
    row["n_discordant"] = discordant
    row["p_mcnemar"] = (1.0 if discordant == 0 else
                        float(mcnemar(table, exact=discordant < 25, correction=True).pvalue))
    return row


def motivation_effect(df: pd.DataFrame, threshold: float = 0.5) -> pd.DataFrame:
    """Per model: macro and micro means per condition, their deltas and paired tests.

    p_ttest: paired t-test on per-item scores (NaN when every difference is zero).
    p_wilcoxon: signed-rank on the non-zero per-item differences (published Figure 3);
    rank_biserial: its effect size and direction, (R+ - R-) / (R+ + R-), NaN without a difference.
    p_mcnemar: on scores binarised at `threshold`; exact binomial when fewer than 25 discordant
    pairs, chi-square with continuity correction otherwise; 1.0 with no discordant pair.
    p_holm: Holm adjustment of p_wilcoxon across the models that have one.
    delta_micro_ci_*: 95% t interval of the mean per-item difference. Macro means are over the
    paired items. Columns: see EFFECT_COLUMNS.
    """
    paired, dropped, models = paired_scores(df)
    paired = paired.sort_values("model", kind="stable")
    codes, names = pd.factorize(paired["model"])
    bounds = np.flatnonzero(np.diff(codes)) + 1
    a_parts = np.split(paired[DEFAULT_CONDITION].to_numpy(), bounds)
    b_parts = np.split(paired[MOTIVATION_CONDITION].to_numpy(), bounds)
    rows = {m: _model_row(m, a, b, threshold)
            for m, a, b in zip(names, a_parts, b_parts) if len(a)}
    out = pd.DataFrame([rows.get(m, {"model": m, "n_paired": 0}) for m in models],
                       columns=EFFECT_COLUMNS)
    macro = (paired.groupby(["model", "type"], sort=False)[list(CONDITIONS)].mean()
             .groupby(level="model", sort=False).mean())
    out["default_macro"] = out["model"].map(macro[DEFAULT_CONDITION])
    out["motivation_macro"] = out["model"].map(macro[MOTIVATION_CONDITION])
    out["delta_macro"] = out["motivation_macro"] - out["default_macro"]
    p = out["p_wilcoxon"].to_numpy(dtype=float)
    ok = ~np.isnan(p)
    adjusted = np.full(len(p), np.nan)
    if ok.any():
        adjusted[ok] = holm(p[ok])
    out["p_holm"] = adjusted
    for c in ("n_improved", "n_same", "n_degraded", "n_discordant"):
        out[c] = out[c].fillna(0).astype(int)
    return finish(sort_frame(out, ["model"]), dropped, holm_of="p_wilcoxon")


def motivation_by_model_type(df: pd.DataFrame) -> pd.DataFrame:
    """Per model x type on paired items: default_mean, motivation_mean, delta, n_paired
    (the heatmap behind published Table 9)."""
    paired, dropped, _ = paired_scores(df)
    out = (paired.groupby(["model", "type"], sort=False)
           .agg(default_mean=(DEFAULT_CONDITION, "mean"), motivation_mean=(MOTIVATION_CONDITION, "mean"),
                n_paired=(DEFAULT_CONDITION, "size")).reset_index())
    out["delta"] = out["motivation_mean"] - out["default_mean"]
    out = out[["model", "type", "default_mean", "motivation_mean", "delta", "n_paired"]]
    return finish(sort_frame(out, ["model", "type"]), dropped)


def motivation_by_type(df: pd.DataFrame) -> pd.DataFrame:
    """Per type, over models, the per-type mean difference: mean_delta, min_delta, max_delta
    (published Table 9), with n_models and the models at the extremes. The per model x type
    frame is `motivation_by_model_type`."""
    per = motivation_by_model_type(df)
    rows = []
    for t, g in per.groupby("type", sort=False):
        rows.append({"type": t, "mean_delta": g["delta"].mean(), "min_delta": g["delta"].min(),
                     "max_delta": g["delta"].max(), "n_models": len(g),
                     "min_model": g.loc[g["delta"].idxmin(), "model"],
                     "max_model": g.loc[g["delta"].idxmax(), "model"]})
    out = pd.DataFrame(rows, columns=["type", "mean_delta", "min_delta", "max_delta",
                                      "n_models", "min_model", "max_model"])
    return finish(sort_frame(out, ["type"]), per.attrs.get("n_dropped", 0))


def largest_condition_changes(df: pd.DataFrame, limit: int = 15) -> pd.DataFrame:
    """Items whose score changed most between the conditions (motivation - default), largest first.

    Input: the long frame of one model (both conditions). Columns: item_id, type, default,
    motivation, delta. Items scored the same in both conditions are left out.
    """
    paired, dropped, _ = paired_scores(df)
    out = paired[["item_id", "type", DEFAULT_CONDITION, MOTIVATION_CONDITION]].copy()
    out["delta"] = out[MOTIVATION_CONDITION] - out[DEFAULT_CONDITION]
    out = out[out["delta"].abs() > 1e-9]
    out = out.reindex(out["delta"].abs().sort_values(ascending=False, kind="stable").index).head(limit)
    return finish(out, dropped)

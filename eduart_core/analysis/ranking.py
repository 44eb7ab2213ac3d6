"""One ranking with its uncertainty: macro intervals, paired tests of every pair, rank intervals, tie groups.

Why: the leaderboard orders models by their macro average (the unweighted mean of the format
means), and a strict order of point estimates claims more than 88 or 120 items can carry. This
module gives every row the interval of its macro average and says which models the data cannot
tell apart, following Miller (2024, "Adding Error Bars to Evals"): clustered standard errors,
paired differences on the same items, and Holm's (1979) step-down correction across all pairs.

The method, in one place (captions and docs quote `METHOD_WORDS`):

- Per item, a model's score is first averaged over its repeats (one row per model x condition x
  item; duplicate rows are averaged here too), so K repeats never count as K items and the
  variance of the per-item means holds the run-to-run variation.
- The macro average's variance is cluster-robust, with the format means as strata of the estimator:
  item i of format f adds d_i = (x_i - mean_f) / (n_f * F) to the macro's deviation (F formats,
  n_f items of format f); items that show one image are one cluster (an image may be shown in
  items of several formats, so clusters are not nested in formats), T_c = sum of d_i in cluster
  c, Var(macro) = G / (G - F) * sum_c T_c^2 with G clusters (the small-sample factor counts the F
  format means estimated; with one item per cluster this is the stratified variance
  (1/F^2) sum_f Var(mean_f) up to that factor). The 95% interval is a t interval with df = G - F.
  The interval of a row uses every item that model answered, like its macro.
- Pairs are compared on the items every ranked model of the condition answered (complete
  items: one matrix, so all pairs come from one covariance matrix): the covariance of the
  cluster totals across models S = G / (G - F) * T'T gives Var(a - b) = S_aa + S_bb - 2 S_ab for
  every pair at once; the macro difference is tested with a two-sided t test (same df), and the
  p-values of all pairs of a condition are Holm-adjusted (family-wise error 5%).
- rank_best = 1 + models significantly above; rank_worst = models - models significantly below.
- Tie groups, sequentially: the highest model (by macro average) not yet grouped opens a group
  with every ungrouped model it is not separated from. tie_group 1 = the models that cannot be
  told from the first; a model named "first" or "leading" must be alone in group 1.
- ``extra_variance`` (model, condition, type, variance, optional shift) adds a known variance of a
  format mean, e.g. a judge's calibration error, and moves that mean by the shift (the judge's
  correction, prediction-powered inference); the variance is added to that model's format variance and treated as
  independent between models (conservative for differences when the error is shared).
- Aggregate-only data (type means with n, no item answers): the interval comes from the per-format
  binomial variances p(1 - p)/n; pairs cannot be tested without item answers, so rank_best,
  rank_worst and tie_group are missing (never guessed from overlapping intervals).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse, special

from ..errors import UserError
from ._frame import prepare
from .intervals import Z95
from .motivation import holm as motivation_holm

#: Family-wise error rate of the pairwise tests of one condition.
ALPHA = 0.05
#: The five columns the ranking adds to a leaderboard row.
RANKING_COLUMNS = ["macro_ci_low", "macro_ci_high", "rank_best", "rank_worst", "tie_group"]
#: Every column of `ranking`.
RANKING_FRAME_COLUMNS = ["model", "condition", "macro", "macro_se", *RANKING_COLUMNS, "n_common", "df"]
#: Columns of `pairwise`.
PAIR_COLUMNS = ["condition", "model_a", "model_b", "diff", "se", "t", "df", "p", "p_holm", "separated", "n_common"]
#: What the macro interval is, as captions say it.
INTERVAL_WORDS = ("95% t interval from the cluster-robust variance of the macro average: each item counted within "
                  "its format, items showing one image form one cluster; df = clusters - formats")
#: What the pairwise tests are, as captions say it.
TEST_WORDS = ("paired t test of every pair's macro difference on the items every model answered (same clustering), "
              "Holm-corrected across all pairs, family-wise 5%")
#: Both, with the references (docs and `show --caption`).
METHOD_WORDS = f"macro interval: {INTERVAL_WORDS}; pairs: {TEST_WORDS}; Miller 2024, Holm 1979"
REPEAT_WORDS = ("where a model has repeats, its answers are averaged per item first, so the interval also "
                "holds run-to-run variation")
JUDGE_WORDS = ("each format's judge mean plus the mean human-minus-judge shift on its human-graded answers, and "
               "the intervals and tests also hold that shift's variance, the judge's calibration error "
               "(prediction-powered inference, Angelopoulos et al. 2023)")
AGGREGATE_WORDS = ("published aggregates only: the macro interval comes from the per-format binomial variances "
                   "p(1-p)/n, and pairs cannot be tested without item answers, so no rank interval or tie group "
                   "is given")


def holm(p: np.ndarray) -> np.ndarray:
    """Holm (1979) adjusted p-values (`motivation.holm`, the project's one Holm) of the tested pairs;
    NaN (a pair that could not be tested) stays NaN and is not counted."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        out[ok] = motivation_holm(p[ok])
    return out


def tie_groups(macro: np.ndarray, separated: np.ndarray) -> np.ndarray:
    """Tie group per model (1 = with the first): the highest ungrouped model opens a group holding
    every ungrouped model it is not separated from (``separated``: symmetric boolean matrix)."""
    order = np.argsort(-np.asarray(macro, dtype=float), kind="stable")
    group = np.zeros(len(order), dtype=int)
    current = 0
    for i in order:
        if group[i]:
            continue
        current += 1
        members = (group == 0) & ~separated[i]
        members[i] = True
        group[members] = current
    return group


def _t_quantile(df: np.ndarray, level: float) -> np.ndarray:
    return special.stdtrit(np.maximum(np.asarray(df, dtype=float), 1.0), 0.5 + level / 2.0)


def _matrix(d: pd.DataFrame) -> tuple[np.ndarray, list, np.ndarray, list, np.ndarray]:
    """(items x models matrix of per-item mean scores with NaN where unanswered, models, item format
    codes, format names, item cluster codes): repeats and duplicate rows of one item are averaged here."""
    m_codes, models = pd.factorize(d["model"], sort=False)
    i_codes, _ = pd.factorize(d["item_id"], sort=False)
    n_m, n_i = len(models), int(i_codes.max()) + 1
    cell = i_codes.astype(np.int64) * n_m + m_codes
    score = d["score"].to_numpy(dtype=float)
    total = np.bincount(cell, weights=score, minlength=n_i * n_m)
    count = np.bincount(cell, minlength=n_i * n_m)
    with np.errstate(invalid="ignore", divide="ignore"):
        x = (total / count).reshape(n_i, n_m)
    first = np.unique(i_codes, return_index=True)[1]
    types, type_names = pd.factorize(d["type"].to_numpy()[first], sort=False)
    cluster = d["cluster"].to_numpy()[first] if "cluster" in d else d["item_id"].to_numpy()[first]
    cluster = pd.Series(cluster, dtype=object)
    cluster = cluster.where(cluster.notna(), "item:" + pd.Series(d["item_id"].to_numpy()[first], dtype=object)
                            .astype(str)).to_numpy()
    clusters, _ = pd.factorize(cluster, sort=False)
    return x, list(models), types, list(type_names), clusters


def _macro_terms(x: np.ndarray, types: np.ndarray, n_types: int, indicator: sparse.csr_matrix
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The macro average of every column of ``x`` (items x models, NaN = unanswered) and its
    linearisation: (macro, cluster totals of the items' contributions (clusters x models), clusters
    per model, formats per model, format means (formats x models)).

    Item i of format f adds (x_i - mean_f) / (n_f * F) to the macro's deviation; summing these
    within a cluster (an image may be shown in items of several formats) gives the cluster totals
    whose sum of squares is the cluster-robust variance of the macro.
    """
    answered = ~np.isnan(x)
    filled = np.where(answered, x, 0.0)
    onehot = sparse.csr_matrix((np.ones(len(types)), (types, np.arange(len(types)))), shape=(n_types, len(types)))
    answered_f = answered.astype(float)
    n = onehot @ answered_f  # formats x models (sparse @ dense: no slow bool matmul)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (onehot @ filled) / n
    present = n > 0
    n_formats = present.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        macro = np.where(present, means, 0.0).sum(axis=0) / n_formats
        weight = 1.0 / (n * n_formats)  # formats x models
    centred = np.where(answered, x - np.nan_to_num(means)[types], 0.0) * np.nan_to_num(weight)[types]
    totals = indicator @ centred
    clusters = (indicator @ answered_f > 0).sum(axis=0).astype(float)
    return macro, totals, clusters, n_formats.astype(float), means


def _extra(extra_variance: pd.DataFrame | None, condition, models: list, type_names: list
           ) -> tuple[np.ndarray, np.ndarray]:
    """formats x models matrices of added variances and of shifts of the format means (0 where none given)."""
    out = np.zeros((len(type_names), len(models)))
    moved = np.zeros_like(out)
    if extra_variance is None or len(extra_variance) == 0:
        return out, moved
    missing = [c for c in ("model", "condition", "type", "variance") if c not in extra_variance.columns]
    if missing:
        raise UserError(f"extra_variance lacks column(s): {', '.join(missing)}")
    e = extra_variance[extra_variance["condition"] == condition]
    m_at = {m: k for k, m in enumerate(models)}
    t_at = {t: k for k, t in enumerate(type_names)}
    shifts = pd.to_numeric(e["shift"], errors="coerce") if "shift" in e.columns else pd.Series(0.0, index=e.index)
    for model, typ, var, shift in zip(e["model"], e["type"], pd.to_numeric(e["variance"], errors="coerce"), shifts):
        if model in m_at and typ in t_at and np.isfinite(var):
            out[t_at[typ], m_at[model]] += float(var)
            moved[t_at[typ], m_at[model]] += float(shift) if np.isfinite(shift) else 0.0
    return out, moved


def _one_condition(d: pd.DataFrame, condition, extra_variance, alpha: float, level: float
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    x, models, types, type_names, clusters = _matrix(d)
    extra, moved = _extra(extra_variance, condition, models, type_names)
    n_m, n_t = len(models), len(type_names)
    codes, inverse = np.unique(clusters, return_inverse=True)
    indicator = sparse.csr_matrix((np.ones(len(inverse)), (inverse, np.arange(len(inverse)))),
                                  shape=(len(codes), len(inverse)))
    # the interval of each row: every item that model answered (as its macro average)
    macro, totals, g, k, _ = _macro_terms(x, types, n_t, indicator)
    with np.errstate(invalid="ignore", divide="ignore"):
        macro = macro + moved.sum(axis=0) / k
    df_model = g - k  # clusters less the format means estimated
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.where(df_model > 0, g / df_model, np.nan)  # small-sample factor G / (G - F)
        added = extra.sum(axis=0) / k ** 2
        macro_var = factor * (totals ** 2).sum(axis=0) + added
    se = np.sqrt(macro_var)
    half = _t_quantile(df_model, level) * se
    # pairs: the items every model answered, one covariance matrix of the cluster totals for all pairs
    complete = ~np.isnan(x).any(axis=1)
    n_common = int(complete.sum())
    diff = np.zeros((n_m, n_m))
    var_diff = np.full((n_m, n_m), np.nan)
    df_pair = 0.0
    if n_common and n_m > 1:
        sub = indicator[:, complete]
        sub = sub[np.asarray(sub.sum(axis=1)).ravel() > 0]
        mu, t_c, g_c, k_c, _ = _macro_terms(x[complete], types[complete], n_t, sub)
        mu = mu + moved.sum(axis=0) / k_c
        df_pair = float(g_c[0] - k_c[0])
        if df_pair > 0:
            cov = g_c[0] / df_pair * (t_c.T @ t_c)
            cov[np.diag_indices(n_m)] += extra.sum(axis=0) / k_c[0] ** 2
            diff = mu[:, None] - mu[None, :]
            dvar = np.diag(cov)
            var_diff = np.maximum(dvar[:, None] + dvar[None, :] - 2.0 * cov, 0.0)
    iu = np.triu_indices(n_m, 1)
    d_pairs, v_pairs = diff[iu], var_diff[iu]
    with np.errstate(invalid="ignore", divide="ignore"):
        t = d_pairs / np.sqrt(v_pairs)
        p = 2.0 * special.stdtr(max(df_pair, 1.0), -np.abs(t))
    # identical answers (variance 0): no difference, nothing to separate; a constant non-zero gap is certain
    zero = v_pairs <= 1e-18
    p = np.where(zero, np.where(np.abs(d_pairs) > 1e-12, 0.0, 1.0), p)
    p = np.where(np.isnan(v_pairs), np.nan, p)
    p_holm = holm(p)
    sep_pairs = p_holm < alpha
    sep = np.zeros((n_m, n_m), dtype=bool)
    sep[iu] = sep_pairs
    sep = sep | sep.T
    above = (sep & (diff < 0)).sum(axis=1)
    below = (sep & (diff > 0)).sum(axis=1)
    groups = tie_groups(macro, sep)
    rows = pd.DataFrame({"model": models, "condition": condition, "macro": macro, "macro_se": se,
                         "macro_ci_low": np.clip(macro - half, 0.0, 1.0),
                         "macro_ci_high": np.clip(macro + half, 0.0, 1.0),
                         "rank_best": 1 + above, "rank_worst": n_m - below, "tie_group": groups,
                         "n_common": n_common, "df": df_model})
    for column in ("rank_best", "rank_worst", "tie_group"):
        rows[column] = rows[column].astype("Int64")
    names = np.asarray(models, dtype=object)
    pairs = pd.DataFrame({"condition": condition, "model_a": names[iu[0]], "model_b": names[iu[1]],
                          "diff": d_pairs, "se": np.sqrt(v_pairs), "t": t, "df": df_pair, "p": p,
                          "p_holm": p_holm, "separated": sep_pairs, "n_common": n_common})
    return rows, pairs


def _run(df: pd.DataFrame, extra_variance, alpha: float, level: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    cols = ["model", "condition", "item_id", "type", "score"] + (["cluster"] if "cluster" in df.columns else [])
    d, _ = prepare(df, cols)
    rows, pairs = [], []
    for condition, part in d.groupby("condition", sort=False, observed=True):
        r, p = _one_condition(part, condition, extra_variance, alpha, level)
        rows.append(r)
        pairs.append(p)
    if not rows:
        return pd.DataFrame(columns=RANKING_FRAME_COLUMNS), pd.DataFrame(columns=PAIR_COLUMNS)
    return pd.concat(rows, ignore_index=True), pd.concat(pairs, ignore_index=True)


def ranking(df: pd.DataFrame, *, extra_variance: pd.DataFrame | None = None, alpha: float = ALPHA,
            level: float = 0.95) -> pd.DataFrame:
    """Per model x condition: macro, its SE and 95% interval, rank_best, rank_worst, tie_group.

    Input: the long score frame (model, condition, item_id, type, score; optional ``cluster``, the
    image an item shows: items sharing one are resampled together). Method: module docstring.
    ``extra_variance``: optional frame (model, condition, type, variance) of a further variance of
    a format mean to carry (e.g. a judge's calibration error, as a fraction squared); an optional
    ``shift`` column moves that format mean (a judge's correction), so `macro` is then the
    corrected macro average.
    Columns: `RANKING_FRAME_COLUMNS` (n_common: items every model of the condition answered, the
    items of the paired tests; df: the t interval's degrees of freedom).
    """
    return _run(df, extra_variance, alpha, level)[0]


def pairwise(df: pd.DataFrame, *, extra_variance: pd.DataFrame | None = None, alpha: float = ALPHA,
             level: float = 0.95) -> pd.DataFrame:
    """Every pair of models per condition: macro difference a - b on the complete items, its
    clustered SE, t, df, p, Holm-adjusted p and whether the pair is separated (Holm p < alpha)."""
    return _run(df, extra_variance, alpha, level)[1]


def ranking_from_type_means(types: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """The ranking columns from aggregate type means (model, condition, type, mean, n): the macro
    interval from the per-format binomial variances p(1-p)/n (normal, z = 1.96); rank_best,
    rank_worst and tie_group missing, since pairs cannot be tested without item answers."""
    t = types.dropna(subset=["mean", "n"]).copy()
    t["var"] = t["mean"] * (1.0 - t["mean"]) / t["n"].where(t["n"] > 0)
    g = t.groupby(["model", "condition"], sort=False)
    out = pd.DataFrame({"macro": g["mean"].mean(), "k": g["type"].nunique(), "v": g["var"].sum(min_count=1)})
    out = out.reset_index()
    out["macro_se"] = np.sqrt(out["v"]) / out["k"]
    z = Z95 if level == 0.95 else float(special.ndtri(0.5 + level / 2.0))
    out["macro_ci_low"] = (out["macro"] - z * out["macro_se"]).clip(0.0, 1.0)
    out["macro_ci_high"] = (out["macro"] + z * out["macro_se"]).clip(0.0, 1.0)
    for column in ("rank_best", "rank_worst", "tie_group"):
        out[column] = pd.array([pd.NA] * len(out), dtype="Int64")
    out["n_common"] = 0
    out["df"] = np.inf
    return out[RANKING_FRAME_COLUMNS]


__all__ = ["ALPHA", "AGGREGATE_WORDS", "INTERVAL_WORDS", "METHOD_WORDS", "TEST_WORDS", "PAIR_COLUMNS", "RANKING_COLUMNS", "REPEAT_WORDS", "holm",
           "pairwise", "ranking", "ranking_from_type_means", "tie_groups"]

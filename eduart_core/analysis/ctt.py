"""Classical test theory: item difficulty p, point-biserial discrimination r_pb, reliability.

Examinees are the (model, condition) pairs. Everything works on an examinees x items matrix so
that 100 models x 10,000 items is a handful of numpy operations, not a loop over items. A cell is
NaN when an examinee has no score for an item; such cells are left out of that item's statistics
and of the examinee's total.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy import stats

from ..vocab import format_rank
from ._frame import filter_conditions, finish, group_codes, prepare, sort_frame

DIFFICULTY_CATEGORIES = ("very_easy", "easy", "medium", "hard", "very_hard")
DISCRIMINATION_CATEGORIES = ("good", "fair", "poor")
_EPS = 1e-12


def score_matrix(df: pd.DataFrame) -> tuple[np.ndarray, pd.DataFrame, pd.DataFrame]:
    """(examinees x items matrix with NaN for missing cells, examinee frame, item frame).

    The item frame has item_id and type (first type seen), in matrix column order.
    """
    e_codes, e_index = group_codes(df, ["model", "condition"])
    i_codes, i_index = pd.factorize(df["item_id"])
    matrix = np.full((len(e_index), len(i_index)), np.nan)
    matrix[e_codes, i_codes] = df["score"].to_numpy(dtype=float)
    first = pd.Series(np.arange(len(df))).groupby(i_codes).first().to_numpy()
    items = pd.DataFrame({"item_id": np.asarray(i_index),
                          "type": df["type"].to_numpy()[first]})
    return matrix, e_index, items


def _difficulty(p: np.ndarray) -> pd.Series:
    """Published cut-offs: very easy >= .90, easy >= .70, medium >= .30, hard >= .10."""
    r = np.round(p, 10)  # 0.9 computed as 0.8999999999 is still very easy
    cats = np.select([r >= 0.9, r >= 0.7, r >= 0.3, r >= 0.1, r >= 0],
                     list(DIFFICULTY_CATEGORIES), default="")
    return _none_where_nan(cats, p)


def _discrimination(r: np.ndarray) -> pd.Series:
    """Published cut-offs: good >= .30, fair >= .10, poor below (negatives are poor)."""
    rr = np.round(r, 10)
    cats = np.select([rr >= 0.3, rr >= 0.1], ["good", "fair"], default="poor")
    return _none_where_nan(cats, r)


def _none_where_nan(cats: np.ndarray, values: np.ndarray) -> pd.Series:
    """The categories as objects, None where the statistic is NaN (no category without a value)."""
    out = cats.astype(object)
    out[np.isnan(values)] = None
    return pd.Series(out, dtype=object)


def _point_biserial(matrix: np.ndarray, corrected: bool) -> tuple[np.ndarray, np.ndarray]:
    """(Pearson r of each item column with the examinees' mean over the other (or all) items,
    number of examinees each r rests on)."""
    mask = ~np.isnan(matrix)
    x = np.where(mask, matrix, 0.0)
    row_sum = x.sum(axis=1, keepdims=True)
    row_cnt = mask.sum(axis=1, keepdims=True).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if corrected:
            crit = (row_sum - x) / (row_cnt - 1.0)
            valid = mask & (row_cnt > 1)
        else:
            crit = np.broadcast_to(row_sum / row_cnt, x.shape)
            valid = mask
        crit = np.where(valid, crit, 0.0)
        xv = np.where(valid, x, 0.0)
        n = valid.sum(axis=0).astype(float)
        mx = xv.sum(axis=0) / n
        my = crit.sum(axis=0) / n
        dx = np.where(valid, xv - mx, 0.0)
        dy = np.where(valid, crit - my, 0.0)
        sxx = (dx * dx).sum(axis=0)
        syy = (dy * dy).sum(axis=0)
        sxy = (dx * dy).sum(axis=0)
        r = sxy / np.sqrt(sxx * syy)
    r[(sxx <= _EPS) | (syy <= _EPS) | (n < 2)] = np.nan
    return r, n


def fisher_interval(r: np.ndarray, n: np.ndarray, level: float = 0.95):
    """Fisher-z interval for correlations r on n pairs (NaN when n <= 3): with 12-24 examinees
    an r_pb of .5 is compatible with anything from about .1 to .8, and pages should say so."""
    q = stats.norm.ppf(0.5 + level / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.arctanh(np.clip(r, -0.999999, 0.999999))
        half = q / np.sqrt(np.where(n > 3, n - 3.0, np.nan))
        return np.tanh(z - half), np.tanh(z + half)


def item_statistics(df: pd.DataFrame, conditions: str | Iterable[str] | None = None,
                    corrected: bool = True) -> pd.DataFrame:
    """Difficulty and discrimination per item over the (model, condition) examinees.

    Columns: item_id, type, n_examinees, p, r_pb, difficulty_category, discrimination_category.
    `corrected=True` correlates with each examinee's mean over all *other* items (the published
    tables); False includes the item itself (the published Figure 1). Zero-variance items keep
    their difficulty category; r_pb is NaN and the discrimination category None. Extra columns
    r_pb_ci_low / r_pb_ci_high: 95% Fisher-z interval of r_pb (small-sample honesty).
    attrs: n_dropped, n_examinees (total), corrected, conditions.
    """
    d, dropped = prepare(df, ["model", "condition", "item_id", "type", "score"])
    d = filter_conditions(d, conditions)
    matrix, examinees, items = score_matrix(d)
    mask = ~np.isnan(matrix)
    n_ex = mask.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(mask, matrix, 0.0).sum(axis=0) / n_ex
    r, n_pairs = _point_biserial(matrix, corrected)
    r_low, r_high = fisher_interval(r, n_pairs)
    out = items.assign(n_examinees=n_ex.astype(int), p=p, r_pb=r,
                       difficulty_category=_difficulty(p),
                       discrimination_category=_discrimination(r),
                       r_pb_ci_low=r_low, r_pb_ci_high=r_high)
    return finish(sort_frame(out, ["type"]), dropped, n_examinees=len(examinees),
                  corrected=corrected,
                  conditions=_condition_list(conditions))


def _condition_list(conditions: str | Iterable[str] | None) -> list[str] | None:
    """The conditions asked for, as a list (for the attrs); None: every condition."""
    if conditions is None:
        return None
    return [conditions] if isinstance(conditions, str) else [str(c) for c in conditions]


def reliability(df: pd.DataFrame, conditions: str | Iterable[str] | None = None,
                level: float = 0.95) -> pd.DataFrame:
    """Cronbach's alpha of the test (equal to KR-20 when all scores are 0/1) with Feldt's interval.

    Examinees are (model, condition) pairs; only items scored for every examinee are used
    (complete cases), so alpha rests on n_examinees x n_items. Feldt (1965): (1 - alpha) /
    (1 - alpha_hat) follows F(n-1, (n-1)(k-1)). One row: n_examinees, n_items, alpha, ci_low,
    ci_high, method.
    """
    d, dropped = prepare(df, ["model", "condition", "item_id", "type", "score"])
    d = filter_conditions(d, conditions)
    matrix, _, _ = score_matrix(d)
    complete = matrix[:, ~np.isnan(matrix).any(axis=0)] if matrix.size else matrix
    n, k = complete.shape if complete.ndim == 2 else (0, 0)
    alpha = low = high = float("nan")
    if n >= 2 and k >= 2:
        item_var = complete.var(axis=0, ddof=1).sum()
        total_var = complete.sum(axis=1).var(ddof=1)
        if total_var > _EPS:
            alpha = k / (k - 1) * (1.0 - item_var / total_var)
            df1, df2 = n - 1, (n - 1) * (k - 1)
            tail = (1.0 - level) / 2.0
            low = 1.0 - (1.0 - alpha) * stats.f.ppf(1.0 - tail, df1, df2)
            high = 1.0 - (1.0 - alpha) * stats.f.ppf(tail, df1, df2)
    binary = bool(np.isin(complete, (0.0, 1.0)).all()) if complete.size else False
    method = ("KR-20" if binary else "Cronbach alpha") + f", Feldt {level:.0%} interval"
    out = pd.DataFrame([{"n_examinees": n, "n_items": k, "alpha": alpha, "ci_low": low,
                         "ci_high": high, "method": method}])
    return finish(out, dropped)


def item_statistics_summary(df: pd.DataFrame, conditions: str | Iterable[str] | None = None,
                            corrected: bool = True,
                            stats_frame: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """The published Tables 6 and 7 plus test-level figures, as a dict of three frames.

    - "difficulty": category, n_items, share (of all items; Table 6).
    - "discrimination": type, n (estimable items), mean_r_pb, good, fair, poor; last row type
      "all" (Table 7).
    - "overall": one row with n_items, n_examinees, mean_p, sd_p, mean_r_pb, sd_r_pb,
      n_estimable, n_not_estimable, n_all_right, n_all_wrong, n_constant_other, good, fair, poor,
      alpha, alpha_ci_low, alpha_ci_high, alpha_method.
    Pass `stats_frame` (an `item_statistics` result) to skip recomputing it. SDs use ddof=1.
    """
    st = stats_frame if stats_frame is not None else item_statistics(df, conditions, corrected)
    n_items = len(st)
    diff = (st["difficulty_category"].value_counts()
            .reindex(list(DIFFICULTY_CATEGORIES), fill_value=0))
    difficulty = pd.DataFrame({"category": list(DIFFICULTY_CATEGORIES),
                               "n_items": diff.to_numpy().astype(int)})
    difficulty["share"] = difficulty["n_items"] / n_items if n_items else np.nan

    est = st.loc[st["r_pb"].notna()]
    rows = []
    for t, g in list(est.groupby("type", sort=False)) + [("all", est)]:
        counts = g["discrimination_category"].value_counts()
        rows.append({"type": t, "n": len(g), "mean_r_pb": g["r_pb"].mean(),
                     **{c: int(counts.get(c, 0)) for c in DISCRIMINATION_CATEGORIES}})
    discrimination = pd.DataFrame(rows, columns=["type", "n", "mean_r_pb",
                                                 *DISCRIMINATION_CATEGORIES])
    discrimination = (discrimination.sort_values("type", key=lambda s: s.map(
        lambda t: format_rank(t) if t != "all" else (10**6, "")))
        .reset_index(drop=True))

    non_est = st.loc[st["r_pb"].isna()]
    rel = reliability(df, conditions) if df is not None else None
    overall = {
        "n_items": n_items, "n_examinees": st.attrs.get("n_examinees", np.nan),
        "mean_p": st["p"].mean(), "sd_p": st["p"].std(ddof=1),
        "mean_r_pb": est["r_pb"].mean(), "sd_r_pb": est["r_pb"].std(ddof=1),
        "n_estimable": len(est), "n_not_estimable": len(non_est),
        "n_all_right": int(np.isclose(non_est["p"], 1.0).sum()),
        "n_all_wrong": int(np.isclose(non_est["p"], 0.0).sum()),
    }
    overall["n_constant_other"] = (overall["n_not_estimable"] - overall["n_all_right"]
                                   - overall["n_all_wrong"])
    # How wide a 95% interval around r_pb = 0 is with this many examinees: pages warn with it.
    low, _ = fisher_interval(np.array([0.0]), np.array([float(overall["n_examinees"])]))
    overall["r_pb_halfwidth_at_zero"] = float(-low[0])
    overall.update({c: int(discrimination.iloc[-1][c]) if len(discrimination) else 0
                    for c in DISCRIMINATION_CATEGORIES})
    if rel is not None:
        r0 = rel.iloc[0]
        overall.update(alpha=r0["alpha"], alpha_ci_low=r0["ci_low"], alpha_ci_high=r0["ci_high"],
                       alpha_method=r0["method"], alpha_n_items=int(r0["n_items"]))
    return {"difficulty": difficulty, "discrimination": discrimination,
            "overall": pd.DataFrame([overall])}

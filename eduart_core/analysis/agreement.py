"""Inter-rater agreement of review decisions: percent agreement, Cohen's and Fleiss' kappa,
Krippendorff's alpha (nominal) with a bootstrap interval. Pure functions, no store, no Streamlit.

Input: a ratings frame with one row per (unit, rater) and a ``category`` column (for review
decisions: a unit is a (page, round, field path), a rater a reviewer, the category what the
reviewer chose among the candidates: see ``extraction.stats.AGREEMENT_CODING``), optionally a
``value`` column whose agreement is reported as a plain share. Units rated by fewer than two
raters carry no information on agreement and are left out.

Which library computes what (kept libraries, not hand-written formulas):
- Cohen's kappa: ``statsmodels.stats.inter_rater.cohens_kappa`` on the two raters' contingency
  table; only defined when exactly two raters decided the units.
- Fleiss' kappa: ``statsmodels.stats.inter_rater.fleiss_kappa``, which needs the same number of
  ratings per unit: it uses the units with the most common number of ratings (``fleiss_units``).
- Krippendorff's alpha (nominal, any number of raters, missing ratings allowed): the
  ``krippendorff`` package. Its dense implementation needs units x categories^2 cells, and here
  every distinct value is a category (thousands for a large round), so beyond a few million cells
  the same formula (coincidence matrix, Krippendorff 2011) is evaluated on a sparse matrix; tests
  check that both give the same number. The 95% interval resamples units (1,000 bootstrap
  replicates, fixed seed, percentile interval) with that sparse evaluation.
"""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd
from scipy import sparse

logger = logging.getLogger(__name__)

DENSE_ALPHA_CELLS = 4_000_000  # units x categories^2 the krippendorff package is given at most
N_BOOT = 1000
BOOT_SEED = 20261130

AGREEMENT_KEYS = ("units", "reviewers", "ratings", "percent", "value_percent", "cohen_kappa", "fleiss_kappa",
                  "fleiss_units", "krippendorff_alpha", "alpha_ci")


def _clean(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if not np.isfinite(value) else value


def pairable(ratings: pd.DataFrame, unit: str = "unit", rater: str = "rater") -> pd.DataFrame:
    """The ratings of units rated by at least two raters (one rating per rater and unit: the last)."""
    if ratings.empty:
        return ratings.copy()
    r = ratings.drop_duplicates([unit, rater], keep="last")
    counts = r.groupby(unit)[rater].transform("size")
    return r[counts >= 2].reset_index(drop=True)


def reliability_data(ratings: pd.DataFrame, unit: str = "unit", rater: str = "rater",
                     category: str = "category") -> pd.DataFrame:
    """Raters x units table of categories (NaN where a rater did not rate a unit): "the table"
    Krippendorff's alpha is defined on; pairable units only."""
    r = pairable(ratings, unit, rater)
    if r.empty:
        return pd.DataFrame()
    return r.pivot(index=rater, columns=unit, values=category)


def _codes(r: pd.DataFrame, unit: str, rater: str, category: str):
    u_codes, units = pd.factorize(r[unit], sort=False)
    c_codes, cats = pd.factorize(r[category], sort=True)
    return u_codes, len(units), c_codes, len(cats)


def _value_counts(u_codes: np.ndarray, n_units: int, c_codes: np.ndarray, n_cats: int) -> sparse.csr_matrix:
    data = np.ones(len(u_codes), dtype=np.float64)
    return sparse.csr_matrix((data, (u_codes, c_codes)), shape=(n_units, n_cats))


def alpha_from_counts(value_counts: sparse.csr_matrix) -> float:
    """Nominal Krippendorff's alpha from a units x categories count matrix (sparse evaluation).

    alpha = 1 - (n - 1) * sum_u (m_u^2 - sum_c n_uc^2) / (m_u - 1) / (n^2 - sum_c n_c^2), over
    units with m_u >= 2 ratings; equal to ``krippendorff.alpha(value_counts=...)``.
    """
    vc = sparse.csr_matrix(value_counts, dtype=np.float64)
    m = np.asarray(vc.sum(axis=1)).ravel()
    keep = m >= 2
    vc, m = vc[keep], m[keep]
    if vc.shape[0] == 0:
        return float("nan")
    within = np.asarray(vc.multiply(vc).sum(axis=1)).ravel()
    observed = ((m * m - within) / (m - 1)).sum()
    n_c = np.asarray(vc.sum(axis=0)).ravel()
    n = n_c.sum()
    expected = n * n - (n_c * n_c).sum()
    if expected <= 0:
        return float("nan")
    return float(1.0 - (n - 1.0) * observed / expected)


def _alpha(value_counts: sparse.csr_matrix) -> float:
    n_units, n_cats = value_counts.shape
    if n_units * n_cats * n_cats <= DENSE_ALPHA_CELLS:
        import krippendorff

        try:
            return float(krippendorff.alpha(value_counts=value_counts.toarray(), level_of_measurement="nominal"))
        except (ValueError, ZeroDivisionError, FloatingPointError) as exc:
            logger.info("krippendorff.alpha gave no value (%s): one category only?", exc)
            return float("nan")
    return alpha_from_counts(value_counts)


def bootstrap_alpha(value_counts: sparse.csr_matrix, n_boot: int = N_BOOT, seed: int = BOOT_SEED,
                    level: float = 0.95) -> tuple[float | None, float | None]:
    """Percentile interval of alpha over ``n_boot`` resamples of the units (all replicates at once)."""
    vc = sparse.csr_matrix(value_counts, dtype=np.float64)
    m = np.asarray(vc.sum(axis=1)).ravel()
    vc, m = vc[m >= 2], m[m >= 2]
    n_units = vc.shape[0]
    if n_units < 2:
        return None, None
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_units, size=(n_boot, n_units))
    offsets = (np.arange(n_boot) * n_units)[:, None]
    weights = np.bincount((draws + offsets).ravel(), minlength=n_boot * n_units).reshape(n_boot, n_units)
    weights = weights.astype(np.float64)
    within = np.asarray(vc.multiply(vc).sum(axis=1)).ravel()
    observed = weights @ ((m * m - within) / (m - 1))
    n = weights @ m
    totals = np.asarray((vc.T @ weights.T).T)          # replicate x category totals
    expected = n * n - (totals * totals).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        alphas = 1.0 - (n - 1.0) * observed / expected
    alphas = alphas[np.isfinite(alphas)]
    if len(alphas) < n_boot / 2:
        return None, None
    tail = (1.0 - level) / 2.0 * 100
    low, high = np.percentile(alphas, [tail, 100 - tail])
    return float(low), float(high)


def _cohen(r: pd.DataFrame, unit: str, rater: str, category: str) -> float | None:
    from statsmodels.stats.inter_rater import cohens_kappa

    raters = sorted(r[rater].unique())
    if len(raters) != 2:
        return None
    wide = r.pivot(index=unit, columns=rater, values=category).dropna()
    if wide.empty:
        return None
    codes, cats = pd.factorize(pd.concat([wide[raters[0]], wide[raters[1]]]), sort=True)
    first, second = codes[:len(wide)], codes[len(wide):]
    table = np.zeros((len(cats), len(cats)), dtype=np.int64)
    np.add.at(table, (first, second), 1)
    if len(cats) < 2:
        return None  # every unit in one category: kappa is undefined (0/0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _clean(cohens_kappa(table, return_results=False))


def _fleiss(r: pd.DataFrame, unit: str, rater: str, category: str) -> tuple[float | None, int]:
    from statsmodels.stats.inter_rater import fleiss_kappa

    per_unit = r.groupby(unit)[rater].size()
    if per_unit.empty:
        return None, 0
    counts = per_unit.value_counts()
    m = int(max(counts[counts == counts.max()].index))  # the most common number of ratings (ties: more)
    chosen = r[r[unit].isin(per_unit.index[per_unit == m])]
    u_codes, n_units, c_codes, n_cats = _codes(chosen, unit, rater, category)
    if n_units < 1 or n_cats < 2:
        return None, n_units
    table = np.zeros((n_units, n_cats), dtype=np.int64)
    np.add.at(table, (u_codes, c_codes), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _clean(fleiss_kappa(table, method="fleiss")), n_units


def _same_share(r: pd.DataFrame, unit: str, column: str) -> float | None:
    """Share of units on which every rating holds the same ``column`` value (None without the column)."""
    if column not in r:
        return None
    return float((r.groupby(unit, sort=False)[column].nunique(dropna=False) == 1).mean())


def agreement(ratings: pd.DataFrame, *, unit: str = "unit", rater: str = "rater", category: str = "category",
              value: str = "value", n_boot: int = N_BOOT, seed: int = BOOT_SEED) -> dict:
    """Agreement over every unit at least two raters rated.

    Returns ``units``, ``reviewers`` (distinct raters), ``ratings``, ``percent`` (share of units
    on which every rater chose the same category), ``value_percent`` (the same share on the
    ``value`` column when the ratings have one, e.g. the final value of a review decision coded
    by choice; else None), ``cohen_kappa`` (None unless exactly two raters),
    ``fleiss_kappa`` and ``fleiss_units`` (units it rests on), ``krippendorff_alpha`` and
    ``alpha_ci`` ([low, high], bootstrap 95%). Statistics that are undefined (no units, a single
    category) are None.
    """
    r = pairable(ratings, unit, rater)
    out: dict = {"units": 0, "reviewers": 0, "ratings": 0, "percent": None, "value_percent": None, "cohen_kappa": None,
                 "fleiss_kappa": None, "fleiss_units": 0, "krippendorff_alpha": None, "alpha_ci": [None, None]}
    if r.empty:
        return out
    u_codes, n_units, c_codes, n_cats = _codes(r, unit, rater, category)
    vc = _value_counts(u_codes, n_units, c_codes, n_cats)
    distinct_per_unit = np.asarray((vc > 0).sum(axis=1)).ravel()
    out.update(units=int(n_units), reviewers=int(r[rater].nunique()), ratings=int(len(r)),
               percent=float((distinct_per_unit == 1).mean()), value_percent=_same_share(r, unit, value))
    out["cohen_kappa"] = _cohen(r, unit, rater, category)
    out["fleiss_kappa"], out["fleiss_units"] = _fleiss(r, unit, rater, category)
    out["krippendorff_alpha"] = _clean(_alpha(vc)) if n_cats >= 2 else None
    if out["krippendorff_alpha"] is not None:
        out["alpha_ci"] = list(bootstrap_alpha(vc, n_boot=n_boot, seed=seed))
    return out


def agreement_table(ratings: pd.DataFrame, by: list[str], *, unit: str = "unit", rater: str = "rater",
                    category: str = "category", value: str = "value", n_boot: int = N_BOOT,
                    seed: int = BOOT_SEED) -> pd.DataFrame:
    """``agreement`` per group of ``by`` columns, plus an ``all`` row; one row per group with
    the group columns, units, reviewers, percent, value_percent, cohen_kappa, fleiss_kappa,
    fleiss_units, krippendorff_alpha, alpha_ci_low, alpha_ci_high."""
    columns = list(by) + ["units", "reviewers", "ratings", "percent", "value_percent", "cohen_kappa", "fleiss_kappa",
                          "fleiss_units", "krippendorff_alpha", "alpha_ci_low", "alpha_ci_high"]
    rows = []
    groups = list(pairable(ratings, unit, rater).groupby(by, sort=True)) if by and not ratings.empty else []
    single = None
    for key, group in groups + [(("all",) * len(by), ratings)]:
        key = key if isinstance(key, tuple) else (key,)
        if single is not None and key == ("all",) * len(by):
            result = dict(single)  # one group holds every rated field: the "all" row is the same numbers
        else:
            result = agreement(group, unit=unit, rater=rater, category=category, value=value, n_boot=n_boot,
                               seed=seed)
            if len(groups) == 1:
                single = dict(result)
        if not result["units"] and groups:
            continue
        low, high = result.pop("alpha_ci")
        rows.append({**dict(zip(by, key)), **result, "alpha_ci_low": low, "alpha_ci_high": high})
    return pd.DataFrame(rows, columns=columns)

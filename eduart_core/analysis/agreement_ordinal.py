"""Krippendorff's alpha (ordinal) and Cohen's weighted kappa, with cluster-bootstrap intervals.

Why our own implementation next to the `krippendorff` package: the calibration bootstraps alpha a
thousand times per cell, resampling whole answers (the criteria of one answer are not independent
of each other). Alpha is a function of the coincidence matrix, which is a sum over units, so each
answer's contribution is computed once and every bootstrap replicate is one matrix product. A test
checks that the point estimates equal the `krippendorff` package's on the same tables.

Alpha: coincidences o_ck over pairable values (units with two or more values), marginals n_c,
ordinal distance delta_ck^2 = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2, and
alpha = 1 - (n - 1) * sum o_ck delta_ck^2 / sum n_c n_k delta_ck^2.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

N_BOOT = 1000
SEED = 20261201


def _codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, codes with -1 for missing) of a float array."""
    flat = values[~np.isnan(values)]
    domain = np.unique(flat)
    codes = np.full(values.shape, -1, dtype=np.int64)
    mask = ~np.isnan(values)
    codes[mask] = np.searchsorted(domain, values[mask])
    return domain, codes


def unit_coincidences(data: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-unit coincidence contributions of a (coders x units) table (NaN = missing).

    Returns (domain, contributions of shape (units, V, V), pairable mask of units)."""
    data = np.asarray(data, dtype=float)
    domain, codes = _codes(data)
    v = len(domain)
    units = data.shape[1]
    counts = np.zeros((units, v), dtype=float)
    for row in codes:
        ok = row >= 0
        np.add.at(counts, (np.nonzero(ok)[0], row[ok]), 1.0)
    m = counts.sum(axis=1)
    pairable = m >= 2
    contrib = np.zeros((units, v, v))
    if pairable.any():
        c = counts[pairable]
        outer = c[:, :, None] * c[:, None, :]
        idx = np.arange(v)
        outer[:, idx, idx] -= c
        contrib[pairable] = outer / (m[pairable] - 1)[:, None, None]
    return domain, contrib, pairable


def _alpha_from(o: np.ndarray) -> np.ndarray:
    """Ordinal alpha of coincidence matrices of shape (..., V, V)."""
    o = np.asarray(o, dtype=float)
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    cum = np.cumsum(n_c, axis=-1)
    v = o.shape[-1]
    i = np.arange(v)[:, None]
    k = np.arange(v)[None, :]
    low, high = np.minimum(i, k), np.maximum(i, k)
    # sum of n_g for g from low to high, minus half of the two ends
    span = np.take(cum, high, axis=-1) - np.take(cum, low, axis=-1) + np.take(n_c, low, axis=-1)
    delta = (span - (np.take(n_c, np.broadcast_to(i, (v, v)), axis=-1)
                     + np.take(n_c, np.broadcast_to(k, (v, v)), axis=-1)) / 2.0) ** 2
    observed = (o * delta).sum(axis=(-1, -2))
    expected = (n_c[..., :, None] * n_c[..., None, :] * delta).sum(axis=(-1, -2))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (n - 1.0) * observed / expected
    return np.where(expected > 0, alpha, np.nan)


def ordinal_alpha(data: np.ndarray) -> float:
    """Krippendorff's alpha, ordinal, of a (coders x units) table with NaN for missing values."""
    _, contrib, pairable = unit_coincidences(data)
    if not pairable.any():
        return float("nan")
    return float(_alpha_from(contrib.sum(axis=0)))


def _cluster_sums(contrib: np.ndarray, clusters: np.ndarray | None) -> np.ndarray:
    if clusters is None:
        return contrib
    labels, inverse = np.unique(clusters, return_inverse=True)
    out = np.zeros((len(labels), *contrib.shape[1:]))
    np.add.at(out, inverse, contrib)
    return out


@lru_cache(maxsize=8)
def _weights(n_clusters: int, n_boot: int, seed: int) -> np.ndarray:
    """How often each cluster is drawn in each replicate (n_boot x n_clusters); the same for every
    statistic of one sample size and seed, so it is drawn once."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_clusters, size=(n_boot, n_clusters))
    rows = np.repeat(np.arange(n_boot), n_clusters) * n_clusters
    counts = np.bincount(rows + draws.ravel(), minlength=n_boot * n_clusters).reshape(n_boot, n_clusters)
    counts = counts.astype(float)
    counts.setflags(write=False)
    return counts


def _interval(replicates: np.ndarray) -> tuple[float, float]:
    finite = replicates[np.isfinite(replicates)]
    if len(finite) < 20:
        return float("nan"), float("nan")
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def alpha_interval(data: np.ndarray, clusters: np.ndarray | None = None, n_boot: int = N_BOOT,
                   seed: int = SEED) -> tuple[float, float, float]:
    """(alpha, 2.5%, 97.5%) with a percentile bootstrap resampling ``clusters`` (units by default)."""
    _, contrib, pairable = unit_coincidences(data)
    if not pairable.any():
        return float("nan"), float("nan"), float("nan")
    point = float(_alpha_from(contrib.sum(axis=0)))
    keep = pairable
    sums = _cluster_sums(contrib[keep], None if clusters is None else np.asarray(clusters)[keep])
    if len(sums) < 2 or n_boot <= 0:
        return point, float("nan"), float("nan")
    w = _weights(len(sums), n_boot, seed)
    replicates = _alpha_from((w @ sums.reshape(len(sums), -1)).reshape(n_boot, *sums.shape[1:]))
    return (point, *_interval(replicates))


def _kappa_from(tables: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted kappa of joint count tables of shape (..., V, V) with disagreement weights."""
    total = tables.sum(axis=(-1, -2))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = tables / total[..., None, None]
        rows, cols = p.sum(axis=-1), p.sum(axis=-2)
        expected = rows[..., :, None] * cols[..., None, :]
        num = (weights * p).sum(axis=(-1, -2))
        den = (weights * expected).sum(axis=(-1, -2))
        kappa = 1.0 - num / den
    return np.where(den > 0, kappa, np.nan)


def weighted_kappa_interval(a: np.ndarray, b: np.ndarray, clusters: np.ndarray | None = None,
                            n_boot: int = N_BOOT, seed: int = SEED) -> tuple[float, float, float]:
    """Cohen's kappa with quadratic weights between two raters' values (pairs with both present),
    and a percentile bootstrap interval resampling ``clusters``. (kappa, 2.5%, 97.5%)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ok = ~(np.isnan(a) | np.isnan(b))
    if ok.sum() < 2:
        return float("nan"), float("nan"), float("nan")
    a, b = a[ok], b[ok]
    domain = np.unique(np.concatenate([a, b]))
    v = len(domain)
    if v < 2:
        return float("nan"), float("nan"), float("nan")
    ia, ib = np.searchsorted(domain, a), np.searchsorted(domain, b)
    spread = (domain - domain.min()) / (domain.max() - domain.min())
    weights = (spread[:, None] - spread[None, :]) ** 2
    units = np.zeros((len(a), v, v))
    units[np.arange(len(a)), ia, ib] = 1.0
    point = float(_kappa_from(units.sum(axis=0), weights))
    sums = _cluster_sums(units, None if clusters is None else np.asarray(clusters)[ok])
    if len(sums) < 2 or n_boot <= 0:
        return point, float("nan"), float("nan")
    w = _weights(len(sums), n_boot, seed)
    replicates = _kappa_from((w @ sums.reshape(len(sums), -1)).reshape(n_boot, v, v), weights)
    return (point, *_interval(replicates))

"""The arithmetic of partial-credit IRT models: category probabilities, abilities, item information.

One parameterisation covers every item the partial-credit fits use: item i has slope a_i,
categories 0..m_i and step difficulties s_i1..s_im; the log-odds of category k against k-1 at
ability theta are a_i (theta - s_ik). With m_i = 1 that is the Rasch item (a = 1) or the 2PL item;
the partial credit model fixes a = 1; the generalised partial credit model frees it. Steps are
stored per item padded with NaN beyond m_i (`steps`: items x max m).

Abilities are EAP estimates on a uniform grid fine enough for each posterior (see
`eap_abilities`): with hundreds of partial-credit items a posterior is a few hundredths of a logit
wide, far narrower than a fixed quadrature grid's spacing.
"""
from __future__ import annotations

import numpy as np

#: Elements of one items x points x categories block (bounds memory at 10,000 items).
BLOCK_ELEMENTS = 4_000_000
#: A grid step of at most half the narrowest posterior SD makes grid sums of near-normal
#: posteriors exact to far below any printed digit.
STEPS_PER_SD = 2.0
MAX_GRID_POINTS = 20_001


def cumulative_steps(steps: np.ndarray) -> np.ndarray:
    """S_ik = s_i1 + ... + s_ik with S_i0 = 0 (items x max m + 1; NaN beyond an item's categories)."""
    steps = np.atleast_2d(np.asarray(steps, dtype=float))
    return np.concatenate([np.zeros((len(steps), 1)), np.cumsum(steps, axis=1)], axis=1)


def _blocks(n_items: int, points: int, width: int):
    size = max(1, BLOCK_ELEMENTS // max(1, points * width))
    for lo in range(0, n_items, size):
        yield slice(lo, min(n_items, lo + size))


def log_category_probabilities(theta: np.ndarray, slope: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """log P(X_i = k | theta): items x points x categories (-inf beyond an item's categories)."""
    theta = np.atleast_1d(np.asarray(theta, dtype=float))
    cum = cumulative_steps(steps)
    k = np.arange(cum.shape[1], dtype=float)
    a = np.asarray(slope, dtype=float)[:, None, None]
    z = a * (k[None, None, :] * theta[None, :, None] - cum[:, None, :])
    z = np.where(np.isnan(z), -np.inf, z)
    top = z.max(axis=2, keepdims=True)
    return z - (top + np.log(np.exp(z - top).sum(axis=2, keepdims=True)))


def category_probabilities(theta: np.ndarray, slope: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """P(X_i = k | theta): items x points x categories (0 beyond an item's categories)."""
    return np.exp(log_category_probabilities(theta, slope, steps))


def expected_score(theta: np.ndarray, slope: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """E[X_i | theta] in levels (items x points)."""
    p = category_probabilities(theta, slope, steps)
    return (p * np.arange(p.shape[2])).sum(axis=2)


def item_information(theta: np.ndarray, slope: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Fisher information a_i^2 Var(X_i | theta) of each item (items x points); a^2 P (1 - P) for one step."""
    p = category_probabilities(theta, slope, steps)
    k = np.arange(p.shape[2])
    mean = (p * k).sum(axis=2)
    var = (p * k * k).sum(axis=2) - mean * mean
    return np.asarray(slope, dtype=float)[:, None] ** 2 * np.maximum(var, 0.0)


def category_information(theta: np.ndarray, slope: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Each category's share of the item information, P(X_i = k | theta) I_i(theta) (items x points x
    categories; the shares sum to the item information). In these models the information a single
    response carries does not depend on its category, so a category informs where it is likely."""
    return category_probabilities(theta, slope, steps) * item_information(theta, slope, steps)[:, :, None]


def _widths(cum: np.ndarray) -> np.ndarray:
    """Categories per item (NaN pads the cumulative steps beyond them)."""
    return (~np.isnan(cum)).sum(axis=1)


def _log_normalisers(points: np.ndarray, slope: np.ndarray, cum: np.ndarray) -> np.ndarray:
    """log sum_k exp(a (k theta - S_k)) per item and point (items x points), in blocks of items with
    the same number of categories (a right/wrong item is one log(1 + e^z))."""
    out = np.empty((len(slope), len(points)))
    widths = _widths(cum)
    for width in np.unique(widths):
        rows = np.flatnonzero(widths == width)
        if width == 2:
            out[rows] = np.logaddexp(0.0, slope[rows, None] * (points[None, :] - cum[rows, 1, None]))
            continue
        k = np.arange(width, dtype=float)
        for part in _blocks(len(rows), len(points), int(width)):
            idx = rows[part]
            z = slope[idx, None, None] * (k[None, None, :] * points[None, :, None] - cum[idx, None, :width])
            top = z.max(axis=2)
            out[idx] = top + np.log(np.exp(z - top[:, :, None]).sum(axis=2))
    return out


def _patterned(answered: np.ndarray, per_item: np.ndarray) -> np.ndarray:
    """answered @ per_item (examinees x points), once per distinct pattern of answered items."""
    patterns, which = np.unique(answered, axis=0, return_inverse=True)
    return (patterns.astype(float) @ per_item)[np.ravel(which)]


def _posterior(codes: np.ndarray, slope: np.ndarray, cum: np.ndarray, sd: float,
               grid: np.ndarray) -> np.ndarray:
    """Log posterior (unnormalised) of every examinee on a shared grid (examinees x points)."""
    answered = codes >= 0
    level = np.where(answered, codes, 0)
    linear = (level * slope[None, :]).sum(axis=1)                            # sum a_i x_i
    offset = np.where(answered, slope[None, :] * cum[np.arange(cum.shape[0])[None, :], level], 0.0).sum(axis=1)
    norm = _patterned(answered, _log_normalisers(grid, slope, cum))
    return grid[None, :] * linear[:, None] - offset[:, None] - norm - 0.5 * (grid[None, :] / sd) ** 2


def _moments(grid: np.ndarray, loglik: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    w = np.exp(loglik - loglik.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    mean = w @ grid
    spread = np.sqrt(np.maximum(w @ (grid * grid) - mean * mean, 0.0))
    return mean, spread, w


def eap_abilities(codes: np.ndarray, slope: np.ndarray, steps: np.ndarray, sd: float,
                  coarse_points: int = 401) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """EAP abilities and posterior SDs under N(0, sd^2) from category codes (-1 = not answered).

    Why two grids: a uniform grid sums a near-normal posterior exactly once its step is below
    about one posterior SD, but a posterior can be 0.02 logits wide. A coarse grid over the prior
    (±8 SD) locates every posterior; the test information at each location gives its width; a
    second grid spans every posterior (mean ± 10 widths) with a step of half the narrowest.
    The log-likelihood is linear in theta apart from each item's normaliser, which depends on
    which items were answered, not on the answers: it is computed once per grid point and item.
    Returns (ability, SD, the final grid, posterior weights examinees x grid points).
    """
    codes = np.asarray(codes)
    slope = np.asarray(slope, dtype=float)
    cum = cumulative_steps(steps)
    half = 8.0 * max(float(sd), 1e-3)
    coarse = np.linspace(-half, half, coarse_points)
    mean, spread, _ = _moments(coarse, _posterior(codes, slope, cum, sd, coarse))
    answered = (codes >= 0).astype(float)
    info = np.empty(len(codes))
    for e in range(0, len(codes), 64):   # test information at each located posterior
        part = slice(e, min(len(codes), e + 64))
        per_item = item_information(mean[part], slope, steps)                  # items x examinees
        info[part] = (answered[part] * per_item.T).sum(axis=1)
    width = np.maximum(1.0 / np.sqrt(info + 1.0 / sd ** 2), spread)
    lo, hi = float((mean - 10 * width).min()), float((mean + 10 * width).max())
    step = float(width.min()) / STEPS_PER_SD
    points = int(min(MAX_GRID_POINTS, max(coarse_points, np.ceil((hi - lo) / step) + 1)))
    grid = np.linspace(lo, hi, points)
    mean, spread, weights = _moments(grid, _posterior(codes, slope, cum, sd, grid))
    return mean, spread, grid, weights


def step_information(codes: np.ndarray, slope: np.ndarray, steps: np.ndarray, grid: np.ndarray,
                     weights: np.ndarray) -> list[np.ndarray]:
    """Each item's observed information about its own steps (Louis' formula, item by item).

    For item i, the complete-data score of step v is a (P(X >= v | theta) - 1[x >= v]) and the
    negative Hessian a^2 Cov(1[X >= v], 1[X >= w] | theta); the observed information is the sum over
    examinees who answered i of the posterior mean of the Hessian minus the posterior covariance of
    the score. Ignoring covariances with the other items' parameters makes the SEs slightly small;
    this is used only on long tests, where the difference is negligible. ``grid`` and ``weights``:
    the posteriors of `eap_abilities`. Returns one m x m matrix per item (items with the same
    number of steps are computed together).
    """
    answered = (codes >= 0).astype(float)
    n_steps = (~np.isnan(steps)).sum(axis=1)
    out: list[np.ndarray] = [np.zeros((0, 0))] * len(slope)
    for m in np.unique(n_steps):
        rows = np.flatnonzero(n_steps == m)
        pairs = np.maximum.outer(np.arange(m), np.arange(m))
        for part in _blocks(len(rows), len(grid), int(m * m + m + 1)):
            idx = rows[part]
            p = category_probabilities(grid, slope[idx], steps[idx, :m])                 # items x points x m + 1
            at_least = np.flip(np.cumsum(np.flip(p, axis=2), axis=2), axis=2)[:, :, 1:]  # P(X >= v), v = 1..m
            mass = answered[:, idx].T @ weights                                         # posterior mass per point
            n = len(idx)
            joint = at_least[:, :, pairs].reshape(n, len(grid), m * m)                 # P(X >= max(v, w))
            expected = (mass[:, None, :] @ joint).reshape(n, m, m)                      # posterior sums, batched
            second = (mass[:, :, None] * at_least).transpose(0, 2, 1) @ at_least       # of g g'
            means = (weights @ at_least.transpose(1, 0, 2).reshape(len(grid), n * m)).reshape(-1, n, m)
            means *= answered[:, idx, None]                                             # each posterior's mean of g
            outer = means.transpose(1, 2, 0) @ means.transpose(1, 0, 2)
            info = slope[idx, None, None] ** 2 * (expected - 2 * second + outer)
            for j, item in enumerate(idx):
                out[item] = info[j]
    return out


__all__ = ["BLOCK_ELEMENTS", "category_information", "category_probabilities", "cumulative_steps", "eap_abilities",
           "expected_score", "item_information", "log_category_probabilities", "step_information"]

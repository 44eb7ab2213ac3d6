"""An independent estimator of partial credit model thresholds: conditional maximum likelihood (CML).

Written for the tests, in numpy/scipy, sharing no code with `eduart_core`: it conditions on each
examinee's total score, so it needs no ability distribution at all (the library fit assumes a
normal one and integrates over it). Given the total r, the probability of a response pattern x is
exp(-sum_i S_i,x_i) / gamma_r, with S_ik = s_i1 + ... + s_ik the cumulative thresholds and gamma_r
the elementary symmetric function of order r (the coefficients of the product of the items'
polynomials sum_k exp(-S_ik) z^k). The thresholds are identified up to a common shift; they are
returned centred at mean 0.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize


def _loglik_and_grad(theta: np.ndarray, x: np.ndarray, m: np.ndarray) -> tuple[float, np.ndarray]:
    offsets = np.concatenate([[0], np.cumsum(m)])
    steps = [theta[offsets[i]:offsets[i + 1]] for i in range(len(m))]
    cum = [np.concatenate([[0.0], np.cumsum(s)]) for s in steps]
    totals = x.sum(axis=1)
    # log gamma_r by log-space convolution (stable for any test length)
    log_gamma = np.array([0.0])
    for c in cum:
        a = log_gamma[:, None] + (-c)[None, :]
        size = len(log_gamma) + len(c) - 1
        new = np.full(size, -np.inf)
        for k in range(len(c)):
            new[k:k + len(log_gamma)] = np.logaddexp(new[k:k + len(log_gamma)], a[:, k])
        log_gamma = new
    ll = -sum(cum[i][x[:, i]].sum() for i in range(len(m))) - log_gamma[totals].sum()
    grad_cum = []
    for i in range(len(m)):
        rest = np.array([0.0])
        for j, c in enumerate(cum):
            if j == i:
                continue
            a = rest[:, None] + (-c)[None, :]
            size = len(rest) + len(c) - 1
            new = np.full(size, -np.inf)
            for k in range(len(c)):
                new[k:k + len(rest)] = np.logaddexp(new[k:k + len(rest)], a[:, k])
            rest = new
        # P(x_i = k | r) = exp(-S_ik) gamma^(i)_{r-k} / gamma_r
        g = np.zeros(len(cum[i]))
        for k in range(len(cum[i])):
            idx = totals - k
            ok = (idx >= 0) & (idx < len(rest))
            prob = np.zeros(len(totals))
            prob[ok] = np.exp(-cum[i][k] + rest[idx[ok]] - log_gamma[totals[ok]])
            g[k] = -(x[:, i] == k).sum() + prob.sum()   # d ll / d S_ik
        grad_cum.append(g)
    # d S_ik / d s_iv = 1 for v <= k: the gradient of a step sums the cumulative ones above it
    grad = np.concatenate([np.cumsum(g[::-1])[::-1][1:] for g in grad_cum])
    return float(ll), grad


def cml_thresholds(x: np.ndarray, m: np.ndarray) -> list[np.ndarray]:
    """CML thresholds (centred) of complete category data x (examinees x items, codes 0..m_i)."""
    m = np.asarray(m, dtype=int)
    start = np.concatenate([np.linspace(-1, 1, k) if k > 1 else [0.0] for k in m])

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        centred = theta - theta.mean()
        ll, grad = _loglik_and_grad(centred, x, m)
        return -ll, -(grad - grad.mean())

    result = minimize(objective, start, jac=True, method="L-BFGS-B", options={"maxiter": 2000, "gtol": 1e-8})
    theta = result.x - result.x.mean()
    offsets = np.concatenate([[0], np.cumsum(m)])
    return [theta[offsets[i]:offsets[i + 1]] for i in range(len(m))]


__all__ = ["cml_thresholds"]

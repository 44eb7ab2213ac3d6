"""An independent marginal maximum likelihood (MML) fit of the partial credit model, for the tests.

Written for the tests in numpy/scipy, sharing no code with `eduart_core` or the fitting library:
item i has categories 0..m_i and steps s_i1..s_im (slope 1; m_i = 1 is the Rasch item), abilities
are N(0, sigma^2) with sigma estimated, and the integral over the ability is a plain sum over a
fine uniform grid of z = theta / sigma (`POINTS` points over ±`HALF_WIDTH`), which is exact to far
below a printed digit for posteriors as narrow as a few hundredths of a logit. The log-likelihood
and its gradient (Fisher's identity: the posterior mean of the complete-data score) are maximised
by L-BFGS-B until every gradient component is below 1e-6 (``fit`` returns the gradient, so a test
can check it).
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp

HALF_WIDTH = 9.0
POINTS = 1201


def _unpack(params: np.ndarray, m: np.ndarray) -> tuple[list[np.ndarray], float]:
    offsets = np.concatenate([[0], np.cumsum(m)])
    return [params[offsets[i]:offsets[i + 1]] for i in range(len(m))], float(np.exp(params[-1]))


def loglik_and_grad(params: np.ndarray, codes: np.ndarray, m: np.ndarray) -> tuple[float, np.ndarray]:
    """(marginal log-likelihood, gradient) at params = all steps in item order, then log sigma.

    ``codes``: examinees x items, category 0..m_i, -1 not answered.
    """
    steps, sigma = _unpack(params, m)
    z = np.linspace(-HALF_WIDTH, HALF_WIDTH, POINTS)
    log_w = -0.5 * z * z
    log_w -= logsumexp(log_w)
    theta = sigma * z
    answered = codes >= 0
    loglik = np.tile(log_w, (len(codes), 1))                      # examinees x points
    logp_items = []
    for i, s in enumerate(steps):
        k = np.arange(len(s) + 1)
        cum = np.concatenate([[0.0], np.cumsum(s)])
        eta = k[None, :] * theta[:, None] - cum[None, :]           # points x categories
        logp = eta - logsumexp(eta, axis=1, keepdims=True)
        logp_items.append(logp)
        rows = answered[:, i]
        loglik[rows] += logp[:, codes[rows, i]].T
    norm = logsumexp(loglik, axis=1)
    post = np.exp(loglik - norm[:, None])                         # posterior weights per examinee
    grad_steps = []
    d_theta = np.zeros(len(codes))                                 # posterior E[z * d log L / d theta]
    for i, s in enumerate(steps):
        p = np.exp(logp_items[i])                                  # points x categories
        rows = answered[:, i]
        x = codes[rows, i]
        at_least = np.flip(np.cumsum(np.flip(p, axis=1), axis=1), axis=1)[:, 1:]   # P(X >= v | theta)
        observed = (x[:, None] >= np.arange(1, len(s) + 1)[None, :]).astype(float)
        expected = post[rows] @ at_least                           # examinees x steps
        grad_steps.append((expected - observed).sum(axis=0))       # d/d s_v of -1[x >= v] + P(X >= v)
        mean_k = p @ np.arange(len(s) + 1)
        d_theta[rows] += (post[rows] * (x[:, None] - mean_k[None, :]) * z[None, :]).sum(axis=1)
    grad_log_sigma = float(d_theta.sum()) * sigma
    return float(norm.sum()), np.concatenate(grad_steps + [np.array([grad_log_sigma])])


def fit(codes: np.ndarray, m: np.ndarray, start: np.ndarray | None = None) -> dict:
    """Maximise the marginal likelihood: {"steps": per item, "sigma", "loglik", "gradient"}."""
    m = np.asarray(m, dtype=int)
    x0 = start if start is not None else np.concatenate(
        [np.linspace(-1, 1, k) if k > 1 else [0.0] for k in m] + [np.array([0.0])])

    def objective(p: np.ndarray) -> tuple[float, np.ndarray]:
        ll, g = loglik_and_grad(p, codes, m)
        return -ll, -g

    result = minimize(objective, x0, jac=True, method="L-BFGS-B",
                      options={"maxiter": 5000, "gtol": 1e-6, "ftol": 1e-15})
    params = result.x
    ll, g = loglik_and_grad(params, codes, m)
    steps, sigma = _unpack(params, m)
    return {"steps": steps, "sigma": sigma, "loglik": ll, "gradient": g, "params": params}


__all__ = ["fit", "loglik_and_grad"]

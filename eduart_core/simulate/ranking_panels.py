"""Simulated panels with a known truth, to check the ranking's error rates (tests and `bench ranking`).

Why: a ranking's tie groups and intervals are only as honest as their error rates, and those can
only be checked where the true accuracies are known. A panel is what a real exam gives the
leaderboard: models answering the same items, whose answers correlate across items because
items differ in difficulty, formats differ in difficulty, items that show one image share part of
it, and each model finds some items easier than the others do (a model x item interaction).

The model, on the logit scale: P(right) = expit(theta_m - shift_f - b_i - u_c - e_mi), with
b_i ~ N(0, 1.0) the item, u_c ~ N(0, 0.6) the image (1-3 items per image), e_mi ~ N(0, 0.6) the
model x item interaction; shift_f the format offsets of `score_frames`. Each model answers each
item K times (independent draws: run-to-run noise); the K answers are averaged per item before the
ranking sees them, as the store's frame does. The true macro average of a model is the mean over
formats of its expected score over the item population (Gauss-Hermite quadrature), which is what
the interval should cover.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from ..formats import get_format
from ..vocab import EDUART_FORMATS

FORMATS = list(EDUART_FORMATS)
#: Each format's shift of the mean logit (`AnswerFormat.synthetic_shift`, as in the synthetic score frames).
_TYPE_SHIFT = {f: get_format(f).synthetic_shift for f in FORMATS}
ITEM_SD, IMAGE_SD, INTERACTION_SD = 1.0, 0.6, 0.6
_TOTAL_SD = float(np.sqrt(ITEM_SD ** 2 + IMAGE_SD ** 2 + INTERACTION_SD ** 2))
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(60)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def true_macro(theta: np.ndarray | float) -> np.ndarray:
    """Expected macro average over the item population for ability(ies) ``theta``."""
    theta = np.atleast_1d(np.asarray(theta, dtype=float))
    shifts = np.array([_TYPE_SHIFT[f] for f in FORMATS])
    eta = theta[:, None, None] - shifts[None, :, None] - _TOTAL_SD * _NODES[None, None, :]
    return (expit(eta) * _WEIGHTS).sum(axis=2).mean(axis=1)


def theta_for(macro: float) -> float:
    """The ability whose true macro average is ``macro`` (bisection)."""
    low, high = -10.0, 10.0
    for _ in range(80):
        mid = (low + high) / 2
        if true_macro(mid)[0] < macro:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def abilities(true: np.ndarray) -> np.ndarray:
    """The abilities whose true macro averages are ``true``."""
    return np.array([theta_for(float(t)) for t in np.asarray(true, dtype=float)])


def panel(thetas: np.ndarray, n_items: int, repeats: int, rng: np.random.Generator) -> pd.DataFrame:
    """One simulated panel: the long frame (model, condition, item_id, type, cluster, score), one row
    per model x item with the score averaged over ``repeats`` answers; ``thetas`` from `abilities`."""
    n_m = len(thetas)
    types = np.arange(n_items) % len(FORMATS)
    sizes = rng.integers(1, 4, size=n_items)
    image = np.repeat(np.arange(n_items), sizes)[:n_items]  # consecutive items share an image
    u = rng.normal(0.0, IMAGE_SD, image.max() + 1)[image]
    b = rng.normal(0.0, ITEM_SD, n_items)
    shift = np.array([_TYPE_SHIFT[FORMATS[t]] for t in types])
    e = rng.normal(0.0, INTERACTION_SD, (n_m, n_items))
    p = expit(thetas[:, None] - shift[None, :] - b[None, :] - u[None, :] - e)
    score = (rng.random((repeats, n_m, n_items)) < p[None]).mean(axis=0)
    return pd.DataFrame({"model": np.repeat([f"Model {k + 1}" for k in range(n_m)], n_items),
                         "condition": "default",
                         "item_id": np.tile(np.arange(n_items), n_m).astype(str),
                         "type": np.tile(np.array(FORMATS, dtype=object)[types], n_m),
                         "cluster": np.tile(image, n_m), "score": score.ravel()})


def null_rate(n_panels: int, *, models: int = 8, items: int = 120, repeats: int = 3, accuracy: float = 0.7,
              seed: int = 1) -> float:
    """Share of null panels (every model the same true macro) where the ranking separates any two
    models (more than one tie group)."""
    from ..analysis.ranking import ranking

    rng = np.random.default_rng(seed)
    thetas = abilities(np.full(models, accuracy))
    hits = sum(int(ranking(panel(thetas, items, repeats, rng))["tie_group"].max() > 1) for _ in range(n_panels))
    return hits / n_panels


def gap_power(n_panels: int, *, models: int = 8, items: int = 300, repeats: int = 3, gap: float = 0.10,
              seed: int = 2) -> float:
    """Share of panels where the two models with a true ``gap`` end in different tie groups (the
    others sit evenly between them)."""
    from ..analysis.ranking import ranking

    rng = np.random.default_rng(seed)
    thetas = abilities(np.linspace(0.75, 0.75 - gap, models))
    hits = 0
    for _ in range(n_panels):
        r = ranking(panel(thetas, items, repeats, rng)).set_index("model")["tie_group"]
        hits += int(r["Model 1"] != r[f"Model {models}"])
    return hits / n_panels


def coverage(n_panels: int, *, models: int = 8, items: int = 120, repeats: int = 3, seed: int = 3
             ) -> tuple[float, float]:
    """(share of panels where the first model's 95% interval covers its true macro, share over every
    model's interval in every panel); true macros spread from 0.55 to 0.80."""
    from ..analysis.ranking import ranking

    rng = np.random.default_rng(seed)
    true = np.linspace(0.80, 0.55, models)
    thetas = abilities(true)
    first, every = 0, 0
    for _ in range(n_panels):
        r = ranking(panel(thetas, items, repeats, rng)).set_index("model").loc[[f"Model {k + 1}" for k in range(models)]]
        inside = (r["macro_ci_low"].to_numpy() <= true) & (true <= r["macro_ci_high"].to_numpy())
        first += int(inside[0])
        every += int(inside.sum())
    return first / n_panels, every / (n_panels * models)


__all__ = ["abilities", "coverage", "gap_power", "null_rate", "panel", "theta_for", "true_macro"]

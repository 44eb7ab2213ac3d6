"""Item response theory: a Rasch model by marginal maximum likelihood and an exploratory 2PL.

Why IRT next to CTT: it puts examinees (models) and items on one logit scale, gives every model's
ability an honest standard error, and says where on that scale each item measures. The catch is
the panel: with 24 examinees a Rasch difficulty is little better than CTT's p and a 2PL
discrimination is barely recoverable, so every result carries the panel size and the fitting
library's own standard errors.

Choices (stated on the pages):
- Responses are dichotomised with the published regression's rule: right = score >= 0.5
  (partial-credit formats score shares and F1s).
- Items that every examinee got right (or wrong) carry no information on the scale: they are
  reported as non-informative (status ``all_right`` / ``all_wrong``) and left out of the fit
  instead of receiving an infinite difficulty.
- Rasch: slopes fixed at 1, ability distribution N(0, sigma^2) with sigma estimated (so the scale
  is the logit and the mean ability is 0); 2PL: N(0, 1) abilities, slope and difficulty per item
  (the library bounds slopes to [0.1, 5] and difficulties to [-6, 6]; estimates at a bound are
  marked). Abilities are EAP estimates with their posterior SDs as standard errors.

The fitting library is `mirt` (PyPI, Rust backend): tried against `girth` on these data it was
the one that gave standard errors for items and abilities and a 2PL in seconds; its Rasch
difficulties agree with statsmodels' conditional-logit (CML) difficulties (tests and the
psychometrics note). Its full-information (Oakes) standard errors need memory quadratic in the
number of items, so above `FULL_SE_MAX_ITEMS` items the Rasch SEs come from each item's own
observed information (computed here, `se_method` says which) and the 2PL has none.
"""
from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import expit

from ..errors import UserError
from ..vocab import CONDITIONS, IRT_2PL, IRT_POLYTOMOUS, IRT_RASCH
from ._frame import group_codes, prepare, sort_frame
from .intervals import Z95

logger = logging.getLogger(__name__)

#: The dichotomisation rule (the published regression's): a response is right when score >= 0.5.
RIGHT_AT = 0.5
RULE = "right = score >= 0.5 (the published regression's rule); partial credit below 0.5 counts as wrong"
#: The models fitted here (right/wrong responses); `analysis.irt_pcm` fits the partial-credit ones.
DICHOTOMOUS = (IRT_RASCH, IRT_2PL)
#: Below this many examinees discrimination (2PL, GPCM, and CTT's r_pb) is exploratory only.
EXPLORATORY_BELOW = 50
#: Fewest examinees and informative items a fit is attempted with.
MIN_EXAMINEES = 3
MIN_ITEMS = 2
#: Above this many fitted items the library's full-information (Oakes) standard errors would need
#: gigabytes (quadratic in the items): Rasch SEs then come from each item's own information.
FULL_SE_MAX_ITEMS = 1000
#: The box the library keeps item parameters in (mirt's EM bounds).
DIFFICULTY_BOUND = 6.0
SLOPE_BOUNDS = (0.1, 5.0)
_AT_BOUND = 1e-3
#: EM settings (the library's defaults, 21 Gauss-Hermite points and a log-likelihood change of 1e-4,
#: stop the demo's PCM fit 0.25 log-likelihood units below the maximum of the exact marginal
#: likelihood, shifting every location by about 0.11 logit; 61 points and 1e-7 reach it to 0.001).
#: Above a few hundred items a posterior is narrower than the node spacing and a gap remains
#: (0.5 units at 871 items, from 3.4 with the defaults).
EM_SETTINGS = {"n_quadpts": 61, "tol": 1e-7, "max_iter": 5000}

ITEM_COLUMNS = ["item_id", "type", "n_examinees", "n_right", "p", "status", "informative", "difficulty",
                "difficulty_se", "discrimination", "discrimination_se", "at_bound", "family", "n_levels",
                "levels_observed", "thresholds", "threshold_se", "threshold_levels", "disordered"]
ABILITY_COLUMNS = ["examinee", "model", "condition", "n_items", "n_right", "ability", "ability_se",
                   "ci_low", "ci_high"]


@dataclass
class ResponseMatrix:
    """Examinees x items, 1 right / 0 wrong / NaN not answered, with the keys of rows and columns."""

    x: np.ndarray
    examinees: pd.DataFrame   # model, condition, examinee (label)
    items: pd.DataFrame       # item_id, type


@dataclass
class IrtFit:
    """A fitted model: one row per item and per examinee, plus what the fit rests on."""

    model: str
    items: pd.DataFrame
    abilities: pd.DataFrame
    latent_sd: float
    n_examinees: int
    n_items_fitted: int
    se_method: str
    converged: bool
    iterations: int
    log_likelihood: float
    notes: list[str] = field(default_factory=list)
    #: how scores became responses: the 0.5 rule, or the score levels of each format present
    rule: str = RULE
    level_rules: dict[str, str] = field(default_factory=dict)
    calibration: Calibration | None = None

    def panel(self) -> dict[str, object]:
        """What every view built on this fit is labelled with."""
        return {"irt_model": self.model, "n_examinees": self.n_examinees, "n_items_fitted": self.n_items_fitted,
                "latent_sd": self.latent_sd, "se_method": self.se_method, "rule": self.rule,
                "level_rules": dict(self.level_rules),
                "exploratory": self.n_examinees < EXPLORATORY_BELOW,
                "converged": self.converged, "notes": list(self.notes)}


@dataclass
class Calibration:
    """What item and person fit need from a fit: the library's fitted model and the responses it saw.

    ``codes``: category codes (examinees who answered anything x informative items, -1 = not
    answered), in the library's column order; ``rows``: those examinees' rows in `IrtFit.abilities`;
    ``item_ids``: the item of each column; ``slope`` and ``steps`` in the parameterisation
    of `analysis.irt_levels` (one step, the difficulty, for a right/wrong item); ``levels``: the
    observed score level each code stands for, per item.
    """

    result: object
    codes: np.ndarray
    rows: np.ndarray
    item_ids: np.ndarray
    slope: np.ndarray
    steps: np.ndarray
    levels: list[np.ndarray]


def examinee_labels(models: pd.Series, conditions: pd.Series) -> pd.Series:
    """'Model' when one condition is present, else 'Model · condition' (examinees are pairs)."""
    if conditions.nunique() <= 1:
        return models.astype(str).reset_index(drop=True)
    return (models.astype(str) + " · " + conditions.astype(str)).reset_index(drop=True)


def response_matrix(df: pd.DataFrame, values: Callable[[pd.DataFrame], np.ndarray] | None = None) -> ResponseMatrix:
    """The examinees x items matrix of a long score frame (examinee = model x condition).

    Each cell is right (1) or wrong (0) by `RULE`, or ``values(frame)`` of its row when given
    (the partial-credit models put score levels there).
    """
    d, _ = prepare(df, ["model", "condition", "item_id", "type", "score"])
    e_codes, e_index = group_codes(d, ["model", "condition"])
    i_codes, i_index = pd.factorize(d["item_id"])
    x = np.full((len(e_index), len(i_index)), np.nan)
    x[e_codes, i_codes] = (values(d) if values is not None
                           else (d["score"].to_numpy(dtype=float) >= RIGHT_AT).astype(float))
    first = pd.Series(np.arange(len(d))).groupby(i_codes).first().to_numpy()
    items = pd.DataFrame({"item_id": np.asarray(i_index, dtype=object), "type": d["type"].to_numpy()[first]})
    order = {c: i for i, c in enumerate(CONDITIONS)}
    rank = e_index.assign(_m=e_index["model"].astype(str), _c=e_index["condition"].map(lambda c: order.get(c, 99)))
    keep = rank.sort_values(["_m", "_c"], kind="stable").index.to_numpy()
    e_index = e_index.iloc[keep].reset_index(drop=True)
    x = x[keep]
    e_index["examinee"] = examinee_labels(e_index["model"], e_index["condition"])
    return ResponseMatrix(x, e_index, items)


def _item_status(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(answered count, right count, status per item)."""
    answered = (~np.isnan(x)).sum(axis=0)
    right = np.nansum(x, axis=0)
    status = np.where(answered < 2, "too_few", np.where(right == answered, "all_right",
                      np.where(right == 0, "all_wrong", "fitted")))
    return answered, right, status


def _library_fit(x: np.ndarray, model: str, full_se: bool):
    """Fit with mirt (warnings logged, not printed); returns the library's FitResult."""
    import mirt
    from mirt.estimation.em import EMEstimator
    from mirt.estimation.latent_density import GaussianDensity
    from mirt.models.dichotomous import OneParameterLogistic

    responses = np.where(np.isnan(x), -1, x).astype(int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if model == IRT_RASCH:
            estimator = EMEstimator(latent_density=GaussianDensity(estimate_cov=True), **EM_SETTINGS,
                                    compute_standard_errors=full_se, se_method="oakes" if full_se else "auto")
            result = estimator.fit(OneParameterLogistic(n_items=x.shape[1]), responses)
        else:
            result = mirt.fit_mirt(responses, model="2PL", compute_standard_errors=full_se, **EM_SETTINGS,
                                   se_method="oakes" if full_se else "auto")
        variance = result.latent_covariance
        sd = float(np.sqrt(variance[0, 0])) if variance is not None else 1.0
    for w in caught:
        logger.info("mirt (%s, %d x %d): %s", model, x.shape[0], x.shape[1], w.message)
    return result, sd


def eap_abilities(x: np.ndarray, difficulty: np.ndarray, slope: np.ndarray, sd: float,
                  n_coarse: int = 161, n_fine: int = 81, chunk: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """EAP abilities and posterior SDs under N(0, sd^2), on a grid fitted to each examinee.

    Why not the library's EAP: with hundreds of items a posterior is far narrower than the
    spacing of a fixed Gauss-Hermite grid, and the library's posterior SDs then swing between
    0.02 and 0.3 for examinees of the same test. Here a coarse grid over the prior locates each
    posterior, and a fine grid over mean ± 8 SD of it (never narrower than one coarse step)
    computes the mean and SD. The log-likelihood is sum(log sigma(z)) over answered items minus
    sum(z) over wrong ones (z = a (theta - b)), so one logistic term per cell, examinees in chunks.
    """
    answered = (~np.isnan(x)).astype(float)
    wrong = (~np.isnan(x) & (x == 0)).astype(float)
    nodes = np.linspace(-8.0, 8.0, n_coarse) * sd
    step = nodes[1] - nodes[0]
    wrong_a, wrong_ab = wrong @ slope, wrong @ (slope * difficulty)      # the linear part, per examinee

    def moments(grid: np.ndarray, loglik: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        loglik = loglik - 0.5 * (grid / sd) ** 2
        loglik -= loglik.max(axis=-1, keepdims=True)
        w = np.exp(loglik)
        w /= w.sum(axis=-1, keepdims=True)
        mean = (w * grid).sum(axis=-1)
        return mean, np.sqrt(np.maximum((w * (grid - mean[..., None]) ** 2).sum(axis=-1), 0.0))

    z = slope[:, None] * (nodes[None, :] - difficulty[:, None])            # items x nodes
    coarse = answered @ -np.logaddexp(0.0, -z) - (wrong_a[:, None] * nodes[None, :] - wrong_ab[:, None])
    mean, spread = moments(nodes[None, :], coarse)
    unit = np.linspace(-8.0, 8.0, n_fine)
    theta = np.empty(len(x))
    theta_sd = np.empty(len(x))
    for lo in range(0, len(x), chunk):
        hi = min(lo + chunk, len(x))
        grid = mean[lo:hi, None] + np.maximum(spread[lo:hi], step)[:, None] * unit[None, :]   # examinees x nodes
        z = slope[None, None, :] * (grid[:, :, None] - difficulty[None, None, :])             # examinees x nodes x items
        log_sigma = np.einsum("eki,ei->ek", -np.logaddexp(0.0, -z), answered[lo:hi])
        loglik = log_sigma - (wrong_a[lo:hi, None] * grid - wrong_ab[lo:hi, None])
        theta[lo:hi], theta_sd[lo:hi] = moments(grid, loglik)
    return theta, theta_sd


def _item_information_se(x: np.ndarray, difficulty: np.ndarray, sd: float, n_nodes: int = 61) -> np.ndarray:
    """Rasch difficulty SEs from each item's own observed information (Louis' formula, per item).

    -d2 log L / d b_i^2 = sum over examinees who answered i of E[P(1-P)] - Var[P] under the
    examinee's posterior. Ignoring the covariances with the other parameters makes these SEs
    slightly small; with many items (the only case they are used) the difference is negligible.
    """
    nodes = np.linspace(-6.0, 6.0, n_nodes) * sd
    log_prior = -0.5 * (nodes / sd) ** 2
    p = expit(nodes[None, :] - difficulty[:, None])                       # items x nodes
    answered = ~np.isnan(x)
    right = np.where(answered, x, 0.0)
    wrong = answered & (x == 0)
    loglik = right @ np.log(p) + wrong.astype(float) @ np.log1p(-p) + log_prior[None, :]
    loglik -= loglik.max(axis=1, keepdims=True)
    post = np.exp(loglik)
    post /= post.sum(axis=1, keepdims=True)                               # examinees x nodes
    e_pq = post @ (p * (1.0 - p)).T                                       # examinees x items
    e_p = post @ p.T
    e_p2 = post @ (p * p).T
    info = np.where(answered, e_pq - (e_p2 - e_p * e_p), 0.0).sum(axis=0)
    with np.errstate(divide="ignore"):
        return np.where(info > 0, 1.0 / np.sqrt(info), np.nan)


def fit_irt(df: pd.DataFrame, model: str = IRT_RASCH) -> IrtFit:
    """Fit a Rasch or 2PL model to the long score frame's examinees (model x condition rows).

    Raises UserError when the selection leaves fewer than `MIN_EXAMINEES` examinees or
    `MIN_ITEMS` informative items.
    """
    if model not in DICHOTOMOUS:
        raise UserError(f"unknown right/wrong IRT model {model!r}; use one of {', '.join(DICHOTOMOUS)}")
    rm = response_matrix(df)
    answered, right, status = _item_status(rm.x)
    fitted = status == "fitted"
    x = rm.x[:, fitted]
    has_any = (~np.isnan(x)).any(axis=1)
    n_ex, n_items = int(has_any.sum()), int(fitted.sum())
    if n_ex < MIN_EXAMINEES or n_items < MIN_ITEMS:
        raise UserError(f"IRT needs at least {MIN_EXAMINEES} examinees and {MIN_ITEMS} items that some examinees "
                        f"get right and others wrong; this selection has {n_ex} examinees and {n_items} such items")
    full_se = n_items <= FULL_SE_MAX_ITEMS
    result, sd = _library_fit(x[has_any], model, full_se)
    difficulty = np.ravel(np.asarray(result.model.difficulty, dtype=float))
    slope = np.ravel(np.asarray(result.model.discrimination, dtype=float))
    notes = []
    if full_se:
        ses = result.standard_errors or {}
        d_se = np.ravel(np.asarray(ses.get("difficulty", np.full(n_items, np.nan)), dtype=float))
        a_se = np.ravel(np.asarray(ses.get("discrimination", np.full(n_items, np.nan)), dtype=float))
        se_method = "full observed information (Oakes)"
    elif model == IRT_RASCH:
        d_se = _item_information_se(x[has_any], difficulty, sd)
        a_se = np.full(n_items, np.nan)
        se_method = f"each item's own observed information (more than {FULL_SE_MAX_ITEMS} items)"
    else:
        d_se = a_se = np.full(n_items, np.nan)
        se_method = f"none (more than {FULL_SE_MAX_ITEMS} items)"
        notes.append(f"2PL standard errors are not computed above {FULL_SE_MAX_ITEMS} items")
    if model == IRT_RASCH:
        slope, a_se = np.ones(n_items), np.full(n_items, np.nan)
    at_bound = np.abs(np.abs(difficulty) - DIFFICULTY_BOUND) < _AT_BOUND
    if model == IRT_2PL:
        at_bound |= (np.abs(slope - SLOPE_BOUNDS[0]) < _AT_BOUND) | (np.abs(slope - SLOPE_BOUNDS[1]) < _AT_BOUND)
    if at_bound.any():
        notes.append(f"{int(at_bound.sum())} item estimate(s) at the library's bounds (difficulty ±{DIFFICULTY_BOUND:g}"
                     + (f", slope {SLOPE_BOUNDS[0]:g}-{SLOPE_BOUNDS[1]:g}" if model == IRT_2PL else "") + ")")
    converged = bool(getattr(result, "converged", True))
    if not converged:
        notes.append("the EM algorithm stopped before converging")
        logger.warning("IRT %s fit on %d x %d did not converge", model, n_ex, n_items)

    items = rm.items.assign(n_examinees=answered.astype(int), n_right=right.astype(int),
                            p=np.where(answered > 0, right / np.maximum(answered, 1), np.nan),
                            status=status, informative=fitted)
    for col in ("difficulty", "difficulty_se", "discrimination", "discrimination_se"):
        items[col] = np.nan
    items["at_bound"] = False
    idx = np.flatnonzero(fitted)
    items.loc[idx, "difficulty"] = difficulty
    items.loc[idx, "difficulty_se"] = d_se
    items.loc[idx, "discrimination"] = slope
    items.loc[idx, "discrimination_se"] = a_se if model == IRT_2PL else np.nan
    items.loc[idx, "at_bound"] = at_bound
    items["family"] = np.where(fitted, "Rasch" if model == IRT_RASCH else "2PL", None)
    items["n_levels"] = 2
    items["levels_observed"] = ((right > 0).astype(int) + (right < answered).astype(int))
    items["thresholds"] = pd.Series([[float(b)] if f else [] for b, f in zip(items["difficulty"], fitted)],
                                    index=items.index, dtype=object)
    items["threshold_se"] = pd.Series([[float(v)] if f else [] for v, f in zip(items["difficulty_se"], fitted)],
                                      index=items.index, dtype=object)
    items["threshold_levels"] = pd.Series([["0-1"] if f else [] for f in fitted], index=items.index, dtype=object)
    items["disordered"] = False
    codes = np.where(np.isnan(x[has_any]), -1, x[has_any]).astype(int)
    calibration = Calibration(result=result, codes=codes, rows=np.flatnonzero(has_any),
                              item_ids=items["item_id"].to_numpy(dtype=object)[idx],
                              slope=slope, steps=difficulty[:, None], levels=[np.array([0, 1])] * n_items)
    items = sort_frame(items[ITEM_COLUMNS], ["type"])

    theta = np.full(len(rm.examinees), np.nan)
    theta_se = np.full(len(rm.examinees), np.nan)
    theta[has_any], theta_se[has_any] = eap_abilities(x[has_any], difficulty, slope, sd)
    abilities = rm.examinees[["examinee", "model", "condition"]].assign(
        n_items=(~np.isnan(rm.x)).sum(axis=1).astype(int), n_right=np.nansum(rm.x, axis=1).astype(int),
        ability=theta, ability_se=theta_se, ci_low=theta - Z95 * theta_se, ci_high=theta + Z95 * theta_se)
    return IrtFit(model=model, items=items.reset_index(drop=True), abilities=abilities[ABILITY_COLUMNS],
                  latent_sd=sd, n_examinees=n_ex, n_items_fitted=n_items, se_method=se_method,
                  converged=converged, iterations=int(getattr(result, "n_iterations", 0) or 0),
                  log_likelihood=float(getattr(result, "log_likelihood", np.nan)), notes=notes,
                  calibration=calibration)


def panel_warning(n_examinees: int, model: str | None = None) -> str:
    """What a panel of this size allows, in one sentence (pages and captions show it).

    ``model``: the partial-credit models add what their thresholds and (GPCM) slopes allow.
    """
    if n_examinees < EXPLORATORY_BELOW:
        text = (f"{n_examinees} examinees: difficulties and abilities are estimable (with wide intervals), but "
                f"discrimination (2PL and GPCM slopes, r_pb) is exploratory below {EXPLORATORY_BELOW} examinees: at "
                "this size a simulation recovers true slopes only at r ~ 0.3-0.4.")
        if model in IRT_POLYTOMOUS:
            text += (" A threshold between score levels that few examinees separate rests on those few: read its "
                     "standard error.")
        return text
    return (f"{n_examinees} examinees: enough for Rasch and PCM difficulties, thresholds and abilities; 2PL and GPCM "
            "discrimination is estimable, with the standard errors shown.")


__all__ = ["ABILITY_COLUMNS", "Calibration", "EM_SETTINGS", "DICHOTOMOUS", "EXPLORATORY_BELOW", "FULL_SE_MAX_ITEMS", "ITEM_COLUMNS", "IrtFit", "RIGHT_AT", "RULE",
           "ResponseMatrix", "eap_abilities", "examinee_labels", "fit_irt", "panel_warning", "response_matrix"]

"""Logistic regression of correctness on format, image, language and model.

`correct ~ type + has_image + language + model` with treatment coding. The design depends on the
row only through its cell (type, has_image, language, model), so the fit runs on binomial counts
per cell: identical estimates and ordinary standard errors to the row-level Logit, at a cost that
does not grow with the number of rows. Item-clustered robust errors are the same sandwich
statsmodels computes for a row-level fit with cov_type="cluster" (with its small-sample
correction G/(G-1) * (N-1)/(N-K)); the per-item score sums are built with one sparse product
instead of a rows x predictors matrix, so 1 million rows stay cheap.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import sparse, stats
from scipy.special import expit
from threadpoolctl import threadpool_limits

from ..errors import UserError
from ..vocab import DEFAULT_CONDITION, MCQ_TYPE, format_names
from ._frame import filter_conditions, finish, group_codes, prepare

COLUMNS = ["predictor", "beta", "se", "z", "p", "odds_ratio", "ci_low", "ci_high"]
_CELL = ["type", "has_image", "language", "model"]


def _levels(values: pd.Series, reference, order: tuple = ()) -> list:
    """Levels with the reference first; `order` gives the preferred order of the others."""
    present = list(pd.unique(values))
    ranked = [v for v in order if v in present] + sorted(
        (v for v in present if v not in order), key=str)
    if reference is not None and reference not in present:
        raise UserError(f"reference level {reference!r} is not in the data "
                        f"(present: {', '.join(map(str, ranked))})")
    ref = reference if reference is not None else ranked[0]
    return [ref] + [v for v in ranked if v != ref]


def _design(cells: pd.DataFrame, reference: dict) -> tuple[np.ndarray, list[str]]:
    """Treatment-coded design matrix for the cells; single-level factors are left out."""
    cols = [np.ones(len(cells))]
    names = ["intercept"]
    type_ref = reference.get("type")
    if type_ref is None and MCQ_TYPE in set(cells["type"]):
        type_ref = MCQ_TYPE
    lang_ref = reference.get("language")
    if lang_ref is None and "en" in set(cells["language"]):
        lang_ref = "en"
    specs = [("type", type_ref, format_names()), ("has_image", reference.get("has_image", False), ()),
             ("language", lang_ref, ()), ("model", reference.get("model"), ())]
    for column, ref, order in specs:
        if column == "has_image" and ref not in set(cells["has_image"]):
            ref = None
        levels = _levels(cells[column], ref, order)
        for level in levels[1:]:
            cols.append((cells[column] == level).to_numpy(dtype=float))
            names.append(f"{column}:{level}")
    return np.column_stack(cols), names


def _independent_columns(x: np.ndarray) -> np.ndarray:
    """Indices of columns that add rank, taken left to right (drops aliased terms).

    In an unpivoted QR, |R_jj| is the norm of column j's part orthogonal to all earlier columns,
    so a column is aliased exactly when |R_jj| is negligible next to the column's own norm.
    """
    r = np.linalg.qr(x, mode="r")
    norms = np.linalg.norm(x, axis=0)
    return np.flatnonzero(np.abs(np.diag(r)) > 1e-9 * np.maximum(norms, 1e-300))


def logistic_regression(df: pd.DataFrame, condition: str | None = DEFAULT_CONDITION,
                        threshold: float = 0.5, reference: dict | None = None,
                        cluster: str | None = None) -> pd.DataFrame:
    """Fit `correct ~ type + has_image + language + model` for one condition (None = all rows).

    correct = score >= threshold. References: multiple_choice_radio, has_image False, language
    en, and the alphabetically first model, each overridable via `reference` (keys type,
    has_image, language, model). A factor with one level in the data (single model, one
    language, no image items) is left out; aliased terms are dropped and listed in
    attrs["dropped_terms"]. cluster=None: ordinary (published) errors; cluster="item":
    item-clustered robust errors. Columns: predictor, beta, se, z, p, odds_ratio, ci_low,
    ci_high (95% Wald, on the odds-ratio scale). attrs: n_obs, n_items, n_models, cluster,
    n_dropped, dropped_terms.
    """
    # The matrices here are small (cells x predictors); multi-threaded BLAS only adds contention,
    # which on a busy 2-core machine made a 0.7 s fit take 16 s.
    with threadpool_limits(limits=1, user_api="blas"):
        return _logistic_regression(df, condition, threshold, reference, cluster)


def _logistic_regression(df: pd.DataFrame, condition: str | None, threshold: float,
                         reference: dict | None, cluster: str | None) -> pd.DataFrame:
    """The fit behind `logistic_regression` (see there)."""
    if cluster not in (None, "item"):
        raise UserError(f"cluster must be None or 'item', not {cluster!r}")
    d, dropped = prepare(df)
    if condition is not None:
        d = filter_conditions(d, condition)
    if d.empty:
        raise UserError(f"no scored rows for condition {condition!r}")
    reference = dict(reference or {})
    y = (d["score"].to_numpy() >= threshold).astype(float)
    cell_codes, cells = group_codes(d, _CELL)
    cells["has_image"] = cells["has_image"].astype(bool)
    trials = np.bincount(cell_codes, minlength=len(cells)).astype(float)
    successes = np.bincount(cell_codes, weights=y, minlength=len(cells))
    x_full, names_full = _design(cells, reference)
    keep = _independent_columns(x_full)
    x = x_full[:, keep]
    names = [names_full[j] for j in keep]
    aliased = [n for j, n in enumerate(names_full) if j not in set(keep)]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # perfect prediction in tiny frames: estimates still shown
        fit = sm.GLM(np.column_stack([successes, trials - successes]), x,
                     family=sm.families.Binomial()).fit(tol=1e-12, maxiter=200)
    beta = np.asarray(fit.params)
    cov = np.asarray(fit.cov_params())
    n_obs = len(d)
    item_codes, item_index = pd.factorize(d["item_id"])
    if cluster == "item":
        resid = y - expit(x @ beta)[cell_codes]
        per_item = sparse.coo_matrix((resid, (item_codes, cell_codes)),
                                     shape=(len(item_index), len(cells))).tocsr()
        scores = np.asarray(per_item @ x)
        groups, k = len(item_index), x.shape[1]
        if groups < 2:
            raise UserError("item-clustered errors need at least 2 items")
        meat = scores.T @ scores
        correction = groups / (groups - 1) * (n_obs - 1) / (n_obs - k)
        cov = correction * cov @ meat @ cov
    se = np.sqrt(np.diag(cov))
    q = stats.norm.ppf(0.975)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # separation: inf is honest
        z = beta / se
        out = pd.DataFrame({"predictor": names, "beta": beta, "se": se, "z": z,
                            "p": 2 * stats.norm.sf(np.abs(z)), "odds_ratio": np.exp(beta),
                            "ci_low": np.exp(beta - q * se), "ci_high": np.exp(beta + q * se)})
    return finish(out, dropped, n_obs=n_obs, n_items=len(item_index),
                  n_models=int(d["model"].nunique()), cluster=cluster, condition=condition,
                  dropped_terms=aliased)

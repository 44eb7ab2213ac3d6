"""Logistic regression of correctness on format, image, language and model.

`correct ~ type + has_image + language + model` with treatment coding. Every coefficient is an
odds ratio against a reference level, so the references are a choice the caller makes and the
output names (`regression_references` applies the documented defaults: the published levels
when the data have them, else the rules listed there). The design depends on the
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
from ..vocab import (
    DEFAULT_CONDITION,
    MCQ_TYPE,
    PUBLISHED_REFERENCE,
    REFERENCE_FACTORS,
    WITH_IMAGE,
    WITHOUT_IMAGE,
    format_names,
    format_rank,
)
from ._frame import filter_conditions, finish, group_codes, prepare

COLUMNS = ["predictor", "beta", "se", "z", "p", "odds_ratio", "ci_low", "ci_high", "factor", "reference",
           "reference_rule"]
_CELL = ["type", "has_image", "language", "model"]


_DEFAULT_RULE = "default level"

#: Why a reference level was used (the `reference_rule` column and the captions).
RULE_CHOSEN = "chosen by the user"
RULE_PUBLISHED = "published reference"
RULE_MEDIAN_MODEL = "median-ability model; the data lack the published reference model"
RULE_FIRST_FORMAT = "first format in published order; the data lack single-answer multiple choice"
RULE_FIRST_LANGUAGE = "first language alphabetically; the data lack English items"
RULE_ONLY_IMAGE = "image items only in the data"


def median_ability_model(df: pd.DataFrame, threshold: float = 0.5) -> str:
    """The model whose share of correct answers (score >= threshold) is the median of the models.

    With an even number of models the lower of the two middle ones; ties go to the name that
    sorts first. Why this rule for datasets without the published reference model: the odds
    ratios then read as "better or worse than a typical model in this dataset", and the
    reference is neither an outlier (the alphabetically first model may be the weakest) nor
    dependent on how models happen to be named.
    """
    d, _ = prepare(df, ["model", "score"])
    if d.empty:
        raise UserError("no scored rows to choose a reference model from")
    share = (d["score"] >= threshold).groupby(d["model"]).mean()
    ranked = sorted(share.items(), key=lambda kv: (kv[1], str(kv[0])))
    return ranked[(len(ranked) - 1) // 2][0]


def regression_references(df: pd.DataFrame, requested: dict | None = None,
                          published: dict | None = None, threshold: float = 0.5) -> tuple[dict, dict]:
    """(reference level per factor, the rule that chose each) for `logistic_regression`.

    ``requested`` (factor -> value, empty values ignored) wins: `type` a format, `has_image` an
    image filter name (`with`/`without`) or a bool, `language` a code, `model` a display name or
    a model key (column `model_key`). Otherwise the published references
    (``published``, default `vocab.PUBLISHED_REFERENCE`) are used where the data have them: the
    published model is looked up by key, so a dataset whose models come from the published
    registry gets the published reference model. Else: the first format in published order,
    image-free items, the first language alphabetically, and the median-ability model
    (`median_ability_model`). A requested level that is not in the data is a one-line error.
    """
    published = dict(PUBLISHED_REFERENCE if published is None else published)
    requested = {k: v for k, v in (requested or {}).items() if v not in (None, "")}
    unknown = sorted(set(requested) - set(REFERENCE_FACTORS))
    if unknown:
        raise UserError(f"unknown reference factor(s) {', '.join(unknown)}; use {', '.join(REFERENCE_FACTORS)}")
    d, _ = prepare(df)
    if d.empty:
        raise UserError("no scored rows for the regression")
    refs: dict = {}
    rules: dict = {}

    def present(column: str) -> list:
        return list(pd.unique(d[column]))

    def pick(column: str, what: str, order, fallback: str) -> None:
        """The user's level (checked against the data), else the published one when the data hold it,
        else the first level present in ``order`` (the rule says which, for the caption)."""
        levels = sorted(present(column), key=order)
        if column in requested:
            if requested[column] not in levels:
                raise UserError(f"reference {what} {requested[column]!r} is not in the data "
                                f"(present: {', '.join(map(str, levels))})")
            refs[column], rules[column] = requested[column], RULE_CHOSEN
        elif published.get(column) in levels:
            refs[column], rules[column] = published[column], RULE_PUBLISHED
        else:
            refs[column], rules[column] = levels[0], fallback

    pick("type", "format", lambda t: format_rank(str(t)), RULE_FIRST_FORMAT)
    # image
    images = set(d["has_image"].astype(bool))
    if "has_image" in requested:
        value = requested["has_image"]
        if isinstance(value, str):
            if value not in (WITH_IMAGE, WITHOUT_IMAGE):
                raise UserError(f"reference image must be {WITH_IMAGE!r} or {WITHOUT_IMAGE!r}, not {value!r}")
            value = value == WITH_IMAGE
        if bool(value) not in images:
            raise UserError(f"reference image {'with' if value else 'without'}: no such items in the data")
        refs["has_image"], rules["has_image"] = bool(value), RULE_CHOSEN
    elif bool(published.get("has_image", False)) in images:
        refs["has_image"], rules["has_image"] = bool(published.get("has_image", False)), RULE_PUBLISHED
    else:
        refs["has_image"], rules["has_image"] = True, RULE_ONLY_IMAGE
    pick("language", "language", str, RULE_FIRST_LANGUAGE)
    # model (display names in `model`; registry keys in `model_key` when the frame has them)
    names = present("model")
    keys = ({} if "model_key" not in df.columns else
            dict(df[["model_key", "model"]].drop_duplicates().itertuples(index=False, name=None)))
    if "model" in requested:
        wanted = requested["model"]
        name = wanted if wanted in names else keys.get(wanted)
        if name not in names:
            raise UserError(f"reference model {wanted!r} is not in the data (present: {', '.join(sorted(map(str, names)))})")
        refs["model"], rules["model"] = name, RULE_CHOSEN
    elif keys.get(published.get("model")) in names:
        refs["model"], rules["model"] = keys[published["model"]], RULE_PUBLISHED
    else:
        refs["model"], rules["model"] = median_ability_model(d, threshold), RULE_MEDIAN_MODEL
    return refs, rules


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


def _design(cells: pd.DataFrame, reference: dict) -> tuple[np.ndarray, list[str], dict]:
    """Treatment-coded design matrix for the cells; single-level factors are left out.

    Returns (matrix, column names, the reference level used per factor)."""
    cols = [np.ones(len(cells))]
    names = ["intercept"]
    type_ref = reference.get("type")
    if type_ref is None and MCQ_TYPE in set(cells["type"]):
        type_ref = MCQ_TYPE
    lang_ref = reference.get("language")
    if lang_ref is None and PUBLISHED_REFERENCE["language"] in set(cells["language"]):
        lang_ref = PUBLISHED_REFERENCE["language"]
    specs = [("type", type_ref, format_names()), ("has_image", reference.get("has_image", False), ()),
             ("language", lang_ref, ()), ("model", reference.get("model"), ())]
    used: dict = {}
    for column, ref, order in specs:
        if column == "has_image" and ref not in set(cells["has_image"]):
            if "has_image" in reference:
                raise UserError(f"reference level {ref!r} of has_image is not in the data")
            ref = None
        levels = _levels(cells[column], ref, order)
        used[column] = levels[0]
        for level in levels[1:]:
            cols.append((cells[column] == level).to_numpy(dtype=float))
            names.append(f"{column}:{level}")
    return np.column_stack(cols), names, used


def _independent_columns(x: np.ndarray) -> np.ndarray:
    """Indices of columns that add rank, taken left to right (drops aliased terms).

    In an unpivoted QR, |R_jj| is the norm of column j's part orthogonal to all earlier columns,
    so a column is aliased exactly when |R_jj| is negligible next to the column's own norm.
    """
    r = np.linalg.qr(x, mode="r")
    norms = np.linalg.norm(x, axis=0)
    return np.flatnonzero(np.abs(np.diag(r)) > 1e-9 * np.maximum(norms, 1e-300))


def _standard_errors(variance: np.ndarray, names: list[str]) -> tuple[np.ndarray, list[str]]:
    """(standard errors, the predictors whose standard error is not estimable).

    Why checked and not just rooted: under separation the clustered sandwich can round to a
    negative or undefined variance, and its square root would be a NaN with no reason attached
    (and a RuntimeWarning). Such a term gets no standard error, z, p or interval, and its name is
    listed so that a table or caption can say "not estimable" instead of showing a bare dash.
    """
    variance = np.asarray(variance, dtype=float)
    usable = np.isfinite(variance) & (variance >= 0)
    se = np.full(variance.shape, np.nan)
    se[usable] = np.sqrt(variance[usable])
    return se, [name for name, ok in zip(names, usable) if not ok]


def not_estimable_text(reg: pd.DataFrame) -> str:
    """The sentence that names the terms without a standard error (`se_not_estimable`), or ""."""
    from ..columns import term_label

    named = list(reg.attrs.get("se_not_estimable") or [])
    if not named:
        return ""
    return ("Standard error not estimable (its variance came out negative or undefined, as when a format, "
            "language or model is always right or always wrong): " + "; ".join(map(term_label, named))
            + ". No interval or p-value is shown for it.")


def logistic_regression(df: pd.DataFrame, condition: str | None = DEFAULT_CONDITION,
                        threshold: float = 0.5, reference: dict | None = None,
                        cluster: str | None = None, rules: dict | None = None) -> pd.DataFrame:
    """Fit `correct ~ type + has_image + language + model` for one condition (None = all rows).

    correct = score >= threshold. References from `reference` (keys type, has_image, language,
    model; `regression_references` computes the documented defaults); a factor missing there
    falls back to multiple_choice_radio / no image / en when present, else the first level in
    published format order or alphabetically. The reference model has no coefficient row. A
    factor with one level in the data (single model, one language, no image items) is left
    out; aliased terms are dropped and listed in attrs["dropped_terms"]. cluster=None: ordinary
    (published) errors; cluster="item": item-clustered robust errors. Columns: predictor, beta,
    se, z, p, odds_ratio, ci_low, ci_high (95% Wald, on the odds-ratio scale), factor, and the
    factor's `reference` level with the `reference_rule` that chose it (`rules`, by factor; the
    intercept row's reference lists every reference). attrs: n_obs, n_items, n_models,
    cluster, n_dropped, dropped_terms, reference (factor -> level), reference_rule, and
    se_not_estimable (the predictors whose variance came out negative or undefined: their se, z,
    p and interval are NaN).
    """
    # The matrices here are small (cells x predictors); multi-threaded BLAS only adds contention,
    # which on a busy 2-core machine made a 0.7 s fit take 16 s.
    with threadpool_limits(limits=1, user_api="blas"):
        return _logistic_regression(df, condition, threshold, reference, cluster, rules)


def _logistic_regression(df: pd.DataFrame, condition: str | None, threshold: float,
                         reference: dict | None, cluster: str | None, rules: dict | None) -> pd.DataFrame:
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
    x_full, names_full, used = _design(cells, reference)
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
    se, not_estimable = _standard_errors(np.diag(cov), names)
    q = stats.norm.ppf(0.975)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # separation: inf is honest
        z = beta / se
        out = pd.DataFrame({"predictor": names, "beta": beta, "se": se, "z": z,
                            "p": 2 * stats.norm.sf(np.abs(z)), "odds_ratio": np.exp(beta),
                            "ci_low": np.exp(beta - q * se), "ci_high": np.exp(beta + q * se)})
    rules = dict(rules or {})
    factors = [n.split(":", 1)[0] if ":" in n else "intercept" for n in names]
    summary = "; ".join(f"{f}={used[f]}" for f in REFERENCE_FACTORS if f in used)
    out["factor"] = factors
    out["reference"] = [summary if f == "intercept" else str(used[f]) for f in factors]
    out["reference_rule"] = ["" if f == "intercept" else rules.get(f, _DEFAULT_RULE) for f in factors]
    return finish(out, dropped, n_obs=n_obs, n_items=len(item_index),
                  n_models=int(d["model"].nunique()), cluster=cluster, condition=condition,
                  se_not_estimable=not_estimable,
                  dropped_terms=aliased, reference=used, reference_rule={f: rules.get(f, _DEFAULT_RULE)
                                                                         for f in used})

"""Partial-credit IRT: the partial credit model (PCM) and the generalised partial credit model (GPCM),
each mixed with Rasch or 2PL items for the formats judged as a whole.

Why: four of EduArt's formats give credit per blank, statement or error. Dichotomising those
scores at 0.5 (`analysis.irt`) throws away which parts an examinee got; these models read each
format's score levels (`formats.levels`) and measure abilities more precisely from the same
answers. The PCM keeps the Rasch family's fixed slopes, so its thresholds are on the Rasch
model's logit scale; the GPCM frees a slope per item and is exploratory on small panels.

Choices (stated on the pages):
- Responses: the score level of each answer by its format's rule (`level_rules` of the fit).
- A level nobody reached carries no step of its own: the observed levels of an item are numbered
  in order (so a step can join levels 1 and 3), and the thresholds say which levels they separate.
  An item every examinee left at one level is non-informative (``all_right`` at full credit,
  ``all_wrong`` at 0, ``all_same`` at a partial level).
- Thresholds are the step difficulties s_k: the ability at which level k and the level below are
  equally likely. An item's ``difficulty`` is its location, the mean of its thresholds (the
  difficulty itself for a right/wrong item); ``disordered`` marks thresholds that do not increase.
- Fitting: `mirt`'s mixed-format marginal maximum likelihood (EM), in two stages. With many items
  and few examinees EM moves item locations against the fixed latent mean very slowly and stops
  early, short of the maximum; the first stage frees the latent mean, along which EM then moves
  quickly (parameter expansion), and its estimates are shifted to the fixed scale (mean 0; the
  spread estimated for the PCM, 1 for the GPCM), where the second stage polishes them and
  computes the standard errors.
- Standard errors: the library's full observed information (Oakes) up to `FULL_SE_MAX_ITEMS`
  items; above, each PCM item's own observed information (`irt_levels.step_information`), and
  none for the GPCM. Abilities are EAP estimates (`irt_levels.eap_abilities`).
"""
from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..errors import UserError
from ..formats import level_rule, score_levels
from ..vocab import IRT_GPCM, IRT_PCM, IRT_POLYTOMOUS
from . import irt
from ._frame import sort_frame
from .intervals import Z95
from .irt_levels import eap_abilities, step_information

logger = logging.getLogger(__name__)

#: The library's family of each item: (one-step item, several steps), per model.
FAMILIES: dict[str, tuple[str, str]] = {IRT_PCM: ("1PL", "PCM"), IRT_GPCM: ("2PL", "GPCM")}
#: The words for a library family (a one-step item of the PCM is a Rasch item).
FAMILY_NAMES = {"1PL": "Rasch", "2PL": "2PL", "PCM": "PCM", "GPCM": "GPCM"}
_AT_BOUND = 1e-3
_LABEL = re.compile(r"^(?P<prefix>[^.]+)\.(?P<name>\w+)\[Item_(?P<item>\d+)(?:,(?P<col>\d+))?\]$")


def level_matrix(df: pd.DataFrame, parts: Mapping[str, int]) -> tuple[irt.ResponseMatrix, np.ndarray]:
    """(examinees x items matrix of score levels, each item's part count) of a long score frame.

    ``parts``: item_id -> how many parts earn credit (`formats.score_parts`; 1 when missing).
    """
    def values(d: pd.DataFrame) -> np.ndarray:
        item_codes, item_ids = pd.factorize(d["item_id"])
        k = np.array([int(parts.get(str(i), 1) or 1) for i in item_ids])[item_codes]
        type_codes, types = pd.factorize(d["type"])
        score = d["score"].to_numpy(dtype=float)
        out = np.empty(len(d))
        for code, name in enumerate(types):
            rows = np.flatnonzero(type_codes == code)
            out[rows] = score_levels(str(name), score[rows], k[rows])
        return out

    rm = irt.response_matrix(df, values)
    k = np.array([int(parts.get(str(i), 1) or 1) for i in rm.items["item_id"]])
    return rm, k


def _codes(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """(codes 0.. of the observed levels, -1 not answered; categories per item; observed levels per item)."""
    answered = ~np.isnan(x)
    top = int(np.nanmax(x)) + 1 if answered.any() else 1
    level = np.where(answered, x, 0).astype(int)
    present = np.zeros((x.shape[1], top), dtype=bool)
    rows, cols = np.nonzero(answered)
    present[cols, level[rows, cols]] = True
    rank = np.cumsum(present, axis=1) - 1
    codes = np.where(answered, rank[np.arange(x.shape[1])[None, :], level], -1)
    return codes, present.sum(axis=1), [np.flatnonzero(row) for row in present]


def _status(x: np.ndarray, parts: np.ndarray, n_cat: np.ndarray) -> np.ndarray:
    answered = (~np.isnan(x)).sum(axis=0)
    at = np.nanmax(np.where(np.isnan(x), -1, x), axis=0)
    return np.where(answered < 2, "too_few", np.where(n_cat > 1, "fitted", np.where(
        at >= parts, "all_right", np.where(at <= 0, "all_wrong", "all_same"))))


def _shifted(model, mean: float) -> dict[str, np.ndarray]:
    """Item parameters re-expressed for abilities theta - mean (every location moves by -mean)."""
    out = {}
    for prefix, (component, _) in zip(model.component_names, model.components):
        params = component.parameters
        if "difficulty" in params:
            out[f"{prefix}.difficulty"] = np.asarray(params["difficulty"], dtype=float) - mean
        if "steps" in params:
            steps = np.asarray(params["steps"], dtype=float)
            used = np.arange(steps.shape[1])[None, :] < (np.asarray(component.n_categories)[:, None] - 1)
            out[f"{prefix}.steps"] = np.where(used, steps - mean, 0.0)
        if "discrimination" in params and component.model_name in ("2PL", "GPCM"):
            out[f"{prefix}.discrimination"] = np.asarray(params["discrimination"], dtype=float)
    return out


def _build(n_cat: np.ndarray, model: str):
    from mirt.models.mixed_format import MixedItemModel

    one, many = FAMILIES[model]
    types = [one if c == 2 else many for c in n_cat]
    return MixedItemModel.from_itemtypes(types, n_categories=[int(c) for c in n_cat],
                                         item_names=[f"Item_{j}" for j in range(len(n_cat))])


def _library_fit(codes: np.ndarray, n_cat: np.ndarray, model: str, full_se: bool):
    """Two-stage fit (see the module docstring); returns (result, ability SD)."""
    from mirt.estimation.latent_density import GaussianDensity
    from mirt.estimation.mixed_format_em import MixedFormatEMEstimator

    free_slopes = model == IRT_GPCM
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = MixedFormatEMEstimator(
            latent_density=GaussianDensity(estimate_mean=True, estimate_cov=not free_slopes),
            compute_standard_errors=False, **irt.EM_SETTINGS).fit(_build(n_cat, model), codes)
        mean = float(np.ravel(first.latent_mean)[0]) if first.latent_mean is not None else 0.0
        variance = 1.0
        if not free_slopes and first.latent_covariance is not None:
            variance = float(first.latent_covariance[0, 0])
        second_model = _build(n_cat, model)
        second_model.set_parameters(**_shifted(first.model, mean))
        density = GaussianDensity(cov=np.array([[variance]]), estimate_cov=not free_slopes)
        result = MixedFormatEMEstimator(latent_density=density, compute_standard_errors=full_se, **irt.EM_SETTINGS,
                                        se_method="oakes" if full_se else "auto").fit(
            second_model, codes, start="model")
    for w in caught:
        logger.info("mirt (%s, %d x %d): %s", model, codes.shape[0], codes.shape[1], w.message)
    if free_slopes:
        return result, 1.0
    return result, float(np.sqrt(result.latent_covariance[0, 0]))


def _parameters(result, n_cat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(slope, steps, step SEs, slope SEs) per item in test order (steps NaN-padded)."""
    n, width = len(n_cat), int(max(n_cat.max() - 1, 1))
    slope, slope_se = np.ones(n), np.full(n, np.nan)
    steps, steps_se = np.full((n, width), np.nan), np.full((n, width), np.nan)
    errors = result.standard_errors or {}
    fitted = result.model
    for prefix, (component, positions) in zip(fitted.component_names, fitted.components):
        params = component.parameters
        positions = np.asarray(positions)
        slope[positions] = np.ravel(np.asarray(params["discrimination"], dtype=float))
        if component.model_name in ("2PL", "GPCM"):
            se = errors.get(f"{prefix}.discrimination")
            if se is not None:
                slope_se[positions] = np.ravel(np.asarray(se, dtype=float))
        name = "difficulty" if "difficulty" in params else "steps"
        values = np.asarray(params[name], dtype=float).reshape(len(positions), -1)
        se = errors.get(f"{prefix}.{name}")
        se = np.asarray(se, dtype=float).reshape(len(positions), -1) if se is not None else None
        for row, j in enumerate(positions):
            m = int(n_cat[j]) - 1
            steps[j, :m] = values[row, :m]
            if se is not None:
                steps_se[j, :m] = se[row, :m]
    return slope, steps, steps_se, slope_se


def _location_se(result, steps: np.ndarray, steps_se: np.ndarray) -> tuple[np.ndarray, bool]:
    """SE of each item's location (mean of its steps) from the library's covariance of the steps;
    (SEs, whether the covariances were used)."""
    m = (~np.isnan(steps)).sum(axis=1)
    fallback = np.sqrt(np.nansum(steps_se ** 2, axis=1)) / np.maximum(m, 1)
    fallback[np.isnan(steps_se).all(axis=1)] = np.nan
    vcov, labels = getattr(result, "vcov", None), getattr(result, "vcov_labels", None)
    if vcov is None or not labels:
        return fallback, False
    where: dict[int, list[int]] = {}
    for index, label in enumerate(labels):
        found = _LABEL.match(str(label))
        if found and found["name"] in ("steps", "difficulty"):
            where.setdefault(int(found["item"]), []).append(index)
    out = fallback.copy()
    vcov = np.asarray(vcov, dtype=float)
    for item, idx in where.items():
        if item < len(out) and len(idx) == m[item]:
            out[item] = np.sqrt(max(float(vcov[np.ix_(idx, idx)].sum()), 0.0)) / m[item]
    return out, True


def _louis_se(codes, slope, steps, grid, weights) -> tuple[np.ndarray, np.ndarray]:
    """Step and location SEs from each item's own observed information (long tests)."""
    steps_se = np.full(steps.shape, np.nan)
    location_se = np.full(len(slope), np.nan)
    for j, info in enumerate(step_information(codes, slope, steps, grid, weights)):
        try:
            cov = np.linalg.inv(info)
        except np.linalg.LinAlgError:
            continue
        m = len(info)
        steps_se[j, :m] = np.sqrt(np.maximum(np.diag(cov), 0.0))
        location_se[j] = np.sqrt(max(float(cov.sum()), 0.0)) / m
    return steps_se, location_se


def _standard_errors(model: str, result, codes, slope, steps, steps_se, slope_se, grid, weights, full_se: bool):
    """(step SEs, location SEs, slope SEs, SE method in words, notes) by the rule of the module docstring."""
    notes: list[str] = []
    if full_se:
        location_se, joint = _location_se(result, steps, steps_se)
        se_method = "full observed information (Oakes)"
        if np.isnan(steps_se).all():
            se_method = "none (the information matrix could not be inverted)"
            notes.append("standard errors could not be computed: the observed information is singular, so some "
                         "parameters are not identified by these responses (often a level reached by one examinee)")
        elif not joint:
            notes.append("location SEs ignore the covariance of an item's thresholds")
    elif model == IRT_PCM:
        steps_se, location_se = _louis_se(codes, slope, steps, grid, weights)
        se_method = f"each item's own observed information (more than {irt.FULL_SE_MAX_ITEMS} items)"
    else:
        location_se = np.full(len(slope), np.nan)
        se_method = f"none (more than {irt.FULL_SE_MAX_ITEMS} items)"
        notes.append(f"GPCM standard errors are not computed above {irt.FULL_SE_MAX_ITEMS} items")
    if model == IRT_PCM:
        slope_se = np.full(len(slope), np.nan)
    return steps_se, location_se, slope_se, se_method, notes


def _estimate_notes(model: str, n_cat, parts, levels, slope, steps) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(what the estimates need said, items at the library's bounds, items with disordered thresholds)."""
    label = FAMILY_NAMES[FAMILIES[model][1]]
    notes = []
    if (n_cat <= 2).all():
        notes.append(f"no item has more than two observed score levels here, so the {label} is the "
                     f"{'Rasch model' if model == IRT_PCM else '2PL'} on these data")
    merged = sum(1 for k, lv in zip(parts, levels) if len(lv) < k + 1)
    if merged and (parts > 1).any():
        notes.append(f"{merged} item(s) have score levels nobody reached: their thresholds join the levels on either "
                     "side (the threshold names say which)")
    at_bound = (np.abs(np.nan_to_num(steps)) >= irt.DIFFICULTY_BOUND - _AT_BOUND).any(axis=1)
    if model == IRT_GPCM:
        at_bound |= (slope <= irt.SLOPE_BOUNDS[0] + _AT_BOUND) | (slope >= irt.SLOPE_BOUNDS[1] - _AT_BOUND)
    if at_bound.any():
        notes.append(f"{int(at_bound.sum())} item estimate(s) at the library's bounds (threshold ±{irt.DIFFICULTY_BOUND:g}"
                     + (f", slope {irt.SLOPE_BOUNDS[0]:g}-{irt.SLOPE_BOUNDS[1]:g}" if model == IRT_GPCM else "") + ")")
    disordered = np.array([bool((np.diff(s[~np.isnan(s)]) < 0).any()) for s in steps])
    if disordered.any():
        notes.append(f"{int(disordered.sum())} item(s) have disordered thresholds (a higher level is easier to reach "
                     "than a lower one): a sign of levels that examinees rarely stop at")
    return notes, at_bound, disordered


def _item_table(rm: irt.ResponseMatrix, k, status, fitted, n_cat_all, n_cat, model, estimates: dict) -> pd.DataFrame:
    """`irt.ITEM_COLUMNS` for every item (estimates: slope, steps, steps_se, location_se, slope_se,
    at_bound, disordered, levels of the fitted items)."""
    x = rm.x
    answered = (~np.isnan(x)).sum(axis=0)
    idx = np.flatnonzero(fitted)
    steps = estimates["steps"]
    items = rm.items.assign(
        n_examinees=answered.astype(int), n_right=np.nansum(x >= k[None, :], axis=0).astype(int),
        p=np.where(answered > 0, np.nansum(x / k[None, :], axis=0) / np.maximum(answered, 1), np.nan),
        status=status, informative=fitted)
    for col in ("difficulty", "difficulty_se", "discrimination", "discrimination_se"):
        items[col] = np.nan
    items["at_bound"] = False
    items.loc[idx, "difficulty"] = np.nanmean(steps, axis=1)
    items.loc[idx, "difficulty_se"] = estimates["location_se"]
    items.loc[idx, "discrimination"] = estimates["slope"]
    items.loc[idx, "discrimination_se"] = estimates["slope_se"]
    items.loc[idx, "at_bound"] = estimates["at_bound"]
    one, many = FAMILIES[model]
    family = np.full(len(items), None, dtype=object)
    family[idx] = [FAMILY_NAMES[one if c == 2 else many] for c in n_cat]
    items["family"] = family
    items["n_levels"] = (k + 1).astype(int)
    items["levels_observed"] = n_cat_all.astype(int)
    thresholds, ses, names = ([[] for _ in range(len(items))] for _ in range(3))
    disordered = np.zeros(len(items), dtype=bool)
    for row, j in enumerate(idx):
        m = int(n_cat[row]) - 1
        thresholds[j] = [float(v) for v in steps[row, :m]]
        ses[j] = [float(v) for v in estimates["steps_se"][row, :m]]
        levels = estimates["levels"][row]
        names[j] = [f"{a}-{b}" for a, b in zip(levels[:-1], levels[1:])]
        disordered[j] = estimates["disordered"][row]
    items["thresholds"] = pd.Series(thresholds, index=items.index, dtype=object)
    items["threshold_se"] = pd.Series(ses, index=items.index, dtype=object)
    items["threshold_levels"] = pd.Series(names, index=items.index, dtype=object)
    items["disordered"] = disordered
    return items


def fit_polytomous(df: pd.DataFrame, model: str, parts: Mapping[str, int]) -> irt.IrtFit:
    """Fit the PCM or GPCM (mixed with Rasch / 2PL items) to the score levels of a long score frame.

    ``parts``: item_id -> part count (`formats.score_parts` of its record). Raises UserError when the
    selection leaves fewer than `irt.MIN_EXAMINEES` examinees or `irt.MIN_ITEMS` informative items,
    or when the library cannot fit the model to these responses (the reason is said).
    """
    if model not in IRT_POLYTOMOUS:
        raise UserError(f"unknown partial-credit IRT model {model!r}; use one of {', '.join(IRT_POLYTOMOUS)}")
    rm, k = level_matrix(df, parts)
    all_codes, n_cat_all, observed = _codes(rm.x)
    status = _status(rm.x, k, n_cat_all)
    fitted = status == "fitted"
    has_any = (~np.isnan(rm.x[:, fitted])).any(axis=1)
    n_ex, n_items = int(has_any.sum()), int(fitted.sum())
    if n_ex < irt.MIN_EXAMINEES or n_items < irt.MIN_ITEMS:
        raise UserError(f"IRT needs at least {irt.MIN_EXAMINEES} examinees and {irt.MIN_ITEMS} items whose examinees "
                        f"do not all reach the same score level; this selection has {n_ex} examinees and "
                        f"{n_items} such items")
    codes = all_codes[has_any][:, fitted]
    n_cat = n_cat_all[fitted]
    full_se = n_items <= irt.FULL_SE_MAX_ITEMS
    try:
        result, sd = _library_fit(codes, n_cat, model, full_se)
    except (ValueError, ArithmeticError, RuntimeError, np.linalg.LinAlgError) as exc:
        logger.warning("%s fit on %d x %d failed: %s", model, n_ex, n_items, exc)
        raise UserError(f"the {FAMILY_NAMES[FAMILIES[model][1]]} cannot be fitted to these {n_ex} examinees and "
                        f"{n_items} items (the fitting library: {str(exc).splitlines()[0][:200]})") from None
    slope, steps, steps_se, slope_se = _parameters(result, n_cat)
    theta, theta_se, grid, weights = eap_abilities(codes, slope, steps, sd)
    steps_se, location_se, slope_se, se_method, notes = _standard_errors(
        model, result, codes, slope, steps, steps_se, slope_se, grid, weights, full_se)
    levels = [observed[j] for j in np.flatnonzero(fitted)]
    more, at_bound, disordered = _estimate_notes(model, n_cat, k[fitted], levels, slope, steps)
    notes += more
    converged = bool(getattr(result, "converged", True))
    if not converged:
        notes.append("the EM algorithm stopped before converging")
    items = _item_table(rm, k, status, fitted, n_cat_all, n_cat, model, {
        "slope": slope, "steps": steps, "steps_se": steps_se, "location_se": location_se, "slope_se": slope_se,
        "at_bound": at_bound, "disordered": disordered, "levels": levels})
    calibration = irt.Calibration(result=result, codes=codes, rows=np.flatnonzero(has_any),
                                  item_ids=items["item_id"].to_numpy(dtype=object)[fitted],
                                  slope=slope, steps=steps, levels=levels)
    items = sort_frame(items[irt.ITEM_COLUMNS], ["type"])
    x = rm.x
    ability = np.full(len(rm.examinees), np.nan)
    ability_se = np.full(len(rm.examinees), np.nan)
    ability[has_any], ability_se[has_any] = theta, theta_se
    abilities = rm.examinees[["examinee", "model", "condition"]].assign(
        n_items=(~np.isnan(x)).sum(axis=1).astype(int), n_right=np.nansum(x >= k[None, :], axis=1).astype(int),
        ability=ability, ability_se=ability_se, ci_low=ability - Z95 * ability_se, ci_high=ability + Z95 * ability_se)
    rules = {t: level_rule(t) for t in (str(v) for v in pd.unique(rm.items["type"].astype(str)))}
    rule = "score levels by format: " + "; ".join(f"{t}: {r}" for t, r in rules.items())
    return irt.IrtFit(model=model, items=items.reset_index(drop=True), abilities=abilities[irt.ABILITY_COLUMNS],
                      latent_sd=sd, n_examinees=n_ex, n_items_fitted=n_items, se_method=se_method,
                      converged=converged, iterations=int(getattr(result, "n_iterations", 0) or 0),
                      log_likelihood=float(getattr(result, "log_likelihood", np.nan)), notes=notes,
                      rule=rule, level_rules=rules, calibration=calibration)


def fit_model(df: pd.DataFrame, model: str, parts: Mapping[str, int] | None = None) -> irt.IrtFit:
    """Any of the IRT models: Rasch / 2PL on right/wrong responses, PCM / GPCM on score levels."""
    if model in IRT_POLYTOMOUS:
        return fit_polytomous(df, model, parts or {})
    return irt.fit_irt(df, model)


def has_partial_credit(parts: Mapping[str, int]) -> bool:
    """Whether any item earns credit in parts (then the default model is the PCM)."""
    return any(int(v or 1) > 1 for v in parts.values())


__all__ = ["FAMILIES", "FAMILY_NAMES", "fit_model", "fit_polytomous", "has_partial_credit", "level_matrix"]

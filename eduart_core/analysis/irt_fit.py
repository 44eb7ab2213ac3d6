"""Item fit and person fit of a fitted IRT model: which items and which examinees the model does not describe.

Why item fit: an item whose answers follow ability far less than the model expects is often a
wrong key, an ambiguous image or a translation slip (the suspect-key queue takes it). Why person
fit: a language model that fails easy items and passes hard ones is usually failing to parse or
follow the format, refusing, or has seen some items before; its ability estimate then means
little, and the items that contribute most to its misfit show where to look.

Statistics (from `mirt`, on the fit's own category codes and EAP abilities):
- infit and outfit mean squares: the information-weighted and the plain mean of squared
  standardised residuals (x - E[x]) / sd(x); 1 when the model holds, above 1 for noise
  (underfit), below 1 for answers more predictable than the model expects (overfit); their
  standardised t (Wilson-Hilferty). The abilities come from the same answers, which shrinks the
  residuals: t values lean toward overfit, so underfit flags are conservative.
- Multiplicity: each item is tested twice (infit and outfit) and a fit tests every item, so a
  t above 2 somewhere is expected by chance alone (about one item in 40 per tail). Each item gets
  one p per direction (the one-sided normal p of its larger t for underfit, of its smaller t for
  overfit, doubled: Bonferroni over the two statistics), and the p of all the fit's items are
  Benjamini-Hochberg adjusted per direction (`FIT_FDR`), so that among the items flagged the
  expected share flagged by chance stays below 5% before an item is sent to a person as suspect.
- S-X2 (Orlando-Thissen): observed against expected level counts per total score, when the panel
  has at least `SX2_MIN_EXAMINEES` examinees.
- lz (Zh for partial credit): the standardised log-likelihood of an examinee's answers; strongly
  negative for an improbable pattern.
"""
from __future__ import annotations

import logging
import warnings

import numpy as np
import pandas as pd
from scipy.special import ndtr

from ..vocab import IRT_SHORT_NAMES
from .answer_quality import INVALID_WARN_ABOVE
from .irt import IrtFit
from .irt_levels import category_probabilities

logger = logging.getLogger(__name__)

#: The item misfit rule: a mean square beyond the range, and a fit t beyond chance across the fit's items.
MNSQ_RANGE = (0.7, 1.3)
#: The false discovery rate of the misfit flags (Benjamini-Hochberg, per direction, across the fit's items).
FIT_FDR = 0.05
UNDERFIT, OVERFIT = "underfit", "overfit"
FIT_P_RULE = ("p: the one-sided normal p of the item's larger t (underfit) or smaller t (overfit) of infit and outfit, "
              "doubled (Bonferroni over the two); q: p Benjamini-Hochberg adjusted across the fit's items")
ITEM_FIT_RULE = (f"underfit (misfit): outfit or infit mean square above {MNSQ_RANGE[1]} and underfit q below "
                 f"{FIT_FDR:g}; overfit: a mean square below {MNSQ_RANGE[0]} and overfit q below {FIT_FDR:g} (answers "
                 f"more predictable than the model expects: not a key problem). {FIT_P_RULE} (false discovery rate "
                 f"{FIT_FDR:.0%})")
#: S-X2 counts examinees per total score: fewer than this many leave most cells nearly empty.
SX2_MIN_EXAMINEES = 100
#: The person misfit rule.
LZ_LIMIT = -2.0
PERSON_FIT_RULE = (f"aberrant: lz below {LZ_LIMIT:g} (one-sided p < {ndtr(LZ_LIMIT):.3f}; no correction for the number "
                   "of examinees)")
#: An answer is unexpected for the model when its standardised residual is beyond this (both signs).
RESIDUAL_LIMIT = 2.0
RESIDUAL_RULE = (f"unexpected: the answer's standardised residual (level - expected level) / sd is beyond "
                 f"±{RESIDUAL_LIMIT:g} under the fitted model at the examinee's ability")
TOP_ITEMS = 3

ITEM_FIT_COLUMNS = ["item_id", "type", "family", "status", "n_examinees", "infit", "infit_t", "outfit", "outfit_t",
                    "underfit_p", "underfit_q", "overfit_p", "overfit_q", "s_x2", "s_x2_df", "s_x2_p", "flag",
                    "reason"]
PERSON_FIT_COLUMNS = ["examinee", "model", "condition", "n_items", "ability", "lz", "lz_p", "infit", "infit_t",
                      "outfit", "outfit_t", "aberrant", "top_items", "top_items_text"]
RESIDUAL_COLUMNS = ["examinee", "model", "condition", "item_id", "type", "level", "expected", "residual", "z",
                    "unexpected"]


def _theta(fit: IrtFit) -> np.ndarray:
    return fit.abilities["ability"].to_numpy(dtype=float)[fit.calibration.rows]


def _moments(fit: IrtFit) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P(code = k) examinees x items x categories, expected code, variance) at each examinee's ability."""
    cal = fit.calibration
    p = np.transpose(category_probabilities(_theta(fit), cal.slope, cal.steps), (1, 0, 2))
    k = np.arange(p.shape[2])
    mean = (p * k).sum(axis=2)
    return p, mean, np.maximum((p * k * k).sum(axis=2) - mean * mean, 1e-12)


def _library(call, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call(*args, **kwargs)
    for w in caught:
        logger.info("mirt fit statistics: %s", w.message)
    return out


def item_fit(fit: IrtFit) -> pd.DataFrame:
    """Per informative item: infit and outfit mean squares with t, their underfit and overfit p and Benjamini-Hochberg
    q (`FIT_P_RULE`), S-X2 where the panel allows, a flag by `ITEM_FIT_RULE` and its reason."""
    from mirt.diagnostics.itemfit import compute_itemfit

    cal = fit.calibration
    theta = _theta(fit)[:, None]
    wanted = ["infit", "outfit", "z_infit", "z_outfit"]
    stats = _library(compute_itemfit, cal.result, cal.codes, statistics=wanted, theta=theta)
    sx2: dict[str, np.ndarray] = {}
    complete = int((cal.codes >= 0).all(axis=1).sum())
    if complete >= SX2_MIN_EXAMINEES:
        try:
            sx2 = _library(compute_itemfit, cal.result, cal.codes, statistics=["S_X2"], na_rm=True)
        except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
            logger.info("S-X2 not computed: %s", exc)
    table = pd.DataFrame({
        "item_id": cal.item_ids, "infit": stats["infit"], "infit_t": stats["z_infit"], "outfit": stats["outfit"],
        "outfit_t": stats["z_outfit"], "s_x2": sx2.get("S_X2", np.nan), "s_x2_df": sx2.get("df", np.nan),
        "s_x2_p": sx2.get("p_value", np.nan)})
    t = table[["infit_t", "outfit_t"]].to_numpy(dtype=float)
    table["underfit_p"] = np.minimum(1.0, 2 * ndtr(-np.max(t, axis=1)))
    table["overfit_p"] = np.minimum(1.0, 2 * ndtr(np.min(t, axis=1)))
    table["underfit_q"] = bh_adjust(table["underfit_p"].to_numpy())
    table["overfit_q"] = bh_adjust(table["overfit_p"].to_numpy())
    under = (table[["infit", "outfit"]].max(axis=1) > MNSQ_RANGE[1]) & (table["underfit_q"] < FIT_FDR)
    over = ~under & (table[["infit", "outfit"]].min(axis=1) < MNSQ_RANGE[0]) & (table["overfit_q"] < FIT_FDR)
    table["flag"] = np.where(under, UNDERFIT, np.where(over, OVERFIT, None))
    n_tested = int(np.isfinite(table["underfit_p"]).sum())
    table["reason"] = [_item_reason(r, fit, n_tested) if isinstance(r.flag, str) else None
                       for r in table.itertuples()]
    meta = fit.items.set_index("item_id")[["type", "family", "status", "n_examinees"]]
    table = table.join(meta, on="item_id")
    out = table[ITEM_FIT_COLUMNS].reset_index(drop=True)
    out.attrs.update(fit_rule=ITEM_FIT_RULE, fdr=FIT_FDR, n_tested=n_tested, sx2=bool(sx2), sx2_examinees=complete,
                     sx2_note=(f"S-X2 on the {complete} examinees who answered every item" if sx2 else
                               f"S-X2 not computed: it needs at least {SX2_MIN_EXAMINEES} examinees who answered "
                               f"every item (this panel has {complete})"))
    return out


def bh_adjust(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p (q) of the finite entries of ``p`` (statsmodels' ``fdr_bh``); NaN stays NaN.

    Why a wrapper: an item whose t is not finite is not a test, so it neither counts in the family
    nor gets a q."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p, dtype=float)
    q = np.full(p.shape, np.nan)
    finite = np.isfinite(p)
    if finite.any():
        q[finite] = multipletests(p[finite], method="fdr_bh")[1]
    return q


def _item_reason(row, fit: IrtFit, n_tested: int) -> str:
    words = ("answers follow ability far less than the model expects (a wrong key, an ambiguous item or a "
             "translation slip?)" if row.flag == UNDERFIT else "answers are more predictable than the model expects")
    p, q = (row.underfit_p, row.underfit_q) if row.flag == UNDERFIT else (row.overfit_p, row.overfit_q)
    return (f"{row.flag}: outfit {row.outfit:.2f} (t {row.outfit_t:+.1f}), infit {row.infit:.2f} (t {row.infit_t:+.1f}); "
            f"p {p:.2g} (larger t, Bonferroni over infit and outfit), Benjamini-Hochberg q {q:.2g} across "
            f"{n_tested} items (below {FIT_FDR:g}) under the {IRT_SHORT_NAMES.get(fit.model, fit.model)} fit to "
            f"{fit.n_examinees} examinees: {words}")


def residuals(fit: IrtFit) -> pd.DataFrame:
    """One row per answered (examinee, informative item): level, expected level, residual and z, unexpected."""
    cal = fit.calibration
    p, mean, var = _moments(fit)
    answered = cal.codes >= 0
    z = np.where(answered, (cal.codes - mean) / np.sqrt(var), np.nan)
    width = max(len(lv) for lv in cal.levels)
    table = np.full((len(cal.levels), width), np.nan)
    for j, lv in enumerate(cal.levels):
        table[j, :len(lv)] = lv
    expected_level = np.einsum("eik,ik->ei", p, np.nan_to_num(table[:, : p.shape[2]]))
    level = np.where(answered, table[np.arange(len(cal.levels))[None, :], np.maximum(cal.codes, 0)], np.nan)
    rows, cols = np.nonzero(answered)
    people = fit.abilities.iloc[cal.rows].reset_index(drop=True)
    types = fit.items.set_index("item_id")["type"]
    out = pd.DataFrame({"examinee": people["examinee"].to_numpy()[rows], "model": people["model"].to_numpy()[rows],
                        "condition": people["condition"].to_numpy()[rows], "item_id": cal.item_ids[cols],
                        "level": level[rows, cols], "expected": expected_level[rows, cols],
                        "residual": (cal.codes - mean)[rows, cols], "z": z[rows, cols]})
    out["type"] = out["item_id"].map(types)
    out["unexpected"] = out["z"].abs() > RESIDUAL_LIMIT
    out = out[RESIDUAL_COLUMNS]
    out.attrs["residual_rule"] = RESIDUAL_RULE
    return out


def person_fit(fit: IrtFit, top: int = TOP_ITEMS) -> pd.DataFrame:
    """Per examinee: lz (Zh), infit and outfit with t, the aberrant flag, and the items that contribute most."""
    from mirt.diagnostics.personfit import compute_personfit

    cal = fit.calibration
    stats = _library(compute_personfit, cal.result.model, cal.codes, _theta(fit)[:, None],
                     statistics=["infit", "outfit", "z_infit", "z_outfit", "Zh"])
    people = fit.abilities.iloc[cal.rows].reset_index(drop=True)
    lz = np.asarray(stats["Zh"], dtype=float)
    table = people[["examinee", "model", "condition", "n_items", "ability"]].assign(
        lz=lz, lz_p=ndtr(lz), infit=stats["infit"], infit_t=stats["z_infit"], outfit=stats["outfit"],
        outfit_t=stats["z_outfit"])
    table["aberrant"] = np.isfinite(lz) & (lz < LZ_LIMIT)
    res = residuals(fit)
    res = res.assign(_sq=res["z"] ** 2).sort_values(["examinee", "_sq"], ascending=[True, False], kind="stable")
    worst = res.groupby("examinee", sort=False).head(top)
    ids = worst.groupby("examinee", sort=False)["item_id"].agg(list)
    text = worst.assign(_t=[f"{i}: level {lv:g}, expected {e:.2f} (z {z:+.1f})" for i, lv, e, z in
                            zip(worst["item_id"], worst["level"], worst["expected"], worst["z"])])
    text = text.groupby("examinee", sort=False)["_t"].agg("; ".join)
    table["top_items"] = table["examinee"].map(ids).map(lambda v: v if isinstance(v, list) else [])
    table["top_items_text"] = table["examinee"].map(text).fillna("")
    out = table[PERSON_FIT_COLUMNS].reset_index(drop=True)
    out.attrs.update(fit_rule=PERSON_FIT_RULE, residual_rule=RESIDUAL_RULE)
    return out


def invalid_counts(statuses: pd.DataFrame) -> pd.DataFrame:
    """Answers that name no option or could not be read, per examinee (model, condition).

    ``statuses``: `answer_quality.answer_statuses` rows with a ``condition`` column. Columns:
    model, condition, n_answers, n_refused, n_unparseable, n_not_an_option, n_invalid, invalid_rate.
    """
    from .answer_quality import NOT_AN_OPTION, REFUSED, UNPARSEABLE

    columns = ["model", "condition", "n_answers", "n_refused", "n_unparseable", "n_not_an_option", "n_invalid",
               "invalid_rate"]
    if statuses.empty:
        return pd.DataFrame(columns=columns)
    d = statuses.assign(**{name: statuses["status"] == status for name, status in
                           (("n_refused", REFUSED), ("n_unparseable", UNPARSEABLE), ("n_not_an_option", NOT_AN_OPTION))})
    out = d.groupby(["model", "condition"], sort=False, observed=True).agg(
        n_answers=("status", "size"), n_refused=("n_refused", "sum"), n_unparseable=("n_unparseable", "sum"),
        n_not_an_option=("n_not_an_option", "sum")).reset_index()
    out["n_invalid"] = out["n_refused"] + out["n_unparseable"] + out["n_not_an_option"]
    out["invalid_rate"] = out["n_invalid"] / out["n_answers"]
    out["invalid_warning"] = out["invalid_rate"] > INVALID_WARN_ABOVE
    return out[columns + ["invalid_warning"]]


__all__ = ["FIT_FDR", "FIT_P_RULE", "INVALID_WARN_ABOVE", "ITEM_FIT_RULE", "LZ_LIMIT", "MNSQ_RANGE", "OVERFIT",
           "PERSON_FIT_RULE", "RESIDUAL_LIMIT", "RESIDUAL_RULE", "SX2_MIN_EXAMINEES", "UNDERFIT", "bh_adjust",
           "invalid_counts", "item_fit", "person_fit", "residuals"]

"""Differential item functioning between the prompt conditions: which items does asking for a
justification hurt (or help) at equal ability?

Examinees are the model x condition pairs; the reference group is the answer-only condition, the
focal group the condition with a justification. Both methods match examinees on the total score
(the number of items right under the dichotomisation rule, right = score >= 0.5):

- Mantel-Haenszel: examinees are grouped into score strata (equal-count groups of the total,
  `strata` of them: with a small panel exact scores would leave one examinee per stratum). The
  common odds ratio alpha_MH (reference vs focal), the MH chi-square with continuity correction,
  and the ETS delta = -2.35 ln(alpha_MH) with its classes: A (negligible) when |delta| < 1 or the
  chi-square is not significant at .05; C (large) when |delta| >= 1.5 and |delta| is
  significantly above 1 (Robins-Breslow-Greenland SE); B otherwise. Negative delta: the item
  is harder for the focal (justification) group. A stratum with an empty cell keeps alpha
  defined through a 0.5 correction of every cell of every stratum (noted).
- Logistic regression (Swaminathan and Rogers; Zumbo's effect size): right ~ score, + condition
  (uniform DIF, 1 df likelihood-ratio test), + condition x score (non-uniform DIF, 1 df), with the
  change in Nagelkerke pseudo-R2 as the effect size and the Jodoin-Gierl classes (A < .035,
  B .035-.070, C >= .070, each only when the test is significant at .05). The models of every item
  share one design, so all items are fitted at once by vectorised Newton steps.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ..vocab import DEFAULT_CONDITION, DIF_LOGISTIC_NONUNIFORM, DIF_LOGISTIC_UNIFORM, DIF_MANTEL_HAENSZEL
from .irt import response_matrix

COLUMNS = ["item_id", "type", "method", "statistic", "df", "p", "effect", "effect_name", "dif_class", "direction",
           "n_reference", "n_focal", "p_reference", "p_focal", "note"]
DELTA_PER_LOG_ODDS = -2.35
ALPHA = 0.05
#: Jodoin & Gierl (2001) cut-offs on the change in Nagelkerke R2.
R2_CLASS_B, R2_CLASS_C = 0.035, 0.070
DEFAULT_STRATA = 5
#: Below this many examinees per group DIF tests have little power (a common rule of thumb).
SMALL_GROUP = 100


def panel_warning(n_reference: int, n_focal: int) -> str | None:
    """What a DIF analysis of this size can show, or None when the groups are large enough."""
    if min(n_reference, n_focal) >= SMALL_GROUP:
        return None
    return (f"{n_reference} + {n_focal} examinees: DIF tests have little power below {SMALL_GROUP} per group; a "
            "class A item is not shown to be free of DIF, and class C items deserve a look at the answers.")


def _strata(total: np.ndarray, n_strata: int) -> np.ndarray:
    """Equal-count groups of the total score (ties kept together)."""
    ranks = stats.rankdata(total, method="average")
    k = max(1, min(int(n_strata), len(np.unique(total))))
    return np.minimum((ranks - 0.5) / len(total) * k, k - 1).astype(int)


def mantel_haenszel(x: np.ndarray, focal: np.ndarray, strata: np.ndarray) -> pd.DataFrame:
    """MH statistics per item column of x (examinees x items, NaN missing) for a focal mask."""
    rows = []
    levels = np.unique(strata)
    for j in range(x.shape[1]):
        col = x[:, j]
        ok = ~np.isnan(col)
        a = np.array([np.sum((col == 1) & ~focal & ok & (strata == s)) for s in levels], dtype=float)
        b = np.array([np.sum((col == 0) & ~focal & ok & (strata == s)) for s in levels], dtype=float)
        c = np.array([np.sum((col == 1) & focal & ok & (strata == s)) for s in levels], dtype=float)
        dd = np.array([np.sum((col == 0) & focal & ok & (strata == s)) for s in levels], dtype=float)
        n = a + b + c + dd
        use = ((a + b) > 0) & ((c + dd) > 0) & ((a + c) > 0) & ((b + dd) > 0)  # informative strata
        note = ""
        if not use.any():
            rows.append({"statistic": np.nan, "p": np.nan, "alpha": np.nan, "delta": np.nan, "delta_se": np.nan,
                         "note": "no stratum holds both groups with both outcomes"})
            continue
        a, b, c, dd, n = a[use], b[use], c[use], dd[use], n[use]
        expected = (a + b) * (a + c) / n
        variance = (a + b) * (c + dd) * (a + c) * (b + dd) / (n * n * np.maximum(n - 1, 1))
        chi = (max(abs(a.sum() - expected.sum()) - 0.5, 0.0) ** 2) / variance.sum() if variance.sum() > 0 else np.nan
        p = float(stats.chi2.sf(chi, 1)) if not np.isnan(chi) else np.nan
        if (a * dd).sum() == 0 or (b * c).sum() == 0:
            a, b, c, dd = a + 0.5, b + 0.5, c + 0.5, dd + 0.5
            n = a + b + c + dd
            note = "empty cells: 0.5 added to every cell for alpha"
        r_, s_ = a * dd / n, b * c / n
        alpha = r_.sum() / s_.sum()
        # Robins, Breslow & Greenland (1986) variance of ln(alpha_MH)
        pp, qq = (a + dd) / n, (b + c) / n
        var_ln = ((pp * r_).sum() / (2 * r_.sum() ** 2) + ((pp * s_) + (qq * r_)).sum() / (2 * r_.sum() * s_.sum())
                  + (qq * s_).sum() / (2 * s_.sum() ** 2))
        rows.append({"statistic": chi, "p": p, "alpha": alpha, "delta": DELTA_PER_LOG_ODDS * np.log(alpha),
                     "delta_se": abs(DELTA_PER_LOG_ODDS) * np.sqrt(var_ln), "note": note})
    return pd.DataFrame(rows)


def ets_class(delta: float, delta_se: float, p: float) -> str | None:
    """ETS A/B/C from delta, its SE and the MH p-value."""
    if np.isnan(delta) or np.isnan(p):
        return None
    if abs(delta) < 1.0 or p >= ALPHA:
        return "A"
    if abs(delta) >= 1.5 and not np.isnan(delta_se) and (abs(delta) - 1.0) / delta_se > stats.norm.ppf(1 - ALPHA / 2):
        return "C"
    return "B"


def _logit_fits(design: np.ndarray, y: np.ndarray, ok: np.ndarray, iters: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """(Deviance, coefficients) of a logistic model with one design for every item column of y (vectorised Newton).

    A tiny ridge keeps separated items finite; their deviance then sits near its limit, which is
    what the likelihood-ratio test needs.
    """
    n_items, k = y.shape[1], design.shape[1]
    beta = np.zeros((n_items, k))
    w_ok = ok.astype(float)
    ridge = 1e-6 * np.eye(k)
    for _ in range(iters):
        eta = np.clip(design @ beta.T, -30, 30)                     # examinees x items
        p = 1.0 / (1.0 + np.exp(-eta))
        grad = ((y - p) * w_ok).T @ design - beta * 1e-6            # items x k
        w = p * (1.0 - p) * w_ok
        hess = np.einsum("ei,ek,el->ikl", w, design, design) + ridge
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        beta += step
        if np.abs(step).max() < 1e-8:
            break
    eta = np.clip(design @ beta.T, -30, 30)
    p = np.clip(1.0 / (1.0 + np.exp(-eta)), 1e-12, 1 - 1e-12)
    return -2.0 * np.where(ok, y * np.log(p) + (1 - y) * np.log1p(-p), 0.0).sum(axis=0), beta


def _nagelkerke(dev: np.ndarray, dev0: np.ndarray, n: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        cox = 1.0 - np.exp((dev - dev0) / n)
        top = 1.0 - np.exp(-dev0 / n)
        return np.where(top > 0, cox / top, np.nan)


def _r2_class(delta_r2: float, p: float) -> str | None:
    if np.isnan(delta_r2) or np.isnan(p):
        return None
    if p >= ALPHA or delta_r2 < R2_CLASS_B:
        return "A"
    return "C" if delta_r2 >= R2_CLASS_C else "B"


def _direction(favours_reference: float, focal: str | None) -> str | None:
    """Words for the sign of an effect (positive: the item favours the reference group)."""
    if np.isnan(favours_reference):
        return None
    if favours_reference > 0:
        return f"harder with {focal}"
    return f"easier with {focal}" if favours_reference < 0 else "no difference"


def _tested(direction: str | None, p: float) -> str | None:
    """The direction in words only when its test finds it (p < .05); else that the data do not tell."""
    if direction is None or np.isnan(p):
        return direction
    return direction if p < ALPHA else "no clear difference (p >= .05)"


def dif_analysis(df: pd.DataFrame, reference: str = DEFAULT_CONDITION, focal: str | None = None,
                 strata: int = DEFAULT_STRATA) -> pd.DataFrame:
    """Mantel-Haenszel and logistic-regression DIF per item between two conditions (long frame in).

    Three rows per item (methods `mantel_haenszel`, `logistic_uniform`, `logistic_nonuniform`);
    items every examinee got right or wrong have no DIF statistic (note says so). attrs:
    n_examinees, n_reference, n_focal, strata, reference, focal.
    """
    rm = response_matrix(df)
    conditions = [c for c in rm.examinees["condition"].unique()]
    if focal is None:
        others = [c for c in conditions if c != reference]
        focal = others[0] if others else None
    keep = rm.examinees["condition"].isin([reference, focal]).to_numpy()
    x, ex = rm.x[keep], rm.examinees[keep].reset_index(drop=True)
    is_focal = (ex["condition"] == focal).to_numpy()
    n_ref, n_foc = int((~is_focal).sum()), int(is_focal.sum())
    attrs = {"n_examinees": len(ex), "n_reference": n_ref, "n_focal": n_foc, "strata": strata,
             "reference": reference, "focal": focal, "warning": panel_warning(n_ref, n_foc)}
    if n_ref == 0 or n_foc == 0:
        out = pd.DataFrame(columns=COLUMNS)
        out.attrs.update(attrs)
        return out
    answered = ~np.isnan(x)
    total = np.nansum(x, axis=1) / np.maximum(answered.sum(axis=1), 1) * x.shape[1]  # items right, scaled if missing
    groups = _strata(total, strata)
    mh = mantel_haenszel(x, is_focal, groups)

    # logistic regression, one shared design per model
    z = (total - total.mean()) / (total.std() or 1.0)
    g = is_focal.astype(float)
    ones = np.ones(len(ex))
    y = np.where(answered, x, 0.0)
    fits = {name: _logit_fits(np.column_stack(cols), y, answered) for name, cols in
            {"null": [ones], "score": [ones, z], "uniform": [ones, z, g], "full": [ones, z, g, z * g]}.items()}
    dev = {name: fit[0] for name, fit in fits.items()}
    group_coef, slope_coef = fits["uniform"][1][:, 2], fits["full"][1][:, 3]
    n_obs = answered.sum(axis=0).astype(float)
    r2 = {k: _nagelkerke(v, dev["null"], n_obs) for k, v in dev.items()}

    p_ref = np.nanmean(np.where(answered[~is_focal], x[~is_focal], np.nan), axis=0)
    p_foc = np.nanmean(np.where(answered[is_focal], x[is_focal], np.nan), axis=0)
    right = np.nansum(x, axis=0)
    constant = (right == 0) | (right == answered.sum(axis=0))
    rows = []
    for j, (item_id, kind) in enumerate(zip(rm.items["item_id"], rm.items["type"])):
        base = {"item_id": str(item_id), "type": kind, "n_reference": int(answered[~is_focal, j].sum()),
                "n_focal": int(answered[is_focal, j].sum()), "p_reference": p_ref[j], "p_focal": p_foc[j]}
        if constant[j]:
            for method in (DIF_MANTEL_HAENSZEL, DIF_LOGISTIC_UNIFORM, DIF_LOGISTIC_NONUNIFORM):
                rows.append({**base, "method": method, "statistic": np.nan, "df": np.nan, "p": np.nan,
                             "effect": np.nan, "effect_name": None, "dif_class": None, "direction": None,
                             "note": "every examinee right" if right[j] else "every examinee wrong"})
            continue
        m = mh.iloc[j]
        rows.append({**base, "method": DIF_MANTEL_HAENSZEL, "statistic": m["statistic"], "df": 1, "p": m["p"],
                     "effect": m["delta"], "effect_name": "ETS delta",
                     "direction": _tested(_direction(-m["delta"], focal), m["p"]),
                     "dif_class": ets_class(m["delta"], m["delta_se"], m["p"]), "note": m["note"]})
        for method, small, big in ((DIF_LOGISTIC_UNIFORM, "score", "uniform"), (DIF_LOGISTIC_NONUNIFORM, "uniform", "full")):
            if method == DIF_LOGISTIC_UNIFORM:
                direction = _direction(-group_coef[j], focal)
            else:
                direction = (f"{focal} falls behind as the score rises" if slope_coef[j] < 0
                             else f"{focal} catches up as the score rises")
            stat = max(float(dev[small][j] - dev[big][j]), 0.0)
            p = float(stats.chi2.sf(stat, 1))
            effect = float(r2[big][j] - r2[small][j])
            rows.append({**base, "method": method, "statistic": stat, "df": 1, "p": p, "effect": effect,
                         "effect_name": "change in Nagelkerke R2", "direction": _tested(direction, p),
                         "dif_class": _r2_class(effect, p), "note": ""})
    out = pd.DataFrame(rows, columns=COLUMNS)
    out.attrs.update(attrs)
    return out


__all__ = ["COLUMNS", "DEFAULT_STRATA", "SMALL_GROUP", "panel_warning", "dif_analysis", "ets_class", "mantel_haenszel"]

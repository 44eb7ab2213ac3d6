"""Plain-language key findings written from the current data, for the overview page and report.

A stakeholder reads these sentences instead of the tables, so each one is generated from the
numbers on screen (never hard-coded), states its uncertainty, and names the test and the n it
rests on. Inputs are analysis outputs (fractions); every function tolerates missing pieces.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .vocab import format_label


@dataclass(frozen=True)
class Finding:
    """One sentence for people plus the test behind it."""

    headline: str
    detail: str
    test: str


def _p(x: float) -> str:
    return f"{100 * x:.1f}%"


def _pv(p: float) -> str:
    return "p < .001" if p < 0.001 else f"p = {p:.3f}"


def leader_finding(board: pd.DataFrame) -> Finding | None:
    """Who leads, and whether the lead is larger than the runner-up's interval suggests."""
    if board is None or len(board) < 1:
        return None
    b = board.sort_values("macro", ascending=False)
    top = b.iloc[0]
    n = int(top.get("n_items", 0) or 0)
    if len(b) == 1:
        return Finding(f"{top['model']} scores {_p(top['macro'])} on average across formats.",
                       f"Macro average = unweighted mean of the format means; n = {n} items.",
                       "descriptive (macro average)")
    second = b.iloc[1]
    gap = 100 * (top["macro"] - second["macro"])
    return Finding(
        f"{top['model']} leads with a macro average of {_p(top['macro'])}, "
        f"{gap:.1f} points ahead of {second['model']}.",
        f"Macro average = unweighted mean of the format means over {n} items; "
        f"{len(b)} models compared. A gap of a few points between neighbours is within sampling noise.",
        "descriptive (macro average)")


def mcq_ceiling_finding(board: pd.DataFrame, k: int = 6) -> Finding | None:
    """Multiple choice stops separating the top models when their Wilson intervals overlap."""
    if board is None or "mcq" not in board or board["mcq"].notna().sum() < 3:
        return None
    b = board.dropna(subset=["mcq"]).sort_values("mcq", ascending=False).head(k)
    span = 100 * (b["mcq"].max() - b["mcq"].min())
    overlap = bool(b["mcq_ci_low"].max() <= b["mcq_ci_high"].min())
    if overlap:
        head = (f"Multiple choice no longer separates the top {len(b)} models: they are within "
                f"{span:.1f} points and their 95% intervals overlap.")
    else:
        head = (f"Multiple-choice accuracy of the top {len(b)} models spans {span:.1f} points; "
                f"not all of their 95% intervals overlap.")
    n = int(board["n_mcq"].max()) if "n_mcq" in board and board["n_mcq"].notna().any() else None
    detail = "Share of single-answer multiple-choice items answered right per model" + \
        (f" (n = {n} items each)." if n else ".")
    return Finding(head, detail, "Wilson score 95% interval")


def hardest_format_finding(type_means: pd.DataFrame) -> Finding | None:
    """The format where even the best model stays lowest (type means of one condition)."""
    if type_means is None or type_means.empty:
        return None
    tm = type_means
    best = tm.groupby("type")["mean"].max()
    if best.empty:
        return None
    t = best.idxmin()
    n = int(tm[tm["type"] == t]["n"].max()) if "n" in tm else 0
    return Finding(
        f"On {format_label(t).lower()} every model is below {np.ceil(100 * best[t]):.0f}%.",
        f"The best model's mean item score on this format is {_p(best[t])} (n = {n} items per model), "
        "the lowest top score of any format.",
        "descriptive (format means with Wilson 95% intervals)")


def spread_finding(type_means: pd.DataFrame) -> Finding | None:
    """How much the format changes a model's score: the largest best-minus-worst gap (one condition)."""
    if type_means is None or type_means.empty:
        return None
    tm = type_means
    g = tm.groupby("model")["mean"].agg(["max", "min"])
    if g.empty:
        return None
    g["spread"] = g["max"] - g["min"]
    m = g["spread"].idxmax()
    return Finding(
        f"The format matters as much as the model: {m}'s best and worst formats are "
        f"{100 * g.loc[m, 'spread']:.0f} points apart.",
        f"Across the {len(g)} models the median best-minus-worst gap is {100 * g['spread'].median():.0f} points.",
        "descriptive (format means)")


def motivation_finding(effect: pd.DataFrame) -> Finding | None:
    """Does asking for a justification help? Count models up/down and significant ones."""
    if effect is None or effect.empty or "delta_macro" not in effect:
        return None
    e = effect.dropna(subset=["delta_macro"])
    if e.empty:
        return None
    down = int((e["delta_macro"] < 0).sum())
    worst = e.loc[e["delta_macro"].idxmin()]
    if "p_wilcoxon" in e and e["p_wilcoxon"].notna().any():
        sig = int((e["p_wilcoxon"] < 0.05).sum())
        test = "Wilcoxon signed-rank test on per-item differences (p < .05)"
        sig_text = f"{sig} of {len(e)} changes are statistically significant"
    elif "p_ttest" in e and e["p_ttest"].notna().any():
        sig = int((e["p_ttest"] < 0.05).sum())
        test = "paired t-test on per-item scores (published, p < .05)"
        sig_text = (f"on all items pooled, a paired t-test finds {sig} of {len(e)} changes statistically "
                    "significant")
    else:
        test, sig_text = "descriptive", "no test available"
    return Finding(
        f"Asking for a justification lowers the score of {down} of {len(e)} models; "
        f"the largest drop is {100 * worst['delta_macro']:+.1f} points ({worst['model']}).",
        f"Macro average, motivation minus default; {sig_text}.", test)


def image_finding(regression: pd.DataFrame | None, effect: pd.DataFrame | None = None) -> Finding | None:
    """Image items after adjusting for format, language and model (odds ratio)."""
    if regression is not None and len(regression) and (regression["predictor"] == "has_image:True").any():
        r = regression[regression["predictor"] == "has_image:True"].iloc[0]
        word = "harder" if r["ci_high"] < 1 else ("easier" if r["ci_low"] > 1 else "neither clearly harder nor easier")
        return Finding(
            f"Items with an image are {word} once format, language and model are taken into account "
            f"(odds ratio {r['odds_ratio']:.2f}, 95% CI {r['ci_low']:.2f} to {r['ci_high']:.2f}).",
            "Raw with/without comparisons mix formats and languages; the regression adjusts for them.",
            "logistic regression, correct ~ format + image + language + model, item-clustered errors")
    if effect is not None and len(effect):
        d = 100 * effect["delta"].mean()
        return Finding(f"On average models score {d:+.1f} points on items with an image (raw, unadjusted).",
                       "The two subsets differ in format and language.", "descriptive")
    return None


def key_findings(board: pd.DataFrame | None, type_means: pd.DataFrame | None = None,
                 effect: pd.DataFrame | None = None, regression: pd.DataFrame | None = None,
                 image: pd.DataFrame | None = None) -> list[Finding]:
    """Three to six findings, most important first; missing inputs are skipped.

    Every frame holds the selected condition only, except ``effect`` (default vs motivation).
    """
    candidates = [
        leader_finding(board),
        mcq_ceiling_finding(board),
        hardest_format_finding(type_means),
        spread_finding(type_means),
        motivation_finding(effect),
        image_finding(regression, image),
    ]
    return [f for f in candidates if f is not None][:6]


def as_frame(found: list[Finding]) -> pd.DataFrame:
    """Findings as rows (headline, detail, test): the `show findings` twin of the Overview list."""
    return pd.DataFrame([{"headline": f.headline, "detail": f.detail, "test": f.test} for f in found],
                        columns=["headline", "detail", "test"])


def image_raw_finding(effect: pd.DataFrame) -> Finding | None:
    """How many models score higher on items with an image (raw, unadjusted comparison)."""
    if effect is None or effect.empty or not {"mean_with", "mean_without"} <= set(effect.columns):
        return None
    e = effect.dropna(subset=["mean_with", "mean_without"])
    if e.empty:
        return None
    higher = int((e["mean_with"] > e["mean_without"]).sum())
    n_with = int(e["n_with"].max()) if "n_with" in e else 0
    n_without = int(e["n_without"].max()) if "n_without" in e else 0
    return Finding(f"{higher} of {len(e)} models score higher on items with an image (raw comparison).",
                   f"Mean score on {n_without} items without and {n_with} with an image, per model.",
                   "descriptive (raw means; formats and languages differ between the two subsets)")


def image_adjusted_verdict(regression: pd.DataFrame | None) -> Finding | None:
    """The image odds ratio of the regression, and what its 95% interval allows one to say."""
    if regression is None or not len(regression) or not (regression["predictor"] == "has_image:True").any():
        return None
    r = regression[regression["predictor"] == "has_image:True"].iloc[0]
    if r["ci_high"] < 1:
        verdict = "Items with an image are answered correctly less often than comparable items without one."
    elif r["ci_low"] > 1:
        verdict = "Items with an image are answered correctly more often than comparable items without one."
    else:
        verdict = ("The interval includes 1: once format, language and model are accounted for, the data do "
                   "not clearly show an image effect.")
    return Finding(verdict, f"Odds ratio {r['odds_ratio']:.2f}, 95% interval {r['ci_low']:.2f} to {r['ci_high']:.2f}, "
                   f"p = {r['p']:.3f}.", "logistic regression correct ~ format + image + language + model, "
                   "item-clustered standard errors")

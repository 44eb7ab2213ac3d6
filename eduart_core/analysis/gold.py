"""A grader measured on seeded gold answers: accuracy, severity against the gold, and the flag.

Why a conditional (pairwise) estimate of severity: on a gold answer the grader's mark and the gold
mark describe the same answer, whose quality is unknown. Under the many-facet Rasch model (rating
scale, the same thresholds for both), given that the two marks differ by ``d`` points, the chance
that the grader's is the higher one is ``logistic(d * lenience)``: the answer's quality and the
criterion's thresholds cancel. So the lenience (logit; the studio's severity is its negative:
positive = lower marks than the gold) is the maximum of that conditional likelihood over the marks
that differ, with no answer or criterion parameter to estimate, and its standard error is the
likelihood's. Half a disagreement each way (d = 1) is added before fitting (Haldane's correction),
so a grader whose few disagreements all go one way gets a finite, slightly shrunk estimate.

The flag, in words (the same on the page and in ``show``): a grader is flagged once they have
marked at least ``MIN_GOLD_ANSWERS`` gold answers and either the 98% interval of their severity
against the gold lies wholly above or wholly below 0, or their accuracy on gold (exact agreement
with the gold mark) is lower than the other graders' pooled accuracy on the same rubric's gold by a
one-sided two-proportion z-test at the 1% level. The two tests spend 2% and 1% (nominal: the
gold is an adjudicated mark, not a Rasch draw, so the conditional estimate is close to, not exactly,
unbiased); ``simulate.gold_checks`` and ``bench judges`` measure both rates.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import norm

from .intervals import Z95, wilson_interval

#: Gold answers a grader must have marked before a flag is decided (fewer: the tests' normal
#: approximations are not to be trusted, and the words say how many more are needed).
MIN_GOLD_ANSWERS = 10
#: The severity's interval for the flag (two-sided level), and the accuracy test's one-sided level.
SEVERITY_LEVEL = 0.98
ACCURACY_ALPHA = 0.01
SEVERITY_Z = float(norm.ppf(0.5 + SEVERITY_LEVEL / 2))
ACCURACY_Z = float(norm.ppf(1 - ACCURACY_ALPHA))
FLAG_RULE = (f"Flagged from {MIN_GOLD_ANSWERS} gold answers when the {SEVERITY_LEVEL:.0%} interval of the severity "
             "against the gold lies wholly above or below 0, or when the accuracy on gold is below the other "
             f"graders' by a one-sided two-proportion z-test at the {ACCURACY_ALPHA:.0%} level (nominal false flags of "
             f"an accurate grader: {1 - SEVERITY_LEVEL:.0%} + {ACCURACY_ALPHA:.0%}; `bench judges` measures the rates).")
#: The same rule for reviewers on seeded gold pages (``extraction.review_gold``): a field decision has
#: no scale, so only the accuracy half of the rule applies, counted per decided field.
REVIEW_FLAG_RULE = (f"Reviewers are flagged from {MIN_GOLD_ANSWERS} gold pages when their accuracy on gold (the share "
                    "of their decisions on seeded pages' fields that equal the gold version's value; a flag counts as "
                    "not equal) is below the other reviewers' by a one-sided two-proportion z-test at the "
                    f"{ACCURACY_ALPHA:.0%} level (a reviewer with no other reviewer's gold checks to compare with is "
                    "never flagged).")
#: One row per grader (and dataset, rubric) of a gold summary.
GOLD_COLUMNS = ["rater", "dataset", "rubric", "gold_answers", "n_marks", "correct", "accuracy", "acc_low",
                "acc_high", "others_accuracy", "others_marks", "accuracy_p", "severity", "severity_se",
                "severity_low", "severity_high", "n_differ", "flagged", "reason", "simulated"]


def severity_against_gold(points: np.ndarray, gold: np.ndarray) -> tuple[float, float, int]:
    """(severity, its standard error, marks that differ) of a grader's marks against the gold marks
    of the same units (logit; positive: the grader marks lower than the gold)."""
    diff = np.asarray(points, dtype=float) - np.asarray(gold, dtype=float)
    differ = diff[diff != 0]
    weight = np.concatenate([np.abs(differ), [1.0, 1.0]])
    up = np.concatenate([(differ > 0).astype(float), [1.0, 0.0]])
    count = np.concatenate([np.ones(len(differ)), [0.5, 0.5]])  # Haldane: half a disagreement each way
    lenience = 0.0
    for _ in range(50):
        p = expit(weight * lenience)
        info = float((count * weight * weight * p * (1 - p)).sum())
        step = float((count * weight * (up - p)).sum()) / info
        lenience += float(np.clip(step, -2.0, 2.0))
        if abs(step) < 1e-10:
            break
    p = expit(weight * lenience)
    info = float((count * weight * weight * p * (1 - p)).sum())
    return -lenience, 1.0 / np.sqrt(info), int(len(differ))


def _accuracy_p(correct: int, n: int, others_correct: int, others_n: int) -> float:
    """One-sided p of 'this grader's accuracy is below the others'' (pooled two-proportion z-test)."""
    if n == 0 or others_n == 0:
        return float("nan")
    pooled = (correct + others_correct) / (n + others_n)
    se = np.sqrt(pooled * (1 - pooled) * (1 / n + 1 / others_n))
    if se == 0:
        return 1.0
    return float(norm.cdf((correct / n - others_correct / others_n) / se))


def gold_summary(checks: pd.DataFrame, severity: bool = True) -> pd.DataFrame:
    """Per grader, dataset and rubric: accuracy on gold (Wilson 95% interval), the other graders'
    pooled accuracy and the one-sided p against it, the severity against the gold (95% interval),
    the flag and its reason in words. ``checks``: rater, dataset, rubric, answer, criterion, points,
    gold (the settled mark), simulated; one row per gold mark a grader gave. ``severity`` False (review
    gold: right or wrong, no scale): the severity columns stay empty and the flag reads accuracy only."""
    if checks.empty:
        return pd.DataFrame(columns=GOLD_COLUMNS)
    data = checks.assign(correct=(checks["points"].astype(float) == checks["gold"].astype(float)))
    rows = []
    for (dataset, rubric), part in data.groupby(["dataset", "rubric"], sort=True):
        totals = part.groupby("rater")["correct"].agg(["sum", "size"])
        for rater, mine in part.groupby("rater", sort=True):
            correct, n = int(mine["correct"].sum()), len(mine)
            others_correct = int(totals["sum"].sum() - correct)
            others_n = int(totals["size"].sum() - n)
            if severity:
                sev, se, n_differ = severity_against_gold(mine["points"].to_numpy(), mine["gold"].to_numpy())
            else:
                sev, se, n_differ = float("nan"), float("nan"), int((~mine["correct"]).sum())
            low, high = wilson_interval(np.array([correct / n]), np.array([float(n)]))
            row = {"rater": str(rater), "dataset": str(dataset), "rubric": str(rubric),
                   "gold_answers": int(mine["answer"].nunique()), "n_marks": n, "correct": correct,
                   "accuracy": correct / n, "acc_low": float(np.asarray(low)[0]), "acc_high": float(np.asarray(high)[0]),
                   "others_accuracy": others_correct / others_n if others_n else float("nan"),
                   "others_marks": others_n, "accuracy_p": _accuracy_p(correct, n, others_correct, others_n),
                   "severity": sev, "severity_se": se, "severity_low": sev - Z95 * se,
                   "severity_high": sev + Z95 * se, "n_differ": n_differ,
                   "simulated": bool(mine["simulated"].astype(bool).any())}
            rows.append({**row, **flag(row, peers="graders" if severity else "reviewers",
                                        units="gold answers" if severity else "gold pages",
                                        marks="marks" if severity else "field decisions")})
    return pd.DataFrame(rows, columns=GOLD_COLUMNS)


def flag(row: dict, peers: str = "graders", units: str = "gold answers", marks: str = "marks") -> dict:
    """``flagged`` and ``reason`` (one sentence) of one rater's gold summary row (``FLAG_RULE``; a row
    without a severity, review gold, ``REVIEW_FLAG_RULE``). ``peers``/``units``: the words for the
    other raters, the gold units and what is counted on them."""
    answers = int(row["gold_answers"])
    if answers < MIN_GOLD_ANSWERS:
        verb = "marked" if marks == "marks" else "decided"
        return {"flagged": False, "reason": f"{answers} {units} {verb}; the flag is decided from "
                                            f"{MIN_GOLD_ANSWERS} ({MIN_GOLD_ANSWERS - answers} more needed)."}
    reasons = []
    severity, se = float(row["severity"]), float(row["severity_se"])
    low, high = severity - SEVERITY_Z * se, severity + SEVERITY_Z * se
    if low > 0:
        reasons.append(f"stricter than the gold: severity {severity:+.2f} logit, {SEVERITY_LEVEL:.0%} interval "
                       f"[{low:+.2f}, {high:+.2f}] lies above 0")
    elif high < 0:
        reasons.append(f"more lenient than the gold: severity {severity:+.2f} logit, {SEVERITY_LEVEL:.0%} interval "
                       f"[{low:+.2f}, {high:+.2f}] lies below 0")
    p = row.get("accuracy_p")
    if p is not None and np.isfinite(p) and p < ACCURACY_ALPHA:
        reasons.append(f"accuracy on gold {row['accuracy']:.0%} of {row['n_marks']} {marks}, below the other {peers}' "
                       f"{row['others_accuracy']:.0%} of {row['others_marks']} (one-sided z-test p = {p:.3g})")
    if reasons:
        return {"flagged": True, "reason": "Flagged: " + "; ".join(reasons) + f" ({answers} {units})."}
    if not np.isfinite(severity):
        compared = (f"not below the other {peers}' at the {ACCURACY_ALPHA:.0%} level" if p is not None and np.isfinite(p)
                    else f"not compared: no other {peers}' gold checks")
        return {"flagged": False, "reason": f"Not flagged: accuracy on gold {row['accuracy']:.0%} of {row['n_marks']} "
                                            f"{marks}, {compared} ({answers} {units})."}
    return {"flagged": False, "reason": f"Not flagged: severity {severity:+.2f} logit, {SEVERITY_LEVEL:.0%} interval "
                                        f"[{low:+.2f}, {high:+.2f}] includes 0, and the accuracy on gold is not "
                                        f"below the other graders' at the {ACCURACY_ALPHA:.0%} level "
                                        f"({answers} gold answers)."}

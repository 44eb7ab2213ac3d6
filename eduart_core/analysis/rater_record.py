"""The statistics of one rater's record: agreement with settled outcomes week by week, and the
sentence that goes with a severity (pure functions: DataFrames in, DataFrames and words out).

Why weeks: a reviewer or grader wants to know whether they drift or improve, and a calendar week is
a unit they remember working in. Each week's share carries its n and a 95% Wilson interval, so a
week of 3 units is not read like a week of 300. The severity itself is the many-facet Rasch
estimate of ``analysis.judges.rater_severities``; this module only words it, and only says
"stricter" or "more lenient" when the whole 95% interval lies on one side of the graders' mean.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .intervals import wilson_interval

#: Graded answers a grader needs before their severity is shown (fewer make an interval too wide to read).
MIN_SEVERITY_ANSWERS = 30
AGREEMENT_COLUMNS = ["source", "week", "n", "agreed", "share", "ci_low", "ci_high"]


def agreement_by_week(units: pd.DataFrame) -> pd.DataFrame:
    """Per source (review, grading) and calendar week (its Monday, from ``at``): settled units the
    rater decided (``n``), how many of their decisions the settled outcome kept (``agreed``), that
    share and its 95% Wilson interval (fractions). ``units``: source, at, agree (bool)."""
    if units.empty:
        return pd.DataFrame(columns=AGREEMENT_COLUMNS)
    at = pd.to_datetime(units["at"], utc=True).dt.tz_localize(None)
    week = (at - pd.to_timedelta(at.dt.weekday, unit="D")).dt.normalize().dt.strftime("%Y-%m-%d")
    frame = pd.DataFrame({"source": units["source"].to_numpy(), "week": week.to_numpy(),
                          "agree": units["agree"].astype(bool).to_numpy()})
    out = frame.groupby(["source", "week"], sort=True)["agree"].agg(n="size", agreed="sum").reset_index()
    share = out["agreed"] / out["n"]
    low, high = wilson_interval(share.to_numpy(dtype=float), out["n"].to_numpy(dtype=float))
    out["agreed"] = out["agreed"].astype(int)
    out["share"] = share
    out["ci_low"], out["ci_high"] = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    return out[AGREEMENT_COLUMNS]


def severity_words(severity: float, low: float, high: float, n_answers: int, n_ratings: int) -> str:
    """One sentence for an estimated severity (logit, relative to the graders' mean; positive: lower
    marks than the graders' mean gives). A direction only when the interval excludes 0."""
    if not np.isfinite(severity) or not np.isfinite(low) or not np.isfinite(high):
        return f"Severity not estimable from {n_answers} graded answers."
    if low > 0:
        side = "stricter than the graders' mean (the whole interval lies above 0)"
    elif high < 0:
        side = "more lenient than the graders' mean (the whole interval lies below 0)"
    else:
        side = "not distinguishable from the graders' mean (the interval includes 0)"
    return (f"Severity {severity:+.2f} logit, 95% interval [{low:+.2f}, {high:+.2f}]: {side}; many-facet Rasch "
            f"model of every grader's marks; {n_answers} settled answers graded by this rater ({n_ratings} marks).")


def severity_pending(n_answers: int, minimum: int = MIN_SEVERITY_ANSWERS) -> str:
    """What a grader with too few graded answers reads instead of a severity."""
    more = minimum - n_answers
    return (f"Severity is shown from {minimum} settled graded answers; {n_answers} so far, "
            f"{more} more needed.")

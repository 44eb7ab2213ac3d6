"""Judge-corrected scores: prediction-powered inference (Angelopoulos et al., Science 2023).

Why: a judge that passes its gate can still mark every answer a little too kindly or too harshly,
and a score under its profile inherits that bias while its interval (answers only) ignores it. A
human-graded slice measures the bias where it matters, on the same answers: the corrected mean is

    corrected = mean(judge on all N answers) + mean(human - judge on the n graded answers)

(plain PPI, lambda = 1: the judge's mean carries the precision of N answers, the residual mean
removes its bias). The target is the mean human score of the population the answers were drawn
from (model x format); it is unbiased when the graded slice is a random sample of the cell's
answers (a grading round's random draw, or every answer). Its variance, with the slice part of the
N answers (as here: the judge marked every answer, the graded ones too):

    Var = s2(judge) / N + s2(human - judge) / n + 2 cov(judge, human - judge) / N

The paper's form takes a separate unlabelled set and has no covariance term; with the slice inside
the N answers the term is what makes the formula exact when every answer is graded (it reduces to
s2(human) / N, the plain interval of the human mean). Intervals are normal (the paper's CLT
interval), 95%. The shift (corrected - judge only) has its own interval, s2(human - judge) / n: a
direction of the correction is claimed only where that interval excludes 0.

``ppi-python`` (the authors' package) was not added as a requirement: it pulls numba, llvmlite,
scikit-learn and gdown (about 260 MB) for a mean; ``ppi_mean`` is checked against the paper's
estimator form and by simulation in ``tests/analysis/test_judges_ppi.py``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import UserError
from .intervals import Z95

CELL_KEYS = ["model", "condition", "type"]
#: Columns of `corrected_cells` (one row per model, condition and format; variances, not intervals).
CELL_COLUMNS = [*CELL_KEYS, "judge_only", "judge_only_var", "corrected", "corrected_var", "shift", "shift_var",
                "n_human", "n_judge"]
#: Columns of `judge_corrected` (format "macro": the unweighted mean over the model's formats).
TABLE_COLUMNS = ["model", "condition", "format", "judge_only", "judge_only_low", "judge_only_high", "corrected",
                 "ci_low", "ci_high", "shift", "shift_low", "shift_high", "n_human", "n_judge", "note"]
MACRO = "macro"
MIN_HUMAN = 2  # a residual variance needs two graded answers


@dataclass(frozen=True)
class PPIEstimate:
    """One corrected mean: the judge-only mean, the corrected mean, the shift, and their variances."""

    judge_only: float
    judge_only_var: float
    corrected: float
    corrected_var: float
    shift: float
    shift_var: float
    n_human: int
    n_judge: int


def ppi_mean(judge_all: np.ndarray, judge_graded: np.ndarray, human_graded: np.ndarray, *,
             graded_within_all: bool = True) -> PPIEstimate:
    """The prediction-powered mean of the human marks (module text).

    ``judge_all``: the judge's marks on every answer (N); ``judge_graded``/``human_graded``: the
    judge's and the humans' marks on the graded answers (n, paired). ``graded_within_all=False``
    is the paper's form (the N answers are others than the n graded ones): no covariance term.
    """
    f = np.asarray(judge_all, dtype=float)
    fh = np.asarray(judge_graded, dtype=float)
    y = np.asarray(human_graded, dtype=float)
    n, big_n = len(y), len(f)
    if n < MIN_HUMAN or big_n < 1 or len(fh) != n:
        raise UserError(f"the judge correction needs at least {MIN_HUMAN} human-graded answers paired with the "
                        f"judge's marks (has {n})")
    residual = y - fh
    judge_mean = float(f.mean())
    judge_var = float(f.var(ddof=1) / big_n) if big_n > 1 else 0.0
    shift = float(residual.mean())
    shift_var = float(residual.var(ddof=1) / n)
    variance = judge_var + shift_var
    if graded_within_all:
        variance += 2 * float(np.cov(fh, residual, ddof=1)[0, 1]) / big_n
    return PPIEstimate(judge_mean, judge_var, judge_mean + shift, max(variance, 0.0), shift, shift_var, n, big_n)


def _require_slice(frame: pd.DataFrame) -> None:
    if frame.empty:
        raise UserError("the judge correction needs judged answers: none in the selection")
    if frame["human"].notna().sum() == 0:
        raise UserError(f"the judge correction needs a human-graded slice: none of the {len(frame)} judged answers "
                        "in the selection has a settled human grade yet (start a grading round or import grades)")


def corrected_cells(answers: pd.DataFrame) -> pd.DataFrame:
    """Per model, condition and format (``type``): the judge-only and corrected means and their variances.

    ``answers``: one row per judged answer with model, condition, type, ``judge`` (the judge
    profile's score, 0-1) and ``human`` (the settled human score on the same scale, NaN where
    not graded). This is the function a leaderboard under a judge profile reads (the corrected
    mean and its variance per cell). A cell with fewer than two graded answers has NaN corrected
    values (its n_human says why).
    """
    _require_slice(answers)
    rows = []
    for key, cell in answers.groupby(CELL_KEYS, observed=True, sort=True):
        graded = cell[cell["human"].notna()]
        f = cell["judge"].to_numpy(dtype=float)
        row = dict(zip(CELL_KEYS, key))
        row.update(judge_only=float(f.mean()), judge_only_var=float(f.var(ddof=1) / len(f)) if len(f) > 1 else np.nan,
                   n_human=int(len(graded)), n_judge=int(len(f)))
        if len(graded) >= MIN_HUMAN:
            est = ppi_mean(f, graded["judge"].to_numpy(dtype=float), graded["human"].to_numpy(dtype=float))
            row.update(corrected=est.corrected, corrected_var=est.corrected_var, shift=est.shift,
                       shift_var=est.shift_var)
        else:
            row.update(corrected=np.nan, corrected_var=np.nan, shift=np.nan, shift_var=np.nan)
        rows.append(row)
    return pd.DataFrame(rows, columns=CELL_COLUMNS)


def judge_corrected(answers: pd.DataFrame) -> pd.DataFrame:
    """The `judge_corrected` table: per model (and condition) and format, then a macro row per model.

    The macro is the unweighted mean over the model's formats (as the leaderboard's macro); its
    variance is the sum of the formats' variances over F² (the formats are different answers).
    """
    cells = corrected_cells(answers)
    parts = []
    for (model, condition), group in cells.groupby(["model", "condition"], observed=True, sort=True):
        rows = [_row(r.model, r.condition, r.type, r.judge_only, r.judge_only_var, r.corrected, r.corrected_var,
                     r.shift, r.shift_var, r.n_human, r.n_judge) for r in group.itertuples(index=False)]
        k = len(group)
        missing = group.loc[group["corrected"].isna(), "type"].tolist()
        macro = _row(model, condition, MACRO, group["judge_only"].mean(), group["judge_only_var"].sum() / k ** 2,
                     group["corrected"].mean() if not missing else np.nan,
                     group["corrected_var"].sum() / k ** 2 if not missing else np.nan,
                     group["shift"].mean() if not missing else np.nan,
                     group["shift_var"].sum() / k ** 2 if not missing else np.nan,
                     int(group["n_human"].sum()), int(group["n_judge"].sum()))
        if missing:
            macro["note"] = f"no corrected macro: {', '.join(missing)} has fewer than {MIN_HUMAN} graded answers"
        parts.extend([*rows, macro])
    return pd.DataFrame(parts, columns=TABLE_COLUMNS)


def _row(model, condition, fmt, judge_only, judge_var, corrected, corrected_var, shift, shift_var, n_human,
         n_judge) -> dict:
    def interval(mean, var):
        if not np.isfinite(mean) or not np.isfinite(var):
            return np.nan, np.nan
        half = Z95 * float(np.sqrt(var))
        return mean - half, mean + half

    jl, jh = interval(judge_only, judge_var)
    cl, ch = interval(corrected, corrected_var)
    sl, sh = interval(shift, shift_var)
    note = "" if np.isfinite(corrected) else f"fewer than {MIN_HUMAN} graded answers: no correction"
    return {"model": model, "condition": condition, "format": fmt, "judge_only": judge_only, "judge_only_low": jl,
            "judge_only_high": jh, "corrected": corrected, "ci_low": cl, "ci_high": ch, "shift": shift,
            "shift_low": sl, "shift_high": sh, "n_human": int(n_human), "n_judge": int(n_judge), "note": note}


def shift_sentence(row) -> str:
    """How much the correction moved one model's score, in words that follow from the shift's interval."""
    if not np.isfinite(row["shift"]):
        return f"{row['model']}: {row['note'] or 'no correction'}."
    pts = 100 * row["shift"]
    bounds = f"95% interval {100 * row['shift_low']:+.1f} to {100 * row['shift_high']:+.1f}, n = {row['n_human']} graded"
    if row["shift_low"] > 0:
        return (f"{row['model']}: the judge marks this model lower than the graders do; the correction raises its "
                f"score by {pts:.1f} percentage points ({bounds}).")
    if row["shift_high"] < 0:
        return (f"{row['model']}: the judge marks this model higher than the graders do; the correction lowers its "
                f"score by {-pts:.1f} percentage points ({bounds}).")
    return (f"{row['model']}: the correction moves its score by {pts:+.1f} percentage points, and the shift's "
            f"interval includes 0 ({bounds}): no direction shown.")


def human_scores(grades: pd.DataFrame, judgements: pd.DataFrame) -> pd.DataFrame:
    """Per answer one judge profile marked: the settled human score on the profile's scale, where graded.

    ``grades``: grade rows with ``max_points``; ``judgements``: one profile's judgements. The score
    is the settled human points over the criteria the judge marked (its mean over repeats is what
    the profile scores), divided by their maxima. A check criterion (the rubric's code, the same
    whoever runs it) that no human graded keeps the code's mark; a judge criterion without a
    settled human mark leaves the answer out of the slice (pending adjudication, or not graded).
    Columns: item_id, model (key), condition, human, judge (the same criteria's judge score).
    """
    from ..vocab import CHECK_METHOD
    from .judges import ANSWER_KEYS, UNIT_KEYS, human_reference, judge_marks

    cols = [*ANSWER_KEYS, "human", "judge"]
    marks = judge_marks(judgements)
    if marks.empty or grades.empty:
        return pd.DataFrame(columns=cols)
    reference = human_reference(grades)
    settled = reference.loc[reference["settled"].astype(bool), [*UNIT_KEYS, "human"]]
    both = marks.merge(settled, on=UNIT_KEYS, how="left")
    graded = both["human"].notna()
    both["human"] = np.where(graded, both["human"], np.where(both["method"] == CHECK_METHOD, both["judge"], np.nan))
    both["graded"] = graded
    per = both.groupby(ANSWER_KEYS, observed=True).agg(
        human=("human", lambda s: s.sum() if s.notna().all() else np.nan), judge=("judge", "sum"),
        maximum=("max_points", "sum"), any_graded=("graded", "any")).reset_index()
    per = per[per["any_graded"] & per["human"].notna()]
    return pd.DataFrame({**{k: per[k].astype(str) for k in ANSWER_KEYS}, "human": per["human"] / per["maximum"],
                         "judge": per["judge"] / per["maximum"]})[cols].reset_index(drop=True)


# ---------------------------------------------------------------- which answers to grade next

PLAN_COLUMNS = ["model", "condition", "format", "n_judge", "n_human", "residual_sd", "propose", "to_grade",
                "width_now", "width_expected", "target_width", "note"]


def _width(judge_var_n: float, residual_sd: float, n: int) -> float:
    """The full width of the corrected 95% interval with n graded answers (planning: no covariance term)."""
    if n < MIN_HUMAN:
        return np.nan
    return 2 * Z95 * float(np.sqrt(judge_var_n + residual_sd ** 2 / n))


def grading_plan(answers: pd.DataFrame, target_width: float) -> pd.DataFrame:
    """How many answers per model and format humans should grade so that each model's corrected
    macro score reaches a 95% interval of full width ``target_width`` (a fraction: 0.10 = 10
    percentage points), and the width to expect.

    Why Neyman: the macro's variance is sum_f (s2_judge,f / N_f + s2_resid,f / n_f) / F², and the
    fewest graded answers that reach a given variance are n_f proportional to the residual SD
    s_resid,f (where the judge disagrees with the graders most, grade most). The residual SD is the
    cell's graded slice's (two or more graded answers), else the judge's over all its graded
    answers (said in ``note``). A cell never asks for more answers than it has; when grading every
    answer cannot reach the target, the row says so. ``propose``: graded answers in total, of which
    ``to_grade`` are new. The new answers should be drawn at random within the cell (`draw_answers`).
    """
    if not np.isfinite(target_width) or target_width <= 0:
        raise UserError(f"the target width must be a positive fraction of the score (0.10 = 10 percentage points), "
                        f"not {target_width:g}")
    _require_slice(answers)
    graded_all = answers[answers["human"].notna()]
    pooled_sd = float((graded_all["human"] - graded_all["judge"]).std(ddof=1)) if len(graded_all) >= MIN_HUMAN \
        else np.nan
    rows = []
    for (model, condition), group in answers.groupby(["model", "condition"], observed=True, sort=True):
        cells = []
        for fmt, cell in group.groupby("type", observed=True, sort=True):
            graded = cell[cell["human"].notna()]
            f = cell["judge"].to_numpy(dtype=float)
            own = len(graded) >= MIN_HUMAN
            sd = float((graded["human"] - graded["judge"]).std(ddof=1)) if own else pooled_sd
            cells.append({"model": model, "condition": condition, "format": fmt, "n_judge": len(f),
                          "n_human": len(graded), "residual_sd": sd,
                          "judge_var_n": float(f.var(ddof=1) / len(f)) if len(f) > 1 else 0.0,
                          "note": "" if own else "residual SD from all the judge's graded answers"})
        k = len(cells)
        variance = (target_width / (2 * Z95)) ** 2 * k ** 2  # what sum_f (judge_var_n + sd²/n_f) may reach
        free = [c for c in cells]
        alloc: dict[str, int] = {}
        budget = variance - sum(c["judge_var_n"] for c in cells)
        # Neyman allocation with caps: cells that would need more than they have are graded in full
        while free and budget > 0:
            total_sd = sum(c["residual_sd"] for c in free)
            capped = False
            for c in free:
                n = int(np.ceil(c["residual_sd"] * total_sd / budget)) if total_sd > 0 else MIN_HUMAN
                alloc[c["format"]] = max(n, MIN_HUMAN, c["n_human"])
            for c in list(free):
                if alloc[c["format"]] >= c["n_judge"]:
                    alloc[c["format"]] = c["n_judge"]
                    budget -= c["residual_sd"] ** 2 / c["n_judge"]
                    free.remove(c)
                    capped = True
            if not capped:
                break
        reachable = budget > 0
        for c in cells:
            n = c["n_judge"] if not reachable else min(alloc.get(c["format"], c["n_judge"]), c["n_judge"])
            c.update(propose=int(n), to_grade=int(max(n - c["n_human"], 0)),
                     width_now=_width(c["judge_var_n"], c["residual_sd"], c["n_human"]),
                     width_expected=_width(c["judge_var_n"], c["residual_sd"], n), target_width=target_width)
        macro_now = _macro_width(cells, "n_human")
        macro = _macro_width(cells, "propose")
        note = "" if reachable else (f"grading every answer gives a macro width of {macro:.3f}, wider than the "
                                     f"target {target_width:.3f}")
        rows.extend(cells)
        rows.append({"model": model, "condition": condition, "format": MACRO, "n_judge": sum(c["n_judge"] for c in cells),
                     "n_human": sum(c["n_human"] for c in cells), "residual_sd": np.nan,
                     "propose": sum(c["propose"] for c in cells), "to_grade": sum(c["to_grade"] for c in cells),
                     "width_now": macro_now, "width_expected": macro, "target_width": target_width, "note": note})
    return pd.DataFrame(rows)[PLAN_COLUMNS]


def _macro_width(cells: list[dict], count: str) -> float:
    if any(c[count] < MIN_HUMAN for c in cells):
        return np.nan
    var = sum(c["judge_var_n"] + c["residual_sd"] ** 2 / c[count] for c in cells) / len(cells) ** 2
    return 2 * Z95 * float(np.sqrt(var))


def draw_answers(answers: pd.DataFrame, plan: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """The answers to grade next: per cell of ``plan``, ``to_grade`` ungraded answers drawn at random
    (seeded), so the slice stays a random sample of the cell (what the correction's validity needs)."""
    rng = np.random.default_rng(seed)
    picked = []
    cells = plan[plan["format"] != MACRO]
    for row in cells.itertuples(index=False):
        pool = answers[(answers["model"] == row.model) & (answers["condition"] == row.condition)
                       & (answers["type"] == row.format) & answers["human"].isna()]
        if row.to_grade and len(pool):
            picked.append(pool.iloc[np.sort(rng.choice(len(pool), size=min(row.to_grade, len(pool)), replace=False))])
    return pd.concat(picked, ignore_index=True) if picked else answers.iloc[0:0]

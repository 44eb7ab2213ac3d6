"""Judge-corrected scores (prediction-powered inference): what a lab reading `judge_corrected` relies on.

The corrected mean equals the authors' package (`ppi-python` 0.2.3, numbers pinned from it, and
compared live when it is installed); when every answer is graded it is the human mean with the
human mean's own interval; on simulated resamples with a lenient judge (+0.5 logit, 1,000 answers,
100 graded) its 95% interval covers the true human mean in 92-98% of resamples where the judge-only
interval covers it in under half; a selection without a graded slice is one clear line; the words
claim a direction only when the shift's interval excludes 0.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from eduart_core.analysis import ppi
from eduart_core.bench.judges import ppi_coverage
from eduart_core.errors import UserError


def _paper_example():
    """The inputs the pinned ppi-python numbers were computed on (seeded, simulated)."""
    rng = np.random.default_rng(2023)
    n, big_n = 60, 500
    y = rng.integers(0, 4, n) / 3
    yhat = np.clip(y + rng.normal(0.1, 0.2, n), 0, 1)
    yhat_unlabeled = np.clip(rng.integers(0, 4, big_n) / 3 + rng.normal(0.1, 0.2, big_n), 0, 1)
    return y, yhat, yhat_unlabeled


def test_the_corrected_mean_equals_ppi_python_on_the_papers_form():
    y, yhat, unlabeled = _paper_example()
    est = ppi.ppi_mean(unlabeled, yhat, y, graded_within_all=False)
    # ppi_py.ppi_mean_pointestimate(y, yhat, unlabeled, lam=1) and ppi_mean_ci(..., alpha=0.05, lam=1), ppi-python 0.2.3
    assert est.corrected == pytest.approx(0.50538242, abs=1e-8)
    low, high = 0.44605834, 0.56470649
    half = 1.96 * np.sqrt(est.corrected_var)
    assert est.corrected - half == pytest.approx(low, abs=1e-3) and est.corrected + half == pytest.approx(high, abs=1e-3)
    # ppi-python divides by n (not n - 1) and uses z = 1.95996: with that, the same interval to 1e-6
    n, big_n = len(y), len(unlabeled)
    var_n = np.var(unlabeled) / big_n + np.var(y - yhat) / n
    assert est.corrected_var == pytest.approx(est.judge_only_var + est.shift_var, rel=1e-12)  # separate sets
    assert var_n == pytest.approx(est.judge_only_var * (big_n - 1) / big_n + est.shift_var * (n - 1) / n, rel=1e-12)
    assert est.corrected - 1.959964 * np.sqrt(var_n) == pytest.approx(low, abs=1e-6)


def test_the_corrected_mean_equals_ppi_python_live_when_installed():
    ppi_py = pytest.importorskip("ppi_py")
    y, yhat, unlabeled = _paper_example()
    est = ppi.ppi_mean(unlabeled, yhat, y, graded_within_all=False)
    assert est.corrected == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, yhat, unlabeled, lam=1)[0]), abs=1e-10)


def test_every_answer_graded_gives_the_human_mean_with_its_own_interval():
    rng = np.random.default_rng(3)
    human = rng.integers(0, 3, 80) / 2
    judge = np.clip(human + rng.choice([0, 0.5], 80), 0, 1)
    est = ppi.ppi_mean(judge, judge, human)
    assert est.corrected == pytest.approx(human.mean(), abs=1e-12)
    assert est.corrected_var == pytest.approx(human.var(ddof=1) / 80, rel=1e-9)  # the covariance term makes it exact
    assert est.judge_only == pytest.approx(judge.mean()) and est.shift == pytest.approx(human.mean() - judge.mean())


def test_a_lenient_judge_is_corrected_with_an_interval_that_covers_the_human_mean():
    """The issue's done-means (simulated): 200 resamples, 1,000 answers, 100 graded, judge +0.5 logit."""
    result = ppi_coverage(200, seed=0)
    assert 0.92 <= result["corrected"] <= 0.98, result
    assert result["judge_only"] < 0.5, result


@pytest.mark.slow
def test_coverage_over_many_resamples_is_nominal():
    result = ppi_coverage(5000, seed=1)
    assert 0.935 <= result["corrected"] <= 0.965, result
    assert result["judge_only"] < 0.05, result


def _frame(rng, models=("m1", "m2"), types=("open_text", "short"), n=120, graded=30, bias=0.1) -> pd.DataFrame:
    rows = []
    for m in models:
        for t in types:
            human = (rng.random(n) < 0.6).astype(float)
            judge = np.clip(human + (rng.random(n) < bias), 0, 1)
            seen = np.zeros(n, bool)
            seen[rng.choice(n, graded, replace=False)] = True
            rows.append(pd.DataFrame({"model": m, "condition": "default", "type": t, "judge": judge,
                                      "human": np.where(seen, human, np.nan)}))
    return pd.concat(rows, ignore_index=True)


def test_the_table_has_a_macro_row_per_model_combining_its_formats():
    answers = _frame(np.random.default_rng(5))
    table = ppi.judge_corrected(answers)
    assert list(table.columns) == ppi.TABLE_COLUMNS
    assert {"model", "format", "judge_only", "corrected", "ci_low", "ci_high", "n_human", "n_judge"} <= set(table)
    for _, rows in table.groupby("model"):
        cells, macro = rows[rows["format"] != "macro"], rows[rows["format"] == "macro"].iloc[0]
        assert macro["corrected"] == pytest.approx(cells["corrected"].mean())
        assert macro["n_human"] == 60 and macro["n_judge"] == 240
        cell_vars = ((cells["ci_high"] - cells["ci_low"]) / (2 * 1.96)) ** 2
        assert (macro["ci_high"] - macro["ci_low"]) / (2 * 1.96) == pytest.approx(np.sqrt(cell_vars.sum() / 4))
    one = answers[(answers["model"] == "m1") & (answers["type"] == "short")]
    graded = one[one["human"].notna()]
    row = table[(table["model"] == "m1") & (table["format"] == "short")].iloc[0]
    assert row["corrected"] == pytest.approx(one["judge"].mean() + (graded["human"] - graded["judge"]).mean())
    assert row["judge_only"] > row["corrected"]  # the judge gives points the graders do not


def test_a_format_with_too_few_graded_answers_says_so_and_leaves_the_macro_out():
    answers = _frame(np.random.default_rng(6))
    one = (answers["model"] == "m1") & (answers["type"] == "short")
    answers.loc[one, "human"] = np.nan
    table = ppi.judge_corrected(answers)
    macro = table[(table["model"] == "m1") & (table["format"] == "macro")].iloc[0]
    assert np.isnan(macro["corrected"]) and "short" in macro["note"] and "graded" in macro["note"]
    assert table[(table["model"] == "m2") & (table["format"] == "macro")]["corrected"].notna().all()


def test_no_graded_slice_is_one_clear_line():
    answers = _frame(np.random.default_rng(7)).assign(human=np.nan)
    with pytest.raises(UserError) as caught:
        ppi.judge_corrected(answers)
    message = str(caught.value)
    assert "needs a human-graded slice" in message and "\n" not in message


def test_the_words_claim_a_direction_only_when_the_shift_interval_excludes_zero():
    row = {"model": "M", "shift": -0.05, "shift_low": -0.08, "shift_high": -0.02, "n_human": 40, "note": ""}
    assert "lowers its score by 5.0 percentage points" in ppi.shift_sentence(row)
    row.update(shift=0.02, shift_low=-0.01, shift_high=0.05)
    words = ppi.shift_sentence(row)
    assert "no direction shown" in words and "raises" not in words and "lowers" not in words
    row.update(shift=0.04, shift_low=0.01, shift_high=0.07)
    assert "raises its score by 4.0 percentage points" in ppi.shift_sentence(row)

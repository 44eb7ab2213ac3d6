"""The calibration's statistics: agreement equal to the reference packages, and a gate that decides
by computation (graders first, then the judge's agreement and severity).
"""
from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from eduart_core.analysis.agreement_ordinal import alpha_interval, ordinal_alpha, weighted_kappa_interval
from eduart_core.analysis.judges import calibration, human_reference, judge_marks
from eduart_core.bench.judges import synthetic_calibration_inputs


@pytest.mark.parametrize("seed", range(8))
def test_ordinal_alpha_equals_the_krippendorff_package(seed):
    rng = np.random.default_rng(seed)
    coders, units, levels = int(rng.integers(2, 6)), int(rng.integers(5, 200)), int(rng.integers(2, 6))
    truth = rng.integers(0, levels, size=units)
    data = np.array([np.where(rng.random(units) < 0.75, truth, rng.integers(0, levels, size=units))
                     for _ in range(coders)], dtype=float)
    data[rng.random(data.shape) < 0.25] = np.nan
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    assert ordinal_alpha(data) == pytest.approx(expected, abs=1e-12)


def test_weighted_kappa_equals_statsmodels_and_intervals_cover_the_estimate():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, size=400)
    b = np.where(rng.random(400) < 0.7, a, rng.integers(0, 3, size=400))
    table = np.zeros((3, 3))
    np.add.at(table, (a, b), 1)
    kappa, low, high = weighted_kappa_interval(a, b)
    assert kappa == pytest.approx(cohens_kappa(table, wt="quadratic").kappa, abs=1e-12)
    assert low < kappa < high
    alpha, alow, ahigh = alpha_interval(np.vstack([a, b]).astype(float))
    assert alow < alpha < ahigh
    _, small_low, small_high = alpha_interval(np.vstack([a[:40], b[:40]]).astype(float))
    assert small_high - small_low > ahigh - alow  # ten times fewer answers: a wider interval


def test_the_faithful_judge_passes_and_the_lenient_and_noisy_ones_fail_for_their_reasons():
    frame = calibration(*synthetic_calibration_inputs(300, seed=1), n_boot=300)
    by_judge = frame.set_index("judge")
    faithful, lenient, noisy = (by_judge.loc[f"judge:j{k}/bench-v1"] for k in range(3))
    assert faithful["passes"] and faithful["alpha"] >= 0.8 and abs(faithful["severity"]) <= 0.3
    assert -0.3 <= faithful["severity_low"] < faithful["severity"] < faithful["severity_high"] <= 0.3
    assert "95% interval" in faithful["reason"]  # the gate reads the interval, and says so
    assert not lenient["passes"] and lenient["severity"] < -0.3 and "more lenient" in lenient["reason"]
    assert not noisy["passes"] and noisy["alpha"] < 0.8 and "alpha" in noisy["reason"]
    assert (frame[["min_alpha", "max_severity", "min_human_alpha"]] == [0.8, 0.3, 0.8]).all().all()
    assert frame["humans_agree"].all() and (frame["human_alpha_low"] < frame["human_alpha"]).all()
    stricter = calibration(*synthetic_calibration_inputs(300, seed=1), n_boot=100, min_alpha=0.99)
    assert not stricter["passes"].any() and (stricter["min_alpha"] == 0.99).all()  # the gate travels with the rows


def test_when_the_graders_do_not_agree_nothing_is_said_about_the_judges():
    grades, judgements, answers, profiles = synthetic_calibration_inputs(200, seed=2)
    rng = np.random.default_rng(0)
    grades = grades.assign(points=rng.integers(0, 2, size=len(grades)).astype(float))  # graders mark at random
    frame = calibration(grades, judgements, answers, profiles, n_boot=100)
    assert not frame["humans_agree"].any() and not frame["passes"].any()
    assert frame["alpha"].isna().all() and frame["severity"].isna().all()
    assert all("graders do not agree" in r for r in frame["reason"])


def test_the_settled_human_mark_and_the_judges_mean_mark():
    grades, judgements, answers, profiles = synthetic_calibration_inputs(50, seed=4)
    reference = human_reference(grades)
    agreed = reference[reference["agree"]]
    assert agreed["settled"].all() and not reference.loc[~reference["agree"], "settled"].any()  # no adjudicator here
    marks = judge_marks(judgements)
    repeated = marks[marks["n_repeats"] > 1]
    assert len(repeated) and repeated["judge"].between(0, 1).all()
    assert set(repeated["judge"]) <= {0.0, 0.5, 1.0} and marks.loc[marks["n_repeats"] == 1, "sd"].isna().all()


def test_the_figures_draw_the_views_numbers_and_the_gate():
    from eduart_core.analysis.judges import severity_table
    from eduart_core.charts.judges import FAIL_COLOUR, PASS_COLOUR, figure_judge_calibration, figure_judge_severity

    inputs = synthetic_calibration_inputs(200, seed=5)
    frame = calibration(*inputs, n_boot=100)
    fig = figure_judge_calibration(frame)
    judge_trace = fig.data[1]
    drawn = dict(zip(judge_trace.y, judge_trace.x))
    assert drawn == pytest.approx(dict(zip(frame["judge"], frame["alpha"])))
    colours = dict(zip(judge_trace.y, judge_trace.marker.color))
    assert {colours[j] for j in frame.loc[frame["passes"], "judge"]} <= {PASS_COLOUR}
    assert {colours[j] for j in frame.loc[~frame["passes"], "judge"]} <= {FAIL_COLOUR}
    assert any(shape.x0 == 0.8 for shape in fig.layout.shapes)  # the gate's line
    severities = severity_table(*inputs[:3])
    assert set(severities["kind"]) == {"human", "judge"} and len(severities) == 6
    assert severities.loc[severities["kind"] == "human", "severity"].mean() == pytest.approx(0.0, abs=1e-9)
    sev_fig = figure_judge_severity(severities, max_severity=0.3)
    assert dict(zip(sev_fig.data[0].y, sev_fig.data[0].x)) == pytest.approx(
        dict(zip(severities["rater"], severities["severity"])))
    assert any(shape.x0 == -0.3 and shape.x1 == 0.3 for shape in sev_fig.layout.shapes)

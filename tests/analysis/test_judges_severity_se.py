"""A judge's severity interval: the standard error of its contrast with the graders' mean.

What a lab relies on when the gate reads the interval: the SE is that of the re-centred severity
(a contrast c'b of the fitted rater levels, variance c'Vc), not that of the uncentred level. Checked
three ways: the covariance reproduces mirt's own standard errors on its diagonal; with one judge
beside H graders the levels sum to zero, so the contrast is exactly (1 + 1/H) times the judge's
level and its SE must be (1 + 1/H) times mirt's (4/3 with three graders);
and over simulated datasets the SD of the estimated severity matches the mean reported SE.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from eduart_core.analysis.judges import rater_covariance, rater_severities

TRUE_LEVELS = {"grader 0": -0.2, "grader 1": 0.0, "grader 2": 0.2, "judge": 0.3}  # contrast: 0.3


def _simulate(rng, n=150) -> pd.DataFrame:
    """Simulated ratings: answers x two criteria x three graders and a judge (Rasch, binary)."""
    theta = rng.normal(0, 1.2, n)
    rows = []
    for a in range(n):
        for criterion, difficulty in (("evidence", -0.3), ("context", 0.4)):
            for rater, level in TRUE_LEVELS.items():
                p = 1 / (1 + np.exp(-(theta[a] - difficulty - level)))
                rows.append((f"a{a:03d}", criterion, rater, "judge" if rater == "judge" else "human",
                             float(rng.random() < p), 1.0))
    return pd.DataFrame(rows, columns=["answer", "criterion", "rater", "kind", "points", "max_points"])


def _direct_fit(ratings: pd.DataFrame):
    """mirt's fit on the same ratings, laid out as rater_severities lays them out."""
    from mirt.estimation import fit_mfrm
    from mirt.models import Facet, ManyFacetRaschModel

    answers = sorted(ratings["answer"].unique())
    pairs = ratings[["criterion", "rater"]].drop_duplicates().sort_values(["criterion", "rater"])
    criteria, raters = sorted(ratings["criterion"].unique()), sorted(ratings["rater"].unique())
    column = {(c, r): k for k, (c, r) in enumerate(zip(pairs["criterion"], pairs["rater"]))}
    x = np.full((len(answers), len(column)), np.nan)
    for row in ratings.itertuples(index=False):
        x[answers.index(row.answer), column[(row.criterion, row.rater)]] = row.points
    items = np.array([criteria.index(c) for c in pairs["criterion"]])
    levels = np.broadcast_to(np.array([raters.index(r) for r in pairs["rater"]]), x.shape)
    model = ManyFacetRaschModel(len(criteria), [Facet("rater", len(raters))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fit_mfrm(model, x, {"rater": levels}, item_indices=items)
    return model, result, x, levels, items, raters


def test_the_covariance_reproduces_mirts_standard_errors_and_the_judge_se_is_four_thirds():
    ratings = _simulate(np.random.default_rng(11))
    model, result, x, levels, items, raters = _direct_fit(ratings)
    cov = rater_covariance(model, result, x, levels, items)
    assert np.sqrt(np.diag(cov)) == pytest.approx(result.facet_se["rater"], rel=1e-8)
    assert cov.sum(axis=1) == pytest.approx(np.zeros(len(raters)), abs=1e-10)  # the levels sum to zero
    table = rater_severities(ratings).set_index("rater")
    j = raters.index("judge")
    raw_level, raw_se = result.facet_parameters["rater"][j], result.facet_se["rater"][j]
    assert table.at["judge", "severity"] == pytest.approx(4 / 3 * raw_level, abs=1e-4)
    assert table.at["judge", "severity_se"] == pytest.approx(4 / 3 * raw_se, rel=1e-3)  # not raw_se
    assert table.at["judge", "severity_high"] - table.at["judge", "severity_low"] == pytest.approx(
        2 * 1.96 * table.at["judge", "severity_se"])
    # a grader's contrast involves the judge too: its SE is c'Vc, smaller than the naive sum of variances
    g = raters.index("grader 0")
    contrast = -np.full(len(raters), 0.0)
    contrast[g] += 1
    contrast[[raters.index(r) for r in raters if r != "judge"]] -= 1 / 3
    assert table.at["grader 0", "severity_se"] == pytest.approx(float(np.sqrt(contrast @ cov @ contrast)), rel=1e-3)


@pytest.mark.slow
def test_the_reported_se_matches_the_spread_over_simulated_datasets():
    """300 simulated datasets (150 answers, 2 criteria, 3 graders and a judge at +0.3 logit from them)."""
    rng = np.random.default_rng(7)
    severities, ses = [], []
    for _ in range(300):
        table = rater_severities(_simulate(rng)).set_index("rater")
        severities.append(table.at["judge", "severity"])
        ses.append(table.at["judge", "severity_se"])
    ratio = np.std(severities, ddof=1) / np.mean(ses)
    assert ratio == pytest.approx(1.0, abs=0.08), ratio  # the uncentred SE would give about 4/3
    assert np.mean(severities) == pytest.approx(0.3, abs=0.03)

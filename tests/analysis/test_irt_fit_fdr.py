"""Item-fit flags under multiplicity control.

What a researcher relies on: an item reaches the suspect-key queue as "misfits the IRT model" only
when its misfit is beyond what chance gives across all the items of the fit. Each item's p is the
one-sided normal p of its larger (underfit) or smaller (overfit) fit t, doubled (Bonferroni over
infit and outfit); q is the Benjamini-Hochberg adjustment of those p across the fit's items, the
same numbers statsmodels gives. On panels simulated from the model itself almost no item is
flagged, while a reversed key still is, and its reason in the queue says the rule.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests

from eduart_core.analysis.irt_fit import FIT_FDR, ITEM_FIT_RULE, MNSQ_RANGE, bh_adjust, item_fit
from eduart_core.analysis.irt_pcm import fit_model
from eduart_core.analysis.keyflags import FlagContext, irt_misfit_flags, reason_words
from eduart_core.vocab import IRT_RASCH

REVERSED = "i003"


def rasch_scores(n: int, k: int, seed: int, reverse: str | None = None) -> pd.DataFrame:
    """A long score frame drawn from the Rasch model (abilities SD 1.2); ``reverse``: that item's key reversed."""
    rng = np.random.default_rng(seed)
    theta, b = rng.normal(0, 1.2, n), rng.normal(0, 1, k)
    right = (rng.random((n, k)) < 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))).astype(float)
    ids = [f"i{j:03d}" for j in range(k)]
    if reverse is not None:
        right[:, ids.index(reverse)] = 1 - right[:, ids.index(reverse)]
    e, j = np.meshgrid(np.arange(n), np.arange(k), indexing="ij")
    return pd.DataFrame({"model": [f"m{i:03d}" for i in e.ravel()], "condition": "default",
                         "item_id": np.array(ids)[j.ravel()], "type": "multiple_choice_radio",
                         "score": right.ravel(), "correct": right.ravel() >= 0.5})


def test_bh_adjust_is_statsmodels_fdr_bh_and_leaves_missing_tests_out():
    p = np.array([0.01, 0.04, 0.03, 0.005, np.nan, 0.5])
    q = bh_adjust(p)
    finite = np.isfinite(p)
    assert np.allclose(q[finite], multipletests(p[finite], method="fdr_bh")[1])
    # by hand over the five tests: sorted 0.005, 0.01, 0.03, 0.04, 0.5 times 5/rank, then the running minimum from the top
    assert np.allclose(q[finite], [0.025, 0.05, 0.05, 0.025, 0.5])
    assert np.isnan(q[4])
    rng = np.random.default_rng(3)
    many = rng.uniform(size=300) ** 3
    assert np.allclose(bh_adjust(many), multipletests(many, method="fdr_bh")[1])


def test_item_fit_p_and_q_follow_the_stated_rule():
    table = item_fit(fit_model(rasch_scores(60, 30, 1, reverse=REVERSED), IRT_RASCH))
    larger = table[["infit_t", "outfit_t"]].max(axis=1)
    smaller = table[["infit_t", "outfit_t"]].min(axis=1)
    assert np.allclose(table["underfit_p"], np.minimum(1, 2 * norm.sf(larger)))
    assert np.allclose(table["overfit_p"], np.minimum(1, 2 * norm.cdf(smaller)))
    assert np.allclose(table["underfit_q"], multipletests(table["underfit_p"], method="fdr_bh")[1])
    assert np.allclose(table["overfit_q"], multipletests(table["overfit_p"], method="fdr_bh")[1])
    under = (table[["infit", "outfit"]].max(axis=1) > MNSQ_RANGE[1]) & (table["underfit_q"] < FIT_FDR)
    assert ((table["flag"] == "underfit") == under).all()
    over = (table["flag"] == "overfit")
    assert (table.loc[over, "overfit_q"] < FIT_FDR).all()
    assert (table.loc[over, ["infit", "outfit"]].min(axis=1) < MNSQ_RANGE[0]).all()
    assert "Benjamini-Hochberg" in ITEM_FIT_RULE and "Bonferroni" in ITEM_FIT_RULE
    assert table.attrs["fit_rule"] == ITEM_FIT_RULE and table.attrs["n_tested"] == len(table)


@pytest.mark.parametrize("n", [16, 200])
def test_where_the_model_holds_almost_no_item_is_flagged_but_a_reversed_key_is(n):
    """16 examinees is the demo's panel of model x condition pairs; 200 a panel of people."""
    flagged = tested = 0
    for seed in range(4):
        table = item_fit(fit_model(rasch_scores(n, 40, seed), IRT_RASCH))
        flagged += int(table["flag"].notna().sum())
        tested += len(table)
    assert tested >= 150 and flagged <= 0.05 * tested
    table = item_fit(fit_model(rasch_scores(n, 40, 9, reverse=REVERSED), IRT_RASCH)).set_index("item_id")
    planted = table.loc[REVERSED]
    assert planted["flag"] == "underfit" and planted["underfit_q"] < FIT_FDR
    assert (table.drop(index=REVERSED)["flag"] == "underfit").sum() <= 1


def test_the_suspect_reason_states_the_multiplicity_rule():
    flags = irt_misfit_flags(rasch_scores(60, 30, 1, reverse=REVERSED), FlagContext())
    assert list(flags["item_id"]) == [REVERSED]
    detail = flags["detail"].iloc[0]
    assert "Benjamini-Hochberg q" in detail and "across 30 items" in detail and "Bonferroni" in detail
    assert "false discovery rate" in reason_words("irt_misfit")


def test_the_queue_fits_one_examinee_per_model_in_the_context_condition():
    """Two conditions with the same answers would double the panel and shrink the SEs; the queue fits one."""
    once = rasch_scores(60, 30, 1, reverse=REVERSED)
    twice = pd.concat([once, once.assign(condition="motivation")], ignore_index=True)
    flags = irt_misfit_flags(twice, FlagContext())
    assert list(flags["item_id"]) == [REVERSED]
    detail = flags["detail"].iloc[0]
    assert "fit to 60 examinees" in detail and "one per model, its answers in the default condition" in detail
    other = irt_misfit_flags(twice.assign(condition="motivation"), FlagContext())
    assert other.empty  # nothing in the context's condition: no fit, no flag

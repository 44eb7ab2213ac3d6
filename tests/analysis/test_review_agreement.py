"""Agreement statistics equal the kept libraries' on the same table (statsmodels, krippendorff),
including the sparse evaluation used for large rounds and the bootstrap interval."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from eduart_core.analysis import agreement as A


def random_ratings(n_units: int, raters: list[str], n_categories: int, seed: int, missing: float = 0.0,
                   agree: float = 0.7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for unit in range(n_units):
        truth = int(rng.integers(0, n_categories))
        for rater in raters:
            if rng.random() < missing:
                continue
            value = truth if rng.random() < agree else int(rng.integers(0, n_categories))
            rows.append({"unit": f"u{unit}", "rater": rater, "category": f'"value {value}"'})
    return pd.DataFrame(rows)


def package_numbers(ratings: pd.DataFrame) -> dict:
    """The three statistics computed straight from the libraries on the reliability table."""
    import krippendorff
    from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa, to_table

    table = A.reliability_data(ratings)  # raters x units, NaN where missing
    codes = {c: i for i, c in enumerate(sorted(pd.unique(table.stack().dropna())))}
    numeric = table.apply(lambda col: col.map(codes)).to_numpy(dtype=float)
    out = {"alpha": krippendorff.alpha(reliability_data=numeric, level_of_measurement="nominal")}
    complete = numeric[:, ~np.isnan(numeric).any(axis=0)].T.astype(int)  # units rated by everyone
    if numeric.shape[0] == 2:
        out["cohen"] = cohens_kappa(to_table(complete, bins=len(codes))[0]).kappa
    out["fleiss"] = fleiss_kappa(aggregate_raters(complete, n_cat=len(codes))[0])
    return out


def test_two_reviewers_match_statsmodels_and_krippendorff():
    ratings = random_ratings(80, ["Anna", "Bruno"], 4, seed=3)
    ours = A.agreement(ratings)
    theirs = package_numbers(ratings)
    assert ours["units"] == 80 and ours["reviewers"] == 2
    assert ours["cohen_kappa"] == pytest.approx(theirs["cohen"], abs=1e-12)
    assert ours["fleiss_kappa"] == pytest.approx(theirs["fleiss"], abs=1e-12)
    assert ours["krippendorff_alpha"] == pytest.approx(theirs["alpha"], abs=1e-12)
    low, high = ours["alpha_ci"]
    assert low < ours["krippendorff_alpha"] < high


def test_three_reviewers_with_missing_decisions():
    ratings = random_ratings(120, ["Anna", "Bruno", "Carla"], 3, seed=5, missing=0.2)
    ours = A.agreement(ratings)
    theirs = package_numbers(ratings)
    assert ours["cohen_kappa"] is None  # only defined for exactly two reviewers
    assert ours["krippendorff_alpha"] == pytest.approx(theirs["alpha"], abs=1e-12)
    # Fleiss needs equal ratings per unit: the units rated by all three (the most common count here)
    assert ours["fleiss_kappa"] == pytest.approx(theirs["fleiss"], abs=1e-12)
    counts = A.pairable(ratings).groupby("unit").size()
    assert ours["fleiss_units"] == int((counts == 3).sum())
    assert ours["units"] == len(counts)


def test_sparse_alpha_equals_the_package_and_bootstrap_is_reproducible():
    import krippendorff
    from scipy import sparse

    rng = np.random.default_rng(9)
    counts = rng.integers(0, 3, size=(60, 7))
    counts[rng.random(60) < 0.2] = 0
    expected = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
    assert A.alpha_from_counts(sparse.csr_matrix(counts)) == pytest.approx(expected, abs=1e-12)
    first = A.bootstrap_alpha(sparse.csr_matrix(counts), n_boot=500, seed=1)
    assert first == A.bootstrap_alpha(sparse.csr_matrix(counts), n_boot=500, seed=1)


def test_large_rounds_use_the_sparse_path_with_the_same_result(monkeypatch):
    ratings = random_ratings(150, ["Anna", "Bruno"], 40, seed=11, agree=0.8)
    dense = A.agreement(ratings, n_boot=200)
    monkeypatch.setattr(A, "DENSE_ALPHA_CELLS", 0)
    sparse_result = A.agreement(ratings, n_boot=200)
    assert sparse_result["krippendorff_alpha"] == pytest.approx(dense["krippendorff_alpha"], abs=1e-12)
    assert sparse_result["alpha_ci"] == dense["alpha_ci"]


def test_undefined_statistics_are_none_not_nan():
    same = pd.DataFrame({"unit": ["u1", "u1", "u2", "u2"], "rater": ["A", "B", "A", "B"],
                         "category": ['"x"', '"x"', '"y"', '"y"']})
    result = A.agreement(same)
    assert result["percent"] == 1.0 and result["units"] == 2
    one_category = same.assign(category='"x"')
    result = A.agreement(one_category)
    assert result["percent"] == 1.0
    assert result["cohen_kappa"] is None and result["fleiss_kappa"] is None and result["krippendorff_alpha"] is None
    assert A.agreement(same.iloc[:1])["units"] == 0  # a field one reviewer decided carries no agreement


def test_agreement_table_groups_and_all_row():
    ratings = random_ratings(40, ["Anna", "Bruno"], 3, seed=2)
    ratings["field"] = np.where(ratings["unit"].str[1:].astype(int) % 2 == 0, "answers", "question_text")
    table = A.agreement_table(ratings, ["field"], n_boot=100)
    assert list(table["field"]) == ["answers", "question_text", "all"]
    assert table["units"].tolist() == [20, 20, 40]


def test_one_group_and_the_all_row_agree():
    ratings = random_ratings(30, ["Anna", "Bruno"], 3, seed=4).assign(round=1)
    table = A.agreement_table(ratings, ["round"], n_boot=100)
    assert list(table["round"]) == [1, "all"]
    numbers = table.drop(columns=["round"])
    assert numbers.iloc[0].equals(numbers.iloc[1])
    assert table.iloc[1]["krippendorff_alpha"] == A.agreement(ratings, n_boot=100)["krippendorff_alpha"]

"""Analysis engine: hand-computed cases, independent scipy/statsmodels cross-checks, edge cases,
and the published leaderboard recomputed from the published type means."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from eduart_core.analysis import (
    format_spread,
    image_effect,
    item_statistics,
    item_statistics_summary,
    leaderboard,
    logistic_regression,
    macro_from_type_means,
    macro_scores,
    motivation_by_model_type,
    motivation_by_type,
    motivation_effect,
    not_estimable_text,
    profile_impact,
    reliability,
    type_scores,
    wilson_interval,
)
from eduart_core.errors import UserError
from eduart_core.simulate.score_frames import scaled_mix, synthetic_scores

ROOT = Path(__file__).resolve().parents[2]


def frame(rows, **defaults) -> pd.DataFrame:
    """Long frame from (model, condition, item_id, type, score) tuples plus column defaults."""
    base = {"language": "it", "has_image": False}
    base.update(defaults)
    df = pd.DataFrame(rows, columns=["model", "condition", "item_id", "type", "score"])
    for k, v in base.items():
        if k not in df.columns:
            df[k] = v
    return df


@pytest.fixture(scope="module")
def synth() -> pd.DataFrame:
    return synthetic_scores(6, 120, seed=3)


# --- intervals ---------------------------------------------------------------------------------

def test_wilson_matches_published_check():
    low, high = wilson_interval(0.957, 370)
    assert (round(low, 3), round(high, 3)) == (0.931, 0.973)


def test_wilson_is_vectorised_and_matches_scipy():
    k = np.array([0, 3, 17, 40])
    n = np.array([10, 10, 20, 40])
    low, high = wilson_interval(k / n, n)
    for i in range(len(k)):
        ci = stats.binomtest(int(k[i]), int(n[i])).proportion_ci(method="wilson")
        assert low[i] == pytest.approx(ci.low, abs=1e-4)
        assert high[i] == pytest.approx(ci.high, abs=1e-4)
    assert np.isnan(wilson_interval(0.5, 0)[0])


# --- scores ------------------------------------------------------------------------------------

def tiny_scores() -> pd.DataFrame:
    return frame([
        ("A", "default", "q1", "multiple_choice_radio", 1.0),
        ("A", "default", "q2", "multiple_choice_radio", 1.0),
        ("A", "default", "q3", "true_false", 0.0),
        ("B", "default", "q1", "multiple_choice_radio", 0.0),
        ("B", "default", "q2", "multiple_choice_radio", 1.0),
        ("B", "default", "q3", "true_false", 1.0),
    ])


def test_type_scores_hand_computed():
    out = type_scores(tiny_scores())
    assert list(out.columns) == ["model", "condition", "type", "n", "mean", "ci_low", "ci_high"]
    a_mcq = out[(out.model == "A") & (out.type == "multiple_choice_radio")].iloc[0]
    assert (a_mcq["n"], a_mcq["mean"]) == (2, 1.0)
    low, high = wilson_interval(1.0, 2)
    assert (a_mcq["ci_low"], a_mcq["ci_high"]) == pytest.approx((low, high))
    assert list(out[out.model == "A"].type) == ["multiple_choice_radio", "true_false"]


def test_macro_micro_and_mcq_hand_computed():
    out = macro_scores(tiny_scores()).set_index("model")
    assert out.loc["A", "macro"] == pytest.approx(0.5)      # (1.0 + 0.0) / 2
    assert out.loc["A", "micro"] == pytest.approx(2 / 3)    # pooled over 3 items
    assert out.loc["B", "macro"] == pytest.approx(0.75)     # (0.5 + 1.0) / 2
    assert out.loc["B", "mcq"] == pytest.approx(0.5)
    assert out.loc["B", "mcq_ci_low"] == pytest.approx(wilson_interval(0.5, 2)[0])
    assert out.loc["A", "n_items"] == 3


def test_leaderboard_ranks_by_macro_within_condition():
    lb = leaderboard(tiny_scores())
    assert list(lb.columns) == ["model", "condition", "macro", "macro_ci_low", "macro_ci_high", "micro", "mcq",
                                "mcq_ci_low", "mcq_ci_high", "rank", "rank_best", "rank_worst", "tie_group",
                                "n_items", "n_mcq", "n_types", "n_common"]
    assert list(lb.model) == ["B", "A"] and list(lb["rank"]) == [1, 2]


def test_macro_without_mcq_items_is_nan_not_an_error():
    df = frame([("A", "default", "q1", "true_false", 1.0)])
    out = macro_scores(df).iloc[0]
    assert np.isnan(out["mcq"]) and out["macro"] == 1.0 and out["n_mcq"] == 0


def _reference_csv() -> Path:
    repo_copy = ROOT / "data" / "reference" / "type_scores.csv"
    return repo_copy if repo_copy.exists() else Path(
        "/work/shared/reference/eduart2026_published_type_scores.csv")


def test_published_leaderboard_from_published_type_means():
    ref = pd.read_csv(_reference_csv())
    ref = ref.drop(columns="model", errors="ignore").rename(columns={"display_name": "model"})
    lb = leaderboard(ref)
    top = lb[lb.condition == "default"].head(3)
    assert list(top.model) == ["Gemini 3.1 Pro Preview", "GPT-5.5", "Gemini 3.5 Flash"]
    assert top.macro.to_numpy() * 100 == pytest.approx([82.8, 80.0, 68.9], abs=0.15)
    assert (top.n_items == 871).all()
    # the MCQ interval of the reference is the published one
    gem = top.iloc[0]
    assert (gem.mcq, gem.mcq_ci_low, gem.mcq_ci_high) == pytest.approx((0.957, 0.931, 0.973))


def test_wilson_reproduces_every_published_type_interval():
    ref = pd.read_csv(_reference_csv())
    low_col = "ci_low_pct" if "ci_low_pct" in ref.columns else "wilson_ci_low_pct"
    high_col = low_col.replace("low", "high")
    ref = ref.dropna(subset=[low_col])
    assert len(ref) == 84                                   # 12 models x 7 types, default
    low, high = wilson_interval(ref.mean_pct / 100, ref.n)
    # the published means are rounded to 0.1 pp, so allow that much plus the CI's own rounding
    assert np.abs(low * 100 - ref[low_col]).max() < 0.15
    assert np.abs(high * 100 - ref[high_col]).max() < 0.15


def test_aggregate_and_raw_paths_give_the_same_leaderboard(synth):
    raw = macro_scores(synth)
    agg = macro_from_type_means(type_scores(synth)[["model", "condition", "type", "mean", "n"]])
    cols = ["macro", "micro", "mcq", "mcq_ci_low", "mcq_ci_high", "n_items"]
    pd.testing.assert_frame_equal(raw[cols], agg[cols])


def test_format_spread_hand_computed():
    out = format_spread(tiny_scores()).set_index("model")
    assert out.loc["A", "best_type"] == "multiple_choice_radio"
    assert out.loc["A", "worst_type"] == "true_false"
    assert out.loc["A", "spread"] == pytest.approx(1.0)
    assert out.loc["B", "best_type"] == "true_false" and out.loc["B", "spread"] == pytest.approx(0.5)


def test_profile_impact_hand_computed():
    strict = tiny_scores()
    paper = strict.copy()
    paper.loc[(paper.model == "A") & (paper.item_id == "q3"), "score"] = 0.5
    out = profile_impact(strict, paper)
    row = out[(out.model == "A") & (out.type == "true_false")].iloc[0]
    assert (row["strict_mean"], row["paper_mean"], row["delta"], row["n_changed"]) == (0, 0.5, 0.5, 1)
    assert out.loc[out.model == "B", "delta"].abs().max() == 0


# --- item statistics ---------------------------------------------------------------------------

def matrix_frame(matrix: np.ndarray, types=None) -> pd.DataFrame:
    """Examinee i -> model m<i>, default condition; item j -> q<j>."""
    rows = []
    for i, row in enumerate(matrix):
        for j, s in enumerate(row):
            t = types[j] if types else "multiple_choice_radio"
            rows.append((f"m{i}", "default", f"q{j}", t, s))
    return frame(rows)


MATRIX = np.array([
    [1, 1, 1, 0, 1],
    [1, 0, 1, 0, 1],
    [1, 1, 0, 0, 0],
    [1, 0, 0, 1, 0],
    [1, 1, 1, 1, 1],
], dtype=float)


def test_item_statistics_corrected_matches_pearsonr():
    out = item_statistics(matrix_frame(MATRIX)).set_index("item_id")
    assert list(out.reset_index().columns)[:7] == ["item_id", "type", "n_examinees", "p", "r_pb",
                                                   "difficulty_category",
                                                   "discrimination_category"]
    for j in range(1, 5):
        rest = (MATRIX.sum(axis=1) - MATRIX[:, j]) / 4
        expected = stats.pearsonr(MATRIX[:, j], rest).statistic
        assert out.loc[f"q{j}", "r_pb"] == pytest.approx(expected, abs=1e-12)
        assert out.loc[f"q{j}", "p"] == pytest.approx(MATRIX[:, j].mean())
    assert out.loc["q0", "n_examinees"] == 5


def test_r_pb_interval_is_the_fisher_interval_of_pearsonr(synth):
    out = item_statistics(synth, conditions="default").set_index("item_id")
    wide = synth[synth.condition == "default"].pivot_table(
        index="model", columns="item_id", values="score")
    item = out["r_pb"].dropna().index[0]
    rest = (wide.sum(axis=1) - wide[item]) / (wide.shape[1] - 1)
    ci = stats.pearsonr(wide[item], rest).confidence_interval()
    assert (out.loc[item, "r_pb_ci_low"], out.loc[item, "r_pb_ci_high"]) == pytest.approx(
        (ci.low, ci.high), abs=1e-5)


def test_item_statistics_uncorrected_uses_the_total():
    out = item_statistics(matrix_frame(MATRIX), corrected=False).set_index("item_id")
    total = MATRIX.mean(axis=1)
    assert out.loc["q3", "r_pb"] == pytest.approx(stats.pearsonr(MATRIX[:, 3], total).statistic)
    assert out.attrs["corrected"] is False


def test_item_everyone_gets_right_keeps_difficulty_but_no_discrimination():
    row = item_statistics(matrix_frame(MATRIX)).set_index("item_id").loc["q0"]
    assert row["p"] == 1.0 and np.isnan(row["r_pb"])
    assert row["difficulty_category"] == "very_easy" and row["discrimination_category"] is None


def test_difficulty_and_discrimination_cut_offs():
    # 10 examinees; item j answered right by the first k_j of them
    ks = [9, 7, 3, 1, 0]
    m = np.zeros((10, len(ks)))
    for j, k in enumerate(ks):
        m[:k, j] = 1
    out = item_statistics(matrix_frame(m), corrected=False).set_index("item_id")
    assert list(out.difficulty_category) == ["very_easy", "easy", "medium", "hard", "very_hard"]
    from eduart_core.analysis.ctt import _discrimination
    assert list(_discrimination(np.array([0.30, 0.2999, 0.10, 0.0999, -0.5]))) == [
        "good", "fair", "fair", "poor", "poor"]


def test_item_statistics_vectorised_agrees_with_loop_on_synthetic(synth):
    out = item_statistics(synth).set_index("item_id")
    wide = synth.pivot_table(index=["model", "condition"], columns="item_id", values="score")
    total = wide.sum(axis=1)
    for item in wide.columns[:40]:
        x = wide[item]
        rest = (total - x) / (wide.shape[1] - 1)
        expected = np.nan if x.std() == 0 else stats.pearsonr(x, rest).statistic
        assert out.loc[item, "r_pb"] == pytest.approx(expected, abs=1e-10, nan_ok=True)
    assert out.attrs["n_examinees"] == 12


def test_item_statistics_condition_filter_counts_examinees(synth):
    out = item_statistics(synth, conditions="default")
    assert (out.n_examinees == 6).all()
    assert out.attrs["conditions"] == ["default"]


def test_item_statistics_summary_tables():
    m = np.vstack([MATRIX, [1, 0, 0, 0, 0]])
    m = np.column_stack([m, np.zeros(len(m))])          # q0 all right, q5 right by no one
    summary = item_statistics_summary(matrix_frame(m))
    overall = summary["overall"].iloc[0]
    assert (overall["n_items"], overall["n_not_estimable"]) == (6, 2)
    assert (overall["n_all_right"], overall["n_all_wrong"]) == (1, 1)
    stats_frame = item_statistics(matrix_frame(m))
    assert summary["difficulty"]["n_items"].sum() == 6
    disc = summary["discrimination"]
    assert disc.iloc[-1]["type"] == "all" and disc.iloc[-1]["n"] == overall["n_estimable"]
    assert disc.iloc[-1][["good", "fair", "poor"]].sum() == overall["n_estimable"]
    assert overall["mean_p"] == pytest.approx(stats_frame["p"].mean())
    assert overall["sd_p"] == pytest.approx(stats_frame["p"].std(ddof=1))


def test_reliability_kr20_hand_computed_with_feldt_interval():
    out = reliability(matrix_frame(MATRIX)).iloc[0]
    k = MATRIX.shape[1]
    pq = MATRIX.var(axis=0, ddof=1).sum()
    kr20 = k / (k - 1) * (1 - pq / MATRIX.sum(axis=1).var(ddof=1))
    assert out["alpha"] == pytest.approx(kr20)
    assert out["method"].startswith("KR-20")
    assert out["ci_low"] < out["alpha"] < out["ci_high"]
    assert out["ci_low"] == pytest.approx(1 - (1 - kr20) * stats.f.ppf(0.975, 4, 16))
    assert (out["n_examinees"], out["n_items"]) == (5, 5)


# --- logistic regression -----------------------------------------------------------------------

def row_level_logit(df, condition="default", threshold=0.5, ref_model=None):
    d = df[df.condition == condition].copy()
    d["correct"] = (d.score >= threshold).astype(int)
    ref_model = ref_model or sorted(d.model.unique())[0]
    formula = ("correct ~ C(type, Treatment('multiple_choice_radio')) + C(has_image)"
               f" + C(language, Treatment('en')) + C(model, Treatment({ref_model!r}))")
    model = sm.Logit.from_formula(formula, d)
    FORMULA_NAMES[:] = model.exog_names
    return d, model


def formula_name(predictor: str) -> str:
    """Our predictor name -> the statsmodels formula term name of `row_level_logit`."""
    if predictor == "intercept":
        return "Intercept"
    factor, level = predictor.split(":", 1)
    term = {"type": "C(type, Treatment('multiple_choice_radio'))",
            "has_image": "C(has_image)", "language": "C(language, Treatment('en'))"}.get(factor)
    if factor == "model":
        return next(n for n in FORMULA_NAMES if n.startswith("C(model") and n.endswith(f"[T.{level}]"))
    return f"{term}[T.{level}]"


FORMULA_NAMES: list[str] = []


def test_logistic_regression_aggregated_equals_row_level_logit(synth):
    ours = logistic_regression(synth)
    d, model = row_level_logit(synth)
    fit = model.fit(disp=0, tol=1e-12, maxiter=100)
    assert len(ours) == len(fit.params)
    ours = ours.set_index(ours.predictor.map(formula_name))
    assert ours.beta.to_numpy() == pytest.approx(fit.params[ours.index].to_numpy(), abs=1e-6)
    assert ours.se.to_numpy() == pytest.approx(fit.bse[ours.index].to_numpy(), abs=1e-6)
    ours = ours.reset_index(drop=True)
    assert ours.predictor.iloc[0] == "intercept"
    assert "has_image:True" in set(ours.predictor) and "language:it" in set(ours.predictor)
    assert "model:Sim Model 002" in set(ours.predictor)
    assert "model:Sim Model 001" not in set(ours.predictor)
    assert ours.attrs["n_obs"] == len(d)


def test_logistic_regression_item_clustered_equals_statsmodels_cluster(synth):
    ours = logistic_regression(synth, cluster="item")
    d, model = row_level_logit(synth)
    groups = pd.factorize(d.item_id)[0]
    fit = model.fit(disp=0, tol=1e-12, maxiter=100, cov_type="cluster",
                    cov_kwds={"groups": groups})
    index = ours.predictor.map(formula_name)
    assert ours.se.to_numpy() == pytest.approx(fit.bse[index].to_numpy(), abs=1e-6)
    assert ours.p.to_numpy() == pytest.approx(fit.pvalues[index].to_numpy(), abs=1e-6)
    row = ours.set_index("predictor").loc["has_image:True"]
    assert row.odds_ratio == pytest.approx(np.exp(row.beta))
    assert row.ci_low == pytest.approx(np.exp(row.beta - 1.959964 * row.se), rel=1e-5)


def test_logistic_regression_reference_model_override(synth):
    out = logistic_regression(synth, reference={"model": "Sim Model 003"})
    names = set(out.predictor)
    assert "model:Sim Model 001" in names and "model:Sim Model 003" not in names
    with pytest.raises(UserError, match="not in the data"):
        logistic_regression(synth, reference={"model": "nope"})


def test_logistic_regression_single_model_language_and_no_images(synth):
    d = synth[(synth.model == "Sim Model 001") & (synth.language == "it")]
    d = d.assign(has_image=False)
    out = logistic_regression(d)
    assert not any(p.startswith(("model:", "language:", "has_image:")) for p in out.predictor)
    assert out.predictor.iloc[0] == "intercept" and len(out) == 7


# --- motivation --------------------------------------------------------------------------------

def motivation_frame() -> pd.DataFrame:
    rows = []
    default = [1, 1, 0, 0, 1, 0.5, 1, 0]
    motiv = [1, 0, 1, 1, 1, 0.0, 0, 0]
    types = ["multiple_choice_radio"] * 4 + ["true_false"] * 4
    for j, (a, b, t) in enumerate(zip(default, motiv, types)):
        rows.append(("A", "default", f"q{j}", t, a))
        rows.append(("A", "motivation", f"q{j}", t, b))
    rows.append(("A", "default", "only-default", "true_false", 1.0))   # not paired
    rows.append(("C", "default", "q0", "multiple_choice_radio", 1.0))  # no motivation run
    return frame(rows)


def test_motivation_effect_hand_computed_and_cross_checked():
    df = motivation_frame()
    out = motivation_effect(df).set_index("model")
    a = out.loc["A"]
    d = np.array([1, 1, 0, 0, 1, 0.5, 1, 0], float)
    m = np.array([1, 0, 1, 1, 1, 0.0, 0, 0], float)
    assert a["n_paired"] == 8
    assert (a["n_improved"], a["n_same"], a["n_degraded"]) == (2, 3, 3)
    assert a["delta_micro"] == pytest.approx((m - d).mean())
    assert a["default_macro"] == pytest.approx((0.5 + 0.625) / 2)
    assert a["motivation_macro"] == pytest.approx((0.75 + 0.25) / 2)
    assert a["delta_macro"] == pytest.approx(a["motivation_macro"] - a["default_macro"])
    assert a["p_ttest"] == pytest.approx(stats.ttest_rel(m, d).pvalue)
    nz = (m - d)[(m - d) != 0]
    assert a["p_wilcoxon"] == pytest.approx(stats.wilcoxon(nz).pvalue)
    # binarised at 0.5: q5 0.5 -> right; discordant: q1, q5, q6 right->wrong, q2, q3 wrong->right
    assert a["n_discordant"] == 5
    assert a["p_mcnemar"] == pytest.approx(mcnemar([[2, 3], [2, 1]], exact=True).pvalue)
    t = stats.t.ppf(0.975, 7) * (m - d).std(ddof=1) / np.sqrt(8)
    assert (a["delta_micro_ci_low"], a["delta_micro_ci_high"]) == pytest.approx(
        ((m - d).mean() - t, (m - d).mean() + t))


def test_model_missing_a_condition_keeps_a_row_without_statistics():
    out = motivation_effect(motivation_frame()).set_index("model")
    c = out.loc["C"]
    assert c["n_paired"] == 0 and np.isnan(c["delta_micro"]) and np.isnan(c["p_holm"])


def test_holm_adjusts_wilcoxon_across_models(synth):
    out = motivation_effect(synth)
    expected = multipletests(out.p_wilcoxon, method="holm")[1]
    assert out.p_holm.to_numpy() == pytest.approx(expected)
    assert (out.n_improved + out.n_same + out.n_degraded == out.n_paired).all()
    from eduart_core.analysis.motivation import holm
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.5, 0.04])
    assert holm(p) == pytest.approx(multipletests(p, method="holm")[1])


def test_motivation_by_type_table9_shape():
    df = motivation_frame()
    df2 = df.copy()
    df2["model"] = df2["model"].replace({"A": "B"})
    df2.loc[df2.condition == "motivation", "score"] = 1.0
    both = pd.concat([df, df2[df2.model == "B"]])
    per = motivation_by_model_type(both).set_index(["model", "type"])
    assert per.loc[("A", "multiple_choice_radio"), "delta"] == pytest.approx(0.25)
    assert per.loc[("B", "multiple_choice_radio"), "delta"] == pytest.approx(0.5)
    tab = motivation_by_type(both).set_index("type")
    row = tab.loc["multiple_choice_radio"]
    assert (row["mean_delta"], row["min_delta"], row["max_delta"]) == pytest.approx((0.375, 0.25, 0.5))
    assert row["n_models"] == 2 and row["max_model"] == "B"


# --- image effect ------------------------------------------------------------------------------

def test_image_effect_hand_computed_and_model_without_images():
    df = tiny_scores()
    df.loc[df.item_id == "q3", "has_image"] = True
    df = pd.concat([df, frame([("N", "default", "q9", "true_false", 1.0)])])
    out = image_effect(df).set_index("model")
    assert (out.loc["A", "mean_without"], out.loc["A", "mean_with"]) == (1.0, 0.0)
    assert out.loc["A", "delta"] == -1.0
    assert (out.loc["A", "n_without"], out.loc["A", "n_with"]) == (2, 1)
    assert out.loc["N", "n_with"] == 0 and np.isnan(out.loc["N", "delta"])


# --- bad input ---------------------------------------------------------------------------------

def test_nan_scores_are_dropped_and_counted(synth):
    dirty = synth.copy()
    dirty.loc[dirty.index[:5], "score"] = np.nan
    clean = synth.iloc[5:]
    for fn in (type_scores, macro_scores, item_statistics, motivation_effect, image_effect,
               logistic_regression):
        out = fn(dirty)
        assert out.attrs["n_dropped"] == 5, fn.__name__
        pd.testing.assert_frame_equal(out, fn(clean), check_like=False, obj=fn.__name__)


def test_bad_input_gives_one_line_user_error():
    with pytest.raises(UserError, match="lacks column.*score"):
        type_scores(pd.DataFrame({"model": ["A"], "condition": ["default"], "type": ["x"]}))
    bad = tiny_scores()
    bad.loc[0, "score"] = 1.5
    with pytest.raises(UserError, match="outside"):
        macro_scores(bad)


# --- synthetic generator -----------------------------------------------------------------------

def test_synthetic_scores_shape_mix_and_determinism():
    assert scaled_mix(871) == {"multiple_choice_radio": 370, "multiple_choice_check": 117,
                               "true_false": 83, "positioning": 108, "completion_closed": 69,
                               "completion_open": 75, "select_errors": 49}
    assert sum(scaled_mix(10_000).values()) == 10_000
    df = synthetic_scores(3, 200, seed=7)
    assert len(df) == 3 * 200 * 2
    assert df.score.between(0, 1).all()
    assert set(df.condition) == {"default", "motivation"}
    pd.testing.assert_frame_equal(df, synthetic_scores(3, 200, seed=7))


def test_logistic_regression_drops_aliased_terms_and_says_so():
    df = tiny_scores()
    df["has_image"] = df["type"] == "true_false"       # image exactly when true/false
    out = logistic_regression(df)
    assert "has_image:True" not in set(out.predictor)
    assert out.attrs["dropped_terms"] == ["has_image:True"]


def test_logistic_regression_names_a_standard_error_it_cannot_estimate():
    """Separated cells (every completion item wrong, every image item wrong) round the clustered
    variance of a term below zero: that term gets no standard error, z, p or interval, and is named,
    instead of the square root of a negative number (a NaN with a RuntimeWarning and no reason)."""
    rows = [("A", "i1", "completion_open", "en", False, 0.0), ("A", "i2", "multiple_choice_radio", "en", False, 0.0),
            ("A", "i4", "multiple_choice_radio", "it", False, 1.0), ("B", "i1", "completion_open", "en", False, 1.0),
            ("B", "i2", "multiple_choice_radio", "it", False, 0.0), ("B", "i3", "completion_open", "it", True, 0.0),
            ("B", "i4", "multiple_choice_radio", "en", False, 0.0)]
    df = pd.DataFrame(rows, columns=["model", "item_id", "type", "language", "has_image", "score"]).assign(
        condition="default")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "invalid value encountered in sqrt"
        out = logistic_regression(df, cluster="item")
    named = out.attrs["se_not_estimable"]
    assert named and set(named) <= set(out["predictor"])
    blank = out[out["predictor"].isin(named)]
    assert blank[["se", "z", "p", "ci_low", "ci_high"]].isna().all().all()
    assert out.loc[~out["predictor"].isin(named), "se"].notna().all()
    assert "not estimable" in not_estimable_text(out) and "Completion (open)" in not_estimable_text(out)
    assert logistic_regression(df).attrs["se_not_estimable"] == []  # the ordinary errors are estimable here


def test_logistic_regression_threshold_binarises_partial_credit():
    df = frame([("A", "default", f"q{j}", "multiple_choice_radio", s)
                for j, s in enumerate([0.5, 0.5, 0.5, 0.0])])
    at_half = logistic_regression(df).iloc[0]
    strict = logistic_regression(df, threshold=0.75).iloc[0]
    assert at_half["odds_ratio"] == pytest.approx(3.0)     # 3 right of 4
    assert np.isinf(strict["beta"]) or strict["beta"] < -10  # none right


def test_single_model_everywhere(synth):
    one = synth[synth.model == "Sim Model 002"]
    eff = motivation_effect(one)
    assert len(eff) == 1 and eff.p_holm.iloc[0] == pytest.approx(eff.p_wilcoxon.iloc[0])
    assert len(leaderboard(one)) == 2                       # one row per condition
    stats_one = item_statistics(one, conditions="default")  # one examinee: nothing estimable
    assert stats_one.r_pb.isna().all() and (stats_one.n_examinees == 1).all()
    assert len(image_effect(one)) == 1 and len(format_spread(one)) == 2


def test_missing_cells_are_left_out_of_item_statistics():
    df = matrix_frame(MATRIX)
    df = df[~((df.model == "m2") & (df.item_id == "q1"))]      # m2 never saw q1
    out = item_statistics(df).set_index("item_id")
    keep = [0, 1, 3, 4]
    x = MATRIX[keep, 1]
    rest = (MATRIX[keep].sum(axis=1) - x) / 4
    assert out.loc["q1", "n_examinees"] == 4
    assert out.loc["q1", "p"] == pytest.approx(x.mean())
    assert out.loc["q1", "r_pb"] == pytest.approx(stats.pearsonr(x, rest).statistic)
    # m2's rest score for another item averages over the 3 other items it did answer
    rest3 = np.array([(MATRIX[i].sum() - MATRIX[i, 3] - (MATRIX[i, 1] if i == 2 else 0))
                      / (3 if i == 2 else 4) for i in range(5)])
    assert out.loc["q3", "r_pb"] == pytest.approx(stats.pearsonr(MATRIX[:, 3], rest3).statistic)


@pytest.mark.slow  # runs the bench command (its own process, a few seconds): CI's second stage
def test_bench_analysis_command_prints_the_table():
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "eduart_core", "bench", "analysis", "--models",
                           "3", "--items", "60", "--repeat", "1"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "3 models x 60 items x 2 conditions = 360 rows" in done.stdout
    for name in ("item_statistics", "logistic_regression(item)", "motivation_effect",
                 "FULL SUITE", "peak memory"):
        assert name in done.stdout

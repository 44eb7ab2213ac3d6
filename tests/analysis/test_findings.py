"""Every finding is a computed statement with its test and n.

What a stakeholder relies on: "within sampling noise" is said only when a paired interval includes
0; "format matters more/as much" is worded from computed shares of variance; the motivation
finding counts rises and drops and counts significance after the Holm correction it names; the
hardest-format finding shows its interval; every finding (also in `show findings`) has a test and n.
"""
from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest

from eduart_core import analysis, findings
from eduart_core.analysis.motivation import holm
from eduart_core.cli import main


def long_frame(accuracy: dict[str, float], n_per_type: int = 40, seed: int = 1,
               types=("multiple_choice_radio", "true_false", "completion_open")) -> pd.DataFrame:
    """Two or more models answering the same items; item difficulty is shared, so scores are paired."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in types:
        ease = rng.uniform(0, 1, n_per_type)
        for model, acc in accuracy.items():
            noise = rng.uniform(0, 1, n_per_type)
            right = (0.5 * ease + 0.5 * noise) < acc
            for i in range(n_per_type):
                rows.append({"model": model, "condition": "default", "item_id": f"{t}-{i:03d}", "type": t,
                             "language": "en", "has_image": False, "score": float(right[i])})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- leader vs runner-up

def test_paired_difference_equals_the_macro_gap_on_common_items_and_is_reproducible():
    frame = long_frame({"A": 0.7, "B": 0.6})
    res = analysis.paired_macro_difference(frame, "A", "B")
    board = analysis.leaderboard(frame).set_index("model")
    assert res["diff_macro"] == pytest.approx(board.loc["A", "macro"] - board.loc["B", "macro"])
    assert res["n_items"] == 120 and res["n_types"] == 3
    assert res["ci_low"] < res["diff_macro"] < res["ci_high"]
    assert analysis.paired_macro_difference(frame, "A", "B") == res  # fixed seed: page = report = show
    missing = frame[~((frame["model"] == "B") & (frame["item_id"].str.endswith("000")))]
    assert analysis.paired_macro_difference(missing, "A", "B")["n_items"] == 117  # only items both answered


def test_within_noise_only_when_the_paired_interval_includes_zero():
    """Without tie groups (a board from elsewhere), the leader-vs-runner-up bootstrap decides."""
    close = long_frame({"A": 0.62, "B": 0.60})
    board = analysis.leaderboard(close).drop(columns=["tie_group"])
    leader, runner = board.sort_values("macro", ascending=False)["model"].iloc[:2]
    paired = analysis.paired_macro_difference(close, leader, runner)
    f = findings.leader_finding(board, paired)
    includes = paired["ci_low"] <= 0 <= paired["ci_high"]
    assert includes and "within sampling noise" in f.headline and "within sampling noise" in f.detail
    apart = long_frame({"A": 0.9, "B": 0.4})
    board = analysis.leaderboard(apart).drop(columns=["tie_group"])
    paired = analysis.paired_macro_difference(apart, "A", "B")
    f = findings.leader_finding(board, paired)
    assert paired["ci_low"] > 0
    assert "within" not in f.headline + f.detail and "beyond sampling noise" in f.headline
    assert f.n == 120 and "paired bootstrap" in f.test


def test_the_first_tie_group_decides_who_may_be_said_to_score_highest():
    close = long_frame({"A": 0.62, "B": 0.60})
    board = analysis.leaderboard(close)
    assert board["tie_group"].tolist() == [1, 1]
    f = findings.leader_finding(board)
    assert "cannot be told apart" in f.headline and "highest" not in f.headline and "Holm" in f.test
    apart = analysis.leaderboard(long_frame({"A": 0.9, "B": 0.4}))
    assert apart.set_index("model")["tie_group"].to_dict() == {"A": 1, "B": 2}
    f = findings.leader_finding(apart)
    assert f.headline.startswith("A scores highest") and "beyond sampling noise" in f.headline
    assert f.n == 120 and "paired t test" in f.test


def test_without_item_level_answers_the_gap_is_descriptive():
    board = pd.DataFrame({"model": ["A", "B"], "macro": [0.8, 0.7], "n_items": [871, 871]})
    f = findings.leader_finding(board, None)
    assert "noise" not in f.headline + f.detail
    assert "cannot be tested" in f.detail and f.test.startswith("descriptive") and f.n == 871


# ---------------------------------------------------------------- format versus model

def _means(grid: dict[str, list[float]], types=("a", "b", "c")) -> pd.DataFrame:
    return pd.DataFrame([{"model": m, "type": t, "mean": v} for m, row in grid.items() for t, v in zip(types, row)])


def test_shares_of_variance_decide_the_wording():
    by_format = analysis.format_model_variance(_means({"M1": [0.9, 0.5, 0.1], "M2": [0.9, 0.5, 0.1]}))
    assert by_format["share_format"] == pytest.approx(1.0) and by_format["share_model"] == pytest.approx(0.0)
    assert "format" in findings.format_vs_model_finding(by_format).headline.split("moves")[0]
    by_model = analysis.format_model_variance(_means({"M1": [0.9, 0.9, 0.9], "M2": [0.2, 0.2, 0.2]}))
    f = findings.format_vs_model_finding(by_model)
    assert f.headline.startswith("Which model answers moves scores more")
    both = analysis.format_model_variance(_means({"M1": [0.8, 0.6, 0.6], "M2": [0.6, 0.4, 0.4]}))
    assert both["share_format"] + both["share_model"] + both["share_rest"] == pytest.approx(1.0)
    f = findings.format_vs_model_finding(both)
    assert "about as much" in f.headline
    assert f"{100 * both['share_format']:.0f}%" in f.detail and f.n == 6 and "sum of squares" in f.test


def test_incomplete_grid_uses_complete_models_and_says_so():
    out = analysis.format_model_variance(_means({"M1": [0.9, 0.5, 0.1], "M2": [0.8, 0.4, 0.2],
                                                 "M3": [0.7, np.nan, 0.3]}))
    assert out["n_models"] == 2 and out["models_dropped"] == 1
    assert "1 model without a mean on every format left out" in findings.format_vs_model_finding(out).detail


# ---------------------------------------------------------------- motivation

def effect_frame(deltas: list[float], p_wilcoxon: list[float]) -> pd.DataFrame:
    p = np.asarray(p_wilcoxon, dtype=float)
    return pd.DataFrame({"model": [f"M{i}" for i in range(len(deltas))], "delta_macro": deltas,
                         "delta_micro": deltas, "n_paired": 100, "p_wilcoxon": p, "p_holm": holm(p),
                         "rank_biserial": np.sign(deltas)})


def test_motivation_counts_only_what_the_corrected_test_carries():
    deltas = [0.05, 0.02, 0.01, 0.03, 0.04, -0.02, -0.07, -0.01]
    f = findings.motivation_finding(effect_frame(deltas, [0.5] * 8))
    assert f.headline == ("Asking for a justification changes the score of none of 8 models beyond chance: all "
                          "changed within noise.")
    assert "raises" not in f.headline and "lowers" not in f.headline
    assert "rises for 5 and drops for 3 of 8 models (point estimates)" in f.detail
    assert "largest rise +5.0 points (M0)" in f.detail and "largest drop -7.0 points (M6)" in f.detail
    two = findings.motivation_finding(effect_frame(deltas, [0.001, 0.5, 0.5, 0.5, 0.5, 0.5, 0.001, 0.5]))
    assert two.headline == ("Asking for a justification raises the score of 1 of 8 models and lowers it for 1 beyond "
                            "chance; the other 6 changed within noise.")
    down_only = findings.motivation_finding(effect_frame([-0.05, -0.02], [0.001, 0.5]))
    assert down_only.headline == ("Asking for a justification lowers the score of 1 of 2 models beyond chance; the "
                                  "other model changed within noise.")


def test_motivation_without_a_test_names_no_direction():
    e = effect_frame([0.05, -0.02], [np.nan, np.nan]).drop(columns=["p_wilcoxon", "p_holm"])
    f = findings.motivation_finding(e)
    assert "no test" in f.headline and "raises" not in f.headline and "lowers" not in f.headline
    assert "-2.0 points to +5.0 points" in f.headline


def test_motivation_counts_significance_after_holm_and_names_it():
    raw = [0.01, 0.02, 0.03, 0.5]  # three raw p < .05, but only one survives Holm (0.04, 0.06, 0.06, 0.5)
    f = findings.motivation_finding(effect_frame([0.05, -0.02, -0.03, 0.01], raw))
    assert "after Holm correction across 4 models, the signed-rank test finds 1 model whose" in f.detail
    assert "(1 towards rises, 0 towards drops, by the signed ranks)" in f.detail
    assert "Wilcoxon signed-rank" in f.test and "Holm-adjusted across 4 models" in f.test
    assert f.n == 100 and f.n_unit == "paired items per model"


def test_published_motivation_gets_holm_of_the_t_test():
    macro = pd.DataFrame({"model": ["A", "A", "B", "B"], "condition": ["default", "motivation"] * 2,
                          "macro": [0.6, 0.5, 0.6, 0.62]})
    pooled = pd.DataFrame({"model": ["A", "B"], "p_ttest": [0.01, 0.04], "delta_micro": [-0.1, 0.02],
                           "n_paired": [871, 871]})
    effect = analysis.published_motivation(macro, pooled)
    assert list(effect["p_holm"]) == pytest.approx([0.02, 0.04])
    f = findings.motivation_finding(effect)
    assert "paired t-test" in f.test and "Holm" in f.test
    assert "2 pooled per-item differences are significant" in f.detail and "(1 up, 1 down)" in f.detail


# ---------------------------------------------------------------- hardest format

def test_hardest_format_shows_its_interval_and_n():
    tm = analysis.type_scores(long_frame({"A": 0.7, "B": 0.5}))
    f = findings.hardest_format_finding(tm)
    t = tm.groupby("type")["mean"].max().idxmin()
    best = tm[tm["type"] == t].sort_values("mean").iloc[-1]
    assert f"95% interval {100 * best['ci_low']:.1f}% to {100 * best['ci_high']:.1f}%" in f.detail
    assert f.n == 40 and "Wilson" in f.test and "z = 1.96" in f.test


# ---------------------------------------------------------------- show findings

def test_every_finding_in_show_has_a_test_and_n(demo_db):
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        assert main(["show", "findings", "--db", str(demo_db)]) == 0
    rows = json.loads(buffer.getvalue())
    assert len(rows) >= 5
    for row in rows:
        assert set(row) == {"headline", "detail", "test", "n", "n_unit"}
        assert row["test"] and isinstance(row["n"], int) and row["n"] > 0 and row["n_unit"]
        assert "=" not in row["headline"]  # headlines stay plain language, the numbers go in detail
    text = json.dumps(rows)
    assert "as much as the model" not in text or "explains" in text
    assert "A gap of a few points between neighbours is within sampling noise" not in text


def test_reference_dataset_findings_rest_on_published_numbers(demo_db):
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        assert main(["show", "findings", "--dataset", "eduart2026", "--db", str(demo_db)]) == 0
    rows = json.loads(buffer.getvalue())
    assert all(r["n"] for r in rows)
    leader = rows[0]
    assert "cannot be tested" in leader["detail"] and "noise" not in leader["headline"]
    motivation = next(r for r in rows if r["headline"].startswith("Asking for a justification"))
    assert "published p-values" in motivation["test"] and "Holm" in motivation["test"]

"""The written-answers demo: three simulated judges calibrated against a simulated grading panel.

What a user exploring the demo relies on: ``show judge_calibration`` lists the three judges with n,
alpha and its interval, severity and whether each passes; no judge passes (the gate reads the
severity's 95% interval: the faithful judge's, about [-0.26, +0.44] on 192 answers, reaches past
±0.3), and each fails for a reason the calibration computed; the alphas are Krippendorff's (the package's
own numbers on the same grade table); everything is labelled simulated.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest

from eduart_core.store import Store
from eduart_core.store.grades import load_grades
from eduart_core.store.judges import load_judge_profiles, load_judgements
from eduart_core.vocab import DEMO_OPEN_DATASET

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
JUDGE_CRITERIA = {"evidence", "context"}  # the rubric's judge criteria (open-v1)


@pytest.fixture(scope="module")
def calibration(demo_db) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "eduart_core", "show", "judge_calibration", "--dataset",
                          DEMO_OPEN_DATASET, "--format", "json", "--db", str(demo_db)], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_no_judge_passes_and_each_fails_for_reasons_the_calibration_computed(calibration):
    by_judge = {row["judge"]: row for row in calibration}
    assert len(by_judge) == 3
    for row in calibration:
        assert {"n", "alpha", "alpha_low", "alpha_high", "severity", "passes", "reason"} <= set(row)
        assert row["n"] > 100 and row["alpha_low"] < row["alpha"] < row["alpha_high"]
        assert row["humans_agree"] and row["human_alpha"] >= row["min_human_alpha"]
    passing = [j for j, row in by_judge.items() if row["passes"]]
    assert passing == []
    faithful = by_judge["judge:sim-judge-faithful/open-v1"]
    assert faithful["alpha"] >= faithful["min_alpha"] and abs(faithful["severity"]) <= faithful["max_severity"]
    # the SE of the contrast with the graders' mean (4/3 of the uncentred level's with 3 graders, checked
    # against an independent fit in test_judges_severity_se): on this demo about +0.088 +/- 0.351, so the
    # interval [-0.263, 0.439] reaches past the gate
    assert faithful["severity_low"] == pytest.approx(-0.263, abs=0.01)
    assert faithful["severity_high"] == pytest.approx(0.439, abs=0.01)
    assert "95% interval" in faithful["reason"] and "reaches past ±0.30" in faithful["reason"]
    lenient = by_judge["judge:sim-judge-lenient/open-v1"]
    assert lenient["severity"] < -lenient["max_severity"] and "more lenient" in lenient["reason"]
    position = by_judge["judge:sim-judge-position/open-v1"]
    assert position["alpha"] < position["min_alpha"] and "alpha" in position["reason"]
    assert position["position_changed"] > 3 * faithful["position_changed"]  # the position probe shows the bias
    assert lenient["verbosity_shift"] > faithful["verbosity_shift"]  # and padding pays with the lenient judge


def _human_table(grades: pd.DataFrame) -> pd.DataFrame:
    """graders x units (answer and criterion) of the latest blind marks, as the package takes them."""
    blind = grades[(grades["role"] == "grade") & grades["criterion"].isin(JUDGE_CRITERIA)]
    blind = blind.sort_values("grade_id").drop_duplicates(["item_id", "model", "condition", "criterion", "grader"],
                                                          keep="last")
    unit = blind["item_id"] + "|" + blind["model"] + "|" + blind["condition"] + "|" + blind["criterion"]
    return blind.assign(unit=unit).pivot(index="grader", columns="unit", values="points")


def test_the_alphas_equal_the_krippendorff_package_on_the_same_grade_table(demo_db, calibration):
    store = Store(demo_db)
    grades = load_grades(store, DEMO_OPEN_DATASET)
    humans = _human_table(grades)
    expected_human = krippendorff.alpha(reliability_data=humans.to_numpy(dtype=float),
                                        level_of_measurement="ordinal")
    adjudicated = grades[grades["role"] == "adjudicate"].sort_values("grade_id")
    adjudicated = adjudicated.assign(unit=adjudicated["item_id"] + "|" + adjudicated["model"] + "|"
                                     + adjudicated["condition"] + "|" + adjudicated["criterion"])
    agreed = humans.nunique() == 1
    settled = humans.iloc[0].where(agreed, adjudicated.drop_duplicates("unit", keep="last").set_index("unit")
                                   ["points"].reindex(humans.columns))
    judgements = load_judgements(store, DEMO_OPEN_DATASET)
    for row in calibration:
        assert row["human_alpha"] == pytest.approx(expected_human, abs=1e-9)
        mine = judgements[(judgements["profile"] == row["judge"]) & (judgements["probe"] == "main")
                          & judgements["criterion"].isin(JUDGE_CRITERIA)]
        unit = mine["item_id"] + "|" + mine["model"] + "|" + mine["condition"] + "|" + mine["criterion"]
        judge = mine.assign(unit=unit).groupby("unit")["points"].mean().reindex(humans.columns)
        table = np.vstack([judge.to_numpy(dtype=float), settled.to_numpy(dtype=float)])
        expected = krippendorff.alpha(reliability_data=table, level_of_measurement="ordinal")
        assert row["alpha"] == pytest.approx(expected, abs=1e-9), row["judge"]


def test_the_demo_is_simulated_and_says_so(demo_db):
    store = Store(demo_db)
    profiles = load_judge_profiles(store, DEMO_OPEN_DATASET)
    assert len(profiles) == 3 and profiles["simulated"].all()
    assert all("(simulated)" in name for name in profiles["judge_name"])
    grades = load_grades(store, DEMO_OPEN_DATASET)
    assert grades["simulated"].all() and all("(simulated)" in g for g in grades["grader"].unique())
    assert set(grades["role"]) == {"grade", "adjudicate"}
    from eduart_core import views

    flags = views.dataset_flags(views.Source.of(store), DEMO_OPEN_DATASET)
    assert flags.simulated and flags.exists
    assert all(p["n_scored"] == 192 for p in profiles.to_dict("records"))  # 24 items x 8 simulated examinees


def test_judge_corrected_scores_on_the_fully_graded_demo_are_the_graders_means(demo_db):
    """Every demo answer is graded: the corrected score of each model is its mean settled human score
    (computed here from the grade rows and the rubric), and the caption says what moved and what did not."""
    from eduart_core.judges.rubric import load_rubric

    out = subprocess.run([sys.executable, "-m", "eduart_core", "show", "judge_corrected", "--dataset",
                          DEMO_OPEN_DATASET, "--format", "json", "--db", str(demo_db)], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    table = pd.DataFrame(json.loads(out.stdout))
    assert {"judge", "model", "format", "judge_only", "corrected", "ci_low", "ci_high", "n_human",
            "n_judge"} <= set(table)
    grades = load_grades(Store(demo_db), DEMO_OPEN_DATASET).sort_values("grade_id")
    keys = ["item_id", "model", "condition", "criterion"]
    blind = grades[grades["role"] == "grade"].drop_duplicates([*keys, "grader"], keep="last")
    adjudicated = grades[grades["role"] == "adjudicate"].drop_duplicates(keys, keep="last").set_index(keys)["points"]
    marks = blind.groupby(keys)["points"].agg(["min", "max"])
    settled = marks["min"].where(marks["min"] == marks["max"], adjudicated.reindex(marks.index))
    points = {c.id: c.points for c in load_rubric("open-v1").criteria}
    per_answer = settled.rename("points").reset_index().assign(max_points=lambda f: f["criterion"].map(points))
    answer = per_answer.groupby(["item_id", "model"]).agg(got=("points", "sum"), of=("max_points", "sum"))
    human_mean = (answer["got"] / answer["of"]).groupby(level="model").mean()
    names = {"Sim A (strong recogniser)": "sim-a"}
    faithful = table[(table["judge"] == "judge:sim-judge-faithful/open-v1") & (table["format"] == "macro")]
    row = faithful[faithful["model"].isin(names)].iloc[0]
    assert row["corrected"] == pytest.approx(human_mean[names[row["model"]]], abs=1e-9)
    assert row["n_human"] == row["n_judge"] == 24
    assert (table["ci_low"] < table["corrected"]).all() and (table["corrected"] < table["ci_high"]).all()
    lenient = table[(table["judge"] == "judge:sim-judge-lenient/open-v1") & (table["format"] == "macro")]
    assert (lenient["corrected"] <= lenient["judge_only"]).all()  # the lenient judge's marks come down
    caption = subprocess.run([sys.executable, "-m", "eduart_core", "show", "judge_corrected", "--dataset",
                              DEMO_OPEN_DATASET, "--caption", "--db", str(demo_db)], cwd=ROOT,
                             capture_output=True, text=True, timeout=600)
    assert caption.returncode == 0, caption.stderr
    assert "prediction-powered inference" in caption.stdout and "lowers its score" in caption.stdout
    assert "no direction shown" in caption.stdout  # the faithful judge's shifts include 0


def test_the_leaderboard_under_a_judge_profile_is_corrected_and_carries_the_judges_error(demo_db):
    """Under a judge profile each model's macro average is the judge-corrected one (`show judge_corrected`'s
    macro row), its interval is wider than the items alone give (the judge's calibration error), and the
    caption says how many graded answers the correction rests on."""
    from eduart_core import analysis, panels, views
    from eduart_core.selection import Selection

    profile = "judge:sim-judge-lenient/open-v1"
    src = views.Source.of(str(demo_db))
    sel = Selection(dataset=DEMO_OPEN_DATASET, profile=profile)
    drawn = panels.draw("leaderboard", src, sel)
    board = drawn.frame.set_index("model")
    corrected = views.run_view("judge_corrected", src, sel, judge=profile)
    macro = corrected[corrected["format"] == "macro"].set_index("model")["corrected"]
    assert board["macro"].to_numpy() == pytest.approx(macro.loc[board.index].to_numpy(), abs=1e-9)
    judge_only = analysis.leaderboard(views.results.with_images(src, sel.dataset, views.selected_scores(src, sel)))
    judge_only = judge_only.set_index("model").loc[board.index]
    assert (board["macro"] - judge_only["macro"]).abs().max() > 0.01  # the lenient judge is moved
    assert (board["judge_graded"] > 0).all()
    width = board["macro_ci_high"] - board["macro_ci_low"]
    assert (width > judge_only["macro_ci_high"] - judge_only["macro_ci_low"] + 1e-6).all()
    assert f"({int(board['judge_graded'].sum())} human-graded answers" in drawn.caption
    assert "calibration error" in drawn.caption

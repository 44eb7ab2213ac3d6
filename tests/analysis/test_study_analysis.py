"""Study analyses on the shipped published tables and on small frames built by hand.

What a researcher relies on: the consistency checks find exactly the discrepancies the papers'
own numbers show (and nothing the rounding explains); correlations equal scipy's; intervals widen
when questions share a picture; marks, chance flags, envelopes and answer statuses mean what the
page says.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from eduart_core import analysis
from eduart_core.analysis.consistency import name_relation
from eduart_core.analysis.study_scores import MEDIAN_ROW, rounding_half_unit
from eduart_core.studies.references import REFERENCE_DIR, item_chance, read_muse, read_vqart


def _named(tables):
    names = {m["model"]: m["display_name"] for m in tables.models}
    return tables.cells.assign(model=tables.cells["model"].map(names))


@pytest.fixture(scope="module")
def vqart():
    t = read_vqart(REFERENCE_DIR)
    return _named(t), t.columns, t.statements


@pytest.fixture(scope="module")
def muse():
    t = read_muse(REFERENCE_DIR)
    return _named(t), t.columns, t.statements


def test_vqart_overall_column_gap_is_reported_for_13_of_14_models_and_all_sit_below_both_means(vqart):
    checks = analysis.consistency_checks(*vqart)
    overall = checks[checks["check"] == "overall column vs mean of the columns"]
    per_model = overall[~overall["subject"].str.startswith("all ")]
    assert len(per_model) == 14
    assert (per_model["verdict"] == "inconsistent").sum() == 13
    # InstructBLIP-Vicuna fits the unweighted mean within two-decimal rounding, not the weighted one
    blip = per_model.set_index("subject").loc["InstructBLIP-Vicuna"]
    assert blip["verdict"] == "note" and "0.0119 below the weighted" in blip["found"]
    assert per_model["found"].str.count("below").eq(2).all()  # every model: below both means
    gemini = per_model.set_index("subject").loc["Gemini 2.5"]
    assert "0.7346" in gemini["expected"] and "0.7329" in gemini["expected"] and "±0.0100" in gemini["expected"]
    summary = overall[overall["subject"] == "all 14 models"].iloc[0]
    assert summary["found"].startswith("13 of 14") and "14 of 14 below both means" in summary["found"]


def test_vqart_names_and_the_claimed_leader(vqart):
    checks = analysis.consistency_checks(*vqart)
    names = checks[checks["check"] == "column name in table vs text"]
    differing = names[names["subject"] == "Instance Location"].iloc[0]
    assert differing["verdict"] == "inconsistent" and "Instance Localization" in differing["found"]
    claim = checks[checks["check"] == "stated best model vs table"].iloc[0]
    # Kimi-VL's 0.83 beats Gemini's 0.80 beyond rounding; Pixtral's 0.81 does not (0.805 vs 0.805)
    assert claim["verdict"] == "inconsistent" and "Kimi-VL" in claim["found"] and "Pixtral" not in claim["found"]


def test_muse_stated_order_has_8_inversions_and_jigsaw_median_is_below_chance(muse):
    checks = analysis.consistency_checks(*muse)
    order = checks[checks["check"] == "stated row order vs average"]
    plain = order[order["subject"].str.contains("plain mean")].iloc[0]
    assert plain["found"].startswith("8 adjacent inversions") and plain["verdict"] == "inconsistent"
    pairs = order[order["subject"].str.startswith("rows ")]
    assert len(pairs) == 8
    assert "InternVL3-38b above Qwen2.5-VL-72b" in pairs.iloc[0]["subject"] and "41.60 < 42.99" in pairs.iloc[0]["found"]
    chance = checks[checks["check"] == "column below chance"].set_index("subject")
    assert chance.loc["Jigsaw Puzzle", "verdict"] == "flag" and "median 21.50" in chance.loc["Jigsaw Puzzle", "found"]
    assert chance.loc["Scene Classification", "verdict"] == "consistent"
    names = checks[checks["check"] == "column name in table vs text"].iloc[0]
    assert names["verdict"] == "consistent" and "12 of 12" in names["found"]  # 'Object Cls.' abbreviates


def test_task_correlations_equal_scipy_spearman_on_the_muse_table(muse):
    cells, columns, _ = muse
    scores = analysis.published_dimension_scores(cells, columns)
    grid = analysis.score_grid(scores)
    corr = analysis.task_correlations(grid)
    expected = stats.spearmanr(grid.to_numpy())
    rho = corr.pivot(index="column_a", columns="column_b", values="rho").loc[grid.columns, grid.columns]
    p = corr.pivot(index="column_a", columns="column_b", values="p").loc[grid.columns, grid.columns]
    np.testing.assert_allclose(rho.to_numpy(), expected.statistic, atol=1e-12)
    off = ~np.eye(len(grid.columns), dtype=bool)
    np.testing.assert_allclose(p.to_numpy()[off], expected.pvalue[off], rtol=1e-9)
    assert set(corr["n"]) == {30}


def test_pairwise_complete_correlation_keeps_models_missing_elsewhere():
    grid = pd.DataFrame({"a": [0.1, 0.2, 0.3, 0.4, np.nan], "b": [0.2, 0.1, 0.4, 0.3, 0.9],
                         "c": [0.5, 0.4, 0.3, 0.2, 0.1]}, index=list("vwxyz"))
    corr = analysis.task_correlations(grid).set_index(["column_a", "column_b"])
    assert corr.loc[("a", "b"), "n"] == 4 and corr.loc[("b", "c"), "n"] == 5
    assert corr.loc[("b", "c"), "rho"] == pytest.approx(stats.spearmanr(grid["b"], grid["c"]).statistic)


def test_rounding_half_units_and_chance_notes():
    printed = pd.Series(["0.80", "50.9", "3.0", None, "42"])
    unit = pd.Series(["fraction", "percent", "percent", None, "percent"])
    assert rounding_half_unit(printed, unit).tolist() == pytest.approx([0.005, 0.0005, 0.0005, 0.0, 0.005])
    assert item_chance("1/5") == pytest.approx(0.2)
    assert item_chance("1/3 per part; 1/27 if all three parts must be correct") == pytest.approx(1 / 27)
    assert item_chance("not stated") is None


@pytest.mark.parametrize("table,text,relation", [
    ("Object Cls.", "Object Classification", "abbreviated"), ("Emotion Det.", "Emotion Detection", "abbreviated"),
    ("Instance Localization", "Instance Location", "differs"), ("Spatial Relation", "spatial  relation", "same"),
    ("Cls.", "Object Classification", "differs"),
])
def test_name_relation(table, text, relation):
    assert name_relation(table, text) == relation


def _frame(rows, cluster=None, chance=0.25):
    df = pd.DataFrame(rows, columns=["model", "item_id", "dimension", "score"])
    df["condition"], df["type"], df["language"], df["has_image"] = "default", "multiple_choice_radio", "en", True
    df["chance"] = chance
    if cluster is not None:
        df["cluster"] = df["item_id"].map(cluster)
    return df


def test_intervals_widen_when_questions_share_a_picture():
    rng = np.random.default_rng(3)
    rows = []
    for image in range(20):  # five questions per picture, answered alike (the picture is easy or hard)
        easy = rng.random() < 0.5
        for q in range(5):
            rows.append(("M", f"i{image}-{q}", "D", float(easy)))
    shared = _frame(rows, cluster={f"i{i}-{q}": f"img{i}" for i in range(20) for q in range(5)})
    alone = _frame(rows)
    a = analysis.dimension_scores(shared, by="dimension")
    b = analysis.dimension_scores(alone, by="dimension")
    cell_a = a[(a["model"] == "M") & (a["column"] == "D")].iloc[0]
    cell_b = b[(b["model"] == "M") & (b["column"] == "D")].iloc[0]
    assert cell_a["score"] == cell_b["score"]
    assert (cell_a["ci_high"] - cell_a["ci_low"]) > 1.8 * (cell_b["ci_high"] - cell_b["ci_low"])
    assert "clustered by image" in cell_a["interval"] and cell_b["interval"] == "Wilson 95%"
    assert cell_a["n_clusters"] == 20


def test_aggregations_marks_median_and_chance_flags():
    rows = []
    for m, right in (("A", {"X": 4, "Y": 1}), ("B", {"X": 2, "Y": 1}), ("C", {"X": 0, "Y": 0})):
        for col, n_items in (("X", 4), ("Y", 2)):
            for i in range(n_items):
                rows.append((m, f"{col}{i}", col, float(i < right[col])))
    df = _frame(rows)
    micro = analysis.dimension_scores(df, by="dimension", aggregation="micro")
    macro = analysis.dimension_scores(df, by="dimension", aggregation="dimension_macro")
    get = lambda f, m, c: f[(f["model"] == m) & (f["column"] == c)].iloc[0]  # noqa: E731
    assert get(micro, "A", "overall")["score"] == pytest.approx(5 / 6)           # pooled over 6 items
    assert get(macro, "A", "overall")["score"] == pytest.approx((1 + 0.5) / 2)   # mean of the two means
    assert "micro" in get(micro, "A", "overall")["aggregation"]
    assert get(micro, "A", "X")["mark"] == "best" and get(micro, "B", "X")["mark"] == "second"
    assert get(micro, "A", "Y")["mark"] == "best" and get(micro, "B", "Y")["mark"] == "best"  # a tie shares
    assert get(micro, "C", "Y")["mark"] == "second"
    assert get(micro, "C", "X")["below_chance"] and not get(micro, "A", "X")["below_chance"]
    median = get(micro, MEDIAN_ROW, "X")
    assert median["score"] == pytest.approx(0.5) and median["mark"] == "" and bool(median["is_median"])
    checks = analysis.consistency_checks(micro.loc[~micro["is_median"], ["model", "column", "score", "n"]],
                                         pd.DataFrame({"column_name": ["X", "Y", "overall"],
                                                       "kind": ["dimension", "dimension", "overall"],
                                                       "chance": [0.25, 0.25, 0.25]}), declared="micro")
    summary = checks[checks["subject"] == "all 3 models"].iloc[0]
    assert summary["verdict"] == "consistent"  # a micro overall is the item-weighted mean, exactly


def test_family_best_and_envelopes():
    scores = pd.DataFrame({"model": ["a1", "a2", "b1", "b2"] * 2, "column": ["T1"] * 4 + ["T2"] * 4,
                           "score": [0.5, 0.7, 0.6, 0.2, 0.9, 0.1, 0.3, 0.95], "is_median": False})
    out = analysis.family_best(scores, {"a1": "A", "a2": "A", "b1": "B", "b2": "B"},
                               {"a1": "closed", "a2": "closed", "b1": "open", "b2": "open"})
    cell = out.set_index(["group", "column"])
    assert cell.loc[("A", "T1"), "model"] == "a2" and cell.loc[("B", "T2"), "model"] == "b2"
    assert cell.loc[("Best available", "T1"), "score"] == 0.7 and cell.loc[("Best available", "T2"), "score"] == 0.95
    assert cell.loc[("Best open", "T1"), "model"] == "b1" and cell.loc[("Best closed", "T2"), "model"] == "a1"
    for column in ("T1", "T2"):
        families = out[(out["group_kind"] == "family") & (out["column"] == column)]["score"]
        assert cell.loc[("Best available", column), "score"] == families.max()


def _item(item_id, gold="A", task="T"):
    return {"item_id": item_id, "type": "multiple_choice_radio", "task": task,
            "choices": [{"id": "A", "text": "a"}, {"id": "B", "text": "b", "distractor_type": "near"},
                        {"id": "C", "text": "c", "distractor_type": "far"}, {"id": "D", "text": "d",
                                                                                "distractor_type": "far"}],
            "answers": [{"id": gold, "description": "a"}]}


def test_invalid_answers_and_distractor_shares():
    records = [_item(f"q{i}") for i in range(6)]
    items = pd.DataFrame({"item_id": [r["item_id"] for r in records], "type": "multiple_choice_radio",
                          "task": "T", "record": records})
    raw = {"q0": ("[{\"id\": \"A\"}]", "{...}"), "q1": ("[{\"id\": \"B\"}]", "{...}"),
           "q2": ("[{\"id\": \"B\"}]", "{...}"), "q3": ("[{\"id\": \"C\"}]", "{...}"),
           "q4": (None, "I'm sorry, I cannot determine this from the image."), "q5": ("[{\"id\": \"E\"}]", "{...}")}
    answers = pd.DataFrame([{"model": "M", "item_id": k, "parsed_answers": p, "raw_text": t,
                             "parse_error": None if p else "no JSON object"} for k, (p, t) in raw.items()]
                           + [{"model": "N", "item_id": "q0", "parsed_answers": None, "raw_text": "Perhaps the left one.",
                               "parse_error": "no JSON object"}])
    rates = analysis.invalid_rates(answers, items).set_index(["model", "column"])
    m = rates.loc[("M", "overall")]
    assert (m["n"], m["n_refused"], m["n_not_an_option"], m["n_unparseable"]) == (6, 1, 1, 0)
    assert m["rate"] == pytest.approx(2 / 6) and m["ci_low"] < m["rate"] < m["ci_high"]
    assert rates.loc[("N", "overall"), "n_unparseable"] == 1
    choices = analysis.distractor_choices(answers, items).set_index(["model", "distractor_type"])
    assert choices.loc[("M", "near"), "n_wrong"] == 3
    assert choices.loc[("M", "near"), "share"] == pytest.approx(2 / 3)
    assert choices.loc[("M", "near"), "expected_share"] == pytest.approx(1 / 3)  # 1 of 3 wrong options
    assert choices.loc[("M", "far"), "expected_share"] == pytest.approx(2 / 3)
    assert choices.loc[("All models", "near"), "n_chose"] == 2


def test_external_correlations_match_names_and_count_pairs():
    grid = pd.DataFrame({"T": [0.9, 0.7, 0.5, 0.3], "overall": [0.8, 0.6, 0.5, 0.2]},
                        index=["Model Alpha", "Model Beta", "Model Gamma", "Model Delta"])
    external = pd.DataFrame({"model": ["model-alpha", "MODEL BETA", "gamma-key", "Unknown X", "Model Delta"],
                             "benchmark": "B1", "score": [70.0, 60.0, 50.0, 10.0, np.nan]})
    out = analysis.external_correlations(grid, external.dropna(), aliases={"gamma-key": "Model Gamma"})
    row = out[(out["column"] == "T")].iloc[0]
    assert row["n"] == 3 and row["rho"] == pytest.approx(1.0)
    assert out.attrs["unmatched"] == ["Unknown X"]


def test_attribute_scores_bin_many_valued_numbers():
    df = _frame([("M", f"i{i}", "D", float(i % 2)) for i in range(30)])
    attributes = pd.DataFrame([(f"i{i}", "warm_ratio", i / 30) for i in range(30)]
                              + [(f"i{i}", "setting", "indoor" if i < 10 else "outdoor") for i in range(30)],
                              columns=["item_id", "attribute", "value"])
    out = analysis.attribute_scores(df, attributes)
    warm = out[(out["attribute"] == "warm_ratio") & (out["model"] == "All models")]
    assert len(warm) == 3 and warm["n_items"].sum() == 30
    setting = out[(out["attribute"] == "setting") & (out["model"] == "M")].set_index("value")
    assert setting.loc["indoor", "n_items"] == 10 and setting.loc["outdoor", "n"] == 20

"""Psychometrics beyond CTT: IRT, distractors, DIF, parallel forms.

What a researcher relies on: difficulties estimated from imported responses recover a known
Rasch model; the library agrees with an independent estimator (conditional logit); abilities come
with honest intervals and ranks that admit ties; zero-variance items are shown as non-informative;
a planted consensus-wrong option and a planted condition-specific item are flagged; every view
says how many examinees it rests on. Real stores in tmp dirs, real CLI imports.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from irt_data import DATASET, simulate
from scipy.special import expit

from eduart_core import views
from eduart_core.analysis.dif import dif_analysis, ets_class
from eduart_core.analysis.irt import EXPLORATORY_BELOW, eap_abilities, fit_irt, panel_warning
from eduart_core.analysis.irt_curves import ability_ranking, information_curves
from eduart_core.errors import UserError
from eduart_core.selection import Selection
from eduart_core.store import Store
from eduart_core.vocab import (
    CONSENSUS_WRONG,
    DIF_LOGISTIC_UNIFORM,
    DIF_MANTEL_HAENSZEL,
    EXAMINEES_MODELS,
    IRT_2PL,
    NON_FUNCTIONAL,
)


def long_frame(x: np.ndarray, conditions: tuple[str, ...] = ("default",), types=None) -> pd.DataFrame:
    """A long score frame from an examinees x items 0/1 matrix (NaN = not answered)."""
    rows = []
    per = x.shape[0] // len(conditions)
    for e in range(x.shape[0]):
        for i in range(x.shape[1]):
            if not np.isnan(x[e, i]):
                rows.append({"model": f"m{e % per:03d}", "condition": conditions[e // per], "item_id": f"i{i:03d}",
                             "type": types[i] if types else "multiple_choice_radio", "score": float(x[e, i])})
    return pd.DataFrame(rows)


def rasch_matrix(n: int, k: int, seed: int, sd: float = 1.2):
    rng = np.random.default_rng(seed)
    theta, b = rng.normal(0, sd, n), rng.normal(0, 1, k)
    return (rng.random((n, k)) < expit(theta[:, None] - b[None, :])).astype(float), theta, b


# ---------------------------------------------------------------- the acceptance tests

@pytest.fixture(scope="module")
def rasch_store(tmp_path_factory):
    """300 examinees x 200 items from a known Rasch model, imported through import-responses."""
    folder = tmp_path_factory.mktemp("rasch")
    store = Store(folder / "eduart.duckdb")
    truth = simulate(store, folder, n_models=300, n_items=200, seed=16)
    return store, truth


@pytest.mark.slow
def test_imported_rasch_data_give_the_true_difficulties_and_abilities(rasch_store):
    store, truth = rasch_store
    src, sel = views.Source.of(store), Selection(dataset=DATASET)
    items = views.irt_items(src, sel, examinees=EXAMINEES_MODELS)
    fitted = items[items["informative"]]
    true_b = fitted["item_id"].map(truth.difficulty)
    assert np.corrcoef(fitted["difficulty"], true_b)[0, 1] >= 0.97
    assert (items["panel_size"] == 300).all() and items.attrs["n_examinees"] == 300
    assert fitted["difficulty_se"].between(0.05, 0.5).all()
    abilities = views.irt_abilities(src, sel, examinees=EXAMINEES_MODELS)
    assert items.attrs["irt_model"] == "rasch"  # no partial-credit format: the default is the Rasch model
    summary = abilities[abilities["row"] == "summary"]
    assert len(summary) == 1 and summary["ability_sd"].iloc[0] == pytest.approx(items.attrs["latent_sd"])
    abilities = abilities[abilities["row"] == "examinee"]
    assert np.corrcoef(abilities["ability"], abilities["model"].map(truth.theta))[0, 1] >= 0.95
    # an honest 95% interval covers the true ability for about 95% of the examinees
    covered = ((abilities["ci_low"] <= abilities["model"].map(truth.theta))
               & (abilities["model"].map(truth.theta) <= abilities["ci_high"])).mean()
    assert 0.88 <= covered <= 0.99
    # the 2PL runs on the same fit input, with slopes near 1 for Rasch data
    two = views.irt_items(src, sel, model=IRT_2PL, examinees=EXAMINEES_MODELS)
    assert two["discrimination"].dropna().median() == pytest.approx(1.0, abs=0.3)


@pytest.mark.slow
def test_rasch_difficulties_agree_with_conditional_logit():
    """Validation against an independent estimator: statsmodels' conditional (CML) logit."""
    from statsmodels.discrete.conditional_models import ConditionalLogit

    x, _, _ = rasch_matrix(100, 20, seed=3, sd=1.5)
    fit = fit_irt(long_frame(x))
    mml = fit.items.set_index("item_id")["difficulty"]
    tot = x.sum(axis=1)
    keep = (tot > 0) & (tot < x.shape[1])
    xc = x[keep]
    person, item = np.meshgrid(np.arange(xc.shape[0]), np.arange(xc.shape[1]), indexing="ij")
    design = np.zeros((xc.size, xc.shape[1] - 1))
    for j in range(1, xc.shape[1]):
        design[item.ravel() == j, j - 1] = -1.0  # coefficient j = difficulty of item j minus item 0
    cml = ConditionalLogit(xc.ravel(), design, groups=person.ravel()).fit(method="bfgs", maxiter=2000, disp=0)
    cml_b = np.r_[0.0, cml.params]
    ours = mml[[f"i{j:03d}" for j in range(xc.shape[1])]].to_numpy()
    assert np.corrcoef(ours, cml_b)[0, 1] >= 0.995
    assert np.abs((ours - ours.mean()) - (cml_b - cml_b.mean())).max() < 0.2


@pytest.mark.slow
def test_eap_matches_a_brute_force_integral():
    x, _, b = rasch_matrix(6, 400, seed=5)
    x[0, :390] = np.nan  # a short test too: a wide posterior
    theta, se = eap_abilities(x, b, np.ones_like(b), sd=1.3)
    grid = np.linspace(-12, 12, 40001)
    for e in range(len(x)):
        ok = ~np.isnan(x[e])
        z = grid[None, :] - b[ok, None]
        loglik = (x[e, ok] @ -np.logaddexp(0, -z) + (1 - x[e, ok]) @ -np.logaddexp(0, z)) - 0.5 * (grid / 1.3) ** 2
        w = np.exp(loglik - loglik.max())
        w /= w.sum()
        mean = (w * grid).sum()
        assert theta[e] == pytest.approx(mean, abs=1e-3)
        assert se[e] == pytest.approx(np.sqrt((w * (grid - mean) ** 2).sum()), rel=1e-2)
    assert se[0] > 2 * se[1:].max()  # 10 answered items measure far less precisely than 400


def test_zero_variance_items_are_non_informative_and_tiny_panels_refused():
    x, _, _ = rasch_matrix(40, 12, seed=7)
    x[:, 0], x[:, 1] = 1.0, 0.0
    fit = fit_irt(long_frame(x))
    status = fit.items.set_index("item_id")["status"]
    assert status["i000"] == "all_right" and status["i001"] == "all_wrong"
    constant = fit.items[~fit.items["informative"]]
    assert constant["difficulty"].isna().all() and set(constant["item_id"]) == {"i000", "i001"}
    assert fit.items[fit.items["informative"]]["difficulty"].notna().all()
    with pytest.raises(UserError, match="at least 3 examinees"):
        fit_irt(long_frame(x[:2]))


def test_panel_warning_states_size_and_what_it_allows():
    small = panel_warning(24)
    assert "24 examinees" in small and "exploratory" in small and str(EXPLORATORY_BELOW) in small
    assert "exploratory" not in panel_warning(300)


def test_ranking_shows_which_examinees_cannot_be_told_apart():
    abilities = pd.DataFrame({"examinee": ["a", "b", "c"], "ability": [2.0, 1.9, -1.0],
                              "ability_se": [0.2, 0.2, 0.2]})
    ranked = ability_ranking(abilities).set_index("examinee")
    assert ranked.loc["a", "tied_with"] == "b" and ranked.loc["c", "n_tied"] == 0
    assert (ranked.loc["a", "rank_best"], ranked.loc["a", "rank_worst"]) == (1, 2)
    assert (ranked.loc["c", "rank_best"], ranked.loc["c", "rank_worst"]) == (3, 3)


def test_information_curves_peak_where_a_format_measures():
    x, _, _ = rasch_matrix(200, 40, seed=9)
    types = ["true_false"] * 20 + ["multiple_choice_radio"] * 20
    fit = fit_irt(long_frame(x, types=types))
    items = fit.items.copy()
    easy = items["type"] == "multiple_choice_radio"
    items.loc[easy, "difficulty"] = -2.0  # a saturated format: information at low ability
    items.loc[~easy, "difficulty"] = 1.5
    curves = information_curves(items, fit.latent_sd)
    peak = curves.loc[curves.groupby("type")["information"].idxmax()].set_index("type")["theta"]
    assert peak["multiple_choice_radio"] == pytest.approx(-2.0, abs=0.2)
    assert peak["true_false"] == pytest.approx(1.5, abs=0.2)
    total = curves[curves["type"] == "all"]["information"].to_numpy()
    parts = curves[curves["type"] != "all"].groupby("theta")["information"].sum().to_numpy()
    assert np.allclose(total, parts)


# ---------------------------------------------------------------- distractors, DIF, parallel forms

@pytest.fixture(scope="module")
def planted_store(tmp_path_factory):
    """40 models x 2 conditions x 30 items with a consensus-wrong item, a motivation-only failure
    and an Italian/English parallel pair."""
    folder = tmp_path_factory.mktemp("planted")
    store = Store(folder / "eduart.duckdb")
    truth = simulate(store, folder, n_models=40, n_items=30, seed=11, conditions=("default", "motivation"),
                     consensus_wrong="irt-0003", harder_with_motivation="irt-0007",
                     parallel={"irt-0011": "irt-0010"}, languages={"irt-0010": "it"})
    return store, truth


def test_distractor_analysis_flags_the_planted_consensus_wrong_item(planted_store):
    store, _ = planted_store
    table = views.distractors(views.Source.of(store), Selection(dataset=DATASET))
    flagged = table[table["flag"] == CONSENSUS_WRONG]
    assert set(zip(flagged["item_id"], flagged["option"])) == {("irt-0003", "B")}
    row = flagged.iloc[0]
    assert row["share_upper"] > 0.9 and row["r_pb"] > 0.3  # the strong models choose it
    key_rows = table[table["is_key"] & (table["item_id"] != "irt-0003")]
    assert (key_rows["r_pb"].dropna() > 0).mean() > 0.9  # keys discriminate positively
    assert (table["panel_size"] == 80).all()
    assert set(table.groupby("item_id").size()) == {4}  # every option of every item, once


def test_the_planted_consensus_wrong_item_reaches_the_suspect_key_queue(planted_store):
    """The distractor analysis and the art historian's queue apply one rule: the same item, the same option."""
    from eduart_core import suspects

    store, _ = planted_store
    queue = suspects.suspect_queue(store, DATASET).set_index("item_id")
    assert "irt-0003" in queue.index
    assert "distractor:B" in queue.loc["irt-0003", "reasons"] and "distractors" in queue.loc["irt-0003", "sources"]
    others = [item for item, reasons in queue["reasons"].items() if "distractor:" in reasons and item != "irt-0003"]
    assert others == []


def test_non_functional_distractor_is_named(tmp_path):
    x, _, _ = rasch_matrix(60, 6, seed=2)
    scores = long_frame(x)
    choices = pd.DataFrame({"model": scores["model"], "condition": scores["condition"], "item_id": scores["item_id"],
                            "answers": [[{"id": "A"}] if s else [{"id": "B" if k % 2 else "C"}]
                                        for k, s in enumerate(scores["score"])]})
    from eduart_core.analysis.distractors import distractor_analysis

    keys = {f"i{j:03d}": (["A", "B", "C", "D"], {"A"}) for j in range(6)}
    table = distractor_analysis(scores, choices, keys)
    never = table[table["option"] == "D"]
    assert (never["flag"] == NON_FUNCTIONAL).all() and (never["share"] == 0).all()


def test_dif_flags_the_item_only_the_motivation_condition_gets_wrong(planted_store):
    store, _ = planted_store
    table = views.dif(views.Source.of(store), Selection(dataset=DATASET))
    mh = table[table["method"] == DIF_MANTEL_HAENSZEL].set_index("item_id")
    planted = mh.loc["irt-0007"]
    assert planted["p"] < 0.001 and planted["dif_class"] == "C" and planted["effect"] < -1.5
    assert planted["direction"] == "harder with motivation"
    lr = table[table["method"] == DIF_LOGISTIC_UNIFORM].set_index("item_id").loc["irt-0007"]
    assert lr["p"] < 0.001 and lr["dif_class"] == "C"
    others = mh.drop(index=["irt-0007"])
    assert (others["dif_class"].dropna() == "C").sum() <= 1  # the rest are mostly negligible
    assert (table["panel_size"] == 80).all() and table.attrs["n_reference"] == table.attrs["n_focal"] == 40


def test_ets_classes():
    assert ets_class(-0.5, 0.2, 0.001) == "A"
    assert ets_class(-2.0, 0.3, 0.2) == "A"
    assert ets_class(-1.2, 0.3, 0.001) == "B"
    assert ets_class(-2.0, 0.3, 0.001) == "C"
    assert ets_class(-1.6, 0.5, 0.001) == "B"  # large, but not significantly beyond 1


def test_dif_needs_both_conditions(planted_store):
    store, _ = planted_store
    frame = views.selected_scores(views.Source.of(store), Selection(dataset=DATASET))
    assert dif_analysis(frame).empty


def test_parallel_forms_give_within_model_contrasts(planted_store):
    store, truth = planted_store
    table = views.parallel_contrasts(views.Source.of(store), Selection(dataset=DATASET))
    assert list(table["item_id"]) == ["irt-0011"] and table.iloc[0]["parallel_of"] == "irt-0010"
    row = table.iloc[0]
    assert row["differs"] == "language: English vs Italian" and row["n_examinees"] == 80
    assert row["n_item_better"] + row["n_parallel_better"] + row["n_tied"] == 80
    assert row["mean_diff"] == pytest.approx(row["mean_item"] - row["mean_parallel"])


# ---------------------------------------------------------------- the demo store: panel sizes, baselines

IRT_VIEWS = ("irt_items", "irt_abilities", "irt_information", "irt_wright_map", "irt_item_curve", "irt_item_fit",
             "irt_person_fit", "irt_category_information", "distractors", "dif", "parallel_contrasts")


def show(db, *args: str) -> list[dict]:
    import io
    import json
    from contextlib import redirect_stdout

    from eduart_core.cli import main

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        assert main(["show", *args, "--db", str(db)]) == 0
    return json.loads(buffer.getvalue())


@pytest.mark.slow
def test_every_view_is_labelled_with_its_panel_size(demo_db):
    src = views.Source.of(str(demo_db))
    pairs = len(views.selected_scores(src, Selection(), all_conditions=True)[["model", "condition"]].drop_duplicates())
    models = views.selected_scores(src, Selection())["model"].nunique()
    for name in IRT_VIEWS:
        rows = show(demo_db, name)
        # an IRT fit counts each model once (its answers in the selected condition); the distractor, DIF and
        # parallel-form tables keep the model x condition pairs
        assert rows and {r["panel_size"] for r in rows} == {models if name.startswith("irt_") else pairs}, name
        if name.startswith("irt_"):  # each row names the fitted model and its standard errors
            assert {r["irt_model"] for r in rows} == {"pcm"} and all(r["se_method"] for r in rows), name
    for name in ("irt_items", "irt_abilities", "distractors", "parallel_contrasts"):
        rows = show(demo_db, name, "--option", "examinees=models")
        assert {r["panel_size"] for r in rows} == {models}, name
    for name in ("irt_items", "irt_abilities"):  # conditions as examinees when asked for
        rows = show(demo_db, name, "--option", "examinees=models_conditions")
        assert {r["panel_size"] for r in rows} == {pairs}, name
    assert len(show(demo_db, "irt_abilities", "--option", "examinees=models")) == models + 1  # and the summary row


@pytest.mark.slow
def test_baselines_are_not_examinees_unless_switched_in(demo_db, chance_db):
    for name in ("irt_items", "irt_abilities", "distractors", "dif"):
        assert show(chance_db, name) == show(demo_db, name), name
    counted = show(chance_db, "irt_abilities", "--baselines", "--option", "examinees=models")
    assert "Chance baseline" in {r["model"] for r in counted}
    assert {r["panel_size"] for r in counted} == {len(show(demo_db, "irt_abilities", "--option",
                                                                "examinees=models"))}  # one more examinee, no summary

"""Partial-credit IRT: score levels from the formats, PCM/GPCM fits, item fit, person fit.

What a researcher relies on: every format says how many score levels its items have and a
stored score maps back to the parts right; thresholds estimated from imported partial-credit
answers recover the simulated PCM (r >= 0.95 at 400 examinees x 30 items) and agree with an
independent estimator (conditional maximum likelihood, `tests/analysis/pcm_cml.py`); a planted misfitting
item is flagged and reaches the suspect-key queue with its reason; a planted aberrant examinee is
flagged with the items behind it and the failure explorer lists them; invalid answers are counted
per examinee; the Rasch results are the recorded ones; abilities come with SEs, intervals and a
summary row with the fitted ability SD. Real stores in tmp dirs, real CLI imports.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from irt_pcm_data import DATASET, simulate
from pcm_cml import cml_thresholds

from eduart_core import formats, views
from eduart_core.analysis.intervals import Z95
from eduart_core.analysis.irt import fit_irt
from eduart_core.analysis.irt_fit import item_fit, person_fit
from eduart_core.analysis.irt_levels import category_probabilities, eap_abilities, step_information
from eduart_core.analysis.irt_pcm import fit_model, fit_polytomous
from eduart_core.errors import UserError
from eduart_core.formats import ScoringOptions
from eduart_core.selection import Selection
from eduart_core.simulate.score_frames import synthetic_scores
from eduart_core.store import Store
from eduart_core.views.irt import score_parts_of
from eduart_core.vocab import EXAMINEES_MODELS, IRT_GPCM, IRT_PCM, IRT_RASCH

REFERENCE = Path(__file__).with_name("irt_rasch_reference.json")


def pcm_levels(theta: np.ndarray, steps: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """Examinees x items levels drawn from the PCM."""
    out = np.zeros((len(theta), len(steps)), dtype=int)
    for j, s in enumerate(steps):
        logits = np.c_[np.zeros(len(theta)), np.cumsum(theta[:, None] - s[None, :], axis=1)]
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        out[:, j] = (rng.random(len(theta))[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    return out


def long_frame(levels: np.ndarray, parts: np.ndarray) -> tuple[pd.DataFrame, dict[str, int]]:
    rows = [{"model": f"m{e:03d}", "condition": "default", "item_id": f"i{j:03d}",
             "type": "multiple_choice_radio" if parts[j] == 1 else "true_false", "score": round(levels[e, j] / parts[j], 4)}
            for e in range(levels.shape[0]) for j in range(levels.shape[1])]
    return pd.DataFrame(rows), {f"i{j:03d}": int(p) for j, p in enumerate(parts)}


# ---------------------------------------------------------------- score levels from the format registry

def _score(record: dict, answer: list[dict]) -> float:
    return formats.get_format(record["type"]).score(record, json.dumps({"Answers": answer}), "strict",
                                                     ScoringOptions()).score


def test_every_format_declares_its_levels_and_the_rule_in_words():
    for fmt in formats.REGISTRY:
        assert fmt.level_rule and "level" in fmt.level_rule
        parts = np.array([3, 3])
        assert list(fmt.score_levels(np.array([0.0, 1.0]), parts)) == ([0, 3] if fmt.partial_credit else [0, 1])


def test_a_scored_answer_maps_back_to_the_parts_it_got_right():
    cloze = {"type": "completion_closed", "question_text": "A [A] and a [B] and a [C].",
             "choices": [{"id": i, "options": ["x", "y"]} for i in "ABC"],
             "answers": [{"id": i, "description": "x"} for i in "ABC"]}
    statements = {"type": "true_false", "choices": [{"id": i, "text": f"s{i}"} for i in "ABCD"],
                  "answers": [{"id": i, "text": "True"} for i in "ABCD"]}
    errors = {"type": "select_errors", "question_text": "the nave and the apse and the dome stand",
              "answers": [{"error": w, "correct": w.upper()} for w in ("nave", "apse", "dome")]}
    assert formats.score_parts(cloze) == 3 and formats.score_parts(statements) == 4 and formats.score_parts(errors) == 3
    assert formats.score_parts({"type": "multiple_choice_radio", "answers": [{"id": "A"}]}) == 1
    for right in range(4):
        s = _score(cloze, [{"id": i, "text": "x" if n < right else "y"} for n, i in enumerate("ABC")])
        assert formats.score_levels("completion_closed", [s], [3])[0] == right
        named = [{"text": w} for w in ("nave", "apse", "dome")[:right]] or [{"text": "stand"}]
        s = _score(errors, named)  # F1 of the errors named (no wrong word beside them)
        assert formats.score_levels("select_errors", [s], [3])[0] == right
    for right in range(5):
        s = _score(statements, [{"id": i, "text": "TRUE" if n < right else "FALSE"} for n, i in enumerate("ABCD")])
        assert formats.score_levels("true_false", [s], [4])[0] == right
    wrong_word = _score(errors, [{"text": "nave"}, {"text": "apse"}, {"text": "stand"}])  # 2 found, 1 wrong word
    assert formats.score_levels("select_errors", [wrong_word], [3])[0] < 2 or wrong_word < _score(
        errors, [{"text": "nave"}, {"text": "apse"}])


# ---------------------------------------------------------------- the simulated PCM panel (imported)

@pytest.fixture(scope="module")
def pcm_store(tmp_path_factory):
    """400 examinees x 30 partial-credit and multiple-choice items from a known PCM, with a misfitting
    item, an aberrant examinee and an examinee with 10% unreadable answers."""
    folder = tmp_path_factory.mktemp("pcm")
    store = Store(folder / "eduart.duckdb")
    truth = simulate(store, folder, misfit="pcm-0005", aberrant="sim-pcm-007", invalid="sim-pcm-011")
    return store, truth


@pytest.mark.slow
def test_imported_pcm_data_recover_the_true_thresholds(pcm_store):
    store, truth = pcm_store
    src, sel = views.Source.of(store), Selection(dataset=DATASET)
    items = views.irt_items(src, sel, examinees=EXAMINEES_MODELS)
    assert items.attrs["irt_model"] == IRT_PCM and "default for this dataset" in items.attrs["model_choice"]
    est, true = [], []
    for row in items.itertuples():
        if row.item_id == truth.plants["misfit"] or not row.informative:
            continue
        assert row.n_levels == truth.parts[row.item_id] + 1
        if len(row.thresholds) == truth.parts[row.item_id]:  # every level reached
            est += row.thresholds
            true += truth.steps[row.item_id]
            assert all(0.05 < se < 1.0 for se in row.threshold_se)
    assert len(true) >= 50
    assert np.corrcoef(est, true)[0, 1] >= 0.95
    assert set(items["family"].dropna()) == {"Rasch", "PCM"}
    assert (items.loc[items["type"] == "multiple_choice_radio", "family"].dropna() == "Rasch").all()
    abilities = views.irt_abilities(src, sel, examinees=EXAMINEES_MODELS)
    people = abilities[abilities["row"] == "examinee"]
    keep = ~people["model"].isin(set(truth.plants.values()))
    assert np.corrcoef(people.loc[keep, "ability"], people.loc[keep, "model"].map(truth.theta))[0, 1] >= 0.9
    summary = abilities[abilities["row"] == "summary"].iloc[0]
    assert summary["ability_sd"] == pytest.approx(items.attrs["latent_sd"]) and 0.9 < summary["ability_sd"] < 1.5
    assert np.allclose(people["ci_high"] - people["ci_low"], 2 * Z95 * people["ability_se"])
    # the partial credit model measures more precisely than the 0.5 rule on the same answers
    comparison = views.irt_model_comparison(src, sel, examinees=EXAMINEES_MODELS).set_index("model")
    assert comparison.loc[IRT_PCM, "mean_se_per_sd"] < comparison.loc[IRT_RASCH, "mean_se_per_sd"]
    assert "smaller" in comparison.attrs["sentence"] and "0.5 rule" in comparison.attrs["sentence"]


@pytest.mark.slow
def test_the_planted_misfitting_item_is_flagged_and_queued_with_its_reason(pcm_store):
    store, truth = pcm_store
    src, sel = views.Source.of(store), Selection(dataset=DATASET)
    table = views.irt_item_fit(src, sel, examinees=EXAMINEES_MODELS).set_index("item_id")
    planted = table.loc[truth.plants["misfit"]]
    assert planted["flag"] == "underfit" and planted["outfit"] > 1.3 and planted["outfit_t"] > 2
    assert "outfit" in planted["reason"] and "PCM" in planted["reason"]
    assert (table["flag"] == "underfit").sum() <= 2  # the rest fit, bar a chance flag
    assert table["s_x2"].notna().all() and table.loc[truth.plants["misfit"], "s_x2_p"] < 0.001
    queue = views.suspect_keys(src, sel).set_index("item_id")
    assert "irt_misfit" in queue.loc[truth.plants["misfit"], "reasons"]
    assert "irt_fit" in queue.loc[truth.plants["misfit"], "sources"]
    assert "outfit" in queue.loc[truth.plants["misfit"], "details"]


@pytest.mark.slow
def test_the_planted_aberrant_examinee_is_flagged_with_its_items(pcm_store):
    store, truth = pcm_store
    src, sel = views.Source.of(store), Selection(dataset=DATASET)
    people = views.irt_person_fit(src, sel, examinees=EXAMINEES_MODELS).set_index("examinee")
    planted = people.loc[truth.plants["aberrant"]]
    assert planted["aberrant"] and planted["lz"] == people["lz"].min() and planted["lz"] < -5
    assert planted["outfit"] > 2 and len(planted["top_items"]) == 3
    assert people["aberrant"].mean() < 0.06  # about the 2.3% a one-sided z < -2 gives by chance
    # the failure explorer's filter lists the items behind the misfit, most surprising first
    listed = views.explorer_items(src, sel, filter="aberrant", examinee=truth.plants["aberrant"])
    assert listed.attrs["examinee"] == truth.plants["aberrant"]
    assert listed["irt_unexpected"].all() and len(listed) >= 3
    assert list(listed["item_id"][:3]) == planted["top_items"]
    default = views.explorer_items(src, sel, filter="aberrant")  # no examinee: the most aberrant one
    assert default.attrs["examinee"] == truth.plants["aberrant"]


@pytest.mark.slow
def test_invalid_answers_are_counted_per_examinee_with_a_warning_above_five_percent(pcm_store):
    store, truth = pcm_store
    src, sel = views.Source.of(store), Selection(dataset=DATASET)
    people = views.irt_person_fit(src, sel, examinees=EXAMINEES_MODELS).set_index("examinee")
    invalid = people.loc[truth.plants["invalid"]]
    assert invalid["n_answers"] == 30 and invalid["n_invalid"] == 3 and invalid["invalid_rate"] == pytest.approx(0.1)
    assert invalid["invalid_warning"]
    assert not people.drop(index=truth.plants["invalid"])["invalid_warning"].any()
    assert (people.drop(index=truth.plants["invalid"])["n_invalid"] == 0).all()


@pytest.mark.slow
def test_the_gpcm_runs_and_says_when_it_is_exploratory(pcm_store):
    store, _ = pcm_store
    src, sel = views.Source.of(store), Selection(dataset=DATASET)
    items = views.irt_items(src, sel, model=IRT_GPCM, examinees=EXAMINEES_MODELS)
    assert set(items["family"].dropna()) == {"2PL", "GPCM"} and not items.attrs["exploratory"]
    slopes = items["discrimination"].dropna()
    assert slopes.median() == pytest.approx(1.0, abs=0.35) and items["discrimination_se"].notna().any()
    scores = views.selected_scores(src, sel)
    thirty = sorted(set(scores["model"].astype(str)))[:30]
    small = fit_polytomous(scores[scores["model"].astype(str).isin(thirty)], IRT_GPCM, score_parts_of(src, DATASET))
    assert small.panel()["exploratory"] and small.n_examinees == 30


# ---------------------------------------------------------------- an independent estimator, the Rasch case

def test_pcm_thresholds_agree_with_conditional_maximum_likelihood():
    """mirt's marginal ML (with a normal ability distribution) against our own CML (none assumed)."""
    rng = np.random.default_rng(3)
    parts = rng.integers(1, 5, 15)
    steps = [np.sort(rng.normal(0, 1, k)) for k in parts]
    levels = pcm_levels(rng.normal(0, 1.3, 500), steps, rng)
    frame, part_map = long_frame(levels, parts)
    fit = fit_polytomous(frame, IRT_PCM, part_map).items.set_index("item_id")
    mml = np.concatenate([fit.loc[f"i{j:03d}", "thresholds"] for j in range(len(parts))])
    cml = np.concatenate(cml_thresholds(levels, parts))
    mml -= mml.mean()
    assert np.corrcoef(mml, cml)[0, 1] >= 0.999
    assert np.abs(mml - cml).max() < 0.1


def test_rasch_results_are_the_recorded_ones():
    """The 0.5 rule's Rasch fit of a fixed synthetic panel, against values recorded from it (a
    change here is a change of published numbers, not a refactoring)."""
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    fit = fit_irt(synthetic_scores(12, 60, seed=1), IRT_RASCH)
    assert fit.latent_sd == pytest.approx(reference["latent_sd"], abs=1e-7)
    assert (fit.n_examinees, fit.n_items_fitted) == (reference["n_examinees"], reference["n_items_fitted"])
    items = fit.items[fit.items["informative"]].set_index("item_id")
    for column in ("difficulty", "difficulty_se"):
        got = items[column].reindex(list(reference[column])).to_numpy()
        assert np.allclose(got, list(reference[column].values()), atol=1e-6), column
    people = fit.abilities.set_index("examinee")
    for column in ("ability", "ability_se"):
        got = people[column].reindex(list(reference[column])).to_numpy()
        assert np.allclose(got, list(reference[column].values()), atol=1e-6), column


def test_the_pcm_on_right_wrong_items_is_the_rasch_model():
    rng = np.random.default_rng(8)
    levels = pcm_levels(rng.normal(0, 1.2, 200), [np.array([b]) for b in rng.normal(0, 1, 25)], rng)
    frame, parts = long_frame(levels, np.ones(25, dtype=int))
    pcm, rasch = fit_polytomous(frame, IRT_PCM, parts), fit_irt(frame, IRT_RASCH)
    assert any("is the Rasch model on these data" in n for n in pcm.notes)
    a = pcm.items.set_index("item_id")["difficulty"]
    b = rasch.items.set_index("item_id")["difficulty"].reindex(a.index)
    assert np.abs(a - b).max() < 0.02 and pcm.latent_sd == pytest.approx(rasch.latent_sd, abs=0.02)
    assert np.abs(pcm.abilities["ability"] - rasch.abilities["ability"]).max() < 0.02


def _marginal_loglik(codes: np.ndarray, slope: np.ndarray, steps: np.ndarray, sd: float) -> float:
    """The marginal log-likelihood by brute force (4,001 grid points over N(0, sd^2))."""
    grid = np.linspace(-10, 10, 4001) * sd
    weights = np.exp(-0.5 * (grid / sd) ** 2)
    weights /= weights.sum()
    logp = np.log(np.maximum(category_probabilities(grid, slope, steps), 1e-300))   # items x points x levels
    loglik = np.zeros((len(codes), len(grid)))
    for j in range(codes.shape[1]):
        loglik += logp[j][:, codes[:, j]].T
    top = loglik.max(axis=1, keepdims=True)
    return float((top[:, 0] + np.log(np.exp(loglik - top) @ weights)).sum())


@pytest.mark.slow
def test_a_long_test_on_a_small_panel_reaches_the_maximum():
    """Few examinees and many items: plain EM stops short along the latent mean (here 0.85 logits off,
    1.95 log-likelihood units below the maximum); the two-stage fit must sit at the maximum."""
    from scipy.optimize import minimize_scalar

    rng = np.random.default_rng(4)
    parts = rng.integers(1, 4, 400)
    levels = pcm_levels(np.sort(rng.normal(0.5, 1.0, 12)), [np.sort(rng.normal(-0.5, 1.2, k)) for k in parts], rng)
    frame, part_map = long_frame(levels, parts)
    fit = fit_polytomous(frame, IRT_PCM, part_map)
    cal = fit.calibration
    at_fit = _marginal_loglik(cal.codes, cal.slope, cal.steps, fit.latent_sd)
    best = minimize_scalar(lambda shift: -_marginal_loglik(cal.codes, cal.slope, cal.steps + shift, fit.latent_sd),
                           bounds=(-3, 3), method="bounded")
    assert abs(best.x) < 0.3 and -best.fun - at_fit < 0.5


@pytest.mark.slow
def test_polytomous_eap_matches_a_brute_force_integral():
    rng = np.random.default_rng(6)
    k = 300
    n_cat = rng.integers(2, 6, k)
    steps = np.full((k, 4), np.nan)
    for j, c in enumerate(n_cat):
        steps[j, : c - 1] = np.sort(rng.normal(0, 1, c - 1))
    slope = rng.lognormal(0, 0.3, k)
    codes = np.array([[rng.integers(0, c) for c in n_cat] for _ in range(5)])
    codes[0, :290] = -1  # a short test too: a wide posterior
    theta, se, _, _ = eap_abilities(codes, slope, steps, 1.3)
    grid = np.linspace(-12, 12, 40001)
    p = category_probabilities(grid, slope, steps)
    for e in range(len(codes)):
        ok = codes[e] >= 0
        loglik = np.log(p[np.flatnonzero(ok), :, codes[e, ok]]).sum(axis=0) - 0.5 * (grid / 1.3) ** 2
        w = np.exp(loglik - loglik.max())
        w /= w.sum()
        mean = (w * grid).sum()
        assert theta[e] == pytest.approx(mean, abs=1e-4)
        assert se[e] == pytest.approx(np.sqrt((w * (grid - mean) ** 2).sum()), rel=1e-3)
    assert se[0] > 3 * se[1:].max()


@pytest.mark.slow
def test_long_test_standard_errors_match_the_full_information_ones():
    """Above 1,000 items each PCM item's SEs come from its own information: close to the full ones."""
    rng = np.random.default_rng(12)
    parts = rng.integers(1, 4, 60)
    levels = pcm_levels(rng.normal(0, 1.2, 300), [np.sort(rng.normal(0, 1, k)) for k in parts], rng)
    frame, part_map = long_frame(levels, parts)
    fit = fit_polytomous(frame, IRT_PCM, part_map)
    cal = fit.calibration
    _, _, grid, weights = eap_abilities(cal.codes, cal.slope, cal.steps, fit.latent_sd)
    full = fit.items.set_index("item_id").loc[list(cal.item_ids), "threshold_se"]
    for j, info in enumerate(step_information(cal.codes, cal.slope, cal.steps, grid, weights)):
        own = np.sqrt(np.diag(np.linalg.inv(info)))
        assert np.allclose(own, full.iloc[j], rtol=0.15), cal.item_ids[j]


def test_too_small_a_panel_is_refused_with_the_reason():
    frame, parts = long_frame(np.array([[0, 1, 2], [1, 1, 0]]), np.array([1, 2, 2]))
    with pytest.raises(UserError, match="at least 3 examinees"):
        fit_polytomous(frame, IRT_PCM, parts)


def test_fit_statistics_use_the_fit_and_flag_by_the_stated_rules():
    rng = np.random.default_rng(2)
    parts = rng.integers(1, 4, 20)
    levels = pcm_levels(rng.normal(0, 1.2, 300), [np.sort(rng.normal(0, 1, k)) for k in parts], rng)
    levels[:, 4] = rng.integers(0, parts[4] + 1, 300)  # noise: no relation to ability
    frame, part_map = long_frame(levels, parts)
    fit = fit_model(frame, IRT_PCM, part_map)
    items = item_fit(fit).set_index("item_id")
    assert items.loc["i004", "flag"] == "underfit" and items.attrs["fit_rule"].startswith("underfit")
    # a reason is given for a flag, and only for a flag
    assert (items["reason"].notna() == items["flag"].notna()).all()
    assert items.loc["i004", "reason"].startswith("underfit: outfit")
    people = person_fit(fit)
    assert people.attrs["fit_rule"].startswith("aberrant: lz below -2")
    assert (people["aberrant"] == (people["lz"] < -2)).all()


@pytest.mark.slow
def test_the_pcm_fit_reaches_the_maximum_of_an_independent_marginal_likelihood():
    """With the library's default quadrature the fit stopped 0.25 log-likelihood units short
    and the abilities averaged +0.11; against our own MML (tests/analysis/mml_reference.py) it must sit at the
    maximum, with a near-zero gradient and abilities averaging 0 (the identification)."""
    import mml_reference

    rng = np.random.default_rng(21)
    parts = rng.integers(1, 4, 80)
    levels = pcm_levels(rng.normal(0, 0.8, 16), [np.sort(rng.normal(-0.5, 1.0, k)) for k in parts], rng)
    frame, part_map = long_frame(levels, parts)
    fit = fit_polytomous(frame, IRT_PCM, part_map)
    cal = fit.calibration
    m = (~np.isnan(cal.steps)).sum(axis=1)
    params = np.concatenate([cal.steps[i, :m[i]] for i in range(len(m))] + [np.array([np.log(fit.latent_sd)])])
    at_fit, gradient = mml_reference.loglik_and_grad(params, cal.codes, m)
    best = mml_reference.fit(cal.codes, m, start=params)
    assert best["loglik"] - at_fit < 0.01
    assert np.abs(gradient[:-1]).max() < 0.05   # every step; the last entry is d/d log sigma, which the
    assert abs(gradient[-1]) < 0.5               # library's quadrature leaves at about 0.2 (sigma off by < 0.5%)
    assert abs(fit.abilities["ability"].mean()) < 0.03   # 0.019 here (the library integrates on 61 GH nodes); demo: 0.0004

"""The adaptive engine (`analysis.adaptive`) against an independent CAT: PyPI `mirt`'s `mirt.cat.CATEngine`.

Why: our engine was checked only against the project's own EAP grid (`irt_levels`). Here the same small
banks (Rasch, 2PL, PCM and GPCM items with known parameters) are given to `CATEngine(model,
item_selection="MFI", scoring_method="EAP")` built on mirt's own item models (`TwoParameterLogistic`,
`GeneralizedPartialCredit`, joined by `MixedItemModel` as `irt_pcm` fits them), and after every answer of
one fixed answer sequence the two must agree on: the item chosen next (no exposure control, no content
balancing: our `Engine(randomesque_k=1)`, mirt's default `exposure_control=None`), the information of
every item at the current ability, the EAP and its SE.

Tolerances, from the two computations:
- EAP and SE: mirt integrates the N(0, 1) prior by Gauss-Hermite quadrature (`n_quadpts` nodes; 121
  and 201 nodes agree to 1e-9 on these banks); ours sums a uniform 241-point grid over ±6 prior SDs,
  whose error for a smooth posterior is the prior mass beyond 6 SD (about 2e-9). So 1e-6 logits, far
  below any printed digit; a wrong likelihood, prior or category mapping moves them by 1e-3 or more.
  A third, brute-force computation (adaptive quadrature of the posterior moments) adjudicates.
- Information: ours is a float32 table on the grid interpolated linearly; the interpolation error is
  at most h^2/8 max|I''| (h the grid step), with I'' taken from mirt's information on a fine grid,
  plus float32 rounding. At the grid points themselves only the rounding remains.
- Choice: equal whenever mirt's two most informative eligible items differ by more than twice that
  bound (the case in these banks at every step); otherwise the chosen item's information is within it.
Our prior is N(0, sd^2); mirt's CAT EAP prior is N(0, 1), so a bank with sd != 1 is compared on
mirt's scale (slopes times sd, steps over sd: the same model with theta / sd as the ability).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad

from eduart_core.analysis.adaptive import GRID_HALF_WIDTH, GRID_POINTS, Bank, Engine, Session
from eduart_core.analysis.irt_levels import log_category_probabilities

mirt_cat = pytest.importorskip("mirt.cat")
from mirt.models.dichotomous import TwoParameterLogistic  # noqa: E402
from mirt.models.mixed_format import MixedItemModel  # noqa: E402
from mirt.models.polytomous import GeneralizedPartialCredit  # noqa: E402

N_QUADPTS = 121
EAP_TOL = 1e-6
F32_REL = 1e-6

# A dichotomous bank: Rasch items (slope 1) and 2PL items, difficulties spread over the scale.
DICH_SLOPE = np.array([1.0, 1.0, 1.0, 1.0, 1.6, 0.7, 1.3, 2.0, 0.9, 1.0, 1.0, 1.5])
DICH_DIFF = np.array([-1.2, -0.4, 0.3, 1.1, 0.1, -0.8, 0.7, -0.2, 1.6, -2.0, 2.3, 0.5])
DICH_ANSWERS = [1, 0, 1, 1, 0, 1, 0, 0]

# A mixed bank: the dichotomous items above at some positions, PCM (slope 1) and GPCM items at others.
MIX_DICH = [0, 2, 3, 5, 7, 8]
MIX_POLY = [1, 4, 6, 9]
POLY_SLOPE = np.array([1.0, 1.0, 1.4, 0.8])
POLY_STEPS = np.array([[-1.0, 0.2, np.nan], [-0.5, 0.4, 1.5], [0.3, -0.6, np.nan], [-2.0, -1.0, 0.5]])
MIX_ANSWERS = [1, 2, 0, 1, 3, 0, 1, 1]


def _bank(slope: np.ndarray, steps: np.ndarray, sd: float = 1.0) -> Bank:
    """Our bank from arrays (levels 0..m per item, as a bank whose calibration saw every level)."""
    steps = np.atleast_2d(steps)
    widths = (~np.isnan(steps)).sum(axis=1)
    ids = np.array([f"item{k}" for k in range(len(slope))])
    return Bank(ids, np.array(["format"] * len(slope)), np.nanmean(steps, axis=1), np.asarray(slope, dtype=float),
                steps, [list(range(int(w) + 1)) for w in widths], sd)


def _mirt_2pl(slope: np.ndarray, difficulty: np.ndarray) -> TwoParameterLogistic:
    model = TwoParameterLogistic(len(slope))
    model.set_parameters(discrimination=np.asarray(slope, float), difficulty=np.asarray(difficulty, float))
    model._is_fitted = True          # known parameters: nothing to fit (mirt's own estimators set this flag)
    return model


def _mirt_mixed() -> MixedItemModel:
    dich = _mirt_2pl(DICH_SLOPE[:len(MIX_DICH)], DICH_DIFF[:len(MIX_DICH)])
    n_cat = [int((~np.isnan(row)).sum()) + 1 for row in POLY_STEPS]
    poly = GeneralizedPartialCredit(len(POLY_SLOPE), n_categories=n_cat)
    poly.set_parameters(discrimination=POLY_SLOPE, steps=np.nan_to_num(POLY_STEPS))
    poly._is_fitted = True
    return MixedItemModel([(dich, MIX_DICH), (poly, MIX_POLY)])


def _mixed_bank() -> Bank:
    n = len(MIX_DICH) + len(MIX_POLY)
    slope, steps = np.empty(n), np.full((n, POLY_STEPS.shape[1]), np.nan)
    slope[MIX_DICH], steps[MIX_DICH, 0] = DICH_SLOPE[:len(MIX_DICH)], DICH_DIFF[:len(MIX_DICH)]
    slope[MIX_POLY], steps[MIX_POLY] = POLY_SLOPE, POLY_STEPS
    return _bank(slope, steps)


def _mirt_information(model, theta: np.ndarray) -> np.ndarray:
    """mirt's information of every item (items x points), item by item (mixed models sum otherwise)."""
    t = np.asarray(theta, dtype=float).reshape(-1, 1)
    return np.array([np.ravel(model.information(t, item_idx=i)) for i in range(model.n_items)])


def _interpolation_bound(model, engine: Engine, scale: float = 1.0) -> np.ndarray:
    """Per item: h^2/8 max|I''| (linear interpolation on our grid) + float32 rounding, from mirt's curves."""
    h = float(engine.grid[1] - engine.grid[0])
    fine = np.linspace(engine.grid[0], engine.grid[-1], 12001)
    info = _mirt_information(model, fine / scale) / scale ** 2    # information about theta, not theta / scale
    d2 = np.abs(np.diff(info, 2, axis=1)).max(axis=1) / (fine[1] - fine[0]) ** 2
    return h * h / 8 * d2 + F32_REL * info.max(axis=1) + 1e-9


def _brute_force(bank: Bank, answered: list[tuple[int, int]]) -> tuple[float, float]:
    """EAP and posterior SD by adaptive quadrature of the posterior moments (no grid at all)."""
    sd = bank.latent_sd

    def density(t: float) -> float:
        logp = -0.5 * (t / sd) ** 2
        for i, code in answered:
            logp += float(log_category_probabilities(np.array([t]), bank.slope[i:i + 1], bank.steps[i:i + 1])[0, 0, code])
        return np.exp(logp)

    lim = 12 * sd
    mass = quad(density, -lim, lim, points=[0.0], limit=200)[0]
    mean = quad(lambda t: t * density(t), -lim, lim, points=[0.0], limit=200)[0] / mass
    var = quad(lambda t: (t - mean) ** 2 * density(t), -lim, lim, points=[0.0], limit=200)[0] / mass
    return mean, float(np.sqrt(var))


def _walk(bank: Bank, model, answers: list[int], scale: float = 1.0) -> list[tuple[int, int]]:
    """Both engines through the same answers; asserts agreement at every step; returns (item, code) asked."""
    engine = Engine(bank, randomesque_k=1)
    session = Session(engine, target_se=1e-3, max_items=len(bank), seed="vs-mirt")
    cat = mirt_cat.CATEngine(model, item_selection="MFI", stopping_rule="SE", scoring_method="EAP",
                             se_threshold=1e-3, max_items=len(bank), n_quadpts=N_QUADPTS,
                             theta_bounds=(-GRID_HALF_WIDTH, GRID_HALF_WIDTH))
    bound = _interpolation_bound(model, engine, scale)
    answered: list[tuple[int, int]] = []
    for answer in answers:
        state = cat.get_current_state()
        theta, _ = session.estimate
        assert theta == pytest.approx(state.theta * scale, abs=EAP_TOL)
        ours = engine.information_at(theta)
        theirs = _mirt_information(model, np.array([theta / scale]))[:, 0] / scale ** 2
        assert np.all(np.abs(ours - theirs) <= bound), (ours - theirs, bound)
        mine = engine.choose(theta, session.asked)
        left = np.flatnonzero(~session.asked)
        ranked = np.sort(theirs[left])[::-1]
        if len(ranked) < 2 or ranked[0] - ranked[1] > 2 * bound.max():
            assert mine == state.next_item
        else:
            assert theirs[mine] >= ranked[0] - 2 * bound.max()
        code = min(answer, len(bank.levels[mine]) - 1)
        step = session.record(str(bank.item_ids[mine]), code)
        after = cat.administer_item(code)
        answered.append((mine, code))
        assert step.ability == pytest.approx(after.theta * scale, abs=EAP_TOL)
        assert step.se == pytest.approx(after.standard_error * scale, abs=EAP_TOL)
    return answered


def test_rasch_2pl_choices_eap_and_se_match_mirt_cat():
    bank = _bank(DICH_SLOPE, DICH_DIFF[:, None])
    answered = _walk(bank, _mirt_2pl(DICH_SLOPE, DICH_DIFF), DICH_ANSWERS)
    assert len({i for i, _ in answered}) == len(DICH_ANSWERS)
    # The brute force agrees with both (so neither shares an error with the other's grid).
    session = Session(Engine(bank, randomesque_k=1), 1e-3, None, "bf")
    for i, code in answered:
        session.record(str(bank.item_ids[i]), code)
    eap, se = session.estimate
    ref_eap, ref_se = _brute_force(bank, answered)
    assert eap == pytest.approx(ref_eap, abs=EAP_TOL) and se == pytest.approx(ref_se, abs=EAP_TOL)
    assert 0.1 < se < 1.0                     # a real posterior, not the prior or a point mass


def test_prior_sd_other_than_one_matches_mirt_on_its_scale():
    """latent_sd 1.4: mirt (prior N(0, 1)) on theta/1.4 with slopes x1.4, difficulties /1.4 is the same model."""
    sd = 1.4
    bank = _bank(DICH_SLOPE, DICH_DIFF[:, None], sd=sd)
    _walk(bank, _mirt_2pl(DICH_SLOPE * sd, DICH_DIFF / sd), DICH_ANSWERS, scale=sd)


def test_pcm_gpcm_information_choices_eap_and_se_match_mirt_cat():
    bank, model = _mixed_bank(), _mirt_mixed()
    engine = Engine(bank, randomesque_k=1)
    # The information table at its own grid points: only float32 rounding between the two.
    theirs = _mirt_information(model, engine.grid)
    assert engine.info.shape == (len(bank), GRID_POINTS)
    assert np.allclose(engine.info, theirs, rtol=F32_REL, atol=1e-9)
    assert theirs[MIX_POLY].max() > 0.5        # the polytomous items carry real information
    answered = _walk(bank, model, MIX_ANSWERS)
    assert any(i in MIX_POLY and code >= 2 for i, code in answered)   # a higher category was scored
    session = Session(engine, 1e-3, None, "bf")
    for i, code in answered:
        session.record(str(bank.item_ids[i]), code)
    eap, se = session.estimate
    ref_eap, ref_se = _brute_force(bank, answered)
    assert eap == pytest.approx(ref_eap, abs=EAP_TOL) and se == pytest.approx(ref_se, abs=EAP_TOL)

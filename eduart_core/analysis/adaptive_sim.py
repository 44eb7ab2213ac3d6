"""Simulation studies of adaptive testing on a bank: how many items, how close to the full exam, which ties survive.

Why here: the issue's done-means are claims about simulated examinees (post-hoc simulation: each
examinee answers the whole bank once, from the bank's own model; the adaptive test reads its
answers from that same answer row, so "adaptive" and "full exam" differ only in which items
count). The full-exam ability is `irt_levels.eap_abilities` on every answer, an EAP computed on
its own adaptive grid, independent of the engine's fixed grid. Every number here is simulated
and says so where it is shown (`bench adaptive`, the tests).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm, spearmanr

from ..vocab import COMPLETION_CLOSED_TYPE, MCQ_TYPE, SELECT_ERRORS_TYPE, TRUE_FALSE_TYPE
from .adaptive import Bank, Engine, run_simulated, simulate_levels
from .irt_levels import eap_abilities
from .ranking import ALPHA, holm, tie_groups

SIM_FORMATS = (MCQ_TYPE, TRUE_FALSE_TYPE, COMPLETION_CLOSED_TYPE, SELECT_ERRORS_TYPE)


def simulated_bank(n_items: int = 200, seed: int = 0, pcm_share: float = 0.4) -> Bank:
    """A simulated bank: Rasch items (multiple choice and true/false formats) and PCM items of 2-3 steps
    (completion and select-errors formats), locations N(0, 1), steps spread 0.6-1.4 logits around them."""
    rng = np.random.default_rng(seed)
    n_pcm = int(round(n_items * pcm_share))
    rows = []
    for i in range(n_items):
        location = float(rng.normal(0.0, 1.0))
        if i < n_pcm:
            m = int(rng.integers(2, 4))
            offsets = np.sort(rng.normal(0.0, 0.7, m))
            steps = list(location + offsets - offsets.mean())
            fmt = SIM_FORMATS[2 + i % 2]
        else:
            steps = [location]
            fmt = SIM_FORMATS[i % 2]
        rows.append({"item_id": f"sim-{i:04d}", "type": fmt, "in_bank": True, "difficulty": location,
                     "discrimination": 1.0, "thresholds": steps,
                     "threshold_levels": [f"{k}-{k + 1}" for k in range(len(steps))]})
    return Bank.from_items(pd.DataFrame(rows), 1.0)


def full_abilities(bank: Bank, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(EAP, SD) of each examinee on every item of the bank (the full exam)."""
    codes = np.array([[bank.code(i, int(v)) for i, v in enumerate(row)] for row in levels])
    theta, se, _, _ = eap_abilities(codes, bank.slope, bank.steps, bank.latent_sd)
    return theta, se


@dataclass
class Efficiency:
    """What `efficiency` found (simulated)."""

    n_examinees: int
    n_bank: int
    mean_items: float
    share_items: float
    reached: int
    spearman: float
    max_items_used: int

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def efficiency(engine: Engine, n_examinees: int = 30, target_se: float = 0.30, seed: int = 1,
               max_items: int | None = None) -> Efficiency:
    """Adaptive tests of ``n_examinees`` simulated examinees (abilities N(0, latent_sd^2)) against their full exams."""
    bank = engine.bank
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, bank.latent_sd, n_examinees)
    levels = simulate_levels(bank, theta, rng)
    full, _ = full_abilities(bank, levels)
    sessions = [run_simulated(engine, levels[e], target_se, max_items, f"sim/{seed}/{e}") for e in range(n_examinees)]
    used = np.array([len(s.steps) for s in sessions])
    adaptive = np.array([s.estimate[0] for s in sessions])
    reached = sum(1 for s in sessions if s.steps and s.steps[-1].se <= target_se)
    return Efficiency(n_examinees, len(bank), float(used.mean()), float(used.mean() / len(bank)), int(reached),
                      float(spearmanr(adaptive, full).statistic), int(used.max()))


def separated(theta: np.ndarray, se: np.ndarray, corrected: bool = True) -> np.ndarray:
    """Pairs told apart: two-sided z test of the difference (SE = sqrt(se_i^2 + se_j^2)) at 5%, Holm-corrected
    over the panel's pairs as the leaderboard's tie groups are (`analysis.ranking`), or uncorrected (as
    `irt_curves.ability_ranking` marks ties)."""
    n = len(theta)
    i, j = np.triu_indices(n, 1)
    z = np.abs(theta[i] - theta[j]) / np.sqrt(se[i] ** 2 + se[j] ** 2)
    p = 2 * norm.sf(z)
    out = np.zeros((n, n), dtype=bool)
    out[i, j] = (holm(p) if corrected else p) < ALPHA
    out[j, i] = out[i, j]
    return out


def groups_of(theta: np.ndarray, se: np.ndarray, corrected: bool = True) -> np.ndarray:
    """Tie groups (1 = top) of abilities (`analysis.ranking.tie_groups` over `separated`)."""
    return tie_groups(theta, separated(theta, se, corrected))


def claims_only_full_orders(full: np.ndarray, full_se: np.ndarray, theta: np.ndarray, se: np.ndarray,
                            corrected: bool = True) -> bool:
    """True when every pair the adaptive abilities tell apart is told apart, in the same order, by the full
    exam: the adaptive ranking's tie groups only merge the full exam's, never split or reorder them."""
    ours, theirs = separated(theta, se, corrected), separated(full, full_se, corrected)
    same = np.sign(theta[:, None] - theta[None, :]) == np.sign(full[:, None] - full[None, :])
    return bool(np.all(~ours | (theirs & same)))


def keeps_groups(groups: np.ndarray, estimate: np.ndarray) -> bool:
    """True when no two examinees of different tie groups are ordered against their groups by ``estimate``
    (within a group any order is allowed: the full exam could not tell them apart)."""
    for i in range(len(groups)):
        for j in range(len(groups)):
            if groups[i] < groups[j] and estimate[i] <= estimate[j]:
                return False
    return True


@dataclass
class Ties:
    """What `tie_study` found over its simulations (simulated). Tie groups are Holm-corrected (as on the
    leaderboard) unless named uncorrected."""

    simulations: int
    max_items: int
    #: the adaptive tie groups only merge the full exam's (no order claimed that the full exam does not carry)
    groups_kept: int
    #: the same with uncorrected pairwise tests (as the IRT views' ability ranking marks ties)
    groups_kept_uncorrected: int
    #: stricter: the adaptive point estimates never order two examinees of different full-exam groups against them
    order_kept: int
    mean_full_groups: float
    mean_adaptive_groups: float

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def tie_study(engine: Engine, max_items: int, n_examinees: int = 8, simulations: int = 100, seed: int = 7,
              target_se: float = 0.30, abilities: np.ndarray | None = None) -> Ties:
    """The full exam's tie groups against the adaptive ranking's, over ``simulations`` simulated panels.

    Each simulation draws answers of ``n_examinees`` examinees (``abilities``, or N(0, latent_sd^2)
    draws), forms tie groups from their full-exam EAPs and SDs, and runs each examinee's adaptive
    test capped at ``max_items`` (the SE target still stops it earlier)."""
    bank = engine.bank
    rng = np.random.default_rng(seed)
    kept = loose = ordered = 0
    n_full, n_adaptive = [], []
    for sim in range(simulations):
        theta = abilities if abilities is not None else rng.normal(0.0, bank.latent_sd, n_examinees)
        levels = simulate_levels(bank, theta, rng)
        full, full_se = full_abilities(bank, levels)
        runs = [run_simulated(engine, levels[e], target_se, max_items, f"tie/{seed}/{sim}/{e}")
                for e in range(len(theta))]
        est = np.array([s.estimate for s in runs])
        kept += int(claims_only_full_orders(full, full_se, est[:, 0], est[:, 1]))
        loose += int(claims_only_full_orders(full, full_se, est[:, 0], est[:, 1], corrected=False))
        ordered += int(keeps_groups(groups_of(full, full_se), est[:, 0]))
        n_full.append(groups_of(full, full_se).max())
        n_adaptive.append(groups_of(est[:, 0], est[:, 1]).max())
    return Ties(simulations, max_items, kept, loose, ordered, float(np.mean(n_full)), float(np.mean(n_adaptive)))


__all__ = ["Efficiency", "SIM_FORMATS", "Ties", "claims_only_full_orders", "efficiency", "full_abilities", "groups_of",
           "keeps_groups", "separated", "simulated_bank", "tie_study"]

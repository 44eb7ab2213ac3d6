"""Stop asking when two models are told apart: an anytime-valid confidence sequence for the mean
paired difference of per-item scores, and the stratified random order the items are asked in.

Why a confidence sequence and not a test repeated after each item: a fixed-n test looked at after
every item rejects a true null far more often than its 5% (optional stopping). A confidence
sequence (CS) holds the true mean at *every* time at once with probability >= 1 - alpha, so
stopping the moment it excludes zero keeps the error at alpha whatever the moment.

The CS is the predictable plug-in empirical-Bernstein CS of Waudby-Smith & Ramdas, "Estimating
means of bounded random variables by betting", JRSS-B 86(1), 2024, Theorem 2 (with the running
intersection, Sec. 3): per-item differences D = score_A - score_B lie in [-1, 1]; they are mapped to
X = (D + 1) / 2 in [0, 1], the CS is computed for the mean of X and mapped back. It uses the
variance it has seen (most item pairs agree, D = 0), so it is narrower than a Hoeffding bound.
When the expected difference varies with the item's format (items asked in a stratified order),
the same supermartingale argument makes the CS cover the lambda-weighted running average of the
asked items' expected differences, close to their plain running mean since lambda changes slowly
(checked by simulation in tests/runner/test_until_separated.py). The target is therefore the mean
difference over the items asked (micro average, every item one weight), not the macro average
over formats; the stratified order keeps every prefix's format shares those of the selection.

The decision: "separated" (with its direction) the first time the CS excludes 0; "not
separated" when the budget is spent first. All pure (numpy): no store, no runner.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["ALPHA", "CS_METHOD", "SequentialState", "StopDecision", "eb_confidence_sequence",
           "full_run_decision", "run_until_separated", "stratified_order"]

ALPHA = 0.05
TRUNCATION = 0.5  # lambda_t <= 1/2, the paper's default c
CS_METHOD = ("predictable plug-in empirical-Bernstein confidence sequence (Waudby-Smith & Ramdas, JRSS-B 2024, "
             "Thm 2) for the mean paired difference of per-item scores, running intersection, alpha = 0.05 "
             "two-sided; valid under optional stopping")


def eb_confidence_sequence(diffs: Sequence[float] | np.ndarray, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds (after each observation) of the running-intersection PrPl-EB CS for
    the mean of ``diffs`` (each in [-1, 1]); both arrays have one entry per difference.

    The bounds hold the mean (for differences of a changing mean: their lambda-weighted average)
    at all times simultaneously with probability >= 1 - alpha.
    """
    d = np.asarray(diffs, dtype=float)
    if d.size == 0:
        return np.array([]), np.array([])
    if np.any(d < -1 - 1e-9) or np.any(d > 1 + 1e-9):
        raise ValueError("paired differences of scores must lie in [-1, 1]")
    x = (np.clip(d, -1, 1) + 1) / 2
    t = np.arange(1, x.size + 1, dtype=float)
    # running estimates after t observations, started at the prior 1/2 and 1/4
    mu_hat = (0.5 + np.cumsum(x)) / (t + 1)
    sq = np.cumsum((x - mu_hat) ** 2)
    sigma2_hat = (0.25 + sq) / (t + 1)
    # predictable: step t uses the estimates after t-1 observations
    mu_prev = np.concatenate(([0.5], mu_hat[:-1]))
    sigma2_prev = np.concatenate(([0.25], sigma2_hat[:-1]))
    log_term = math.log(2 / alpha)
    lam = np.minimum(np.sqrt(2 * log_term / (sigma2_prev * t * np.log1p(t))), TRUNCATION)
    psi = (-np.log1p(-lam) - lam) / 4
    v = 4 * (x - mu_prev) ** 2
    sum_lam = np.cumsum(lam)
    centre = np.cumsum(lam * x) / sum_lam
    margin = (log_term + np.cumsum(v * psi)) / sum_lam
    low = np.maximum.accumulate(np.maximum(centre - margin, 0.0))
    high = np.minimum.accumulate(np.minimum(centre + margin, 1.0))
    return 2 * low - 1, 2 * high - 1


@dataclass
class StopDecision:
    """Why and when asking stopped: ``decision`` is "separated" or "not separated"; ``direction``
    "A>B", "B>A" or ""; ``n_asked`` item pairs used of ``budget``; the CS and mean at the stop."""

    decision: str
    direction: str
    n_asked: int
    budget: int
    mean_diff: float
    cs_low: float
    cs_high: float
    alpha: float = ALPHA
    method: str = CS_METHOD

    @property
    def separated(self) -> bool:
        return self.decision == "separated"

    def as_dict(self) -> dict:
        out = asdict(self)
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in out.items()}

    def sentence(self, a: str = "A", b: str = "B") -> str:
        """One line in words (points = percentage points of the per-item score)."""
        cs = f"95% confidence sequence {100 * self.cs_low:+.1f} to {100 * self.cs_high:+.1f} points"
        if self.separated:
            lead, trail = (a, b) if self.direction == "A>B" else (b, a)
            return (f"separated after {self.n_asked} of {self.budget} item pairs: {lead} scores higher than "
                    f"{trail} (mean difference {a} - {b} {100 * self.mean_diff:+.1f} points, {cs}; anytime-valid)")
        return (f"not separated after {self.n_asked} of {self.budget} item pairs (mean difference {a} - {b} "
                f"{100 * self.mean_diff:+.1f} points, {cs}): the interval still holds 0")


class SequentialState:
    """The running decision over paired differences, fed in the order the items are asked."""

    def __init__(self, budget: int, alpha: float = ALPHA):
        self.budget, self.alpha = int(budget), alpha
        self.diffs: list[float] = []

    def extend(self, diffs: Iterable[float]) -> None:
        self.diffs.extend(float(d) for d in diffs)

    def decision(self) -> StopDecision | None:
        """The stop (separated, or the budget spent), or None while neither."""
        if not self.diffs:
            return None if self.budget > 0 else StopDecision("not separated", "", 0, self.budget, 0.0, -1.0, 1.0,
                                                             self.alpha)
        low, high = eb_confidence_sequence(self.diffs, self.alpha)
        n = len(self.diffs)
        mean = float(np.mean(self.diffs))
        if low[-1] > 0 or high[-1] < 0:
            return StopDecision("separated", "A>B" if low[-1] > 0 else "B>A", n, self.budget, mean,
                                float(low[-1]), float(high[-1]), self.alpha)
        if n >= self.budget:
            return StopDecision("not separated", "", n, self.budget, mean, float(low[-1]), float(high[-1]),
                                self.alpha)
        return None


def run_until_separated(diffs: Sequence[float] | np.ndarray, budget: int | None = None,
                        alpha: float = ALPHA, round_size: int = 1) -> StopDecision:
    """The stopping rule on differences already in asked order (simulations and tests): look after
    every ``round_size`` pairs, stop at the first look where the CS excludes 0 or the budget is spent."""
    d = np.asarray(diffs, dtype=float)
    budget = d.size if budget is None else min(int(budget), d.size)
    low, high = eb_confidence_sequence(d[:budget], alpha)
    looks = np.arange(round_size, budget + round_size, round_size)
    looks = np.minimum(looks, budget) - 1
    hit = looks[(low[looks] > 0) | (high[looks] < 0)] if budget else np.array([], dtype=int)
    if hit.size:
        i = int(hit[0])
        return StopDecision("separated", "A>B" if low[i] > 0 else "B>A", i + 1, budget, float(d[: i + 1].mean()),
                            float(low[i]), float(high[i]), alpha)
    if budget == 0:
        return StopDecision("not separated", "", 0, 0, 0.0, -1.0, 1.0, alpha)
    return StopDecision("not separated", "", budget, budget, float(d[:budget].mean()), float(low[-1]),
                        float(high[-1]), alpha)


def full_run_decision(diffs: Sequence[float] | np.ndarray, alpha: float = ALPHA) -> str:
    """What the full run concludes with the usual fixed-n paired test (two-sided, normal approximation
    to the paired t-test on all items): "A>B", "B>A" or "" (not separated). The yardstick the early stop
    is compared with."""
    from scipy.stats import norm

    d = np.asarray(diffs, dtype=float)
    if d.size < 2:
        return ""
    se = d.std(ddof=1) / math.sqrt(d.size)
    if se == 0:
        return "" if d.mean() == 0 else ("A>B" if d.mean() > 0 else "B>A")
    z = d.mean() / se
    if abs(z) <= norm.ppf(1 - alpha / 2):
        return ""
    return "A>B" if z > 0 else "B>A"


def stratified_order(units: Sequence[tuple[str, str]], seed: int | str) -> list[str]:
    """The order to ask units in: ``units`` are (unit id, format); each format's units are shuffled,
    then the formats interleaved so that every prefix keeps the formats' shares (unit k of a format
    of n sits at position (k + u) / n, u uniform). Seeded, so a resumed launch asks the same order."""
    rng = np.random.default_rng(_seed(seed))
    by_format: dict[str, list[str]] = {}
    for unit, fmt in units:
        by_format.setdefault(fmt, []).append(unit)
    keyed: list[tuple[float, str]] = []
    for fmt in sorted(by_format):
        members = sorted(by_format[fmt])
        rng.shuffle(members)
        n = len(members)
        offsets = rng.uniform(0, 1, size=n)
        keyed.extend(((k + offsets[k]) / n, unit) for k, unit in enumerate(members))
    return [unit for _, unit in sorted(keyed)]


def _seed(seed: int | str) -> int:
    if isinstance(seed, int):
        return seed
    import hashlib

    return int(hashlib.sha1(str(seed).encode()).hexdigest()[:12], 16)

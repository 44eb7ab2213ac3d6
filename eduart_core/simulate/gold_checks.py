"""Simulated gold checks: how often the flag of ``analysis.gold`` catches a lenient grader, and how
often it wrongly flags an accurate one.

Why this design (stated because the rates depend on it): each round seeds ``answers`` gold answers
marked on ``criteria`` criteria of 0 to ``points`` points. Marks follow the many-facet Rasch rating
scale model: an answer's quality on a criterion is normal (answers SD 1, criteria SD 0.5), the step
thresholds are evenly spread over [-0.5, 0.5] logit; the gold mark is the median of three accurate
graders' marks (an adjudicated panel, not the truth itself); the grader under test marks with a
lenience of ``lenience`` logit (+0.5: the planted lenient grader, 0: an accurate one), beside three
accurate colleagues who mark the same gold answers (their pooled accuracy is the accuracy test's
reference). The flag is read once, after the ``answers``-th gold answer.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analysis.gold import gold_summary

COLLEAGUES = 3


@dataclass(frozen=True)
class FlagRates:
    """Share of simulated rounds in which the planted lenient grader and an accurate one are flagged."""

    lenient: float
    accurate: float
    rounds: int
    answers: int
    criteria: int
    points: int
    lenience: float


def _marks(quality: np.ndarray, thresholds: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One grader's marks (0..len(thresholds)) under the rating scale model."""
    steps = np.arange(len(thresholds) + 1)
    cumulative = np.concatenate([[0.0], np.cumsum(thresholds)])
    logits = quality[..., None] * steps - cumulative
    p = np.exp(logits - logits.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return (rng.random(quality.shape)[..., None] > np.cumsum(p, axis=-1)).sum(axis=-1)


def simulated_checks(lenience: float, answers: int, criteria: int, points: int,
                     rng: np.random.Generator) -> pd.DataFrame:
    """One round's gold marks: the grader under test ('tested') and three accurate colleagues."""
    thresholds = np.linspace(-0.5, 0.5, points) if points > 1 else np.zeros(1)
    quality = rng.normal(0, 1, (answers, 1)) - rng.normal(0, 0.5, (1, criteria))
    gold = np.median(np.stack([_marks(quality, thresholds, rng) for _ in range(3)]), axis=0)
    frames = []
    raters = [("tested", lenience)] + [(f"colleague {k + 1}", 0.0) for k in range(COLLEAGUES)]
    answer = np.repeat(np.arange(answers), criteria)
    criterion = np.tile(np.arange(criteria), answers)
    for name, shift in raters:
        marks = _marks(quality + shift, thresholds, rng)
        frames.append(pd.DataFrame({"rater": name, "dataset": "sim", "rubric": "sim", "answer": answer,
                                    "criterion": criterion, "points": marks.ravel().astype(float),
                                    "gold": gold.ravel().astype(float), "simulated": True}))
    return pd.concat(frames, ignore_index=True)


def flagged_share(lenience: float, rounds: int, answers: int, criteria: int, points: int,
                  rng: np.random.Generator) -> float:
    """Share of ``rounds`` simulated rounds in which the grader under test is flagged."""
    hits = 0
    for _ in range(rounds):
        summary = gold_summary(simulated_checks(lenience, answers, criteria, points, rng))
        hits += bool(summary.loc[summary["rater"] == "tested", "flagged"].iloc[0])
    return hits / rounds


def flag_rates(rounds: int = 100, answers: int = 50, criteria: int = 5, points: int = 3, lenience: float = 0.5,
               seed: int = 42) -> FlagRates:
    """The two rates of the issue's target (lenient flagged >= 90%, accurate <= 5%) on one seed."""
    rng = np.random.default_rng(seed)
    lenient = flagged_share(lenience, rounds, answers, criteria, points, rng)
    accurate = flagged_share(0.0, rounds, answers, criteria, points, rng)
    return FlagRates(lenient, accurate, rounds, answers, criteria, points, lenience)

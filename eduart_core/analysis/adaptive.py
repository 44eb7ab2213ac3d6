"""Computerized adaptive testing on a frozen item bank: EAP ability, next item, stopping rule.

Why our own (and not `catsim` / `mirt.cat`): the studio's banks mix Rasch, 2PL and partial credit
items (a PCM item's steps are stored with the score levels they separate), and catsim takes right/
wrong items only; the arithmetic is the one of `analysis.irt_levels` (one parameterisation for every
item: slope a, steps s_k), so an ability here is on the bank's scale by construction. The EAP is
tested against `irt_levels.eap_abilities` (an independent grid) and the selection against a brute-force
information computation at the EAP.

The rules (stated in every trajectory, `Engine.rules`):
- Ability: EAP under the bank's N(0, latent_sd^2) prior on a fixed grid of `GRID_POINTS` points over
  ±`GRID_HALF_WIDTH` prior SDs (step about 0.05 SD: exact to far below the 0.30 SE targets in use);
  SE = the posterior SD.
- Next item: maximum Fisher information at the current EAP, information precomputed on the grid
  (items x points) and interpolated linearly, so a choice in a 15,000-item bank is one pass over
  one or two columns (`bench adaptive`).
- Content balancing (``balance="formats"``): the targets are the bank's own shares of each format.
  When a format falls a whole item (`BALANCE_BEHIND`) behind its share, the next item is of that
  format (the one furthest behind: Kingsbury and Zara's constrained CAT); otherwise it is the most
  informative of any format not above its share. Every format stays within about one item of its
  share, and a bank with many formats (the demo's seven) is not made to ask a weak item merely
  because its format is a fraction of an item behind.
- Exposure control: randomesque (Kingsbury and Zara 1989): one of the `RANDOMESQUE_K` most informative
  eligible items that carry at least `RANDOMESQUE_SHARE` of the best one's information (so spreading
  exposure never costs more than a tenth of an item's information), drawn with a generator seeded by
  the run (so a resumed run draws the same).
- Stop: SE <= target, or the item cap, or no item left.
- A score level the calibration never saw for an item counts as the highest level it did see below
  it (the lowest seen when none is below): the bank has no step for it.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import UserError
from .irt_levels import item_information, log_category_probabilities

#: Fewest usable items an adaptive run starts with (the bank's own minimum).
MIN_ADAPTIVE_ITEMS = 20
GRID_POINTS = 241
GRID_HALF_WIDTH = 6.0
RANDOMESQUE_K = 3
#: The randomesque draw takes only items with at least this share of the best item's information.
RANDOMESQUE_SHARE = 0.9
#: How far (items) a format may fall behind its target share before the next item must be of it.
BALANCE_BEHIND = 1.0
BALANCE_NONE, BALANCE_FORMATS = "none", "formats"
BALANCES = (BALANCE_NONE, BALANCE_FORMATS)
STOP_SE, STOP_CAP, STOP_BANK = "target_se", "max_items", "bank_exhausted"
STOP_WORDS = {STOP_SE: "reached the target SE", STOP_CAP: "reached the item cap", STOP_BANK: "no item left"}


def check_target(target_se: float) -> float:
    """The target SE as a float; one line for zero, negative or not finite."""
    try:
        value = float(target_se)
    except (TypeError, ValueError):
        raise UserError(f"--target-se {target_se!r}: give a positive number of logits, e.g. 0.30") from None
    if not np.isfinite(value) or value <= 0:
        raise UserError(f"--target-se {target_se}: the target standard error must be a positive number of logits "
                        "(e.g. 0.30); nothing was asked")
    return value


def _levels(row: dict) -> list[int]:
    """The score levels a bank item's categories stand for ('0-1', '1-2' -> [0, 1, 2]; '0-2' -> [0, 2])."""
    labels = row.get("threshold_levels") or []
    out: list[int] = []
    for label in labels:
        lo, hi = (int(v) for v in str(label).split("-"))
        if not out:
            out.append(lo)
        out.append(hi)
    return out or [0, 1]


@dataclass
class Bank:
    """A bank's usable items as arrays: ids, formats, slopes, steps (items x max steps, NaN-padded)."""

    item_ids: np.ndarray
    formats: np.ndarray
    difficulty: np.ndarray
    slope: np.ndarray
    steps: np.ndarray
    levels: list[list[int]]
    latent_sd: float

    @classmethod
    def from_items(cls, items: pd.DataFrame, latent_sd: float) -> Bank:
        """From the rows of a stored bank (`store.banks.load_bank`): the items in the bank only."""
        rows = items[items["in_bank"].astype(bool) & items["difficulty"].notna()].to_dict("records")
        if len(rows) < MIN_ADAPTIVE_ITEMS:
            raise UserError(f"this bank has {len(rows)} usable items; an adaptive run needs at least "
                            f"{MIN_ADAPTIVE_ITEMS}; nothing was asked")
        lists = [[float(v) for v in (r.get("thresholds") or [r["difficulty"]])] for r in rows]
        width = max(len(v) for v in lists)
        steps = np.full((len(rows), width), np.nan)
        for i, values in enumerate(lists):
            steps[i, :len(values)] = values
        slope = np.array([float(r.get("discrimination") or 1.0) for r in rows])
        return cls(np.array([str(r["item_id"]) for r in rows]), np.array([str(r["type"]) for r in rows]),
                   np.array([float(r["difficulty"]) for r in rows]), slope, steps,
                   [_levels(r) if len(lists[i]) == len(_levels(r)) - 1 else list(range(len(lists[i]) + 1))
                    for i, r in enumerate(rows)], float(latent_sd or 1.0))

    def __len__(self) -> int:
        return len(self.item_ids)

    def code(self, index: int, level: int) -> int:
        """The category of item ``index`` that score level ``level`` falls in (see the module doc)."""
        levels = self.levels[index]
        below = [k for k, v in enumerate(levels) if v <= level]
        return below[-1] if below else 0


@dataclass
class Step:
    """One answered item of a trajectory and the ability after it."""

    step: int
    item_id: str
    type: str
    difficulty: float
    level: int
    code: int
    information: float
    ability: float
    se: float


@dataclass
class Engine:
    """The selection engine of one bank: the grid, the information table, the format targets."""

    bank: Bank
    balance: str = BALANCE_NONE
    randomesque_k: int = RANDOMESQUE_K
    grid: np.ndarray = field(init=False)
    info: np.ndarray = field(init=False)
    prior: np.ndarray = field(init=False)
    targets: dict[str, float] = field(init=False)

    def __post_init__(self) -> None:
        if self.balance not in BALANCES:
            raise UserError(f"--content-balance {self.balance!r}: use {' or '.join(BALANCES)}")
        sd = self.bank.latent_sd
        self.grid = np.linspace(-GRID_HALF_WIDTH * sd, GRID_HALF_WIDTH * sd, GRID_POINTS)
        self.prior = -0.5 * (self.grid / sd) ** 2
        self.info = np.empty((len(self.bank), GRID_POINTS), dtype=np.float32)
        for lo in range(0, len(self.bank), 2000):
            part = slice(lo, lo + 2000)
            self.info[part] = item_information(self.grid, self.bank.slope[part], self.bank.steps[part])
        names, counts = np.unique(self.bank.formats, return_counts=True)
        self.targets = {str(n): float(c) / len(self.bank) for n, c in zip(names, counts)}

    @property
    def rules(self) -> str:
        balance = ("content balanced across formats at the bank's shares (a format a whole item behind its share "
                   "next, else any format not above its share)" if self.balance == BALANCE_FORMATS
                   else "no content balancing")
        return (f"EAP ability (prior N(0, {self.bank.latent_sd:.3f}^2), {GRID_POINTS}-point grid), SE = posterior SD; "
                f"next item by maximum Fisher information at the EAP; {balance}; exposure control randomesque "
                f"(one of the {self.randomesque_k} most informative with at least {RANDOMESQUE_SHARE:.0%} of the "
                "best one's information, seeded by the run)")

    def log_likelihood(self, index: int, code: int) -> np.ndarray:
        """log P(category ``code`` of item ``index`` | theta) on the grid."""
        logp = log_category_probabilities(self.grid, self.bank.slope[index:index + 1], self.bank.steps[index:index + 1])
        return logp[0, :, code]

    def estimate(self, loglik: np.ndarray) -> tuple[float, float]:
        """(EAP, posterior SD) of a log-likelihood on the grid (the prior added here)."""
        z = loglik + self.prior
        w = np.exp(z - z.max())
        w /= w.sum()
        mean = float(w @ self.grid)
        return mean, float(np.sqrt(max(float(w @ (self.grid - mean) ** 2), 0.0)))

    def information_at(self, theta: float, rows: np.ndarray | None = None) -> np.ndarray:
        """Information of items (``rows``; every item when None) at ``theta`` (linear interpolation on the grid)."""
        pos = (float(theta) - self.grid[0]) / (self.grid[1] - self.grid[0])
        j = int(min(max(np.floor(pos), 0), GRID_POINTS - 2))
        w = float(min(max(pos - j, 0.0), 1.0))
        table = self.info if rows is None else self.info[rows]
        return (1.0 - w) * table[:, j] + w * table[:, j + 1]

    def _format_rows(self, available: np.ndarray, counts: dict[str, int], n: int) -> np.ndarray:
        """The available items the content balance allows next: of the format furthest below its target
        share when that format is a whole item behind, else of every format not above its share."""
        formats = self.bank.formats[available]
        deficits = {name: share * (n + 1) - counts.get(name, 0) for name, share in sorted(self.targets.items())
                    if (formats == name).any()}
        worst = max(deficits, key=lambda name: deficits[name])
        if deficits[worst] >= BALANCE_BEHIND:
            return available[formats == worst]
        return available[np.isin(formats, [name for name, d in deficits.items() if d >= 0])]

    def choose(self, theta: float, asked: np.ndarray, rng: np.random.Generator | None = None,
               counts: dict[str, int] | None = None) -> int | None:
        """Index of the next item at ability ``theta`` among those not ``asked`` (boolean mask); None when none is left."""
        available = np.flatnonzero(~asked)
        if not len(available):
            return None
        if self.balance == BALANCE_FORMATS:
            available = self._format_rows(available, counts or {}, int(asked.sum()))
        info = self.information_at(theta, available)
        k = min(self.randomesque_k, len(available))
        if k <= 1 or rng is None:
            return int(available[int(np.argmax(info))])
        top = np.argpartition(-info, k - 1)[:k]
        top = top[info[top] >= RANDOMESQUE_SHARE * float(info[top].max())]  # near the best only
        return int(available[top[int(rng.integers(len(top)))]])


def seeded(seed: str, step: int) -> np.random.Generator:
    """The generator of one step of one run (a resumed run draws what the first session drew)."""
    digest = hashlib.sha256(f"{seed}/{step}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


@dataclass
class Session:
    """One examinee's adaptive test in progress: asked items, answers, the running estimate."""

    engine: Engine
    target_se: float
    max_items: int | None
    seed: str
    steps: list[Step] = field(default_factory=list)
    asked: np.ndarray = field(init=False)
    loglik: np.ndarray = field(init=False)
    counts: dict[str, int] = field(default_factory=dict)
    index: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        check_target(self.target_se)
        self.asked = np.zeros(len(self.engine.bank), dtype=bool)
        self.loglik = np.zeros(GRID_POINTS)
        self.index = {str(i): k for k, i in enumerate(self.engine.bank.item_ids)}

    @property
    def estimate(self) -> tuple[float, float]:
        return self.engine.estimate(self.loglik)

    def stop_reason(self) -> str | None:
        """Why the test is over (None: go on)."""
        n = int(self.asked.sum())
        if self.steps and self.steps[-1].se <= self.target_se:
            return STOP_SE
        if self.max_items is not None and n >= self.max_items:
            return STOP_CAP
        if n >= len(self.engine.bank):
            return STOP_BANK
        return None

    def next_item(self) -> str | None:
        """The item to ask next (None when the test is over)."""
        if self.stop_reason() is not None:
            return None
        theta, _ = self.estimate
        chosen = self.engine.choose(theta, self.asked, seeded(self.seed, int(self.asked.sum())), self.counts)
        return None if chosen is None else str(self.engine.bank.item_ids[chosen])

    def about_left(self, pool: int = 10) -> int:
        """About how many more items the test asks (0 when over): the information still needed to reach the
        target SE, 1/target^2 - 1/SE^2, over the mean information of the ``pool`` most informative items left
        at the current ability; never more than the cap or the items left allow."""
        if self.stop_reason() is not None:
            return 0
        theta, se = self.estimate
        left = np.flatnonzero(~self.asked)
        info = np.sort(self.engine.information_at(theta, left))[::-1][:pool]
        need = max(0.0, 1.0 / self.target_se ** 2 - 1.0 / max(se, 1e-9) ** 2)
        guess = int(np.ceil(need / float(info.mean()))) if len(info) and info.mean() > 0 else len(left)
        room = len(left) if self.max_items is None else min(len(left), self.max_items - int(self.asked.sum()))
        return int(max(1, min(guess, room)))

    def skip(self, item_id: str) -> None:
        """An item that could not be answered (its request failed): never chosen again in this test."""
        self.asked[self.index[str(item_id)]] = True

    def record(self, item_id: str, level: int) -> Step:
        """Enter the answer to ``item_id`` at score ``level``; returns the step with the new estimate."""
        i = self.index[str(item_id)]
        if self.asked[i]:
            raise ValueError(f"item {item_id} was already asked in this test")
        theta_before, _ = self.estimate
        code = self.engine.bank.code(i, int(level))
        self.asked[i] = True
        self.loglik = self.loglik + self.engine.log_likelihood(i, code)
        fmt = str(self.engine.bank.formats[i])
        self.counts[fmt] = self.counts.get(fmt, 0) + 1
        theta, se = self.estimate
        info = float(self.engine.information_at(theta_before, np.array([i]))[0])
        step = Step(len(self.steps) + 1, str(item_id), fmt, float(self.engine.bank.difficulty[i]), int(level), code,
                    info, theta, se)
        self.steps.append(step)
        return step


def simulate_levels(bank: Bank, theta: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Simulated score levels (examinees x items) of examinees at ``theta`` answering every item."""
    p = np.exp(log_category_probabilities(np.asarray(theta, dtype=float), bank.slope, bank.steps))  # items x e x cat
    u = rng.random((p.shape[0], p.shape[1], 1))
    codes = (np.cumsum(p, axis=2) < u).sum(axis=2).T                                                 # e x items
    return np.array([[bank.levels[i][min(c, len(bank.levels[i]) - 1)] for i, c in enumerate(row)] for row in codes])


def run_simulated(engine: Engine, levels: np.ndarray, target_se: float, max_items: int | None,
                  seed: str) -> Session:
    """One adaptive test whose answers are read from ``levels`` (one examinee's full answer row)."""
    session = Session(engine, target_se, max_items, seed)
    while (item := session.next_item()) is not None:
        session.record(item, int(levels[session.index[item]]))
    return session


__all__ = ["BALANCES", "BALANCE_FORMATS", "BALANCE_NONE", "Bank", "Engine", "MIN_ADAPTIVE_ITEMS", "RANDOMESQUE_K",
           "STOP_BANK", "STOP_CAP", "STOP_SE", "STOP_WORDS", "Session", "Step", "check_target", "run_simulated",
           "seeded", "simulate_levels"]

"""`run --until-separated A,B`: ask the items in rounds and stop once A and B are told apart.

Why rounds through the normal pool: every answer still goes through the same journal, cache,
ingest and resume path as a full launch; only the order and the point where asking stops change.
Items (a dialogue counts as one unit, its turns asked together) are asked in a random order
stratified by format (`analysis.sequential.stratified_order`, seeded by the launch id, so a resumed
launch replays the same order); each round asks every member of the launch on the same few units.
After each round the per-item scores of A and B (the default profile) on the items both answered
feed the anytime-valid confidence sequence of `analysis.sequential`; asking stops when it excludes
0 ("separated") or when every selected item has been asked (the budget: "not separated").
Stopping only at round ends keeps the guarantee: the CS is valid at any stopping time.

A stopped launch is an ordinary launch with unasked items: resuming it without the option
(`run --resume ID`, or the same command again) asks the rest.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..analysis.sequential import SequentialState, StopDecision, stratified_order
from ..errors import UserError
from ..providers.registry import ModelSpec
from .pool import Job, PoolResult

__all__ = ["Separation", "check_until_separated", "parse_pair"]


def parse_pair(text: str) -> list[str]:
    """``"A,B"`` -> ["A", "B"]; one clear line for anything else."""
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise UserError(f"--until-separated {text!r}: name two different models of the launch as A,B "
                        "(registry keys, as given to --model)")
    return parts


def check_until_separated(pair: list[str], members: list, registry: dict[str, ModelSpec], *,
                          conditions: list[str], repeat: int | None) -> None:
    """Both models known and in the launch, one run each (one condition, no repeats): else one line,
    raised while planning, before anything is asked."""
    in_launch = sorted({m.spec.key for m in members})
    for key in pair:
        if key not in in_launch:
            if key not in registry:
                raise UserError(f"--until-separated: unknown model {key!r} (see 'run --list-models'; models in "
                                f"this launch: {', '.join(in_launch)})")
            raise UserError(f"--until-separated: model {key!r} is not in this launch (add --model {key}; models in "
                            f"this launch: {', '.join(in_launch)})")
    if len(conditions) != 1 or (repeat or 0) > 1:
        raise UserError("--until-separated compares one run per model: use one --condition and no --repeat")


@dataclass
class Separation:
    """The rounds and the running decision of one launch (see the module doc)."""

    a: str
    b: str
    jobs: list[Job]
    seed: str
    round_size: int = 8
    score: Callable[[dict, str], float] | None = None
    order: list[str] = field(init=False)
    _units: dict[str, list[Job]] = field(init=False)
    _scores: dict[str, float] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        units: dict[str, list[Job]] = {}
        formats: dict[str, str] = {}
        for job in self.jobs:
            unit = str(job.meta.get("dialogue_id") or job.meta["item_id"])
            units.setdefault(unit, []).append(job)
            formats.setdefault(unit, str(job.payload["request"].item.get("type")))
        self._units = units
        self.order = stratified_order(list(formats.items()), self.seed)
        self.score = self.score or _default_score

    @property
    def budget(self) -> int:
        """Item pairs that could be compared: items A and B are both asked."""
        return sum(len(self._pairs(unit)) for unit in self.order)

    def _pairs(self, unit: str) -> list[tuple[Job, Job]]:
        by_item: dict[str, dict[str, Job]] = {}
        for job in self._units[unit]:
            by_item.setdefault(job.meta["item_id"], {})[job.meta["model"]] = job
        return [(pair[self.a], pair[self.b]) for pair in by_item.values() if self.a in pair and self.b in pair]

    def _score(self, job: Job, record: dict | None) -> float | None:
        if record is None or record.get("status") != "ok":
            return None
        key = job.request_key
        if key not in self._scores:
            scorer = self.score or _default_score  # set in __post_init__; the fallback names it for the checker
            self._scores[key] = float(scorer(job.payload["request"].item, record.get("raw_text") or ""))
        return self._scores[key]

    def decision(self, latest: dict[str, dict], asked_units: int) -> StopDecision | None:
        """The decision after the first ``asked_units`` units (None: keep asking)."""
        state = SequentialState(self.budget)
        for unit in self.order[:asked_units]:
            for job_a, job_b in self._pairs(unit):
                sa, sb = self._score(job_a, latest.get(job_a.request_key)), self._score(job_b, latest.get(job_b.request_key))
                if sa is not None and sb is not None:  # a failed request leaves its pair out
                    state.extend([sa - sb])
        found = state.decision()
        if found is None and asked_units >= len(self.order):  # all asked; some pairs failed
            found = _spent(state)
        return found

    def run(self, run_round: Callable[[list[Job]], PoolResult], latest: Callable[[], dict[str, dict]],
            cancelled: Callable[[], bool]) -> tuple[PoolResult, StopDecision | None, int]:
        """Ask round after round until decided, cancelled or out of items; returns the summed counts,
        the decision (None when cancelled first) and the units asked."""
        total = PoolResult()
        asked = 0
        t0 = time.monotonic()
        stop = self.decision(latest(), 0) if not self.order else None
        while asked < len(self.order):
            chunk = self.order[asked:asked + self.round_size]
            result = run_round([job for unit in chunk for job in self._units[unit]])
            asked += len(chunk)
            _add(total, result)
            if result.cancelled or result.journal_error:
                break
            stop = self.decision(latest(), asked)
            if stop is not None:
                break
        if stop is None and not (total.cancelled or total.journal_error):
            stop = self.decision(latest(), asked)
        total.wall_s = time.monotonic() - t0
        return total, stop, asked


def _spent(state: SequentialState) -> StopDecision:
    """Every item asked before the CS excluded 0: not separated over the pairs that were answered."""
    budget = state.budget
    state.budget = len(state.diffs)
    found = state.decision()
    if found is None:
        return StopDecision("not separated", "", 0, budget, 0.0, -1.0, 1.0)
    found.budget = budget
    return found


def _add(total: PoolResult, result: PoolResult) -> None:
    for name in ("total", "skipped", "ok", "errors", "retries", "lost"):
        setattr(total, name, getattr(total, name) + getattr(result, name))
    total.cancelled = total.cancelled or result.cancelled
    total.journal_error = total.journal_error or result.journal_error


def _default_score(item: dict, raw_text: str) -> float:
    """The per-item score under the default profile (the store scores the same answer the same way)."""
    from ..scoring import score_item

    return score_item(item, raw_text).score

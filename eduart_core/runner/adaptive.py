"""`run --adaptive --bank V --target-se S`: ask each model one item at a time from a frozen bank.

Why rounds through the normal pool (as `runner.separation`): every answer still goes through the
same journal, cache, ingest and resume path as a full launch; only which item comes next and
where asking stops change. A round asks every member still going its next item at once (so several
models run side by side, each one item at a time); after the round each answer is scored (the
bank's profile, the format's score levels) and enters that member's `analysis.adaptive.Session`.

Resume: a member's journal holds its answers in the order asked; replaying them through a fresh
session rebuilds the estimate and the exposure draws exactly (the draws are seeded by run and step),
so the next choice is the one the killed session would have made and no answered item is asked
again. An item whose request was in flight at a kill -9 has no journal line and is chosen again
(it is that same item: nothing about the state changed). The trajectory in the store
(`store.adaptive`) is written from the journal at the end of every session, so it is what the
provider answered, in order.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..analysis.adaptive import BALANCE_NONE, Bank, Engine, Session, check_target
from ..errors import UserError
from .journal import read_records
from .pool import Job, PoolResult

__all__ = ["AdaptiveRounds", "AdaptiveSetup", "parse_adaptive", "prepare", "simulated_length"]


def parse_adaptive(bank: int | None, target_se: float | None, max_items: int | None, balance: str | None) -> dict:
    """The adaptive options as the launch keeps them; one line for a missing bank or a bad number."""
    if bank is None:
        raise UserError("--adaptive needs the bank version to ask from: --bank V (see `show banks --dataset D`)")
    target = check_target(0.30 if target_se is None else target_se)
    if max_items is not None and (int(max_items) != max_items or max_items < 1):
        raise UserError(f"--max-items {max_items!r}: use a whole number of at least 1; nothing was asked")
    return {"bank": int(bank), "target_se": target, "max_items": None if max_items is None else int(max_items),
            "balance": balance or BALANCE_NONE}


@dataclass
class AdaptiveSetup:
    """The bank version a launch asks from, and its engine."""

    dataset: str
    version: int
    profile: str
    engine: Engine
    options: dict

    @property
    def item_ids(self) -> list[str]:
        return [str(i) for i in self.engine.bank.item_ids]


def prepare(store, dataset: str, options: dict) -> AdaptiveSetup:
    """Load and check the bank version (one line for an unknown version or too few usable items)."""
    from ..store.banks import load_bank
    from ..vocab import DEFAULT_PROFILE

    check_target(options["target_se"])
    header, items = load_bank(store, dataset, int(options["bank"]))
    bank = Bank.from_items(items, float(header["latent_sd"] or 1.0))
    balance = options.get("balance") or BALANCE_NONE
    profile = (header.get("selection") or {}).get("profile") or DEFAULT_PROFILE
    return AdaptiveSetup(dataset, int(header["version"]), str(profile), Engine(bank, balance=balance), dict(options))


def simulated_length(setup: AdaptiveSetup, n: int = 200, seed: int = 0) -> np.ndarray:
    """Items an adaptive test of this setup asks, for ``n`` simulated examinees drawn from the bank's
    ability distribution (what `--dry-run` quotes)."""
    from ..analysis.adaptive import run_simulated, simulate_levels

    bank = setup.engine.bank
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, bank.latent_sd, n)
    levels = simulate_levels(bank, theta, rng)
    return np.array([len(run_simulated(setup.engine, levels[e], setup.options["target_se"],
                                       setup.options.get("max_items"), f"dry/{e}").steps) for e in range(n)])


def level_of(item: dict, raw_text: str, profile: str) -> int:
    """The score level of an answer (the bank's profile; the format's rule from score to level)."""
    from ..formats import score_levels, score_parts
    from ..scoring import score_item

    score = float(score_item(item, raw_text, profile).score)
    return int(score_levels(str(item.get("type")), np.array([score]), np.array([score_parts(item)]))[0])


@dataclass
class AdaptiveRounds:
    """The sessions of one launch's members and the rounds that feed them (see the module doc)."""

    setup: AdaptiveSetup
    members: list
    jobs: list[Job]
    seed: str
    sessions: dict[str, Session] = field(init=False)
    _jobs: dict[str, Job] = field(init=False)
    skipped: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        opts = self.setup.options
        self._jobs = {job.request_key: job for job in self.jobs}
        self.sessions = {m.run_id: Session(self.setup.engine, opts["target_se"], opts.get("max_items"),
                                           f"{self.seed}/{m.run_id}") for m in self.members}
        self.skipped = {m.run_id: 0 for m in self.members}

    def _enter(self, run_id: str, record: dict) -> None:
        session = self.sessions[run_id]
        item_id = str(record["item_id"])
        if item_id not in session.index or session.asked[session.index[item_id]]:
            return
        if record.get("status") != "ok":
            session.skip(item_id)
            self.skipped[run_id] += 1
            return
        job = self._jobs[record["request_key"]]
        session.record(item_id, level_of(job.payload["request"].item, record.get("raw_text") or "",
                                         self.setup.profile))

    def replay(self) -> None:
        """Enter every journaled answer of every member, in the order asked (the latest record of a key
        decides: an item retried after an error counts as answered)."""
        for member in self.members:
            records = list(read_records(member.journal_path))
            last: dict[str, dict] = {}
            order: list[str] = []
            for record in records:
                key = record.get("request_key")
                if key not in self._jobs:
                    continue
                if key not in last:
                    order.append(key)
                if last.get(key, {}).get("status") != "ok":
                    last[key] = record
            for key in order:
                self._enter(member.run_id, last[key])

    def next_jobs(self) -> list[Job]:
        """Each member's next item as a job (members whose test is over ask nothing)."""
        out = []
        for member in self.members:
            item = self.sessions[member.run_id].next_item()
            if item is not None:
                out.append(self._jobs[f"{member.run_id}/{item}"])
        return out

    def run(self, run_round: Callable[[list[Job]], PoolResult], latest: Callable[[], dict[str, dict]],
            cancelled: Callable[[], bool]) -> PoolResult:
        """Ask round after round until every member's test is over (or cancelled); the summed counts."""
        total = PoolResult()
        t0 = time.monotonic()
        while not cancelled():
            jobs = self.next_jobs()
            if not jobs:
                break
            result = run_round(jobs)
            _add(total, result)
            records = latest()
            for job in jobs:
                record = records.get(job.request_key)
                if record is not None:
                    self._enter(job.meta["run_id"], record)
                elif not result.cancelled:  # neither answered nor failed: never chosen again
                    self.sessions[job.meta["run_id"]].skip(job.meta["item_id"])
            if result.cancelled or result.journal_error:
                break
        total.wall_s = time.monotonic() - t0
        return total

    def trajectory(self, run_id: str, dataset: str) -> tuple[dict, list[dict]]:
        """(header, steps) of one member, as `store.adaptive.save_trajectory` takes them."""
        session = self.sessions[run_id]
        theta, se = session.estimate
        opts = self.setup.options
        header = {"run_id": run_id, "dataset": dataset, "bank_version": self.setup.version,
                  "target_se": float(opts["target_se"]), "max_items": opts.get("max_items"),
                  "balance": opts.get("balance") or BALANCE_NONE, "rules": self.setup.engine.rules,
                  "n_bank": len(self.setup.engine.bank), "n_items": len(session.steps),
                  "n_skipped": self.skipped[run_id], "ability": theta, "ability_se": se,
                  "stop_reason": session.stop_reason()}
        steps = [{"step": s.step, "item_id": s.item_id, "type": s.type, "difficulty": s.difficulty, "level": s.level,
                  "information": s.information, "ability": s.ability, "ability_se": s.se} for s in session.steps]
        return header, steps


def _add(total: PoolResult, result: PoolResult) -> None:
    for name in ("total", "skipped", "ok", "errors", "retries", "lost"):
        setattr(total, name, getattr(total, name) + getattr(result, name))
    total.cancelled = total.cancelled or result.cancelled
    total.journal_error = total.journal_error or result.journal_error


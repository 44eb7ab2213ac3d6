"""`judge --batch`: a judge launch as provider batch jobs, through the runner's batch engine.

The runner's `BatchEngine` does everything a batch needs (custom ids, ledger, submit, poll, join,
resubmit once, the deadline) over a plan's members and jobs; a judge plan has both. Two steps
differ for a judge, so they are the two methods overridden here: registering (the judge profile
and its version instead of runs) and ingesting (judgements and profile scores instead of
responses). What batch cannot answer (no batch API, a deadline) is asked online afterwards.
"""
from __future__ import annotations

import signal
import sys
import threading

from ..runner import launchfile
from ..runner.batch.engine import BatchEngine, BatchOutcome, BatchSettings
from ..runner.journal import Journal, JournalSet
from ..store import Store
from ..vocab import BATCH_MODE, BATCH_TERMINAL, REQUEST_ONLINE
from .launch import JudgeIngester, JudgePlan, _write_launch, execute_judging, launch_info, print_summary, register


class JudgeBatchEngine(BatchEngine):
    """The runner's batch session over a judge plan (registration and ingestion are the judge's)."""

    def register_runs(self) -> None:
        register(self.store, self.plan)
        info = launch_info(self.store, self.plan, launchfile.RUNNING)
        info["mode"] = BATCH_MODE
        _write_launch(self.store, self.plan.launch_id, info)

    def run(self) -> BatchOutcome:
        self.classify()
        self.register_runs()
        self.journals = JournalSet({m.run_id: Journal(m.journal_path) for m in self.plan.members})
        ingester = JudgeIngester(self.store, self.plan, self.ingest_interval_s)
        try:
            self.load_requests()
            self.outcome.online_keys.update(
                p.job.request_key for cid, p in self.pendings.items()
                if self.ledger.requests[cid].get("state") == REQUEST_ONLINE and p.job.request_key not in self.answered_keys)
            while not self.cancel.is_set():
                self.recover()
                self.submit_ready()
                self.poll()
                self.finalise()
                if self.deadline_passed():
                    self.go_online()
                    break
                ingester.ingest()
                if self.ledger.changed:
                    self.ledger.sync(self.store)
                if not self.live_jobs() and not self.unsubmitted_jobs() and not self._eligible().any():
                    break
                if self.cancel.wait(self.settings.poll_interval_s):
                    break
            self.outcome.cancelled = self.cancel.is_set()
            self.outcome.live_jobs = len([j for j in self.live_jobs() if j.get("state") not in BATCH_TERMINAL])
        finally:
            self.journals.close()
            ingester.ingest()
            self.ledger.sync(self.store)
            self.ledger.close()
        return self.outcome


def run_judge_batch(args, store: Store, plan: JudgePlan, *, backends: dict | None = None) -> int:
    """One batch session of a judge launch, then the online runner for the rest; exit codes as `run`."""
    settings = BatchSettings(poll_interval_s=args.poll_interval, deadline_h=args.batch_deadline,
                             retry_errors=args.retry_errors, keep_files=args.keep_batch_files, timeout_s=args.timeout)
    cancel = threading.Event()

    def on_term(signum, frame):
        cancel.set()

    previous = {sig: signal.signal(sig, on_term) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        print(f"judge launch {plan.launch_id}: {len(plan.jobs)} requests, batch mode (polling every "
              f"{settings.poll_interval_s:g}s)", flush=True)
        outcome = JudgeBatchEngine(store, plan, settings, cancel=cancel, backends=backends).run()
        batch_members = set(outcome.batch_members)
        online = [j for j in plan.jobs if j.meta["run_id"] not in batch_members or j.request_key in outcome.online_keys]
        if online and not cancel.is_set():
            print(f"asking {len(online)} requests online", flush=True)
        summary = execute_judging(store, plan, cancel=cancel, progress=not args.quiet,
                                  jobs=online if not cancel.is_set() else [])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    info = launch_info(store, plan, summary["status"])
    info.update(mode=BATCH_MODE, exit_code=summary["exit_code"], outcome=summary["outcome"],
                batch={"submitted": outcome.submitted_jobs, "finished": outcome.finished_jobs,
                       "answered": outcome.answered, "failed": outcome.final_errors})
    _write_launch(store, plan.launch_id, info)
    print(f"batch: {outcome.submitted_jobs} jobs submitted, {outcome.adopted_jobs} found again after a restart, "
          f"{outcome.finished_jobs} finished, {outcome.answered} verdicts joined, {outcome.final_errors} failed")
    print_summary(summary)
    if outcome.cancelled and outcome.live_jobs:
        print(f"stopped polling; {outcome.live_jobs} batch jobs go on at the provider: collect them with "
              f"python -m eduart_core judge --resume {plan.launch_id} --batch", file=sys.stderr)
    code = summary["exit_code"]
    print(summary["outcome"], file=sys.stderr if code else sys.stdout, flush=True)
    return code

"""`run --batch`: the batch options of the ``run`` command and the batch session around the online pool.

Not a command module of its own (``run`` registers these options), so ``run --batch`` shares every
other option of ``run``: models, conditions, items, ``--run-id``/``--resume``, ``--dry-run``.
"""
from __future__ import annotations

import logging
import math
import os
import signal
import sys
import threading
from dataclasses import replace

from ..errors import UserError
from ..store import Store
from ..store.runs import finish_run
from ..vocab import BATCH_MODE

logger = logging.getLogger(__name__)


def default_poll_interval() -> float:
    """60 s, or ``$EDUART_BATCH_POLL_S`` (launches started from the Runs page use the default)."""
    try:
        return max(0.0, float(os.environ.get("EDUART_BATCH_POLL_S", "60")))
    except ValueError:
        return 60.0


def add_arguments(parser) -> None:
    group = parser.add_argument_group(
        "batch mode", "Provider batch jobs (OpenAI, Gemini, Bedrock, OpenAI-compatible servers with the Batch API): "
                      "about half the price, results within 24 hours. The command waits and polls; if it stops, run "
                      "it again (or --resume ID) to go on polling: jobs already submitted are never submitted again.")
    group.add_argument("--batch", action="store_true", help="submit the launch as provider batch jobs")
    group.add_argument("--status", action="store_true",
                       help="with --batch: show the batch jobs of --run-id/--resume ID (or of every batch launch)")
    group.add_argument("--batch-deadline", type=float, metavar="H",
                       help="H hours after the first submission, ask whatever is still missing online")
    group.add_argument("--poll-interval", type=float, default=default_poll_interval(), metavar="S",
                       help="seconds between two polls of the batch jobs (default 60, or $EDUART_BATCH_POLL_S)")
    group.add_argument("--keep-batch-files", action="store_true",
                       help="keep the JSONL input files next to the store after submission")


def print_status(store: Store, launch_id: str | None) -> int:
    from ..runner.batch.ledger import batch_launch_ids, has_ledger
    from ..runner.batch.status import jobs_frame, launch_summary, request_summary

    if launch_id and not has_ledger(store, launch_id):
        raise UserError(f"launch '{launch_id}' has no batch jobs in {store.runs_dir}")
    ids = [launch_id] if launch_id else batch_launch_ids(store)
    if not ids:
        print("no batch launches yet")
        return 0
    for lid in ids:
        info = launch_summary(store, lid)
        follow = f"followed by process {info['pid']}" if info["following"] else "no process is polling it"
        deadline = f", deadline {info['deadline_h']:g} h" if info["deadline_h"] is not None else ""
        print(f"launch {lid}: {info['jobs']} jobs, {info['requests']} requests, first submitted "
              f"{info['first_submitted_at'] or '-'}{deadline}; {follow}")
        jobs = jobs_frame(store, lid)
        for row in jobs.itertuples(index=False):
            counts = "/".join("-" if v is None or math.isnan(v) else str(int(v))
                              for v in (row.n_completed, row.n_failed, row.n_requests))
            joined = ""
            if row.n_answered is not None and not math.isnan(row.n_answered):
                joined = f"  joined {int(row.n_answered)} answered, {int(row.n_errors or 0)} failed, " \
                         f"{int(row.n_missing or 0)} missing"
            cost = "" if row.actual_cost_usd is None or math.isnan(row.actual_cost_usd) \
                else f"  {row.actual_cost_usd:.4f} USD"
            print(f"  {row.model:24} a{int(row.attempt)} {row.state:20} ({row.provider_state or '-'})  "
                  f"done/failed/total {counts}  {row.job_id or '(not submitted)'}{joined}{cost}")
            if row.message:
                print(f"    {row.message}")
        states = request_summary(store, lid)
        if not states.empty:
            print("  requests: " + ", ".join(f"{r.model} {r.condition} {r.state} {r.requests}"
                                             for r in states.itertuples(index=False)))
    return 0


def run_batch(args, store: Store, plan) -> int:
    """One batch session, then the online pool for what batch cannot or did not answer.

    Exit codes as for online runs (``launchfile.EXIT_*``): 0 all answered and stored, 1 some
    requests failed or answers wait for ingest, 2 setup error, 130 cancelled (the batch jobs go on
    at the provider; a resume collects them).
    """
    from ..runner import launchfile
    from ..runner.batch.engine import BatchEngine, BatchSettings
    from ..runner.launch import execute

    settings = BatchSettings(poll_interval_s=args.poll_interval, deadline_h=args.batch_deadline,
                             retry_errors=args.retry_errors, keep_files=args.keep_batch_files, timeout_s=args.timeout)
    cancel = threading.Event()

    def on_term(signum, frame):  # cancel from the Runs page (SIGTERM) or Ctrl-C: stop polling, jobs go on
        cancel.set()

    previous = {sig: signal.signal(sig, on_term) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        print(f"launch {plan.launch_id}: {len(plan.members)} run(s), {len(plan.jobs)} requests, batch mode "
              f"(polling every {settings.poll_interval_s:g}s)", flush=True)
        outcome = BatchEngine(store, plan, settings, cancel=cancel).run()
        batch_runs = set(outcome.batch_members)
        online_jobs = [j for j in plan.jobs if j.meta["run_id"] not in batch_runs or j.request_key in outcome.online_keys]
        if online_jobs and not cancel.is_set():
            print(f"asking {len(online_jobs)} requests online", flush=True)
        summary = execute(store, replace(plan, jobs=online_jobs), cancel=cancel, progress=not args.quiet)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    planned = {m.run_id: sum(1 for j in plan.jobs if j.meta["run_id"] == m.run_id) for m in plan.members}
    waiting = summary["status"] == launchfile.WAITING_INGEST
    for run_id, s in summary["runs"].items():
        s["jobs"] = planned[run_id]
        if (not waiting and run_id in batch_runs and s["status"] == launchfile.COMPLETED and s["jobs"]
                and not s["answered"] and s["n_errors"]):
            s["status"] = launchfile.FAILED
            finish_run(store, run_id, launchfile.FAILED)
    result = summary["result"]
    cancelled = outcome.cancelled or result.cancelled
    n_errors = sum(s["n_errors"] for s in summary["runs"].values())
    code, status, line = summary["exit_code"], summary["status"], summary["outcome"]
    if not waiting and code != launchfile.EXIT_SETUP:  # the online pool saw only part of the launch
        code, status, line = launchfile.outcome(store, plan.launch_id, cancelled=cancelled, n_errors=n_errors,
                                                jobs=len(plan.jobs))
    info = launchfile.read_launch(store, plan.launch_id) or {}
    info.update(mode=BATCH_MODE, total_jobs=len(plan.jobs), status=status, exit_code=code, outcome=line)
    for member in info.get("members") or []:
        member["jobs"] = planned.get(member["run_id"], member.get("jobs", 0))
    try:
        launchfile.write_launch(store, plan.launch_id, info)
    except UserError as exc:  # bookkeeping only: the outcome line below still tells the user
        logger.warning("launch file not updated: %s", exc)
    print(f"batch: {outcome.submitted_jobs} jobs submitted, {outcome.adopted_jobs} found again after a restart, "
          f"{outcome.finished_jobs} finished, {outcome.answered} answers joined, {outcome.final_errors} failed "
          f"after resubmission; online: {result.ok} answered, {result.errors} failed")
    for run_id, s in summary["runs"].items():
        print(f"  {run_id}: {s['status']}, {s['answered']}/{s['jobs']} answered, {s['n_errors']} errors, "
              f"{s['input_tokens']}+{s['output_tokens']} tokens, {s['cost_usd']:.4f} USD")
    if outcome.cancelled and outcome.live_jobs:
        print(f"stopped polling; {outcome.live_jobs} batch jobs go on at the provider: collect them with "
              f"{launchfile.resume_command(store, plan.launch_id)}", file=sys.stderr)
    if code == launchfile.EXIT_SETUP:
        raise UserError(line)
    print(line, file=sys.stderr if code else sys.stdout, flush=True)
    return code

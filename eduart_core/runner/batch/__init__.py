"""Batch mode: a launch asked as provider batch jobs, with a resumable ledger.

Rooms: ``ids`` (custom ids), ``ledger`` (the append-only record of jobs and requests),
``prepare`` (grouping, sizing and writing input files), ``reconcile`` (joining results on the
custom id into the run journals), ``engine`` (submit, poll, resubmit, deadline), ``estimate``
(online and batch cost side by side) and ``status`` (what ``run --batch --status`` and the Runs
page show).

Multi-turn items (a ``turn`` in a job's meta, 0 by default) run one batch per turn, in order: a
request of turn t is submitted only when every request of its run with a lower turn is settled
(answered or finally failed), because turn t's prompt carries the model's earlier answers. The
turn is part of the custom id and of the job key. Building turn t's request from the earlier
answers is the planner's job (``runner.launch``); the engine re-reads the plan's request for a
turn only when that turn's wave is submitted.
"""

"""Batch mode: a launch asked as provider batch jobs, with a resumable ledger.

Rooms: ``ids`` (custom ids), ``ledger`` (the append-only record of jobs and requests),
``prepare`` (grouping, sizing and writing input files), ``reconcile`` (joining results on the
custom id into the run journals), ``engine`` (submit, poll, resubmit, deadline), ``estimate``
(online and batch cost side by side) and ``status`` (what ``run --batch --status`` and the Runs
page show).

Multi-turn items (``Job.after`` names the previous turn of a dialogue, ``meta["turn"]`` its number)
run one batch per turn, in order: a later turn is submitted only when its previous turn has an
answer, and it carries the earlier questions and the model's own earlier answers (``prior``, as
online). The turn is part of the custom id and of the job key, so each turn's jobs are separate.
A turn whose previous turn failed for good is recorded as not asked; one whose previous turn went
online follows it online.
"""

"""The runner as the Runs page asks it: models and credentials, a launch's plan and price, the
launches in the background with their pace, recovery and resume.

Why one module: the page lists models, checks credentials, plans and prices a launch, starts,
follows, cancels and resumes it; those jobs live in a dozen rooms of the runner and the providers.
The page imports this module only, so those rooms can move without touching the page, and what a
page may ask of the runner is the list below. Every name keeps its home module's contract.
"""
from __future__ import annotations

from eduart_core.limits import describe as describe_limit
from eduart_core.limits import int_limit
from eduart_core.providers.adapters import ADAPTERS
from eduart_core.providers.batch_config import load_batch_limits
from eduart_core.providers.batch_registry import batch_unavailable
from eduart_core.providers.registry import adhoc_spec, check_base_url, load_registry
from eduart_core.providers.secrets import provider_status
from eduart_core.runner.background import (
    build_argv,
    cancel_launch,
    launch_progress,
    list_launches,
    resume_argv,
    run_history,
    start_launch,
)
from eduart_core.runner.batch.estimate import estimate_words, side_by_side
from eduart_core.runner.batch.ledger import has_ledger
from eduart_core.runner.batch.status import jobs_frame
from eduart_core.runner.lanes import describe_limits, lane_limits
from eduart_core.runner.launch import LaunchOptions, plan_launch
from eduart_core.runner.launchfile import (
    CANCELLED,
    COMPLETED,
    EXIT_MEANING,
    FAILED,
    INTERRUPTED,
    LIVE_STATUSES,
    WAITING_INGEST,
)
from eduart_core.runner.pace import duration, latest_finished, launch_breakdown, launch_pace, launch_summary
from eduart_core.runner.recovery import recover

#: Launch states a person can resume (besides a launch stopped once two models were told apart).
RESUMABLE_STATUSES = (INTERRUPTED, CANCELLED, FAILED, WAITING_INGEST)


def runs_keyless(provider: str) -> bool:
    """Whether ``provider`` answers without a key (the credentials table then says nothing to set)."""
    return ADAPTERS[provider].keyless


__all__ = [
    "CANCELLED", "COMPLETED", "EXIT_MEANING", "FAILED", "INTERRUPTED", "LIVE_STATUSES", "RESUMABLE_STATUSES",
    "WAITING_INGEST", "LaunchOptions", "adhoc_spec", "batch_unavailable", "build_argv", "cancel_launch",
    "check_base_url", "describe_limit", "describe_limits", "duration", "estimate_words", "has_ledger", "int_limit",
    "jobs_frame", "lane_limits", "latest_finished", "launch_breakdown", "launch_pace", "launch_progress",
    "launch_summary", "list_launches", "load_batch_limits", "load_registry", "plan_launch", "provider_status",
    "recover", "resume_argv", "run_history", "runs_keyless", "side_by_side", "start_launch",
]

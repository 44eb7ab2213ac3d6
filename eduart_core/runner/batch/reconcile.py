"""Joining a finished job's results to its requests, on the custom id, into the run journals.

Why through the journals: a batch answer must become exactly the record an online answer
becomes (same journal line shape, then the same ingestion, parser and scorers), plus what only
a batch knows: the job id and the custom id. Results are matched by custom id, never by
position; an id we did not put in the job, or a second line for the same id, is ignored and
logged; an id the job never answered is "missing".
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ...providers.batch_base import BatchResult
from ...vocab import BATCH_MODE
from ..calls import is_empty
from .prepare import Pending

logger = logging.getLogger(__name__)


@dataclass
class Outcome:
    """What one job's results did to its requests."""

    answered: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    ignored: int = 0


def answer_record(pending: Pending, result: BatchResult, job_id: str, attempt: int, cost: float) -> dict:
    """The journal record of a batch answer: the online record's fields plus batch job and custom id."""
    return {"request_key": pending.job.request_key, **pending.job.meta, "raw_text": result.text,
            "input_tokens": result.input_tokens, "output_tokens": result.output_tokens,
            "finish_reason": result.finish_reason, "cached": False, "cost_usd": round(cost, 8),
            "status": "ok", "attempts": attempt + 1, "latency_s": None, "ts": time.time(),
            "mode": BATCH_MODE, "batch_job_id": job_id, "custom_id": pending.custom_id}


def error_record(pending: Pending, error: str, job_id: str | None, attempt: int) -> dict:
    """The journal record of a request that failed in batch even after its resubmission."""
    return {"request_key": pending.job.request_key, **pending.job.meta, "status": "error", "error": error,
            "http_status": None, "attempts": attempt + 1, "ts": time.time(), "mode": BATCH_MODE,
            "batch_job_id": job_id, "custom_id": pending.custom_id}


def reconcile(results: Iterable[BatchResult], job_ids: list[str], job_id: str, attempt: int,
              pendings: dict[str, Pending], answered_keys: set[str], append: Callable[[dict], None],
              price: Callable[[Pending, int | None, int | None], float],
              already_joined: Callable[[str], bool] = lambda cid: False) -> Outcome:
    """Write every new answer of the job to its journal (``append``) and sort the rest.

    ``already_joined(cid)`` is true for an answer of this very job that reached the journal before a
    crash cut the join short: it counts as answered by this job without a second journal record.
    """
    expected = set(job_ids)
    seen: set[str] = set()
    outcome = Outcome()
    for result in results:
        cid = result.custom_id
        if cid not in expected:
            outcome.ignored += 1
            logger.warning("batch job %s returned a result for id %s it was not given; ignored", job_id, cid)
            continue
        if cid in seen:
            outcome.ignored += 1
            logger.warning("batch job %s returned id %s twice; the first result is kept", job_id, cid)
            continue
        seen.add(cid)
        pending = pendings[cid]
        if not result.ok:
            outcome.errors[cid] = result.error or "error"
            continue
        key = pending.job.request_key
        cost = price(pending, result.input_tokens, result.output_tokens)
        if is_empty(result.text):  # as online: an empty reply is an error (its tokens were paid)
            reason = f" (finish reason: {result.finish_reason})" if result.finish_reason else ""
            outcome.errors[cid] = f"empty reply{reason}: recorded as an error, not as an answer"
            outcome.input_tokens += int(result.input_tokens or 0)
            outcome.output_tokens += int(result.output_tokens or 0)
            outcome.cost_usd += cost
            continue
        if key in answered_keys:
            if not already_joined(cid):  # answered online meanwhile (deadline): never stored twice
                outcome.superseded.append(cid)
                continue
        else:
            append(answer_record(pending, result, job_id, attempt, cost))
            answered_keys.add(key)
        outcome.answered.append(cid)
        outcome.input_tokens += int(result.input_tokens or 0)
        outcome.output_tokens += int(result.output_tokens or 0)
        outcome.cost_usd += cost
    outcome.missing = [cid for cid in job_ids if cid not in seen and pendings[cid].job.request_key not in answered_keys]
    return outcome

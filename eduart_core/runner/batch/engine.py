"""Running a launch as provider batch jobs: submit, poll, join, resubmit once, hand the rest online.

One session of ``run --batch`` (or of its resume) does, in a loop:

1. **Recover**: jobs the ledger says were being submitted when the last session died are looked
   up at the provider by their tag and adopted, never created twice; prepared-only jobs are
   submitted.
2. **Submit** the requests that are in no job yet, grouped per model (both conditions and all
   repetitions pooled, which is how Bedrock's minimum records per job is met), split by bytes and
   count, one turn at a time for multi-turn items. A group that cannot be batched (Bedrock minimum
   not met, a line over the byte limit) is handed to the online runner, with a message.
3. **Poll** every live job; when one finishes (completed, partially completed, failed, expired,
   cancelled) join its results on the custom id into the run journals.
4. **Resubmit** ids that failed or went missing, each at most once per session (attempt k+1); an
   id that fails again gets an error record in its journal (``--retry-errors`` on a later resume
   gives it one more resubmission).
5. **Deadline** (``--batch-deadline H`` hours after the first submission): live jobs are cancelled
   and everything still unanswered is handed to the online runner.

Answers reach the store while the loop runs (the same ``Ingester`` as online runs, called between
polls from the loop's own thread). The engine
returns the request keys to ask online; ``commands.run`` then runs the ordinary online pool for
those (and for models without a batch API), which also closes the runs with their totals.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ...errors import UserError
from ...providers.base import ProviderRequest, RequestImage
from ...providers.batch_base import BatchBackend, BatchError, JobInput
from ...providers.batch_config import BatchLimits, load_batch_limits
from ...providers.batch_registry import batch_unavailable, make_batch_backend
from ...store import Store
from ...store import journal as store_journal
from ...store.runs import create_run, ensure_model
from ...vocab import (
    BATCH_FAILED,
    BATCH_MODE,
    BATCH_PREPARED,
    BATCH_SUBMITTING,
    BATCH_TERMINAL,
    BATCH_VALIDATING,
    ONLINE_MODE,
    REQUEST_ANSWERED,
    REQUEST_FAILED,
    REQUEST_MISSING,
    REQUEST_ONLINE,
    REQUEST_SUBMITTED,
    REQUEST_SUPERSEDED,
)
from ..calls import prior_messages
from ..estimate import estimate_request
from ..ingestion import Ingester
from ..journal import Journal, JournalSet
from ..launch import Member, Plan, sampling_params
from ..launchfile import RUNNING, read_launch, write_launch
from .ids import custom_id, job_tag
from .ledger import Ledger, batch_dir, ledger_path
from .prepare import ImageCache, Pending, encode, split, write_file
from .reconcile import error_record, reconcile

logger = logging.getLogger(__name__)


@dataclass
class BatchSettings:
    """Options of one batch session (they may change between sessions)."""

    poll_interval_s: float = 60.0
    deadline_h: float | None = None      # None: use the deadline saved in the ledger, if any
    retry_errors: bool = False
    keep_files: bool = False             # keep the JSONL input files after submission
    max_submit_failures: int = 5         # retryable submission errors per job before it is given up
    timeout_s: float = 120.0


@dataclass
class Eligible:
    """What ``_eligible`` found: groups to submit, and dialogue turns that cannot go to a batch."""

    groups: dict[tuple[str, int], list[Pending]] = field(default_factory=lambda: defaultdict(list))
    online: list[Pending] = field(default_factory=list)
    blocked: list[Pending] = field(default_factory=list)

    def any(self) -> bool:
        return bool(self.groups or self.online or self.blocked)


@dataclass
class BatchOutcome:
    """What a session did; ``online_keys`` are the request keys the online runner must ask."""

    launch_id: str
    submitted_jobs: int = 0
    adopted_jobs: int = 0
    finished_jobs: int = 0
    answered: int = 0
    final_errors: int = 0
    online_keys: set[str] = field(default_factory=set)
    batch_members: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    cancelled: bool = False
    deadline_hit: bool = False
    live_jobs: int = 0


class BatchEngine:
    """One session over one launch's plan. ``backends`` maps model keys to ready backends (tests)."""

    def __init__(self, store: Store, plan: Plan, settings: BatchSettings | None = None, *,
                 backends: dict[str, BatchBackend] | None = None, limits: dict[str, BatchLimits] | None = None,
                 secrets=None, cancel: threading.Event | None = None, out=None, clock=time.time,
                 ingest_interval_s: float = 2.0):
        self.store, self.plan = store, plan
        self.settings = settings or BatchSettings()
        self.limits = limits if limits is not None else load_batch_limits()
        self.backends: dict[str, BatchBackend] = dict(backends or {})
        self.secrets = secrets
        self.cancel = cancel or threading.Event()
        self.out = out or sys.stdout
        self.clock = clock
        self.ingest_interval_s = ingest_interval_s
        self.ledger = Ledger(ledger_path(store, plan.launch_id), plan.launch_id)
        self.files = batch_dir(store, plan.launch_id) / "files"
        self.images = ImageCache()
        self.outcome = BatchOutcome(plan.launch_id)
        self.members: dict[str, Member] = {m.run_id: m for m in plan.members}
        self.batch_models: dict[str, Member] = {}       # model key -> a member (spec, provider)
        self.pendings: dict[str, Pending] = {}
        self.answered_keys: set[str] = set()
        self.final_keys: set[str] = set()
        self.resubmitted: set[str] = set()             # ids resubmitted in this session (at most once)
        self.submit_failures: dict[str, int] = defaultdict(int)
        self.journals: JournalSet | None = None
        self.ok_records: dict[str, dict] = {}             # request key -> its answer record (dialogue history)
        self.by_key = {job.request_key: job for job in plan.jobs}
        self.cid_by_key: dict[str, str] = {}               # request key -> custom id (batch requests)
        self.blocked: set[str] = set()                     # later turns recorded as not asked this session
        self._token_memo: dict[tuple, tuple[int, int]] = {}

    # ------------------------------------------------------------ helpers
    def say(self, line: str) -> None:
        self.outcome.messages.append(line)
        logger.info("%s", line)
        print(line, file=self.out, flush=True)

    def _backend(self, model: str) -> BatchBackend:
        if model not in self.backends:
            spec = self.batch_models[model].spec
            self.backends[model] = make_batch_backend(spec, limits=self.limits, secrets=self.secrets,
                                                      timeout_s=self.settings.timeout_s)
        return self.backends[model]

    def _limits(self, model: str) -> BatchLimits:
        return self.limits[self.batch_models[model].spec.provider]

    def _member(self, pending: Pending) -> Member:
        return pending.job.payload["member"]

    def _estimate(self, pending: Pending) -> float:
        """Estimated batch cost of one request (tokens estimated as for ``--dry-run``)."""
        member = self._member(pending)
        request = pending.job.payload["request"]
        key = (request.system, request.user_text, bool(pending.image_path), member.condition)
        if key not in self._token_memo:
            self._token_memo[key] = estimate_request(request.system, request.user_text, key[2], member.condition)
        tokens_in, tokens_out = self._token_memo[key]
        return member.spec.cost(tokens_in, tokens_out) * self.limits[member.spec.provider].price_factor

    def _price(self, pending: Pending, tokens_in: int | None, tokens_out: int | None) -> float:
        member = self._member(pending)
        return member.spec.cost(tokens_in, tokens_out) * self.limits[member.spec.provider].price_factor

    # ------------------------------------------------------------ setup
    def classify(self) -> None:
        """Which members go to a batch API; the others (e.g. the offline baseline) run online."""
        online_only: dict[str, str] = {}
        for member in self.plan.members:
            spec = member.spec
            reason = batch_unavailable(spec, self.limits)
            if reason is None:
                self.batch_models.setdefault(spec.key, member)
            else:
                online_only[spec.key] = reason
        for key, reason in sorted(online_only.items()):
            self.say(f"{key}: {reason}: asked online")
        for key in sorted(self.batch_models):
            self._backend(key)  # fail now, before anything is submitted, when a key or setting is missing
        self.outcome.batch_members = [m.run_id for m in self.plan.members if m.spec.key in self.batch_models]

    def members_by_model(self, key: str) -> Member:
        return next(m for m in self.plan.members if m.spec.key == key)

    def register_runs(self) -> None:
        """Models, runs and the launch file exist before the first answer arrives (live ingestion)."""
        plan, options = self.plan, self.plan.options
        for spec in {m.spec.key: m.spec for m in plan.members}.values():
            ensure_model(self.store, spec.key, spec.display_name, spec.family, spec.provider, spec.api_model_id,
                         kind=spec.kind)
        for m in plan.members:
            params = {"temperature": m.spec.temperature, "max_output_tokens": m.spec.max_output_tokens,
                      "seed": m.spec.seed, "api_model_id": m.spec.api_model_id, "provider": m.spec.provider,
                      "base_url": m.spec.base_url, "image_mode": m.image_mode, "items": options.items,
                      "limit": options.limit, "sample": options.sample, "repeat": options.repeat,
                      "template_hash": m.template_hash, "images_refused": plan.refused.get(m.run_id, 0),
                      "mode": BATCH_MODE if m.spec.key in self.batch_models else ONLINE_MODE,
                      **sampling_params(m.spec, m.repetition)}
            created = create_run(self.store, m.run_id, plan.dataset, m.spec.key, m.condition, "live",
                                 launch_id=plan.launch_id, repetition=m.repetition, prompt_hash=m.template_hash,
                                 params=params, journal_path=str(m.journal_path), exist_ok=True)
            if not created:
                store_journal.reopen_runs(self.store, [m.run_id])
        previous = read_launch(self.store, plan.launch_id) or {}
        jobs_per_run: dict[str, int] = defaultdict(int)
        for job in plan.jobs:
            jobs_per_run[job.meta["run_id"]] += 1
        info = {**previous, "launch_id": plan.launch_id, "dataset": plan.dataset, "db": str(self.store.path),
                "pid": os.getpid(), "status": RUNNING, "mode": BATCH_MODE, "process_started_at": time.time(),
                "finished_at": None, "options": asdict(options), "item_ids": plan.item_ids,
                "total_jobs": len(plan.jobs),
                "members": [{"run_id": m.run_id, "model": m.spec.key, "condition": m.condition,
                             "repetition": m.repetition, "journal": str(m.journal_path), "image_mode": m.image_mode,
                             "jobs": jobs_per_run[m.run_id], "refused": plan.refused.get(m.run_id, 0)}
                            for m in plan.members]}
        write_launch(self.store, plan.launch_id, info)

    def load_requests(self) -> None:
        """Custom ids for every batch request; the ledger learns the new ones; journals say what is done."""
        rows = []
        for job in self.plan.jobs:
            member: Member = job.payload["member"]
            if member.spec.key not in self.batch_models:
                continue
            turn = int(job.meta.get("turn") or 0)
            cid = custom_id(self.plan.dataset, job.meta["item_id"], member.spec.key, member.condition,
                            member.template_hash, turn, member.repetition)
            if cid in self.pendings:
                raise UserError(f"two requests of launch {self.plan.launch_id} share custom id {cid}")
            self.pendings[cid] = Pending(cid, job, turn)
            self.cid_by_key[job.request_key] = cid
            rows.append({"custom_id": cid, "run_id": member.run_id, "item_id": job.meta["item_id"],
                         "model": member.spec.key, "condition": member.condition, "repetition": member.repetition,
                         "turn": turn, "request_key": job.request_key})
        self.ledger.add_requests(rows)
        latest = self.journals.latest()
        for key, record in latest.items():
            if record.get("status") == "ok":
                self.answered_keys.add(key)
                self.ok_records[key] = record
            else:
                self.final_keys.add(key)
        done = [cid for cid, p in self.pendings.items() if p.job.request_key in self.answered_keys
                and self.ledger.requests[cid].get("state") not in (REQUEST_ANSWERED, REQUEST_SUPERSEDED)]
        self.ledger.set_state(done, state=REQUEST_ANSWERED)
        if self.settings.deadline_h is not None:
            self.ledger.set_meta(deadline_h=self.settings.deadline_h)

    # ------------------------------------------------------------ submission
    def _eligible(self) -> Eligible:
        """Requests to put in new jobs now, grouped by (model, turn); and the later turns of a
        dialogue that cannot be asked in batch (previous turn failed for good, or asked online)."""
        found = Eligible()
        for cid, pending in self.pendings.items():
            row = self.ledger.requests[cid]
            key = pending.job.request_key
            state = row.get("state")
            if key in self.answered_keys or state in (REQUEST_ONLINE, REQUEST_SUPERSEDED, REQUEST_SUBMITTED):
                continue
            if key in self.final_keys and not (self.settings.retry_errors and cid not in self.resubmitted):
                continue
            if state in (REQUEST_FAILED, REQUEST_MISSING) and cid in self.resubmitted:
                continue  # had its resubmission this session: finalised by ``finalise``
            after = pending.job.after
            if after is not None and after not in self.ok_records:  # a later turn of a dialogue
                if cid in self.blocked:
                    continue
                previous = self.cid_by_key.get(after)
                retried = self.settings.retry_errors and previous is not None and previous not in self.resubmitted
                if after in self.outcome.online_keys:
                    found.online.append(pending)
                elif after in self.final_keys and not retried:
                    found.blocked.append(pending)
                continue  # else its previous turn is still in a batch (or about to be retried): it waits
            found.groups[(self._member(pending).spec.key, pending.turn)].append(pending)
        return found

    def _history(self, job) -> tuple[dict, ...]:
        """The answer records of a dialogue turn's predecessors, oldest first."""
        history, key = [], job.after
        while key is not None and key in self.ok_records:
            history.append(self.ok_records[key])
            previous = self.by_key.get(key)
            key = previous.after if previous is not None else None
        return tuple(reversed(history))

    def _request(self, pending: Pending) -> ProviderRequest:
        """What to send, as online: the plan's request, plus the earlier turns (questions and the
        model's own answers) for a later turn of a dialogue, plus options that are images (labelled,
        in order). The item image itself is written into the line from the image cache."""
        request = pending.job.payload["request"]
        prior = pending.job.payload.get("prior") or []
        if prior:
            request = replace(request, prior=prior_messages(prior, self._history(pending.job)))
        extra = pending.job.payload.get("option_images") or []
        if extra:
            request = replace(request, images=[RequestImage(label, Path(file).read_bytes(), mime)
                                               for label, file, mime in extra])
        return request

    def _append(self, record: dict) -> None:
        self.journals.append(record)
        if record.get("status") == "ok":
            self.ok_records[record["request_key"]] = record

    def _unreachable(self, found: Eligible) -> None:
        """Later turns whose previous turn went online follow it there; after a final failure they
        are recorded as not asked (as the online runner does)."""
        if found.online:
            self._to_online(found.online, "the previous turn of its dialogue is asked online")
        for pending in found.blocked:
            self.blocked.add(pending.custom_id)
            reason = f"not asked: the previous turn ({pending.job.after}) has no answer"
            row = self.ledger.requests[pending.custom_id]
            self._append(error_record(pending, reason, None, int(row.get("attempt") or 0)))
            self.final_keys.add(pending.job.request_key)
            self.ledger.set_state([pending.custom_id], state=REQUEST_FAILED, error=reason,
                                  finalised_at_attempt=row.get("attempt"))
            self.outcome.final_errors += 1

    def _to_online(self, pendings: list[Pending], reason: str) -> None:
        ids = [p.custom_id for p in pendings]
        self.ledger.set_state(ids, state=REQUEST_ONLINE, error=reason)
        self.outcome.online_keys.update(p.job.request_key for p in pendings)

    def submit_ready(self) -> int:
        """Prepare and submit jobs for every eligible group; returns the number of jobs created."""
        created = 0
        for job_key in self.prepare_ready():
            created += 1
            self.submit(job_key)
        if created:
            self.images = ImageCache()  # the encoded images are not needed while polling for hours
        return created

    def prepare_ready(self) -> list[str]:
        """Write the input files of every eligible group and record the jobs as prepared."""
        prepared = []
        found = self._eligible()
        self._unreachable(found)
        for (model, turn), pendings in sorted(found.groups.items()):
            pendings.sort(key=lambda p: (p.job.meta["run_id"], p.job.meta["item_id"]))
            retried = [p for p in pendings if self.ledger.requests[p.custom_id].get("state")
                       in (REQUEST_FAILED, REQUEST_MISSING) or p.job.request_key in self.final_keys]
            self.resubmitted.update(p.custom_id for p in retried)
            limits = self._limits(model)
            backend = self._backend(model)
            encoded = encode(backend, pendings, self.images, self._request)
            ranges, reason = split(encoded.sizes, limits)
            if reason:
                self.say(f"{model}: {reason}: asked online instead")
                self._to_online(pendings, reason)
                continue
            attempts = [self.ledger.requests[p.custom_id].get("attempt") for p in pendings]
            attempt = max((a for a in attempts if a is not None), default=-1) + 1
            for start, end in ranges:
                part = encoded.pendings[start:end]
                ids = [p.custom_id for p in part]
                job_key = f"{model}:a{attempt}:t{turn}:{len(self.ledger.jobs):04d}"
                tag = job_tag(self.plan.launch_id, job_key)
                spec = self.batch_models[model].spec
                self.ledger.put_job(job_key, provider=spec.provider, model=model, api_model_id=spec.api_model_id,
                                    attempt=attempt, turn=turn, part=len(self.ledger.jobs), tag=tag, job_id=None,
                                    state=BATCH_PREPARED, provider_state=None, n_requests=len(ids),
                                    input_bytes=sum(encoded.sizes[start:end]), prepared_at=self.clock(),
                                    estimated_cost_usd=round(sum(self._estimate(p) for p in part), 6),
                                    custom_ids=ids)
                self.ledger.set_state(ids, state=REQUEST_SUBMITTED, job_key=job_key, attempt=attempt)
                write_file(self.files / f"{tag}.jsonl", encoded, range(start, end), self.images)
                prepared.append(job_key)
        return prepared

    def _rebuild(self, job: dict):
        """Write a prepared job's file again (a crash came before it was submitted)."""
        pendings = [self.pendings[c] for c in job["custom_ids"] if c in self.pendings]
        encoded = encode(self._backend(job["model"]), pendings, self.images, self._request)
        path = self.files / f"{job['tag']}.jsonl"
        write_file(path, encoded, range(len(pendings)), self.images)
        return path

    def submit(self, job_key: str) -> bool:
        job = self.ledger.jobs[job_key]
        path = self.files / f"{job['tag']}.jsonl"
        if not path.exists():
            path = self._rebuild(job)
        backend = self._backend(job["model"])
        self.ledger.put_job(job_key, state=BATCH_SUBMITTING)
        try:
            submitted = backend.submit(JobInput(job_key, job["tag"], job["api_model_id"], path, job["custom_ids"],
                                                int(job.get("input_bytes") or path.stat().st_size)))
        except BatchError as exc:
            if exc.unsupported:
                self.ledger.put_job(job_key, state=BATCH_FAILED, message=str(exc), finished_at=self.clock(),
                                    reconciled=True)
                pendings = [self.pendings[c] for c in job["custom_ids"] if c in self.pendings]
                self._to_online(pendings, f"no batch API: {exc}")
                self.say(f"{job['model']}: the server has no batch API ({exc}): asked online instead")
                return False
            self.submit_failures[job_key] += 1
            if exc.retryable and self.submit_failures[job_key] < self.settings.max_submit_failures:
                # Still "submitting": a timeout may hide a job the provider did create, so the next
                # attempt looks for it by its tag before creating anything.
                self.ledger.put_job(job_key, message=str(exc))
                logger.warning("submitting %s failed (%s); will try again", job_key, exc)
                return False
            self.ledger.put_job(job_key, state=BATCH_FAILED, message=str(exc), finished_at=self.clock(),
                                reconciled=True)
            self.ledger.set_state(job["custom_ids"], state=REQUEST_FAILED, error=f"submission failed: {exc}")
            self.say(f"{job['model']}: submitting job {job_key} failed: {exc}")
            return False
        now = self.clock()
        self.ledger.put_job(job_key, job_id=submitted.job_id, state=BATCH_VALIDATING, provider_state="submitted",
                            input_location=submitted.input_location, output_location=submitted.output_location,
                            submitted_at=now, message=None)
        if not self.ledger.meta.get("first_submitted_at"):
            self.ledger.set_meta(first_submitted_at=now)
        self.outcome.submitted_jobs += 1
        self.say(f"{job['model']}: submitted {job['n_requests']} requests as {job['provider']} batch {submitted.job_id}")
        if not self.settings.keep_files:
            path.unlink(missing_ok=True)
        return True

    def recover(self) -> None:
        """Finish submissions left half done (by the last session or a failed attempt); a job whose
        create call may have reached the provider is looked up by its tag first, never created twice."""
        for job in self.unsubmitted_jobs():
            job_key = job["job_key"]
            if job["state"] == BATCH_SUBMITTING:
                try:
                    found = self._backend(job["model"]).find(job["tag"])
                except BatchError as exc:
                    logger.warning("cannot look up %s at the provider yet (%s)", job_key, exc)
                    continue
                if found is not None:
                    self.ledger.put_job(job_key, job_id=found.job_id, state=BATCH_VALIDATING, adopted=True,
                                        submitted_at=job.get("submitted_at") or self.clock())
                    self.outcome.adopted_jobs += 1
                    self.say(f"{job['model']}: found job {found.job_id}, created by an interrupted submission; "
                             "polling it instead of creating another")
                    continue
            self.submit(job_key)

    # ------------------------------------------------------------ polling and joining
    def live_jobs(self) -> list[dict]:
        return [j for j in self.ledger.jobs.values()
                if j.get("job_id") and j.get("model") in self.batch_models
                and (j.get("state") not in BATCH_TERMINAL or not j.get("reconciled"))]

    def unsubmitted_jobs(self) -> list[dict]:
        return [j for j in self.ledger.jobs.values() if not j.get("job_id")
                and j.get("state") in (BATCH_PREPARED, BATCH_SUBMITTING) and j.get("model") in self.batch_models]

    def poll(self) -> None:
        for job in self.live_jobs():
            if self.cancel.is_set():
                return
            backend = self._backend(job["model"])
            try:
                status = backend.poll(job["job_id"])
            except BatchError as exc:
                logger.warning("polling %s failed (%s); trying again next round", job["job_key"], exc)
                continue
            self.ledger.put_job(job["job_key"], state=status.state, provider_state=status.provider_state,
                                n_completed=status.completed, n_failed=status.failed,
                                output_location=status.output_location or job.get("output_location"),
                                error_location=status.error_location, message=status.message)
            if status.state in BATCH_TERMINAL and not job.get("reconciled"):
                self.join(job["job_key"], status)

    def join(self, job_key: str, status) -> None:
        job = self.ledger.jobs[job_key]
        backend = self._backend(job["model"])
        ids = [c for c in job["custom_ids"] if c in self.pendings]
        def joined_before(cid: str) -> bool:
            row = self.ledger.requests[cid]
            return row.get("job_key") == job_key and row.get("state") in (REQUEST_SUBMITTED, REQUEST_ANSWERED)

        try:
            # Read everything first: a failed download then leaves the journals untouched.
            results = list(backend.results(job["job_id"], status, ids))
            outcome = reconcile(results, ids, job["job_id"], int(job.get("attempt") or 0), self.pendings,
                                self.answered_keys, self._append, self._price, joined_before)
        except BatchError as exc:
            logger.warning("reading the results of %s failed (%s); trying again next round", job_key, exc)
            return
        self.ledger.set_state(outcome.answered, state=REQUEST_ANSWERED)
        self.ledger.set_state(outcome.superseded, state=REQUEST_SUPERSEDED)
        self.ledger.set_state(list(outcome.errors), errors=outcome.errors, state=REQUEST_FAILED)
        why = f"no result in job ({status.state}" + (f": {status.message})" if status.message else ")")
        self.ledger.set_state(outcome.missing, state=REQUEST_MISSING, error=why)
        self.ledger.put_job(job_key, reconciled=True, finished_at=job.get("finished_at") or self.clock(),
                            n_answered=len(outcome.answered), n_errors=len(outcome.errors),
                            n_missing=len(outcome.missing), input_tokens=outcome.input_tokens,
                            output_tokens=outcome.output_tokens, actual_cost_usd=round(outcome.cost_usd, 8))
        self.outcome.finished_jobs += 1
        self.outcome.answered += len(outcome.answered)
        extra = ""
        if outcome.errors or outcome.missing:
            extra = f", {len(outcome.errors)} failed, {len(outcome.missing)} missing"
        self.say(f"{job['model']}: batch {job['job_id']} {status.state}: {len(outcome.answered)} answered{extra}")

    def finalise(self) -> None:
        """Ids that already had their resubmission and failed again get an error record (once)."""
        for cid in list(self.resubmitted):
            pending = self.pendings[cid]
            row = self.ledger.requests[cid]
            key = pending.job.request_key
            if row.get("state") not in (REQUEST_FAILED, REQUEST_MISSING) or key in self.answered_keys:
                continue
            job = self.ledger.jobs.get(row.get("job_key") or "", {})
            if job.get("state") not in BATCH_TERMINAL:
                continue
            if row.get("finalised_at_attempt") == row.get("attempt"):
                continue
            self._append(error_record(pending, row.get("error") or row.get("state"), job.get("job_id"),
                                      int(row.get("attempt") or 0)))
            self.final_keys.add(key)
            self.ledger.set_state([cid], state=row["state"], error=row.get("error"),
                                  finalised_at_attempt=row.get("attempt"))
            self.outcome.final_errors += 1

    # ------------------------------------------------------------ deadline
    def deadline_passed(self) -> bool:
        hours = self.settings.deadline_h if self.settings.deadline_h is not None else self.ledger.meta.get("deadline_h")
        first = self.ledger.meta.get("first_submitted_at")
        return bool(hours is not None and first and self.clock() >= float(first) + float(hours) * 3600)

    def go_online(self) -> None:
        """Past the deadline: cancel live jobs (best effort) and ask the rest online."""
        self.outcome.deadline_hit = True
        for job in self.live_jobs():
            if job.get("state") in BATCH_TERMINAL:
                continue
            try:
                self._backend(job["model"]).cancel(job["job_id"])
                self.ledger.put_job(job["job_key"], message="deadline passed: cancelled; remainder asked online")
            except BatchError as exc:
                logger.warning("cancelling %s failed (%s)", job["job_key"], exc)
        rest = [p for cid, p in self.pendings.items() if p.job.request_key not in self.answered_keys
                and p.job.request_key not in self.final_keys
                and self.ledger.requests[cid].get("state") != REQUEST_ONLINE]
        if rest:
            self.say(f"batch deadline passed: {len(rest)} unanswered requests are asked online now")
            self._to_online(rest, "batch deadline passed")

    # ------------------------------------------------------------ the session
    def run(self) -> BatchOutcome:
        self.classify()
        self.register_runs()
        self.journals = JournalSet({m.run_id: Journal(m.journal_path) for m in self.plan.members})
        # Ingested from this thread, between polls: every store write of the session comes from one
        # thread (two writing connections of one process conflict in DuckDB), and answers arrive in
        # bursts when a job finishes anyway.
        ingester = Ingester(self.store, self.plan.members, self.ingest_interval_s)
        try:
            self.load_requests()
            self.outcome.online_keys.update(
                p.job.request_key for cid, p in self.pendings.items()
                if self.ledger.requests[cid].get("state") == REQUEST_ONLINE and p.job.request_key not in self.answered_keys)
            while not self.cancel.is_set():
                self.recover()  # submissions a crash or a failed attempt left half done
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


"""Planning and executing a launch: models x conditions (x repetitions) over selected items.

A launch is what one ``run`` command (or one click on the Runs page) starts; its member runs are
one per model, condition and repetition, each with its own journal. All requests of a launch
go through one pool in which every run is a lane: each provider (and a model with limits of its
own) runs at its own ``concurrency`` and ``rpm`` at the same time as the others (``runner.lanes``),
so a sweep over four providers takes as long as the slowest, not the sum. The launch file (``<runs_dir>/_launches/<id>.json``)
keeps the options and the chosen item ids, so ``--resume`` asks exactly the same questions, and
the pid, so the Runs page can follow or cancel it.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..dialogues import complete_dialogues, earlier_turns
from ..errors import UserError
from ..limits import describe, int_limit, limit
from ..providers.base import ProviderRequest
from ..providers.registry import ModelSpec, adhoc_spec, get_spec, load_registry, make_provider
from ..store import Store, StoreError, StoreLockedError
from ..store import journal as store_journal
from ..store.items import load_items
from ..store.runs import create_run_con, ensure_model_con, finish_run
from ..vocab import BOTH_CONDITIONS, CONDITIONS, DEFAULT_CONDITION, DEFAULT_DATASET
from . import launchfile
from .cache import ResponseCache, cache_key
from .calls import LaunchCaller, cached_reply, prior_messages
from .estimate import Estimate, estimate_request, token_counter
from .ingestion import Ingester
from .journal import Journal, JournalSet, latest_by_key, read_records
from .lanes import lane_limits, provider_group
from .launchfile import launch_file, process_alive, read_launch, write_launch
from .pool import Job, Pool, RetryPolicy
from .progress import ProgressBar
from .prompts import answer_schema, load_templates, render_user_text, request_templates_hash, schema_hash
from .selection import select_items

logger = logging.getLogger(__name__)

__all__ = ["LaunchOptions", "Member", "Plan", "plan_launch", "estimate_plan", "execute", "run_totals",
           "launch_file", "read_launch", "write_launch", "process_alive", "prior_messages"]

# Options that define what a launch asks; the others (concurrency, rpm, ...) may change on resume.
IDENTITY_OPTIONS = ("dataset", "models", "adhoc", "conditions", "items", "limit", "sample", "repeat",
                    "text_only", "refuse_images", "adaptive")


@dataclass
class LaunchOptions:
    models: list[str] = field(default_factory=list)
    adhoc: dict | None = None          # {"provider", "model_id", "base_url", "display_name"}
    conditions: list[str] = field(default_factory=lambda: [DEFAULT_CONDITION])
    items: str | None = None
    limit: int | None = None
    sample: int | None = None
    repeat: int | None = None
    dataset: str | None = None
    launch_id: str | None = None
    concurrency: int = 8
    rpm: float | None = None
    retry_errors: bool = False
    text_only: bool = False
    refuse_images: bool = False
    timeout_s: float = 120.0
    max_attempts: int = 6
    base_delay_s: float = 1.0
    use_cache: bool = True
    #: two model keys A, B: ask in stratified random rounds and stop once they are told apart
    #: (``runner.separation``); not an identity option, so the same launch resumed without it asks the rest
    until_separated: list[str] | None = None
    #: ``run --adaptive``: {"bank", "target_se", "max_items", "balance"} (``runner.adaptive``); part of the
    #: identity, so a resumed launch goes on with the same bank and rules
    adaptive: dict | None = None

    def identity(self) -> dict:
        """What defines the launch (``adaptive`` only when set, so the ids of other launches stay as they were)."""
        return {k: getattr(self, k) for k in IDENTITY_OPTIONS if k != "adaptive" or self.adaptive}


@dataclass
class Member:
    """One run of the launch."""

    run_id: str
    spec: ModelSpec
    condition: str
    repetition: int
    image_mode: str  # send | text_only | refuse
    journal_path: Path
    template_hash: str


@dataclass
class Plan:
    launch_id: str
    dataset: str
    options: LaunchOptions
    members: list[Member]
    jobs: list[Job]
    item_ids: list[str]
    refused: dict[str, int]  # run_id -> image items skipped
    adaptive: object = None  # runner.adaptive.AdaptiveSetup of an adaptive launch


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in text)


def default_launch_id(options: LaunchOptions) -> str:
    """Same command, same id: running it again resumes instead of starting over."""
    digest = hashlib.sha1(json.dumps(options.identity(), sort_keys=True).encode()).hexdigest()[:8]
    names = options.models + ([options.adhoc["model_id"]] if options.adhoc else [])
    head = _safe("+".join(names))[:40]
    cond = options.conditions[0] if len(options.conditions) == 1 else "both"
    return f"{head}-{cond}-{digest}"


def resolve_dataset(store: Store, dataset: str | None) -> str:
    names = store_journal.dataset_names(store)
    if dataset:
        if dataset not in names:
            raise UserError(f"dataset '{dataset}' has no items in {store.path} (have: {', '.join(names) or 'none'})")
        return dataset
    if DEFAULT_DATASET in names:
        return DEFAULT_DATASET
    if len(names) == 1:
        return names[0]
    if not names:
        raise UserError(f"store {store.path} has no items: run 'python -m eduart_core demo' or an import first")
    raise UserError(f"several datasets in the store ({', '.join(names)}): choose one with --dataset")


def _specs(options: LaunchOptions, registry: dict[str, ModelSpec]) -> list[ModelSpec]:
    specs = [get_spec(key, registry) for key in options.models]
    if options.adhoc:
        a = options.adhoc
        specs.append(adhoc_spec(a["provider"], a["model_id"], a.get("base_url"),
                                accepts_images=not (options.text_only or options.refuse_images),
                                display_name=a.get("display_name")))
    if not specs:
        raise UserError("choose at least one model: --model KEY (see 'run --list-models') or --provider/--model-id")
    return specs


def image_mode(spec: ModelSpec, options: LaunchOptions, has_image_items: bool) -> str:
    """What happens to images for this model; a model without image input never drops them silently."""
    if options.refuse_images:
        return "refuse"
    if options.text_only:
        return "text_only"
    if not spec.accepts_images and has_image_items:
        raise UserError(f"model {spec.key} does not accept images and the selection has image items: "
                        "add --text-only (send the text, record that the image was not sent) or "
                        "--refuse-images (skip image items)")
    return "send"


def _finite(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def check_numbers(options: LaunchOptions) -> None:
    """Refuse, with one line naming the field (as the page and the CLI call it), a number a launch
    cannot mean: a sample or limit below one item, repetitions beyond `EDUART_MAX_REPETITIONS`,
    concurrency beyond `EDUART_MAX_CONCURRENCY`, a rate, timeout or delay that is not a positive
    (finite) number. A sample larger than the selection is refused where the items are counted
    (`selection.select_items`)."""
    repetitions, concurrency = int_limit("max_repetitions"), int_limit("max_concurrency")
    rules = (
        ("items to ask (--limit)", options.limit, 1, None, None),
        ("stratified sample size (--sample)", options.sample, 1, None, None),
        ("repetitions (--repeat)", options.repeat, 1, repetitions, describe("max_repetitions")),
        ("concurrent requests per provider (--concurrency)", options.concurrency, 1, concurrency,
         describe("max_concurrency")),
        ("attempts per request (--max-attempts)", options.max_attempts, 1, None, None),
    )
    for words, value, low, high, why in rules:
        if value is None:
            continue
        if not _finite(value) or value != int(value) or value < low or (high is not None and value > high):
            bound = f"a whole number from {low} to {high}" if high is not None else f"a whole number of at least {low}"
            raise UserError(f"{words}: {value!r} is not allowed; use {bound}"
                            + (f" (the limit is {why})" if why else ""))
    for words, value, low_open in (("requests per minute (--rpm)", options.rpm, True),
                                   ("timeout per request in seconds (--timeout)", options.timeout_s, True),
                                   ("first retry delay in seconds (--backoff)", options.base_delay_s, False)):
        if value is None:
            continue
        if not _finite(value) or value < 0 or (low_open and value == 0):
            raise UserError(f"{words}: {value!r} is not allowed; use a number above zero"
                            if low_open else f"{words}: {value!r} is not allowed; use zero or more")


def request_seed(spec: ModelSpec, repetition: int) -> int | None:
    """The seed sent with a request of ``repetition``: the model's seed, except for the offline
    baseline, whose repeats need their own seed to differ at all (a seeded sampler repeats itself)."""
    if spec.provider == "offline" and repetition:
        return (spec.seed or 0) * 1000 + repetition
    return spec.seed


def sampling_params(spec: ModelSpec, repetition: int) -> dict:
    """What a run records about how its answers were sampled: its repeat index (0 = the main run,
    1..K = the repeats of ``--repeat K``), the temperature and the seed sent (None: the registry
    sets none; providers whose API takes no seed ignore it)."""
    return {"repetition": int(repetition), "temperature": spec.temperature, "seed": request_seed(spec, repetition)}


def plan_launch(store: Store, options: LaunchOptions, registry: dict[str, ModelSpec] | None = None,
                prompts_dir: Path | None = None, items_of=None) -> Plan:
    """Everything a launch will ask, without asking anything (used by dry-run and the page too).

    ``items_of``: optional ``dataset -> items frame`` giving what `load_items` reads (the Runs page
    passes its cached items view, so planning again after a change reads no item from the store)."""
    registry = registry if registry is not None else load_registry()
    for condition in options.conditions:
        if condition not in CONDITIONS:
            raise UserError(f"unknown condition {condition!r}: use {', '.join((*CONDITIONS, BOTH_CONDITIONS))}")
    check_numbers(options)
    specs = _specs(options, registry)
    dataset = resolve_dataset(store, options.dataset)
    options.dataset = dataset
    if options.launch_id and (_safe(options.launch_id) != options.launch_id or options.launch_id.startswith(".")):
        raise UserError(f"launch id {options.launch_id!r}: use letters, digits, '-', '_' and '.' only")
    launch_id = options.launch_id or default_launch_id(options)
    options.launch_id = launch_id
    saved = read_launch(store, launch_id)
    all_items = items_of(dataset) if items_of is not None else load_items(store, dataset)
    setup = None
    if options.adaptive:  # before anything is asked: the bank version known, enough usable items
        from .adaptive import prepare

        if options.until_separated:
            raise UserError("--adaptive chooses each model's items itself: it cannot run with --until-separated")
        setup = prepare(store, dataset, options.adaptive)
        all_items = all_items[all_items["item_id"].astype(str).isin(set(setup.item_ids))]
    if saved and saved.get("item_ids"):
        items = all_items[all_items["item_id"].isin(saved["item_ids"])].sort_values("item_id")
    else:
        items = select_items(all_items, options.items, options.limit, options.sample)
    items = complete_dialogues(items, all_items)
    before = earlier_turns(items)
    option_hashes = [h for mapping in items["option_images"] for h in (mapping or {}).values()]
    images = store_journal.image_files(store, [h for h in items["image_hash"] if isinstance(h, str)] + option_hashes)
    has_image_items = bool(items["has_image"].any()) or bool(option_hashes)
    repetitions = list(range(1, options.repeat + 1)) if options.repeat else [0]
    members: list[Member] = []
    jobs: list[Job] = []
    refused: dict[str, int] = {}
    for spec in specs:
        mode = image_mode(spec, options, has_image_items)
        for condition in options.conditions:
            templates = load_templates(condition, prompts_dir)
            for rep in repetitions:
                run_id = _safe(f"{launch_id}__{spec.key}__{condition}" + (f"__rep{rep}" if rep else ""))
                member = Member(run_id, spec, condition, rep, mode, store.runs_dir / run_id / "responses.jsonl",
                                templates.hash)
                members.append(member)
                refused[run_id] = 0
                turns: dict[str, dict] = {}  # item_id -> what its turn sends (prior turns reuse it)
                for row in items.itertuples(index=False):
                    option_files = option_image_files(row, images) if mode == "send" else []
                    has_image = bool(row.has_image) or bool(row.option_images)
                    if has_image and mode == "refuse":
                        continue
                    send_image = has_image and mode == "send"
                    image = images.get(row.image_hash) if send_image and isinstance(row.image_hash, str) else None
                    if send_image and bool(row.has_image) and image is None:
                        raise UserError(f"item {row.item_id}: image {row.image_hash} missing from the store")
                    turns[row.item_id] = {"text": render_user_text(row.record, templates),
                                          "image_path": image[0] if image else None,
                                          "image_mime": image[1] if image else None,
                                          "image_hash": row.image_hash if send_image else None,
                                          "image_sent": send_image, "option_files": option_files}
                for row in items.itertuples(index=False):
                    earlier = before.get(row.item_id, [])
                    if row.item_id not in turns or any(e not in turns for e in earlier):
                        refused[run_id] += 1  # an image item refused, or a turn after one
                        continue
                    turn = turns[row.item_id]
                    prior, shown = _prior_turns([turns[e] for e in earlier])
                    repeat_image = turn["image_hash"] is not None and turn["image_hash"] in shown
                    schema = answer_schema(row.type, condition, row.record)
                    seed = request_seed(spec, rep)
                    request = ProviderRequest(system=templates.system, user_text=turn["text"],
                                              json_schema=schema, temperature=spec.temperature,
                                              max_output_tokens=spec.max_output_tokens, seed=seed, item=row.record,
                                              image_mime=None if repeat_image else turn["image_mime"])
                    key_parts = {}
                    if prior:  # the earlier questions; the model's answers join the key when they exist
                        key_parts["prior"] = [(p["text"], p["image_hash"]) for p in prior]
                    if turn["option_files"]:  # options that are images
                        key_parts["option_images"] = [h for _, h, _, _ in turn["option_files"]]
                    key_parts.update(provider=spec.provider, base_url=spec.base_url, model=spec.api_model_id,
                                     condition=condition, system=request.system, user=request.user_text,
                                     image=turn["image_hash"], temperature=spec.temperature,
                                     max_tokens=spec.max_output_tokens, seed=seed, schema=schema_hash(schema),
                                     repetition=rep)
                    # keyed by the templates of this item's format; entries written before keys were per
                    # format (keyed by every template together) are still read, under `legacy_cache_key`
                    key = cache_key(templates=request_templates_hash(row.record, templates), **key_parts)
                    legacy = cache_key(templates=templates.hash, **key_parts)
                    meta = {"run_id": run_id, "item_id": row.item_id, "repetition": rep, "condition": condition,
                            "model": spec.key, "image_sent": turn["image_sent"]}
                    if row.dialogue_id is not None:
                        meta.update(dialogue_id=row.dialogue_id, turn=row.turn)
                    jobs.append(Job(
                        request_key=f"{run_id}/{row.item_id}",
                        payload={"member": member, "request": request,
                                 "image_path": None if repeat_image else turn["image_path"],
                                 "cache_key": key, "legacy_cache_key": legacy, "prior": prior,
                                 "option_images": [(label, str(path), mime)
                                                   for label, _, path, mime in turn["option_files"]]},
                        meta=meta,
                        after=f"{run_id}/{earlier[-1]}" if earlier else None,
                        lane=run_id,
                    ))
    if options.until_separated:  # before anything is asked: both models known and in the launch
        from .separation import check_until_separated

        check_until_separated(options.until_separated, members, registry, conditions=options.conditions,
                              repeat=options.repeat)
    return Plan(launch_id, dataset, options, members, jobs, list(items["item_id"]), refused, setup)


def option_image_files(row, images: dict[str, tuple[Path, str]]) -> list[tuple[str, str, Path, str]]:
    """(label, image hash, file, mime) of the item's options that are images, in option order.

    The label introduces each image in the request ("Option A:"), so the model can name it.
    """
    from ..formats import find_format

    fmt = find_format(row.type)
    mapping = row.option_images or {}
    out = []
    for option_id, _path in (fmt.option_images(row.record) if fmt is not None else []):
        image_hash = mapping.get(option_id)
        found = images.get(image_hash) if image_hash else None
        if found is None:
            raise UserError(f"item {row.item_id}: image of option {option_id} missing from the store")
        out.append((f"Option {option_id}:", image_hash, found[0], found[1]))
    return out


def _prior_turns(earlier: list[dict]) -> tuple[list[dict], set[str]]:
    """The earlier turns as sent again before a later one, and the image hashes they show.

    An image goes with the first turn that shows it; a later turn of the same image refers back to
    it rather than sending the same picture twice in one conversation.
    """
    prior, shown = [], set()
    for turn in earlier:
        repeat = turn["image_hash"] is not None and turn["image_hash"] in shown
        prior.append({"text": turn["text"], "image_hash": turn["image_hash"],
                      "image_path": None if repeat else turn["image_path"],
                      "image_mime": None if repeat else turn["image_mime"]})
        if turn["image_hash"] is not None:
            shown.add(turn["image_hash"])
    return prior, shown


def estimate_plan(store: Store, plan: Plan) -> tuple[list[Estimate], str]:
    """Estimated tokens and cost per model and condition; cached requests cost nothing."""
    cache = ResponseCache(store.cache_dir / "responses", enabled=plan.options.use_cache)
    counter = token_counter()
    rows: dict[tuple[str, str], Estimate] = {}
    memo: dict[str, int] = {}
    answered = set()
    for member in plan.members:
        answered |= {k for k, r in Journal(member.journal_path).latest().items() if r.get("status") == "ok"}
    for job in plan.jobs:
        member: Member = job.payload["member"]
        request: ProviderRequest = job.payload["request"]
        est = rows.setdefault((member.spec.key, member.condition),
                              Estimate(member.spec.key, member.condition, 0, 0, 0, 0, 0.0, 0, 0))
        if job.request_key in answered:
            est.answered += 1
            continue
        est.requests += 1
        if request.system not in memo:
            memo[request.system] = counter.count(request.system)
        tokens_in, tokens_out = estimate_request("", request.user_text, job.meta["image_sent"], member.condition)
        tokens_in += memo[request.system]
        for turn in job.payload.get("prior") or []:  # a later turn resends the conversation so far
            turn_in, turn_out = estimate_request("", turn["text"], turn["image_path"] is not None, member.condition)
            tokens_in += turn_in + turn_out
        est.images += int(job.meta["image_sent"])
        if member.spec.provider == "offline":
            continue
        if cached_reply(cache, job, copy=False) is not None:  # an estimate reads, never writes
            est.cached += 1
            continue
        est.input_tokens += tokens_in
        est.output_tokens += tokens_out
        est.cost_usd += member.spec.cost(tokens_in, tokens_out)
    return list(rows.values()), counter.method


def run_totals(member: Member, records: list[dict]) -> dict:
    """Tokens and cost actually paid (cache hits are free; an empty reply was paid for too), and
    items that still have an error."""
    latest = latest_by_key(iter(records))
    paid = [r for r in latest.values() if not r.get("cached")
            and (r.get("status") == "ok" or r.get("input_tokens") or r.get("output_tokens"))]
    tokens_in = sum(int(r.get("input_tokens") or 0) for r in paid)
    tokens_out = sum(int(r.get("output_tokens") or 0) for r in paid)
    # A record carries its own cost (batch answers at the batch price); older records are priced here.
    cost = sum(r["cost_usd"] if r.get("cost_usd") is not None else member.spec.cost(r.get("input_tokens"),
                                                                                    r.get("output_tokens"))
               for r in paid)
    errors = sum(1 for r in latest.values() if r.get("status") != "ok")
    return {"input_tokens": tokens_in, "output_tokens": tokens_out,
            "cost_usd": round(cost, 6), "n_errors": errors,
            "answered": sum(1 for r in latest.values() if r.get("status") == "ok")}


def _register(store: Store, plan: Plan) -> dict[str, float]:
    """Models and runs in the store (one short transaction), reopening runs of an earlier session;
    returns the wall time the runs already spent."""
    options = plan.options
    specs = {m.spec.key: m.spec for m in plan.members}
    existing = store_journal.run_wall_seconds(store, [m.run_id for m in plan.members])
    reopened = []
    with store.transaction() as con:
        for spec in specs.values():
            ensure_model_con(con, spec.key, spec.display_name, spec.family, spec.provider, spec.api_model_id,
                             kind=spec.kind)
        for m in plan.members:
            params = {"temperature": m.spec.temperature, "max_output_tokens": m.spec.max_output_tokens,
                      "seed": m.spec.seed, "api_model_id": m.spec.api_model_id, "provider": m.spec.provider,
                      "base_url": m.spec.base_url, "image_mode": m.image_mode, "items": options.items,
                      "limit": options.limit, "sample": options.sample, "repeat": options.repeat,
                      "template_hash": m.template_hash, "images_refused": plan.refused.get(m.run_id, 0),
                      **sampling_params(m.spec, m.repetition)}
            created = create_run_con(con, m.run_id, plan.dataset, m.spec.key, m.condition, "live",
                                     launch_id=plan.launch_id, repetition=m.repetition,
                                     prompt_hash=m.template_hash, params=params, journal_path=str(m.journal_path),
                                     exist_ok=True)
            if not created:
                reopened.append(m.run_id)
    store_journal.reopen_runs(store, reopened)
    return existing


def _finish_runs(store: Store, finals: dict[str, tuple[str, dict]], wait_s: float) -> str | None:
    """Write each run's final status and totals, retrying while the store is busy; the error
    line when it could not (the launch then waits for ingest and recovery finishes the runs)."""
    deadline = time.monotonic() + max(0.0, wait_s)
    saved = store.lock_timeout_s
    todo = dict(finals)
    try:
        while todo:
            store.lock_timeout_s = max(0.2, min(5.0, deadline - time.monotonic()))
            run_id, (status, totals) = next(iter(todo.items()))
            try:
                finish_run(store, run_id, status, totals)
                del todo[run_id]
            except StoreLockedError as exc:
                if time.monotonic() >= deadline:
                    return str(exc)
                time.sleep(0.5)
            except StoreError as exc:
                return str(exc)
    finally:
        store.lock_timeout_s = saved
    return None


def _jobs_per_member(plan: Plan) -> dict[str, int]:
    counts: dict[str, int] = {}
    for job in plan.jobs:
        counts[job.meta["run_id"]] = counts.get(job.meta["run_id"], 0) + 1
    return counts


def execute(store: Store, plan: Plan, *, cancel: threading.Event | None = None, progress: bool = True,
            providers: dict | None = None, ingest_interval_s: float = 2.0, out=None,
            retry: RetryPolicy | None = None, ingest_wait_s: float | None = None) -> dict:
    """Run a planned launch to the end (or until cancelled); returns a summary per run.

    The summary also holds ``exit_code``, ``status`` and ``outcome`` (one line for the user; see
    ``launchfile.outcome``), written to the launch file too. A run is "completed" only when its
    answers are in the store: when the final ingest cannot write (another process holds the
    store for longer than ``ingest_wait_s``, default EDUART_INGEST_WAIT_S), the launch is
    "waiting_ingest" and its runs stay open in the store until recovery stores the rest.
    """
    out = out or sys.stdout
    options = plan.options
    specs = {m.spec.key: m.spec for m in plan.members}
    providers = providers or {key: make_provider(spec, timeout_s=options.timeout_s) for key, spec in specs.items()}
    wait_s = limit("ingest_wait_s") if ingest_wait_s is None else ingest_wait_s
    existing = _register(store, plan)
    limits = lane_limits(plan.members, options.concurrency, options.rpm)
    per_member = _jobs_per_member(plan)
    info = {"launch_id": plan.launch_id, "dataset": plan.dataset, "db": str(store.path), "pid": os.getpid(),
            "status": launchfile.RUNNING, "process_started_at": time.time(), "finished_at": None,
            "options": asdict(options), "item_ids": plan.item_ids, "total_jobs": len(plan.jobs),
            "members": [{"run_id": m.run_id, "model": m.spec.key, "condition": m.condition,
                         "repetition": m.repetition, "journal": str(m.journal_path), "image_mode": m.image_mode,
                         "jobs": per_member.get(m.run_id, 0), "provider": provider_group(m.spec),
                         "limits": [asdict(item) for item in limits[m.run_id]],
                         "refused": plan.refused.get(m.run_id, 0)} for m in plan.members]}
    previous = read_launch(store, plan.launch_id) or {}
    if previous.get("status") == launchfile.RUNNING and previous.get("pid") not in (None, os.getpid()) \
            and process_alive(previous.get("pid")):
        raise UserError(f"launch {plan.launch_id} is already running (process {previous['pid']}); "
                        "wait for it or cancel it first")
    info["sessions"] = int(previous.get("sessions", 0)) + 1
    # an earlier session's early stop (--until-separated) stays on record when the launch is resumed
    earlier = list(previous.get("earlier_stops") or []) + ([previous["until_separated"]]
                                                           if previous.get("until_separated") else [])
    if earlier:
        info["earlier_stops"] = earlier
    write_launch(store, plan.launch_id, info)
    journals = JournalSet({m.run_id: Journal(m.journal_path) for m in plan.members})
    caller = LaunchCaller(providers, ResponseCache(store.cache_dir / "responses", enabled=options.use_cache))
    ingester = Ingester(store, plan.members, ingest_interval_s).start()
    done_before = sum(1 for r in journals.latest().values() if r.get("status") == "ok")
    bar = ProgressBar(len(plan.jobs), done_before) if progress else None
    policy = retry or RetryPolicy(max_attempts=options.max_attempts, base_delay_s=options.base_delay_s)
    t0 = time.monotonic()
    stop = None
    gates: dict = {}  # one rate per limit across the rounds of --until-separated
    try:
        def pool() -> Pool:
            return Pool(caller, journals, concurrency=options.concurrency, rpm=options.rpm, retry=policy,
                        progress=bar, retry_errors=options.retry_errors, cancel=cancel,
                        after_journal=caller.after_journal, limits=limits, gates=gates)

        if options.until_separated:
            from .separation import Separation

            separation = Separation(*options.until_separated, plan.jobs, seed=plan.launch_id,
                                    round_size=max(1, int(options.concurrency)))
            result, stop, asked_units = separation.run(lambda jobs: pool().run(jobs), journals.latest,
                                                       lambda: bool(cancel and cancel.is_set()))
        elif plan.adaptive is not None:
            from .adaptive import AdaptiveRounds

            rounds = AdaptiveRounds(plan.adaptive, plan.members, plan.jobs, seed=plan.launch_id)
            rounds.replay()
            result = rounds.run(lambda jobs: pool().run(jobs), journals.latest,
                                lambda: bool(cancel and cancel.is_set()))
        else:
            result = pool().run(plan.jobs)
    finally:
        journals.close()
        if bar:
            bar.close()
        ingested = ingester.finish(wait_s)
    wall = time.monotonic() - t0
    summary: dict[str, dict] = {}
    finals: dict[str, tuple[str, dict]] = {}
    for m in plan.members:
        totals = run_totals(m, list(read_records(m.journal_path)))
        jobs = per_member.get(m.run_id, 0)
        if result.journal_error:
            status = launchfile.FAILED
        elif result.cancelled:
            status = launchfile.CANCELLED
        elif jobs and totals["answered"] == 0 and totals["n_errors"]:
            status = launchfile.FAILED
        else:
            status = launchfile.COMPLETED
        finals[m.run_id] = (status, {k: totals[k] for k in ("input_tokens", "output_tokens", "cost_usd", "n_errors")}
                            | {"wall_seconds": round(existing.get(m.run_id, 0.0) + wall, 3)})
        summary[m.run_id] = {**totals, "status": status, "jobs": jobs, "refused": plan.refused.get(m.run_id, 0)}
    ingest_error = None if ingested.complete else ingested.error
    if ingested.complete and plan.adaptive is not None:
        ingest_error = _save_trajectories(store, plan, rounds, summary)
    if ingested.complete and ingest_error is None:
        ingest_error = _finish_runs(store, finals, wait_s)
    waiting = None
    if ingest_error is not None:
        waiting = ingester.pending_count()
        for run in summary.values():
            run["status"] = launchfile.WAITING_INGEST
    facts = dict(cancelled=result.cancelled, jobs=len(plan.jobs), n_errors=sum(s["n_errors"] for s in summary.values()),
                 journal_error=result.journal_error, lost=result.lost)
    code, status, line = launchfile.outcome(store, plan.launch_id, waiting=waiting, ingest_error=ingest_error, **facts)
    stored_code, stored_status, stored_line = launchfile.outcome(store, plan.launch_id, **facts)
    if plan.adaptive is not None and code == launchfile.EXIT_OK:
        line = "adaptive: " + "; ".join(adaptive_line(s["adaptive"]) for s in summary.values() if "adaptive" in s)
    if stop is not None:
        info["until_separated"] = separation_record(options.until_separated, stop, asked_units, len(separation.order))
        if asked_units < len(separation.order) and code == launchfile.EXIT_OK:
            line = (f"stopped early, {info['until_separated']['sentence']}; {asked_units} of {len(separation.order)} "
                    f"items asked; ask the rest with: {launchfile.resume_command(store, plan.launch_id)}")
    info.update(status=status, finished_at=time.time(), result=asdict(result), exit_code=code, outcome=line,
                final_runs={run_id: {"status": st, "totals": totals} for run_id, (st, totals) in finals.items()},
                on_ingest={"status": stored_status, "exit_code": stored_code, "outcome": stored_line})
    try:
        write_launch(store, plan.launch_id, info)
    except UserError as exc:  # bookkeeping only: the outcome line below still tells the user
        logger.warning("launch file not updated: %s", exc)
    return {"launch_id": plan.launch_id, "result": result, "runs": summary, "exit_code": code, "status": status,
            "outcome": line, "until_separated": info.get("until_separated")}


def adaptive_line(header: dict) -> str:
    """One member's adaptive outcome in words (the ability on the bank version's scale)."""
    from ..analysis.adaptive import STOP_WORDS

    why = STOP_WORDS.get(header["stop_reason"], "not finished")
    return (f"{header['run_id']}: {header['n_items']} of {header['n_bank']} bank items, ability "
            f"{header['ability']:+.2f} logit (SE {header['ability_se']:.2f}) on bank version {header['bank_version']}, "
            f"{why}")


def _save_trajectories(store: Store, plan: Plan, rounds, summary: dict) -> str | None:
    """Each member's trajectory and final ability into the store (``store.adaptive``); the error line
    when the store refuses (the journal keeps the answers: the next session writes it)."""
    from ..store.adaptive import save_trajectory

    for m in plan.members:
        header, steps = rounds.trajectory(m.run_id, plan.dataset)
        summary[m.run_id]["adaptive"] = header
        try:
            save_trajectory(store, header, steps)
        except StoreError as exc:
            return str(exc)
    return None


def separation_record(pair: list[str], stop, asked_units: int, total_units: int) -> dict:
    """What the launch file keeps of an early stop: why (the decision and its CS), when (items
    asked, the time) and of which pair."""
    return {"model_a": pair[0], "model_b": pair[1], **stop.as_dict(), "items_asked": asked_units,
            "items_total": total_units, "stopped_at": time.time(), "sentence": stop.sentence(*pair)}

"""Judging a dataset: a judge model marks every answer on every judge criterion of a rubric.

Why through the runner: a judge is a model, and its requests need exactly what a model run
needs (concurrency, rate limits, retries, a journal written before anything else, resume, the
response cache, cost estimates, batch jobs). A judge launch builds the runner's jobs and hands
them to ``runner.pool.run_jobs`` with ``runner.calls.LaunchCaller`` (cache, then provider), as
``run`` does; only what happens to the replies differs: they are not answers to items, so the
ingester writes them to ``judgements`` and turns them into the profile's scores
(``judge:<judge>/<rubric>``), instead of adding responses to a run.

The launch is fixed by its identity (judge, rubric, dataset, models, conditions, repeats,
probes, temperature, seed): running the same command again resumes it, asking only what the
journal does not hold yet. The answers judged and the option orders are decided from the
store and seeded hashes, so a resume asks exactly the same questions.
"""
from __future__ import annotations

import getpass
import hashlib
import json
import logging
import math
import os
import random
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import UserError
from ..fileio import atomic_write
from ..limits import limit
from ..providers.base import ProviderRequest
from ..providers.registry import ModelSpec, adhoc_spec, get_spec, load_registry, make_provider
from ..runner import launchfile
from ..runner.cache import ResponseCache, cache_key
from ..runner.calls import LaunchCaller
from ..runner.estimate import estimate_request, token_counter
from ..runner.ingestion import Ingester
from ..runner.journal import Journal, JournalSet, latest_by_key, read_new_records, read_records
from ..runner.pool import Job, RetryPolicy, run_jobs
from ..runner.progress import ProgressBar
from ..runner.prompts import schema_hash
from ..store import Store, StoreError, StoreLockedError
from ..store import journal as store_journal
from ..vocab import (
    BASELINE_KIND,
    CHECK_METHOD,
    JUDGE_METHOD,
    MAIN_PROBE,
    PADDED_PROBE,
    REORDERED_PROBE,
    SIMULATED_KIND,
    judge_profile_name,
)
from .checks import run_check
from .prompts import (
    JudgeTemplates,
    answer_text,
    load_judge_templates,
    option_order,
    order_text,
    pad_answer,
    parse_verdict,
    render_request,
    verdict_schema,
)
from .rubric import Rubric, items_for, load_rubric, load_rubrics
from .scoring import item_score, mean_points, scorer_id

logger = logging.getLogger(__name__)

#: A judge request is not an answer to an item: its journal records carry this condition.
JUDGE_CONDITION = "judge"
#: Options that define what a launch asks (the rest may change on resume).
IDENTITY_OPTIONS = ("judge", "adhoc", "rubric", "dataset", "models", "conditions", "repeat", "probes", "temperature",
                    "seed")
DEFAULT_PROBES = 20


def cli_user() -> str:
    """Who runs a command on this machine (``EDUART_USER``, else the login name)."""
    try:
        return os.environ.get("EDUART_USER") or getpass.getuser()
    except (KeyError, OSError):  # no login name (some containers)
        return "unknown"


@dataclass
class JudgeOptions:
    judge: str | None = None              # registry key
    adhoc: dict | None = None             # {"provider", "model_id", "base_url"}
    rubric: str = ""
    dataset: str | None = None
    models: list[str] = field(default_factory=list)       # keys or display names; empty: every examinee
    conditions: list[str] = field(default_factory=list)   # empty: every condition
    repeat: int | None = None             # K: every request asked K times (run-to-run SD)
    probes: int = DEFAULT_PROBES          # answers asked again padded and with the options reversed
    temperature: float | None = None      # None: the registry's
    seed: int = 0
    launch_id: str | None = None
    concurrency: int = 8
    rpm: float | None = None
    retry_errors: bool = False
    timeout_s: float = 120.0
    max_attempts: int = 6
    base_delay_s: float = 1.0
    use_cache: bool = True
    created_by: str | None = None

    def identity(self) -> dict:
        return {k: getattr(self, k) for k in IDENTITY_OPTIONS}


@dataclass
class JudgeMember:
    """The one run of a judge launch (the fields the runner's batch engine reads of a member)."""

    run_id: str
    spec: ModelSpec
    journal_path: Path
    template_hash: str
    condition: str = JUDGE_CONDITION
    repetition: int = 0
    image_mode: str = "send"


@dataclass
class JudgePlan:
    launch_id: str
    dataset: str
    options: JudgeOptions
    members: list[JudgeMember]
    jobs: list[Job]
    item_ids: list[str]
    profile: str
    version: str
    profile_row: dict
    rubric: Rubric
    checks: list[dict]                    # judgements of the rubric's checks (no request)
    answers: pd.DataFrame                 # the answers judged
    refused: dict[str, int] = field(default_factory=dict)


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in text)


def version_line(spec: ModelSpec, templates: JudgeTemplates, rubric: Rubric) -> str:
    """What a judge profile's scores come from, in one line (shown with the profile everywhere)."""
    temperature = "default" if spec.temperature is None else f"{spec.temperature:g}"
    return (f"{spec.api_model_id} · prompt {templates.hash[:8]} · rubric {rubric.name}@{rubric.short_hash} · "
            f"temperature {temperature}")


def judge_spec(options: JudgeOptions, registry: dict[str, ModelSpec] | None = None) -> ModelSpec:
    if options.adhoc:
        a = options.adhoc
        spec = adhoc_spec(a["provider"], a["model_id"], a.get("base_url"))
        if options.judge:
            spec = spec.with_overrides(key=options.judge, display_name=options.judge)
    elif options.judge:
        spec = get_spec(options.judge, registry if registry is not None else load_registry())
    else:
        raise UserError("choose a judge: --judge KEY (a model of the registry) or --provider/--model-id")
    if options.temperature is not None:
        spec = spec.with_overrides(temperature=float(options.temperature))
    return spec


def default_launch_id(options: JudgeOptions, spec: ModelSpec) -> str:
    digest = hashlib.sha1(json.dumps(options.identity(), sort_keys=True, default=str).encode()).hexdigest()[:8]
    return _safe(f"judge-{spec.key}-{options.rubric}")[:60] + f"-{digest}"


def judge_dir(store: Store) -> Path:
    """Where judge launches keep their launch files and journals (beside the store, like runs)."""
    return store.runs_dir / "_judges"


def judge_launch_file(store: Store, launch_id: str) -> Path:
    return judge_dir(store) / f"{launch_id}.json"


def read_judge_launch(store: Store, launch_id: str) -> dict | None:
    path = judge_launch_file(store, launch_id)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _write_launch(store: Store, launch_id: str, info: dict) -> None:
    try:
        path = judge_launch_file(store, launch_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(info, indent=1, default=str))
    except (UserError, OSError) as exc:  # bookkeeping only: the outcome line still tells the user
        logger.warning("judge launch file not written: %s", exc)


def resume_command(store: Store, launch_id: str, retry_errors: bool = False) -> str:
    db = f" --db {store.path}" if store.path else ""
    return f"python -m eduart_core judge --resume {launch_id}{db}" + (" --retry-errors" if retry_errors else "")


# ---------------------------------------------------------------- what is judged

def judged_answers(store: Store, dataset: str, rubric: Rubric, models: Sequence[str] = (),
                   conditions: Sequence[str] = (), items: pd.DataFrame | None = None
                   ) -> tuple[pd.DataFrame, dict[str, dict]]:
    """The latest answers (repetition 0, an answer arrived) to the items the rubric applies to.

    Baseline models are references, not examinees: left out unless named. Returns the answers
    (response_id, item_id, model_key, model, condition, text, language, type) and the records.
    """
    from ..store.items import load_items
    from ..store.scores import list_models, load_responses

    items = load_items(store, dataset) if items is None else items
    records = {str(r.item_id): {**r.record, "item_id": str(r.item_id)} for r in items.itertuples(index=False)}
    attached = {r["item_id"] for r in items_for(rubric, list(records.values()), load_rubrics())}
    if not attached:
        raise UserError(f"rubric {rubric.name} applies to no item of dataset {dataset} "
                        f"(it attaches to formats {', '.join(rubric.formats) or '-'}, tasks "
                        f"{', '.join(rubric.tasks) or '-'}, items {', '.join(rubric.items) or '-'})")
    catalog = list_models(store)
    kinds = dict(zip(catalog["model"], catalog["kind"]))
    names = {**dict(zip(catalog["display_name"], catalog["model"])), **dict(zip(catalog["model"], catalog["model"]))}
    wanted = set()
    for name in models:
        if name not in names:
            raise UserError(f"unknown model {name!r} (models: {', '.join(sorted(catalog['model']))})")
        wanted.add(names[name])
    responses = load_responses(store, dataset, extra_profiles=())
    if responses.empty:
        raise UserError(f"dataset {dataset} has no answers to judge")
    keep = (responses["is_latest"].astype(bool) & (responses["repetition"] == 0) & responses["error"].isna()
            & responses["item_id"].isin(attached))
    if wanted:
        keep &= responses["model_key"].isin(wanted)
    else:
        keep &= responses["model_key"].map(lambda k: kinds.get(k) != BASELINE_KIND)
    if conditions:
        keep &= responses["condition"].isin(list(conditions))
    chosen = responses[keep]
    if chosen.empty:
        raise UserError(f"no answers of dataset {dataset} to judge for this selection (models, conditions)")
    out = pd.DataFrame({
        "response_id": chosen["response_id"].astype("int64"), "item_id": chosen["item_id"].astype(str),
        "model_key": chosen["model_key"].astype(str), "model": chosen["model"].astype(str),
        "condition": chosen["condition"].astype(str),
        "text": [answer_text(p, r) for p, r in zip(chosen["parsed_answers"], chosen["raw_text"])],
    }).sort_values(["item_id", "model_key", "condition"]).reset_index(drop=True)
    out["language"] = [records[i].get("language") for i in out["item_id"]]
    out["type"] = [records[i].get("type") for i in out["item_id"]]
    return out, records


def probe_sample(answers: pd.DataFrame, n: int, seed: str) -> set[int]:
    """The response ids asked again as probes: ``n`` answers drawn with a seeded generator."""
    ids = sorted(int(r) for r in answers["response_id"])
    if n <= 0 or not ids:
        return set()
    rng = random.Random(hashlib.sha256(seed.encode()).hexdigest())
    return set(ids) if n >= len(ids) else set(rng.sample(ids, n))


# ---------------------------------------------------------------- planning

def plan_judging(store: Store, options: JudgeOptions, registry: dict[str, ModelSpec] | None = None,
                 prompts_dir: Path | None = None, rubrics_dir: Path | None = None) -> JudgePlan:
    """Every request a judge launch will ask, and the rubric's checks, without asking anything."""
    from ..runner.launch import resolve_dataset

    if options.repeat is not None and options.repeat < 1:
        raise UserError("--repeat must be at least 1")
    if options.probes < 0:
        raise UserError("--probes must be 0 or more")
    if options.concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    rubric = load_rubric(options.rubric, rubrics_dir)
    if not rubric.judged:
        raise UserError(f"rubric {rubric.name} has no judge criterion (its checks need no judge: they are computed)")
    spec = judge_spec(options, registry)
    templates = load_judge_templates(prompts_dir)
    dataset = resolve_dataset(store, options.dataset)
    options.dataset = dataset
    if options.launch_id and (_safe(options.launch_id) != options.launch_id or options.launch_id.startswith(".")):
        raise UserError(f"launch id {options.launch_id!r}: use letters, digits, '-', '_' and '.' only")
    launch_id = options.launch_id or default_launch_id(options, spec)
    options.launch_id = launch_id
    profile = judge_profile_name(spec.key, rubric.name)
    version = version_line(spec, templates, rubric)
    from ..store.items import load_items

    items = load_items(store, dataset)
    answers, records = judged_answers(store, dataset, rubric, options.models, options.conditions, items)
    member = JudgeMember(launch_id, spec, judge_dir(store) / launch_id / "judgements.jsonl", templates.hash)
    image_hashes = ({str(i): h for i, h in zip(items["item_id"], items["image_hash"]) if isinstance(h, str) and h}
                    if spec.accepts_images else {})
    images = store_journal.image_files(store, list(image_hashes.values()))
    repetitions = list(range(1, options.repeat + 1)) if options.repeat else [0]
    probed = probe_sample(answers, options.probes, f"{launch_id}|probes|{options.seed}")
    version_key = hashlib.sha256(version.encode()).hexdigest()[:12]
    checks: list[dict] = []
    jobs: list[Job] = []
    for row in answers.itertuples(index=False):
        record = records[row.item_id]
        base = {"profile": profile, "version": version, "dataset": dataset, "item_id": row.item_id,
                "model": row.model_key, "condition": row.condition, "response_id": int(row.response_id),
                "launch_id": launch_id}
        for criterion in rubric.checked:
            expected = rubric.expected(criterion, row.item_id)
            if expected is None:
                continue
            checks.append({**base, "request_key": f"{profile}|{version_key}|{row.response_id}|{criterion.id}|check",
                           "criterion": criterion.id, "method": CHECK_METHOD, "repetition": 0, "probe": MAIN_PROBE,
                           "points": float(run_check(criterion, expected, row.text)),
                           "max_points": float(criterion.points)})
        image_hash = image_hashes.get(row.item_id)
        image = images.get(image_hash) if image_hash else None
        for criterion in rubric.judged:
            asks = [(rep, MAIN_PROBE) for rep in repetitions]
            if int(row.response_id) in probed:
                asks += [(repetitions[0], PADDED_PROBE), (repetitions[0], REORDERED_PROBE)]
            first_order = option_order(criterion, f"{launch_id}|{row.response_id}|{criterion.id}|{repetitions[0]}")
            for rep, probe in asks:
                unit = f"{row.item_id}|{row.model_key}|{row.condition}|{criterion.id}|{probe}"
                if probe == REORDERED_PROBE:
                    order = list(reversed(first_order))
                elif rep == repetitions[0]:
                    order = first_order
                else:
                    order = option_order(criterion, f"{launch_id}|{row.response_id}|{criterion.id}|{rep}")
                shown = pad_answer(row.text, record.get("language")) if probe == PADDED_PROBE else row.text
                user = render_request(templates, record, criterion, shown, order)
                schema = verdict_schema(criterion)
                request = ProviderRequest(
                    system=templates.system, user_text=user, json_schema=schema, temperature=spec.temperature,
                    max_output_tokens=spec.max_output_tokens, seed=spec.seed, image_mime=image[1] if image else None,
                    item={"judge_task": True, "item_id": row.item_id, "record": record, "criterion": criterion.id,
                          "answer": shown, "order": order, "probe": probe, "repetition": rep})
                key = cache_key(purpose="judge", provider=spec.provider, base_url=spec.base_url,
                                model=spec.api_model_id, templates=templates.hash, rubric=rubric.hash,
                                system=request.system, user=user, image=image_hash if image else None,
                                temperature=spec.temperature, max_tokens=spec.max_output_tokens, seed=spec.seed,
                                schema=schema_hash(schema), repetition=rep) if options.use_cache else None
                # the runner keys custom ids and ledgers on item_id, model and condition: here they name
                # the request (unit), the judge and the judging; the judged answer has its own fields
                meta = {**base, "answer_item": row.item_id, "answer_model": row.model_key,
                        "answer_condition": row.condition, "run_id": member.run_id, "item_id": unit,
                        "repetition": rep, "condition": JUDGE_CONDITION, "model": spec.key,
                        "image_sent": image is not None, "criterion": criterion.id, "probe": probe,
                        "shown_order": order_text(order), "max_points": float(criterion.points),
                        "allowed": list(criterion.allowed)}
                jobs.append(Job(request_key=f"{launch_id}/{row.response_id}/{criterion.id}/{probe}/r{rep}",
                                payload={"member": member, "request": request,
                                         "image_path": str(image[0]) if image else None, "cache_key": key,
                                         "prior": [], "option_images": []},
                                meta=meta))
    profile_row = {"profile": profile, "dataset": dataset, "judge": spec.key, "judge_name": spec.display_name,
                   "provider": spec.provider, "api_model_id": spec.api_model_id, "rubric": rubric.name,
                   "rubric_hash": rubric.hash, "prompt_hash": templates.hash, "temperature": spec.temperature,
                   "version": version, "simulated": spec.kind == SIMULATED_KIND, "launch_id": launch_id,
                   "created_by": options.created_by or cli_user()}
    return JudgePlan(launch_id, dataset, options, [member], jobs, sorted(set(answers["item_id"])), profile, version,
                     profile_row, rubric, checks, answers)


# ---------------------------------------------------------------- cost before asking

def estimate_judging(store: Store, plan: JudgePlan) -> pd.DataFrame:
    """Requests, cached and already answered ones, tokens and cost (online, and with --batch)."""
    from ..providers.batch_config import load_batch_limits
    from ..providers.batch_registry import supports_batch

    cache = ResponseCache(store.cache_dir / "responses", enabled=plan.options.use_cache)
    counter = token_counter()
    answered = {k for k, r in Journal(plan.members[0].journal_path).latest().items() if r.get("status") == "ok"}
    spec = plan.members[0].spec
    rows: dict[str, dict] = {}
    system_tokens = counter.count(plan.jobs[0].payload["request"].system) if plan.jobs else 0
    for job in plan.jobs:
        probe = job.meta["probe"]
        est = rows.setdefault(probe, {"judge": spec.key, "probe": probe, "requests": 0, "cached": 0, "answered": 0,
                                      "images": 0, "input_tokens": 0, "output_tokens": 0, "cost_online_usd": 0.0})
        if job.request_key in answered:
            est["answered"] += 1
            continue
        est["requests"] += 1
        est["images"] += int(job.meta["image_sent"])
        if spec.provider == "offline" or cache.get(job.payload["cache_key"]) is not None:
            est["cached"] += int(spec.provider != "offline")
            continue
        tokens_in, tokens_out = estimate_request("", job.payload["request"].user_text, job.meta["image_sent"],
                                                 JUDGE_CONDITION)
        est["input_tokens"] += tokens_in + system_tokens
        est["output_tokens"] += tokens_out
        est["cost_online_usd"] += spec.cost(tokens_in + system_tokens, tokens_out)
    frame = pd.DataFrame(list(rows.values()))
    limits = load_batch_limits()
    factor = limits[spec.provider].price_factor if supports_batch(spec, limits) else None
    frame["cost_batch_usd"] = frame["cost_online_usd"] * factor if factor is not None else float("nan")
    frame.attrs["token_method"] = counter.method
    return frame


# ---------------------------------------------------------------- from journal to store

def judgement_rows(records: list[dict]) -> list[dict]:
    """Judgement rows from journal records (latest per request; a failure keeps its own key)."""
    rows = []
    for key, record in latest_by_key(iter(records)).items():
        base = {c: record.get(c) for c in ("profile", "version", "dataset", "response_id", "criterion", "repetition",
                                           "probe", "shown_order", "max_points", "launch_id", "input_tokens",
                                           "output_tokens", "cost_usd")}
        base.update(item_id=record.get("answer_item"), model=record.get("answer_model"),
                    condition=record.get("answer_condition"), method=JUDGE_METHOD)
        if record.get("status") == "ok":
            verdict = parse_verdict(record.get("raw_text"), tuple(record.get("allowed") or ()))
            rows.append({**base, "request_key": key, "points": verdict.points, "reason": verdict.reason,
                         "raw_text": record.get("raw_text"), "parse_error": verdict.error})
        else:
            rows.append({**base, "request_key": f"{key}!error@{record.get('ts')}", "points": None,
                         "error": record.get("error") or "error"})
    return rows


def store_judgements(store: Store, plan: JudgePlan, rows: list[dict]) -> tuple[int, int]:
    """Add judgements of the plan's profile and rewrite the scores of the answers they touch, in one
    transaction; (judgements added, scores written)."""
    from ..store.judges import (
        add_judgements_con,
        current_item_versions_con,
        main_judgements_con,
        replace_profile_scores_con,
    )

    rubric, profile, version, dataset = plan.rubric, plan.profile, plan.version, plan.dataset
    judge = plan.members[0].spec.key
    with store.transaction() as con:
        added = add_judgements_con(con, rows)
        touched = sorted({int(r["response_id"]) for r in rows})
        if not touched:
            return added, 0
        marks: dict[int, dict[str, list[float]]] = {}
        items: dict[int, str] = {}
        for response_id, criterion, _method, _rep, points, _max in main_judgements_con(con, profile, version, touched):
            if points is not None and not math.isnan(float(points)):
                marks.setdefault(int(response_id), {}).setdefault(str(criterion), []).append(float(points))
        for r in rows:
            items[int(r["response_id"])] = str(r["item_id"])
        versions = current_item_versions_con(con, dataset)
        scores = []
        for response_id in touched:
            points = {c: mean_points(v) for c, v in marks.get(response_id, {}).items()}
            result = item_score(rubric, items[response_id], points)
            if result is not None and items[response_id] in versions:
                scores.append({"response_id": response_id, "item_version": versions[items[response_id]],
                               "scorer": scorer_id(rubric, judge), **result})
        written = replace_profile_scores_con(con, profile, scores)
    return added, written


class JudgeIngester(Ingester):
    """The runner's ingester, writing judgements (and the profile's scores) instead of responses."""

    def __init__(self, store: Store, plan: JudgePlan, interval_s: float = 2.0):
        super().__init__(store, plan.members, interval_s)
        self.plan = plan

    def ingest(self) -> int:
        added = 0
        for member in self.members:
            path = Path(member.journal_path)
            offset = self._sizes.get(member.run_id, 0)
            if not path.exists() or path.stat().st_size == offset:
                continue
            records, new_offset = read_new_records(path, offset)
            try:
                added += store_judgements(self.store, self.plan, judgement_rows(records))[0]
                self._sizes[member.run_id] = new_offset
                self.last_error = None
            except StoreLockedError as exc:
                self.last_error = str(exc)
            except StoreError as exc:
                self.last_error = str(exc)
                self.fatal = exc
                logger.warning("ingesting %s failed: %s", path, exc)
        return added


def register(store: Store, plan: JudgePlan) -> bool:
    """The profile (its version) and the rubric's checks in the store before the first verdict
    arrives; True when the version is new (the profile's old scores were removed)."""
    from ..store.judges import register_profile_con

    with store.transaction() as con:
        changed = register_profile_con(con, plan.profile_row)
    store_judgements(store, plan, plan.checks)
    return changed


# ---------------------------------------------------------------- running a launch

def launch_info(store: Store, plan: JudgePlan, status: str) -> dict:
    return {"launch_id": plan.launch_id, "kind": "judge", "dataset": plan.dataset, "db": str(store.path),
            "pid": os.getpid(), "status": status, "profile": plan.profile, "version": plan.version,
            "options": asdict(plan.options), "total_jobs": len(plan.jobs), "answers": len(plan.answers),
            "journal": str(plan.members[0].journal_path), "process_started_at": time.time()}


def outcome(store: Store, plan: JudgePlan, *, cancelled: bool, n_errors: int, jobs: int,
            ingest_error: str | None = None, journal_error: str | None = None) -> tuple[int, str, str]:
    """(exit code, status, one line) of a finished judge session (the exit codes of ``run``)."""
    resume = resume_command(store, plan.launch_id)
    if journal_error:
        return launchfile.EXIT_SETUP, launchfile.FAILED, f"{journal_error}; the launch stopped. Resume with: {resume}"
    if ingest_error:
        return (launchfile.EXIT_INCOMPLETE, launchfile.WAITING_INGEST,
                f"waiting for ingest: verdicts are journaled but not all stored ({ingest_error}); nothing is lost: "
                f"store them with {resume}")
    if cancelled:
        return launchfile.EXIT_CANCELLED, launchfile.CANCELLED, f"cancelled; resume with: {resume}"
    if n_errors:
        return (launchfile.EXIT_INCOMPLETE, launchfile.FAILED if n_errors >= jobs else launchfile.COMPLETED,
                f"{n_errors} of {jobs} judge request(s) failed; ask them again with: "
                f"{resume_command(store, plan.launch_id, retry_errors=True)}")
    return (launchfile.EXIT_OK, launchfile.COMPLETED,
            f"all {jobs} judge request(s) answered and stored: profile {plan.profile}")


def execute_judging(store: Store, plan: JudgePlan, *, providers: dict | None = None,
                    cancel: threading.Event | None = None, progress: bool = True, ingest_interval_s: float = 2.0,
                    retry: RetryPolicy | None = None, ingest_wait_s: float | None = None,
                    jobs: list[Job] | None = None) -> dict:
    """Ask the plan's requests (or ``jobs``, a part of them) online and store the verdicts."""
    options = plan.options
    spec = plan.members[0].spec
    providers = providers or {spec.key: make_provider(spec, timeout_s=options.timeout_s)}
    wait_s = limit("ingest_wait_s") if ingest_wait_s is None else ingest_wait_s
    todo = plan.jobs if jobs is None else jobs
    register(store, plan)
    previous = read_judge_launch(store, plan.launch_id) or {}
    if previous.get("status") == launchfile.RUNNING and previous.get("pid") not in (None, os.getpid()) \
            and launchfile.process_alive(previous.get("pid")):
        raise UserError(f"judge launch {plan.launch_id} is already running (process {previous['pid']})")
    info = launch_info(store, plan, launchfile.RUNNING)
    info["sessions"] = int(previous.get("sessions", 0)) + 1
    _write_launch(store, plan.launch_id, info)
    journals = JournalSet({m.run_id: Journal(m.journal_path) for m in plan.members})
    caller = LaunchCaller(providers, ResponseCache(store.cache_dir / "responses", enabled=options.use_cache))
    ingester = JudgeIngester(store, plan, ingest_interval_s).start()
    done_before = sum(1 for r in journals.latest().values() if r.get("status") == "ok")
    bar = ProgressBar(len(todo), done_before) if progress else None
    policy = retry or RetryPolicy(max_attempts=options.max_attempts, base_delay_s=options.base_delay_s)
    try:
        result = run_jobs(todo, caller, journals, options.concurrency, options.rpm, policy, bar,
                          retry_errors=options.retry_errors, cancel=cancel, after_journal=caller.after_journal)
    finally:
        journals.close()
        if bar:
            bar.close()
        ingested = ingester.finish(wait_s)
    latest = latest_by_key(read_records(plan.members[0].journal_path))
    keys = {j.request_key for j in plan.jobs}
    n_errors = sum(1 for k, r in latest.items() if k in keys and r.get("status") != "ok")
    unparsed = _unparsed(store, plan)
    cost = sum(float(r.get("cost_usd") or 0.0) for k, r in latest.items() if k in keys and not r.get("cached"))
    code, status, line = outcome(store, plan, cancelled=result.cancelled, n_errors=n_errors, jobs=len(plan.jobs),
                                 ingest_error=None if ingested.complete else ingested.error,
                                 journal_error=result.journal_error)
    info.update(status=status, exit_code=code, outcome=line, finished_at=time.time(), result=asdict(result),
                n_errors=n_errors, unparsed=unparsed, cost_usd=round(cost, 6))
    _write_launch(store, plan.launch_id, info)
    return {"launch_id": plan.launch_id, "profile": plan.profile, "version": plan.version, "result": result,
            "exit_code": code, "status": status, "outcome": line, "n_errors": n_errors, "unparsed": unparsed,
            "cost_usd": round(cost, 6)}


def _unparsed(store: Store, plan: JudgePlan) -> int:
    """Replies of this launch that gave no readable verdict (as stored)."""
    from ..store.judges import count_unparsed

    return count_unparsed(store, plan.profile, plan.version, plan.launch_id)


def print_summary(summary: dict, out=None) -> None:
    out = out or sys.stdout
    result = summary["result"]
    print(f"done in {result.wall_s:.1f}s: {result.ok} verdicts now, {result.skipped} already journaled, "
          f"{result.errors} failed, {result.retries} retries; {summary['unparsed']} replies without a readable "
          f"verdict; {summary['cost_usd']:.4f} USD", file=out)
    print(f"profile {summary['profile']} ({summary['version']})", file=out)

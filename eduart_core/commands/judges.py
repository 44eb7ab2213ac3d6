"""`judge`, `grades-import`, `grades-export`, `grading-round`, `judge-gate`: rubric judges and human grades.

`judge` runs a model judge over a dataset's answers like `run` runs a model over its items
(journal, resume, cache, cost estimate, batch jobs); its scores become the profile
``judge:<judge>/<rubric>``. Grades come in and go out as JSON Lines; a grading round sets how many
independent graders each answer needs; `judge-gate` sets the calibration thresholds of a dataset.
Exit codes as for `run` (0 done, 1 some requests failed, 2 usage or setup error or skipped lines,
130 cancelled).
"""
from __future__ import annotations

import argparse
import math
import signal
import sys
import threading

from ..errors import UserError
from ..vocab import CONDITIONS, HUMAN_MIN_ALPHA, JUDGE_MAX_SEVERITY, JUDGE_MIN_ALPHA

JUDGE_HELP = """The judge marks every judge criterion of the rubric on the latest answer of every examinee
(or of --models) to every item the rubric applies to; the rubric's checks are computed. Scores
go to the profile judge:JUDGE/RUBRIC, versioned by the judge's model id, the prompt hash, the
rubric hash and the temperature. Until the judge passes calibration against blind human grades
(show judge_calibration), every number under the profile carries a warning.

exit codes: 0 every request answered and stored; 1 some requests failed (--resume ID
--retry-errors asks them again) or verdicts wait for ingest; 2 usage or setup error; 130 cancelled."""


def _store(args):
    from ..store import Store

    store = Store(args.db)
    if not store.exists():
        raise UserError(f"no store at {store.path}: run 'python -m eduart_core demo' or an import first")
    return store


def register(sub) -> None:
    from ..cli import add_actor_options, add_db_option

    p = sub.add_parser("judge", help="mark answers with a rubric by a model judge (a scoring profile per judge)",
                       description="Run a model judge over a dataset's answers with a rubric. Running the same "
                                   "command again resumes it.", epilog=JUDGE_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--judge", metavar="KEY", help="the judge: a model key of the registry (see run --list-models)")
    p.add_argument("--rubric", metavar="NAME", help="rubric name (prompts/rubrics/NAME.toml) or a .toml file")
    p.add_argument("--dataset", help="dataset whose answers are judged (default: demo if present)")
    p.add_argument("--models", action="append", default=[], metavar="NAMES",
                   help="examinees whose answers are judged (keys or display names, comma-separated; default all)")
    p.add_argument("--condition", choices=[*CONDITIONS, "both"], default="both",
                   help="answers of this condition (default both)")
    p.add_argument("--repeat", type=int, metavar="K", help="ask every request K times (run-to-run SD)")
    p.add_argument("--probes", type=int, default=None, metavar="N",
                   help="answers asked again padded and with the options reversed (default 20; 0: none)")
    p.add_argument("--temperature", type=float, help="judge temperature (default: the registry's)")
    p.add_argument("--provider", choices=["openai", "openai_compatible", "gemini", "bedrock"],
                   help="an ad-hoc judge outside the registry (with --model-id, and --base-url for compatible servers)")
    p.add_argument("--model-id", help="API model id of the ad-hoc judge")
    p.add_argument("--base-url", help="base URL of an OpenAI-compatible server")
    p.add_argument("--run-id", metavar="ID", help="name of the launch (default: derived from the options)")
    p.add_argument("--resume", metavar="ID", help="resume the judge launch ID")
    p.add_argument("--retry-errors", action="store_true", help="ask again the requests that failed")
    p.add_argument("--dry-run", action="store_true", help="print the requests, tokens and cost; ask nothing")
    p.add_argument("--concurrency", type=int, default=8, help="requests in flight at once (default 8)")
    p.add_argument("--rpm", type=float, help="at most N requests per minute")
    p.add_argument("--timeout", type=float, default=120.0, help="per-request timeout in seconds")
    p.add_argument("--max-attempts", type=int, default=6, help="attempts per request incl. retries")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    p.add_argument("--seed", type=int, default=0, help="seed of the option orders and the probe sample")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    from . import run_batch

    run_batch.add_arguments(p)
    add_actor_options(p)
    add_db_option(p)
    p.set_defaults(func=cmd_judge)

    p = sub.add_parser("grades-import", help="import human grades (JSON Lines; bad lines named and skipped)",
                       description="One grade per line: dataset, item_id, model, condition, grader, criterion, "
                                   "points (+ rubric, role grade|adjudicate, note, graded_at, simulated). "
                                   "Idempotent. Exit code 2 when lines were skipped.")
    p.add_argument("file", help="the .jsonl file")
    add_actor_options(p, by="who imports on a single-machine store (default: the operator of this machine)")
    add_db_option(p)
    p.set_defaults(func=cmd_grades_import)

    p = sub.add_parser("grades-export", help="export the current human grades as JSON Lines")
    p.add_argument("--out", help="file to write (default: standard output)")
    p.add_argument("--dataset", help="only this dataset")
    p.add_argument("--rubric", help="only this rubric")
    add_actor_options(p, by="who exports on a single-machine store (default: the operator of this machine)")
    add_db_option(p)
    p.set_defaults(func=cmd_grades_export)

    p = sub.add_parser("grading-round", help="start a blind grading round, or change its graders per answer",
                       description="A round serves the latest answers the rubric applies to, shuffled, each to K "
                                   "independent graders who never see the model, a judge's score or each other's "
                                   "marks; disagreements go to an adjudicator.")
    p.add_argument("--dataset", required=True)
    p.add_argument("--rubric", required=True)
    p.add_argument("--graders", type=int, required=True, metavar="K", help="independent graders per answer")
    p.add_argument("--set", action="store_true", help="change K of the current round instead of starting a new one")
    p.add_argument("--models", action="append", default=[], metavar="NAMES", help="only these examinees' answers")
    p.add_argument("--seed-gold", type=float, default=0.0, metavar="RATE",
                   help="share of the round's answers (0-1) that are seeded gold: settled answers served again under "
                        "fresh tokens, indistinguishable for graders; their marks check the grader, never the gold")
    p.add_argument("--gold", action="append", default=[], metavar="TOKENS",
                   help="seed from these settled answers only (tokens of earlier rounds; default: every settled answer)")
    add_actor_options(p, by="who sets the round on a single-machine store (default: the operator of this machine)")
    add_db_option(p)
    p.set_defaults(func=cmd_grading_round)

    p = sub.add_parser("judge-gate", help="set (or show) the calibration gate of a dataset")
    p.add_argument("--dataset", required=True)
    p.add_argument("--min-alpha", type=float, help=f"judge alpha at least (default {JUDGE_MIN_ALPHA})")
    p.add_argument("--max-severity", type=float, help=f"|severity| at most, logit (default {JUDGE_MAX_SEVERITY})")
    p.add_argument("--min-human-alpha", type=float, help=f"graders' alpha at least (default {HUMAN_MIN_ALPHA})")
    add_actor_options(p, by="who sets it on a single-machine store (default: the operator of this machine)")
    add_db_option(p)
    p.set_defaults(func=cmd_judge_gate)


def _split(values: list[str]) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def options_from_args(args, store):
    from dataclasses import fields

    from ..judges.launch import DEFAULT_PROBES, IDENTITY_OPTIONS, JudgeOptions, read_judge_launch
    from ..vocab import expand_conditions

    runtime = dict(concurrency=args.concurrency, rpm=args.rpm, retry_errors=args.retry_errors,
                   timeout_s=args.timeout, max_attempts=args.max_attempts, use_cache=not args.no_cache)
    if args.resume:
        saved = read_judge_launch(store, args.resume)
        if not saved:
            raise UserError(f"no judge launch '{args.resume}' to resume")
        known = {f.name for f in fields(JudgeOptions)}
        identity = {k: v for k, v in (saved.get("options") or {}).items() if k in IDENTITY_OPTIONS and k in known}
        return JudgeOptions(**identity, launch_id=args.resume, created_by=saved.get("options", {}).get("created_by"),
                            **runtime)
    if not args.rubric:
        raise UserError("name the rubric: --rubric NAME (prompts/rubrics/NAME.toml)")
    adhoc = None
    if args.provider or args.model_id or args.base_url:
        if not (args.provider and args.model_id):
            raise UserError("an ad-hoc judge needs --provider and --model-id (and --base-url for openai_compatible)")
        adhoc = {"provider": args.provider, "model_id": args.model_id, "base_url": args.base_url}
    conditions = [] if args.condition == "both" else expand_conditions(args.condition)
    return JudgeOptions(judge=args.judge, adhoc=adhoc, rubric=args.rubric, dataset=args.dataset,
                        models=_split(args.models), conditions=conditions, repeat=args.repeat,
                        probes=DEFAULT_PROBES if args.probes is None else args.probes, temperature=args.temperature,
                        seed=args.seed, launch_id=args.run_id, **runtime)


def print_estimate(store, plan) -> None:
    from ..judges.launch import estimate_judging

    table = estimate_judging(store, plan)
    print(f"judge launch {plan.launch_id}: dataset {plan.dataset}, {len(plan.answers)} answers, {len(plan.jobs)} "
          f"requests; profile {plan.profile}")
    print(f"version: {plan.version}")
    print(f"rubric checks computed without a judge: {len(plan.checks)} marks")
    print(f"tokens counted with {table.attrs.get('token_method')}; output at a flat allowance per verdict")
    print(f"{'probe':10} {'requests':>8} {'cached':>7} {'answered':>8} {'input tok':>10} {'output tok':>10} "
          f"{'online USD':>10} {'batch USD':>10}")
    for r in table.itertuples(index=False):
        batch = f"{r.cost_batch_usd:10.4f}" if not math.isnan(r.cost_batch_usd) else f"{'-':>10}"
        print(f"{r.probe:10} {r.requests:8d} {r.cached:7d} {r.answered:8d} {r.input_tokens:10d} {r.output_tokens:10d} "
              f"{r.cost_online_usd:10.4f} {batch}")
    online = float(table["cost_online_usd"].sum())
    print(f"estimated total: {online:.4f} USD online (prices from the model registry: check your provider's)")


def cmd_judge(args) -> int:
    from ..cli import actor
    from ..judges.launch import execute_judging, plan_judging, print_summary
    from ..providers.base import redact
    from ..runner import launchfile
    from ..store import StoreError

    store = _store(args)
    try:
        options = options_from_args(args, store)
        options.created_by = options.created_by or actor(args, store).recorded_name
        plan = plan_judging(store, options)
        if args.dry_run:
            print_estimate(store, plan)
            return 0
        from ..runner.batch.ledger import has_ledger

        if args.batch or has_ledger(store, plan.launch_id):
            from ..judges.batch import run_judge_batch

            return run_judge_batch(args, store, plan)
        cancel = threading.Event()

        def on_term(signum, frame):
            cancel.set()

        previous = {sig: signal.signal(sig, on_term) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            print(f"judge launch {plan.launch_id}: {len(plan.jobs)} requests over {len(plan.answers)} answers, "
                  f"concurrency {options.concurrency}", flush=True)
            summary = execute_judging(store, plan, cancel=cancel, progress=not args.quiet)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    except (UserError, StoreError, KeyboardInterrupt):
        raise
    except Exception as exc:  # one line, keys redacted
        if getattr(args, "debug", False):
            raise
        raise UserError(redact(f"{type(exc).__name__}: {exc}")) from None
    print_summary(summary)
    code = summary["exit_code"]
    if code == launchfile.EXIT_SETUP:
        raise UserError(summary["outcome"])
    print(summary["outcome"], file=sys.stderr if code else sys.stdout, flush=True)
    print("calibrate it: python -m eduart_core show judge_calibration --dataset " + plan.dataset, flush=True)
    return code


def cmd_grades_import(args) -> int:
    from ..cli import actor
    from ..judges.exchange import import_grades

    store = _store(args)
    report = import_grades(store, args.file, recorded_by=actor(args, store))
    for spot, reason in report.skipped:
        print(f"{spot}: skipped: {reason}")
    print(f"{report.lines} line(s): {report.added} grade(s) added, {report.unchanged} unchanged, "
          f"{len(report.skipped)} skipped")
    return 2 if report.skipped else 0


def cmd_grades_export(args) -> int:
    from ..cli import actor
    from ..judges.exchange import export_grades

    store = _store(args)
    text, n = export_grades(store, args.out, args.dataset, args.rubric, viewer=actor(args, store))
    if args.out:
        print(f"wrote {n} grade(s) to {args.out}")
    else:
        sys.stdout.write(text)
    return 0


def cmd_grading_round(args) -> int:
    from ..cli import actor
    from ..judges.grading import round_progress, set_graders, start_round

    store = _store(args)
    who = actor(args, store)
    if args.set:
        set_graders(store, args.dataset, args.rubric, args.graders, who)
    else:
        start_round(store, args.dataset, args.rubric, args.graders, who, models=_split(args.models),
                    seed_gold=args.seed_gold, gold=_split(args.gold))
    p = round_progress(store, args.dataset, args.rubric).iloc[0]
    print(f"{args.dataset} rubric {p['rubric']} round {p['round']}: {p['answers']} answers, {p['graders_per_answer']} "
          f"blind grader(s) each; {p['fully_graded']} fully graded, {p['disputed']} disputed, {p['settled']} settled")
    if not args.set and args.seed_gold > 0:
        from ..store.gold import gold_rounds

        seeding = gold_rounds(store)
        seeding = seeding[(seeding["dataset"] == args.dataset) & (seeding["round"] == p["round"])].iloc[-1]
        print(f"  seeded gold: {seeding['seeded']} of the {p['answers']} answers (rate {seeding['rate']:g}; "
              f"{seeding['pool']} settled answers could be seeded); graders cannot tell them apart")
    return 0


def cmd_judge_gate(args) -> int:
    from ..cli import actor
    from ..store.judges import gate_settings, set_gate_settings

    store = _store(args)
    current = gate_settings(store, args.dataset)
    if any(v is not None for v in (args.min_alpha, args.max_severity, args.min_human_alpha)):
        values = {"min_alpha": args.min_alpha, "max_severity": args.max_severity,
                  "min_human_alpha": args.min_human_alpha}
        values = {k: current[k] if v is None else v for k, v in values.items()}
        if not (0 < values["min_alpha"] <= 1 and 0 < values["min_human_alpha"] <= 1 and values["max_severity"] > 0):
            raise UserError("alphas must be in (0, 1] and the severity bound positive")
        set_gate_settings(store, args.dataset, set_by=actor(args, store).recorded_name, **values)
        current = gate_settings(store, args.dataset)
    who = f" (set by {current['set_by']} at {current['set_at']})" if current["set_by"] else " (defaults)"
    print(f"{args.dataset}: a judge passes where alpha >= {current['min_alpha']:.2f} and the 95% interval of its "
          f"severity lies within ±{current['max_severity']:.2f} logit, once the graders agree with alpha >= "
          f"{current['min_human_alpha']:.2f}{who}")
    return 0

"""`run`: ask models the benchmark items, resumably, concurrently, with cost control.

The command is a thin shell over ``runner.launch``: it turns flags into ``LaunchOptions``, prints
the dry-run estimate or a progress bar, and a summary per run. The Runs page starts this same
command in a background process. Before planning, it stores what earlier sessions left waiting
(``runner.recovery``). Its exit code says how the launch ended (``EXIT_CODES_HELP``).
"""
from __future__ import annotations

import argparse
import math
import signal
import sys
import threading
from dataclasses import fields

from ..errors import UserError
from ..providers.adapters import adhoc_providers
from ..providers.registry import load_registry
from ..providers.secrets import provider_status
from ..runner.launchfile import EXIT_SETUP
from ..store import Store
from ..vocab import BOTH_CONDITIONS, CONDITIONS, DEFAULT_CONDITION, expand_conditions
from . import run_batch

EXIT_CODES_HELP = """exit codes:
  0    every request answered and stored
  1    some requests failed (ask them again with --resume ID --retry-errors), or the answers
       are journaled but the store was busy at the end ("waiting for ingest": the next run,
       resume or dashboard start stores them; the message gives the exact resume command)
  2    usage or setup error: bad flags, no store, store locked at start, no space left on device
  130  cancelled (Ctrl-C, or Cancel on the Runs page); resume with --resume ID

limits (environment variables): EDUART_RETRY_AFTER_CAP_S (default 300) caps any wait a server's
Retry-After can impose, jitter included; a longer request is recorded as failed and the run goes
on. EDUART_INGEST_WAIT_S (default 120) is how long the final ingest waits for a busy store."""


def register(sub) -> None:
    from ..cli import add_actor_options, add_db_option

    p = sub.add_parser("run", help="run models on the items (resumable, concurrent, cached)",
                       description="Ask one or more models the items of a dataset under the default and/or "
                                   "motivation condition. Running the same command again resumes it.",
                       epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", default=[], metavar="KEY", help="model key from the registry (repeatable)")
    p.add_argument("--condition", choices=[*CONDITIONS, BOTH_CONDITIONS], default=DEFAULT_CONDITION)
    p.add_argument("--items", metavar="FILTER", help="e.g. type=completion_open,language=it,image=with, or task=, dimension=, "
                        "dialogue=, tag.NAME= (| for several values)")
    p.add_argument("--limit", type=int, help="ask at most N items (after filtering, in item order)")
    p.add_argument("--concurrency", type=int, default=8,
                   help="requests in flight at once per provider, where models.toml sets none (default 8)")
    p.add_argument("--rpm", type=float, help="at most N requests per minute per provider, where models.toml sets "
                                             "none (default: no limit)")
    add_db_option(p)
    add_actor_options(p)
    p.add_argument("--dataset", help="dataset to ask (default: demo if present)")
    p.add_argument("--run-id", metavar="ID", help="name of the launch (default: derived from the options)")
    p.add_argument("--resume", nargs="?", const=True, default=None, metavar="ID",
                   help="resume the launch named by --run-id, or ID")
    p.add_argument("--retry-errors", action="store_true", help="ask again the items whose request failed")
    p.add_argument("--dry-run", action="store_true", help="print the estimated tokens and cost, ask nothing")
    p.add_argument("--repeat", type=int, metavar="K", help="reproducibility check: ask each item K times")
    p.add_argument("--until-separated", metavar="A,B",
                   help="ask the items in a random order stratified by format, in rounds, and stop once models A and "
                        "B (registry keys, both in the launch) are told apart by an anytime-valid 95%% confidence "
                        "sequence of their mean paired score difference, or every item is asked; the launch file "
                        "records why and when; resume without it to ask the rest")
    p.add_argument("--adaptive", action="store_true",
                   help="adaptive run on a frozen item bank (`bank` command): each model answers one item at a time, "
                        "the most informative at its current ability (EAP), until its SE reaches --target-se or "
                        "--max-items; its ability is stored on the bank's scale with its trajectory")
    p.add_argument("--bank", type=int, metavar="V", help="with --adaptive: the bank version to ask from")
    p.add_argument("--target-se", type=float, metavar="S", help="with --adaptive: stop at this SE in logits "
                                                               "(default 0.30)")
    p.add_argument("--max-items", type=int, metavar="N", help="with --adaptive: ask at most N items per model")
    p.add_argument("--content-balance", choices=("none", "formats"), default=None,
                   help="with --adaptive: formats = keep each format near its share of the bank (default none)")
    p.add_argument("--sample", type=int, metavar="N", help="stratified sample of N items (by format, language, image)")
    p.add_argument("--provider", choices=adhoc_providers(),
                   help="ad-hoc model outside the registry (with --model-id, and --base-url for compatible servers)")
    p.add_argument("--base-url", help="base URL of an OpenAI-compatible server, e.g. http://localhost:11434/v1")
    p.add_argument("--model-id", help="API model id of the ad-hoc model")
    p.add_argument("--display-name", help="the ad-hoc model's name on pages and in reports (default: model id "
                                          "and provider)")
    images = p.add_mutually_exclusive_group()
    images.add_argument("--text-only", action="store_true", help="send image items as text only (recorded per response)")
    images.add_argument("--refuse-images", action="store_true", help="skip image items")
    p.add_argument("--timeout", type=float, default=120.0, help="per-request timeout in seconds (default 120)")
    p.add_argument("--max-attempts", type=int, default=6, help="attempts per request incl. retries (default 6)")
    p.add_argument("--backoff", type=float, default=1.0, metavar="S",
                   help="first retry delay in seconds, doubled per attempt, with jitter (default 1)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    p.add_argument("--list-models", action="store_true", help="list registry models and credential status")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    run_batch.add_arguments(p)
    p.set_defaults(func=run_command)


def list_models() -> int:
    status = provider_status()
    for key, spec in sorted(load_registry().items()):
        st = status.get(spec.provider, {})
        creds = "ready" if st.get("configured") else f"needs {st.get('needs')}"
        print(f"{key:24} {spec.display_name:32} {spec.provider:18} {creds}")
    return 0


def options_from_args(args, store: Store):
    from ..runner.launch import IDENTITY_OPTIONS, LaunchOptions, read_launch

    conditions = expand_conditions(args.condition)
    adhoc = None
    if args.provider or args.model_id or args.base_url or args.display_name:
        if not (args.provider and args.model_id):
            raise UserError("an ad-hoc model needs --provider and --model-id (and --base-url for openai_compatible)")
        adhoc = {"provider": args.provider, "model_id": args.model_id, "base_url": args.base_url}
        if args.display_name:
            adhoc["display_name"] = args.display_name
    runtime = dict(concurrency=args.concurrency, rpm=args.rpm, retry_errors=args.retry_errors,
                   timeout_s=args.timeout, max_attempts=args.max_attempts, use_cache=not args.no_cache,
                   base_delay_s=args.backoff)
    if getattr(args, "until_separated", None):
        from ..runner.separation import parse_pair

        if getattr(args, "batch", False):
            raise UserError("--until-separated asks in rounds and decides between them: it cannot run with --batch")
        runtime["until_separated"] = parse_pair(args.until_separated)
    if args.resume is not None:
        launch_id = args.resume if isinstance(args.resume, str) else args.run_id
        if not launch_id:
            raise UserError("--resume needs a launch id: --resume ID, or --resume with --run-id ID")
        saved = read_launch(store, launch_id)
        if not saved:
            raise UserError(f"no launch '{launch_id}' in {store.runs_dir} to resume")
        known = {f.name for f in fields(LaunchOptions)}
        identity = {k: v for k, v in (saved.get("options") or {}).items() if k in IDENTITY_OPTIONS and k in known}
        return LaunchOptions(**identity, launch_id=launch_id, **runtime)
    adaptive = None
    if getattr(args, "adaptive", False):
        from ..runner.adaptive import parse_adaptive

        adaptive = parse_adaptive(args.bank, args.target_se, args.max_items, args.content_balance)
    elif any(getattr(args, k, None) is not None for k in ("bank", "target_se", "max_items", "content_balance")):
        raise UserError("--bank, --target-se, --max-items and --content-balance belong to --adaptive")
    options = LaunchOptions(models=list(args.model), adhoc=adhoc, conditions=conditions, items=args.items,
                            limit=args.limit, sample=args.sample, repeat=args.repeat, dataset=args.dataset,
                            launch_id=args.run_id, text_only=args.text_only, refuse_images=args.refuse_images,
                            adaptive=adaptive, **runtime)
    if args.run_id:
        saved = read_launch(store, args.run_id)
        if saved:
            was = {k: saved.get("options", {}).get(k) for k in IDENTITY_OPTIONS if k != "dataset"}
            now = {k: getattr(options, k) for k in IDENTITY_OPTIONS if k != "dataset"}
            if was != now:
                raise UserError(f"launch '{args.run_id}' exists with other settings; use --resume {args.run_id} "
                                "to continue it, or another --run-id")
    return options


def print_estimate(store: Store, plan) -> None:
    """Online and batch cost side by side (batch = online x the provider's batch price factor)."""
    from ..runner.batch.estimate import side_by_side

    table, method = side_by_side(store, plan)
    print(f"launch {plan.launch_id}: dataset {plan.dataset}, {len(plan.item_ids)} items, {len(plan.jobs)} requests")
    print(f"tokens counted with {method}; images at a flat allowance; output tokens estimated per condition")
    print(f"{'model':24} {'condition':10} {'requests':>8} {'cached':>7} {'images':>7} {'input tok':>10} {'output tok':>10} "
          f"{'online USD':>10} {'batch USD':>10} {'answered':>8}")
    for e in table.itertuples(index=False):
        batch = f"{e.cost_batch_usd:10.4f}" if e.cost_batch_usd is not None and not math.isnan(e.cost_batch_usd) \
            else f"{'-':>10}"
        print(f"{e.model:24} {e.condition:10} {e.requests:8d} {e.cached:7d} {e.images:7d} {e.input_tokens:10d} "
              f"{e.output_tokens:10d} {e.cost_online_usd:10.4f} {batch} {e.answered:8d}")
    for row in table[table["batch"] != "yes"].drop_duplicates("model").itertuples(index=False):
        print(f"{row.model}: batch {row.batch}")
    for run_id, n in plan.refused.items():
        if n:
            print(f"{run_id}: {n} image items refused (--refuse-images)")
    online = float(table["cost_online_usd"].sum())
    batch = float(sum(b if b is not None and not math.isnan(b) else o for b, o in zip(table["cost_batch_usd"], table["cost_online_usd"])))
    if plan.options.until_separated:
        print(f"--until-separated {','.join(plan.options.until_separated)}: this is the most it costs (every item); "
              "it stops earlier once the two models are told apart")
    print(f"estimated total: {online:.4f} USD online, {batch:.4f} USD with --batch (prices and batch discounts from "
          "the model registry: check your provider's price list)")


def print_adaptive_estimate(store: Store, plan) -> None:
    """What an adaptive launch is expected to ask: items per model from simulated examinees of the bank's
    ability distribution (a simulation, said so), and the cost as that share of the full run's."""
    import numpy as np

    from ..runner.adaptive import simulated_length
    from ..runner.batch.estimate import side_by_side

    setup = plan.adaptive
    lengths = simulated_length(setup)
    n_bank = len(setup.engine.bank)
    mean, lo, hi = float(lengths.mean()), *np.percentile(lengths, [5, 95])
    table, _ = side_by_side(store, plan)
    full = float(table["cost_online_usd"].sum())
    print(f"adaptive on bank version {setup.version} ({n_bank} usable items; {setup.engine.rules}): expected "
          f"{mean:.1f} items per model (simulated, 200 examinees from the bank's ability distribution; 5-95%: "
          f"{lo:.0f}-{hi:.0f}) of {n_bank}, {100 * mean / n_bank:.0f}% of a full run; expected cost about "
          f"{full * mean / n_bank:.4f} USD online against {full:.4f} USD for every bank item")


def run_command(args) -> int:
    """``run``: any unexpected failure becomes one line with key-looking strings redacted."""
    from ..providers.base import redact
    from ..store import StoreError

    try:
        return _run(args)
    except (UserError, StoreError, KeyboardInterrupt):
        raise
    except Exception as exc:
        if getattr(args, "debug", False):
            raise
        raise UserError(redact(f"{type(exc).__name__}: {exc}")) from None


def _recover(store: Store) -> None:
    """Store what earlier sessions left waiting for ingest, and close runs whose process died."""
    from ..runner.recovery import recover

    for item in recover(store):
        print(f"launch {item.launch_id}: {item.added} pending answer(s) stored from its journals; now {item.status}",
              flush=True)


def audit_argv(argv: list[str]) -> list[str]:
    """The command line as the audit log keeps it: a PostgreSQL URL (``--db URL`` or ``--db=URL``)
    without its password, and anything shaped like an API key redacted.

    Why: the audit log is read by every admin and travels in exports; a password typed on the
    command line stays with the process that used it."""
    from ..providers.base import redact
    from ..store import StoreError
    from ..store.core import is_database_url
    from ..store.postgres import DatabaseURL

    kept = []
    for arg in argv:
        flag, sep, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        if is_database_url(value):
            try:
                value = DatabaseURL(value).redacted()
            except StoreError:
                value = "[malformed PostgreSQL URL]"
        kept.append(redact(flag + sep + value))
    return kept


def _record_launch(store: Store, launch_id: str, resume: bool, who) -> None:
    """The audit row of a launch from the command line: ``who`` (``cli.actor``: the machine's operator,
    and whom it acts for with --for).

    A launch from the Runs page was recorded (with the signed-in person) before this process
    started. A store held by another process costs the row, never the run: one line says so."""
    from ..store import StoreError
    from ..store.team import add_event
    from ..team import launched_by

    if launched_by() is not None:
        return
    try:
        add_event(store, "resume" if resume else "launch", launch_id, {"argv": audit_argv(sys.argv[1:])}, who.columns())
    except StoreError as exc:
        print(f"warning: launch {launch_id} not recorded in the audit log: {exc}", file=sys.stderr)


def _run(args) -> int:
    from ..cli import actor
    from ..runner.launch import execute, plan_launch

    if args.list_models:
        return list_models()
    store = Store(args.db)
    if args.status:
        if not args.batch:
            raise UserError("--status shows batch jobs: use it with --batch")
        return run_batch.print_status(store, args.resume if isinstance(args.resume, str) else args.run_id)
    if not store.exists():
        raise UserError(f"no store at {store.path}: run 'python -m eduart_core demo' or an import first")
    if not args.dry_run:  # a dry run changes nothing, not even pending bookkeeping
        _recover(store)
    options = options_from_args(args, store)
    plan = plan_launch(store, options)
    if args.dry_run:
        print_estimate(store, plan)
        if plan.adaptive is not None:
            print_adaptive_estimate(store, plan)
        return 0
    _record_launch(store, plan.launch_id, resume=bool(args.resume), who=actor(args, store))
    from ..runner.batch.ledger import has_ledger

    if options.until_separated and has_ledger(store, plan.launch_id):
        raise UserError(f"launch {plan.launch_id} has batch jobs: --until-separated asks online in rounds; "
                        "resume it without the option")
    if args.batch or has_ledger(store, plan.launch_id):
        if not args.batch:
            print(f"launch {plan.launch_id} has batch jobs: continuing in batch mode", flush=True)
        return run_batch.run_batch(args, store, plan)
    cancel = threading.Event()

    def on_term(signum, frame):  # cancel from the Runs page (SIGTERM) or Ctrl-C
        cancel.set()

    previous = {sig: signal.signal(sig, on_term) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        from ..runner.lanes import describe_limits, lane_limits

        print(f"launch {plan.launch_id}: {len(plan.members)} run(s), {len(plan.jobs)} requests, all providers at "
              f"once; {describe_limits(lane_limits(plan.members, options.concurrency, options.rpm))}", flush=True)
        summary = execute(store, plan, cancel=cancel, progress=not args.quiet)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    result = summary["result"]
    print(f"done in {result.wall_s:.1f}s: {result.ok} answered now, {result.skipped} already answered, "
          f"{result.errors} failed, {result.retries} retries" + (" (cancelled)" if result.cancelled else ""))
    for run_id, s in summary["runs"].items():
        refused = f", {s['refused']} image items refused" if s["refused"] else ""
        print(f"  {run_id}: {s['status']}, {s['answered']}/{s['jobs']} answered, {s['n_errors']} errors, "
              f"{s['input_tokens']}+{s['output_tokens']} tokens, {s['cost_usd']:.4f} USD{refused}")
        if "adaptive" in s:
            from ..runner.launch import adaptive_line

            print(f"    {adaptive_line(s['adaptive'])}; `show adaptive_trajectory --option run={run_id}` shows each step")
    if summary.get("until_separated"):
        print(f"until separated: {summary['until_separated']['sentence']}")
    code = summary["exit_code"]
    if code == EXIT_SETUP:
        raise UserError(summary["outcome"])
    print(summary["outcome"], file=sys.stderr if code else sys.stdout, flush=True)
    return code

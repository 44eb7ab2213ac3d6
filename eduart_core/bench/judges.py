"""`bench judges`: the coverage of judge-corrected intervals, the calibration of 1,000 answers x 3
graders x 3 judges, and judge requests through the runner against a loopback stub.

Gold flag (simulated, ``simulate.gold_checks``): in 100 rounds of 50 seeded gold answers, the share in
which a planted lenient grader (+0.5 logit) is flagged (target >= 90%) and an accurate one (target <=
5%), on three rubric designs (5 criteria of 0-3, 0-2 and 0-1 points): the target is the first's.

Coverage (simulated): on resamples of 1,000 answers with 100 human-graded at random and a judge
that marks +0.5 logit leniently, the share of resamples whose 95% interval covers the true human
mean, for the corrected (prediction-powered) estimate (target 92-98%) and the judge's mean alone
(target under 50%).

Targets (scoring open answers): the calibration (human and judge agreement with bootstrap
intervals, one many-facet Rasch model per judge, run-to-run SD, position and verbosity probes)
under 5 s; judge requests at >= 90% of the ideal rate (``concurrency / latency``) through the real
path (plan from a temporary store, the OpenAI SDK over HTTP to a stub in its own process, the
journal, live ingestion of the verdicts and profile scores into DuckDB; cache off).

The calibration runs on synthetic frames shaped like the store's (two judge criteria of one point,
a sample of repeats and probes); each time is the median of --repeat runs, CPU seconds beside wall
seconds because the machine is shared.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..vocab import OPEN_TEXT_TYPE

VERDICT = json.dumps({"id": "bench", "object": "chat.completion", "created": 0, "model": "bench",
                      "choices": [{"index": 0, "finish_reason": "stop",
                                   "message": {"role": "assistant", "content": '{"points": 1, "reason": "ok"}'}}],
                      "usage": {"prompt_tokens": 300, "completion_tokens": 12, "total_tokens": 312}}).encode()
BENCH_RUBRIC = """name = "bench-v1"
title = "Bench rubric"
[attach]
formats = ["multiple_choice_radio"]
[[criteria]]
id = "quality"
label = "Quality"
points = 1
judge = "Is the answer right?"
"""


def synthetic_calibration_inputs(n_answers: int = 1000, n_graders: int = 3, n_judges: int = 3, seed: int = 0,
                                 repeat_share: float = 0.2, probe_share: float = 0.1) -> tuple:
    """(grades, judgements, answers, profiles) of a synthetic grading study at the given size."""
    rng = np.random.default_rng(seed)
    criteria = ["evidence", "context"]
    ids = [f"i{k:04d}" for k in range(n_answers)]
    truth = rng.random((n_answers, len(criteria))) < 0.55
    grades, judgements = [], []
    for g in range(n_graders):
        slip = rng.random(truth.shape) < 0.03
        marks = np.where(slip, ~truth, truth).astype(float)
        for a, item in enumerate(ids):
            for c, crit in enumerate(criteria):
                grades.append((len(grades), item, "m", "default", crit, f"grader {g}", "grade", marks[a, c]))
    for j in range(n_judges):
        slip = rng.random(truth.shape) < (0.03, 0.15, 0.25)[j % 3]
        lenient = (rng.random(truth.shape) < 0.3) if j % 3 == 1 else np.zeros(truth.shape, bool)
        for a, item in enumerate(ids):
            for c, crit in enumerate(criteria):
                base = bool(truth[a, c] or lenient[a, c])
                reps = 2 if rng.random() < repeat_share else 1
                for rep in range(1, reps + 1):
                    mark = float(base != (slip[a, c] if rep == 1 else rng.random() < 0.05))
                    judgements.append((f"judge:j{j}/bench-v1", item, "m", "default", crit, "judge", rep, "main", mark))
                if rng.random() < probe_share:
                    for probe in ("padded", "reordered"):
                        judgements.append((f"judge:j{j}/bench-v1", item, "m", "default", crit, "judge", 1, probe,
                                           float(base if rng.random() > 0.1 else not base)))
    g = pd.DataFrame(grades, columns=["grade_id", "item_id", "model", "condition", "criterion", "grader", "role",
                                      "points"])
    g = g.assign(graded_at=pd.Timestamp("2026-12-01"), max_points=1.0, rubric="bench-v1", simulated=True)
    jd = pd.DataFrame(judgements, columns=["profile", "item_id", "model", "condition", "criterion", "method",
                                           "repetition", "probe", "points"])
    jd = jd.assign(max_points=1.0, error=None)
    answers = pd.DataFrame({"item_id": ids, "model": "m", "condition": "default", "type": OPEN_TEXT_TYPE,
                            "language": "en"})
    profiles = pd.DataFrame({"profile": sorted(jd["profile"].unique()), "judge_name": "bench", "version": "bench",
                             "simulated": True})
    return g, jd, answers, profiles


def simulate_graded(rng: np.random.Generator, n_answers: int = 1000, n_graded: int = 100,
                    judge_shift: float = 0.5, agreement: float = 0.85) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One simulated graded dataset (simulated, labelled so by its callers): (judge marks on all
    answers, human marks on all answers, indices of the randomly drawn graded slice).

    Each answer has a latent quality theta ~ N(0.3, 1.2^2); the human mark is 1 with probability
    logistic(theta), the judge's with logistic(theta + judge_shift) (a lenient judge for a positive
    shift), the two coupled (the judge reads the same answer: it shares the human's uniform draw
    with probability ``agreement``). The true human mean is `true_human_mean`.
    """
    theta = rng.normal(0.3, 1.2, n_answers)
    u_human = rng.random(n_answers)
    u_judge = np.where(rng.random(n_answers) < agreement, u_human, rng.random(n_answers))
    human = (u_human < 1 / (1 + np.exp(-theta))).astype(float)
    judge = (u_judge < 1 / (1 + np.exp(-(theta + judge_shift)))).astype(float)
    return judge, human, rng.choice(n_answers, size=n_graded, replace=False)


def true_human_mean() -> float:
    """E[logistic(theta)] for theta ~ N(0.3, 1.2^2) (Gauss-Hermite, 80 nodes): the estimand."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    return float(np.sum(weights / (1 + np.exp(-(0.3 + 1.2 * nodes)))) / np.sqrt(2 * np.pi))


def ppi_coverage(resamples: int = 200, n_answers: int = 1000, n_graded: int = 100, judge_shift: float = 0.5,
                 seed: int = 0) -> dict:
    """Share of resamples whose 95% interval covers the true human mean: corrected (PPI) and judge only."""
    from ..analysis.intervals import Z95
    from ..analysis.ppi import ppi_mean

    rng = np.random.default_rng(seed)
    truth = true_human_mean()
    corrected = judge_only = 0
    widths = []
    for _ in range(resamples):
        judge, human, graded = simulate_graded(rng, n_answers, n_graded, judge_shift)
        est = ppi_mean(judge, judge[graded], human[graded])
        half = Z95 * np.sqrt(est.corrected_var)
        corrected += abs(est.corrected - truth) <= half
        judge_only += abs(est.judge_only - truth) <= Z95 * np.sqrt(est.judge_only_var)
        widths.append(2 * half)
    return {"resamples": resamples, "truth": truth, "corrected": corrected / resamples,
            "judge_only": judge_only / resamples, "mean_width": float(np.mean(widths))}


def bench_coverage(args) -> dict:
    walls, result = [], {}
    for _ in range(args.repeat):
        start = time.perf_counter()
        result = ppi_coverage(args.resamples, seed=args.seed)
        walls.append(time.perf_counter() - start)
    print(f"judge-corrected scores (simulated): {result['resamples']} resamples of 1,000 answers, 100 human-graded, "
          f"judge +0.5 logit: the corrected 95% interval covers the true human mean ({result['truth']:.3f}) in "
          f"{100 * result['corrected']:.1f}% (target 92-98%: {'meets' if 0.92 <= result['corrected'] <= 0.98 else 'misses'}), "
          f"the judge-only interval in {100 * result['judge_only']:.1f}% (target < 50%: "
          f"{'meets' if result['judge_only'] < 0.5 else 'misses'}); mean corrected width {result['mean_width']:.3f}; "
          f"{statistics.median(walls):.2f} s wall, median of {args.repeat}")
    return result


#: Rubric designs the gold flag is measured on: (criteria, points per criterion); the first is the target's.
GOLD_DESIGNS = ((5, 3), (5, 2), (5, 1))


def bench_gold_flags(args) -> list:
    """How often the gold flag catches a planted lenient grader (+0.5 logit) within 50 seeded gold
    answers, and how often it flags an accurate one (``simulate.gold_checks``), per rubric design."""
    from ..simulate.gold_checks import flag_rates

    out = []
    for criteria, points in GOLD_DESIGNS:
        walls, rates = [], None
        for _ in range(args.repeat if (criteria, points) == GOLD_DESIGNS[0] else 1):
            start = time.perf_counter()
            rates = flag_rates(rounds=args.gold_rounds, answers=50, criteria=criteria, points=points, seed=args.seed)
            walls.append(time.perf_counter() - start)
        target = rates.lenient >= 0.9 and rates.accurate <= 0.05
        print(f"gold flag (simulated): {rates.rounds} rounds of 50 seeded gold answers x {criteria} criteria of 0-{points} "
              f"points: the lenient grader (+0.5 logit) flagged in {100 * rates.lenient:.0f}%, an accurate grader in "
              f"{100 * rates.accurate:.0f}% (target >= 90% and <= 5%: {'meets' if target else 'misses'}); "
              f"{statistics.median(walls):.2f} s wall" + (f", median of {len(walls)}" if len(walls) > 1 else ""))
        out.append(rates)
    return out


def bench_calibration(args) -> float:
    from ..analysis.judges import calibration

    inputs = synthetic_calibration_inputs(args.answers, 3, 3, seed=args.seed)
    walls, cpus, frame = [], [], None
    for _ in range(args.repeat):
        start, cpu = time.perf_counter(), time.process_time()
        frame = calibration(*inputs)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    wall = statistics.median(walls)
    cpu = statistics.median(cpus)
    print(f"calibration, {args.answers} answers x 3 graders x 3 judges x 2 criteria: {wall:.2f} s wall "
          f"({cpu:.2f} s CPU, all threads: about the wall time on an idle machine), median of {args.repeat}; target < 5 s: "
          f"{'meets' if wall < 5 else 'misses'} (wall), {'meets' if cpu < 5 else 'misses'} (CPU)")
    print("  " + "; ".join(f"{r.judge}: alpha {r.alpha:.2f}, severity {r.severity:+.2f}, "
                           f"{'passes' if r.passes else 'fails'}" for r in frame.itertuples(index=False)))
    return wall


def _stub(latency_s: float) -> None:
    """The stub process: the runner bench's asyncio server, answering a judge's verdict."""
    from . import runner as runner_bench

    runner_bench.ANSWER = VERDICT
    runner_bench.serve(latency_s)


def _bench_store(folder: Path, n: int):
    from ..scoring.item_writes import upsert_items
    from ..scoring.responses import add_responses
    from ..store import Store
    from ..store.runs import create_run, ensure_dataset, ensure_model
    from .runner import _bench_items

    store = Store(folder / "bench.duckdb")
    ensure_dataset(store, "bench", "bench", "benchmark")
    upsert_items(store, _bench_items(n), "bench", "bench")
    ensure_model(store, "bench-examinee", "Bench examinee", "Other", "offline", "bench")
    create_run(store, "bench-answers", "bench", "bench-examinee", "default", "import", status="completed")
    add_responses(store, "bench-answers", [{"item_id": f"b{i:05d}", "raw_text": '{"Answers": [{"id": "A"}]}',
                                            "request_key": f"b{i:05d}"} for i in range(n)])
    return store


def bench_runner(args) -> float:
    from ..judges.launch import JudgeOptions, execute_judging, plan_judging
    from ..providers.registry import make_provider
    from .runner import Timed, one_run

    latency_s = args.latency_ms / 1000.0
    stub = subprocess.Popen([sys.executable, "-m", "eduart_core.bench.judges", "--serve", str(latency_s)],
                            stdout=subprocess.PIPE, text=True)
    ratios, answering = [], []
    try:
        base = f"http://127.0.0.1:{int(stub.stdout.readline())}"
        url = f"{base}/v1"
        with tempfile.TemporaryDirectory(prefix="eduart-bench-judges-") as tmp:
            folder = Path(tmp)
            store = _bench_store(folder, args.requests)
            rubric = folder / "bench-v1.toml"
            rubric.write_text(BENCH_RUBRIC, encoding="utf-8")
            for rep in range(args.repeat):
                options = JudgeOptions(adhoc={"provider": "openai_compatible", "model_id": "bench-judge",
                                              "base_url": url}, rubric=str(rubric), dataset="bench", probes=0,
                                       models=["bench-examinee"],
                                       launch_id=f"bench{rep}", concurrency=args.concurrency, use_cache=False,
                                       timeout_s=30, created_by="bench")
                plan = plan_judging(store, options)
                spec = plan.members[0].spec
                timed = Timed(make_provider(spec, timeout_s=30))
                summary = execute_judging(store, plan, providers={spec.key: timed}, progress=False)
                result = summary["result"]
                ratio = (result.ok / result.wall_s) / (args.concurrency / latency_s)
                ratios.append(ratio)
                gaps = timed.gaps_ms()
                print(f"  run {rep + 1}: {result.ok} verdicts in {result.wall_s:.2f} s, {result.ok / result.wall_s:.1f} "
                      f"req/s, {100 * ratio:.1f}% of ideal, runner overhead "
                      f"{statistics.mean(gaps) if gaps else 0.0:.2f} ms/request, {result.errors} errors")
                # the same requests as an answering run (`run`), on the same stub, for comparison
                reference = one_run(store, base, args.requests, args.concurrency, latency_s, f"answering{rep}")
                answering.append(reference["ratio"])
                print(f"         answering run on the same stub: {100 * reference['ratio']:.1f}% of ideal")
    finally:
        stub.terminate()
        stub.wait(10)
    med = statistics.median(ratios)
    ref = statistics.median(answering)
    print(f"judge requests through the runner, {args.requests} requests, latency {args.latency_ms:g} ms, concurrency "
          f"{args.concurrency}: {100 * med:.1f}% of ideal (median of {args.repeat}; an answering run on the same stub: "
          f"{100 * ref:.1f}%); target >= 90%: {'meets' if med >= 0.9 else 'misses'}")
    return med


def main(args) -> int:
    print(f"bench judges: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.coverage_only:
        bench_coverage(args)
        return 0
    if args.gold_only:
        bench_gold_flags(args)
        return 0
    bench_coverage(args)
    bench_gold_flags(args)
    if not args.runner_only:
        bench_calibration(args)
    if not args.calibration_only:
        bench_runner(args)
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser("judges", help="judge calibration at 1,000 answers, and judge requests through the "
                                                 "runner", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", type=int, default=1000, help="answers in the calibration (default 1000)")
    parser.add_argument("--requests", type=int, default=400, help="judge requests per runner run (default 400)")
    parser.add_argument("--latency-ms", type=float, default=200.0, help="stub latency per request (default 200)")
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight (default 16)")
    parser.add_argument("--repeat", type=int, default=3, help="runs to take the median of (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--calibration-only", action="store_true")
    parser.add_argument("--runner-only", action="store_true")
    parser.add_argument("--coverage-only", action="store_true",
                        help="only the coverage of judge-corrected intervals (simulated resamples)")
    parser.add_argument("--resamples", type=int, default=200,
                        help="simulated resamples in the coverage of corrected intervals (default 200)")
    parser.add_argument("--gold-only", action="store_true",
                        help="only the gold flag's rates (a planted lenient grader and an accurate one, simulated)")
    parser.add_argument("--gold-rounds", type=int, default=100,
                        help="simulated rounds per rate of the gold flag (default 100)")
    parser.set_defaults(func=main)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        _stub(float(sys.argv[2]))

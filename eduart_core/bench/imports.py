"""`bench import`: CPU time, wall time and peak memory of `import-eduart` and `import-responses`.

`import-eduart` reads a synthetic folder in the published layout (formats doc section 2) at 1x
(871 placeholder items in the published mix, 12 simulated models x 2 conditions: 20,904 answer
files) and 10x (8,710 items, 209,040 answer files); `import-responses` reads a JSONL file of
1,000,000 lines (by default) against the 1x items. Each import runs as its own process (the real
CLI, on a new store), so its CPU time and peak resident memory are the kernel's numbers for that
process alone. The items and answers are generated here (placeholder text, simulated answers with
the simulator's share of malformed replies), never exam content.

``--against DIR`` also runs the same imports with the code of another checkout (for example the
commit before a change), alternating with this one run by run, so both see the same machine load.
Targets: import-eduart at 10x at least 3x faster (CPU) than before the streaming importers;
import-responses of 1,000,000 lines under 1 GB peak memory, with progress.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ITEMS_1X = 871
MODELS = 12
#: The file a finished synthetic folder carries (its facts as JSON).
LAYOUT_DONE = "layout.json"


def write_layout(root: Path, scale: int, seed: int = 0) -> dict:
    """A folder in the published layout: dataset/metadata, dataset/imgs, answers/<model>/<condition>."""
    from ..simulate.models import make_models
    from ..simulate.placeholders import PLACEHOLDER_IMAGE, placeholder_image, synthesise_items
    from ..simulate.respond import plan_items, simulate_run
    from ..vocab import CONDITIONS

    records = synthesise_items(ITEMS_1X * scale, seed)
    meta = root / "dataset" / "metadata"
    meta.mkdir(parents=True)
    image = root / "dataset" / PLACEHOLDER_IMAGE
    image.parent.mkdir(parents=True, exist_ok=True)
    image.write_bytes(placeholder_image())
    for record in records:
        body = {k: v for k, v in record.items() if k != "item_id"}
        (meta / f"{record['item_id']}.json").write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    plans = plan_items(records, seed)
    files = 0
    for model in make_models(MODELS, seed):
        model_dir = f"sim_{model.key}"
        for condition in CONDITIONS:
            folder = root / "answers" / model_dir / condition
            folder.mkdir(parents=True)
            for response, plan in zip(simulate_run(model, plans, condition, seed), plans):
                data = {"question_id": response.item_id, "question_type": plan.type, "model_name": model_dir,
                        "prompt_condition": condition, "llm_answer": response.intended,
                        "raw_response": response.raw_text, "input_tokens": response.input_tokens,
                        "output_tokens": response.output_tokens, "processing_time": response.latency_s,
                        "timestamp": "2026-01-01T00:00:00"}
                if response.motivation:
                    data["motivation"] = response.motivation
                (folder / f"{response.item_id}.json").write_text(json.dumps(data, ensure_ascii=False),
                                                                 encoding="utf-8")
                files += 1
    return {"items": len(records), "answer_files": files,
            "bytes": sum(p.stat().st_size for p in root.rglob("*") if p.is_file())}


def write_responses(path: Path, lines: int, item_ids: list[str], dataset: str = "eduart", seed: int = 0) -> int:
    """A JSONL file of ``lines`` distinct responses over ``item_ids`` (models and variants vary)."""
    import random

    rng = random.Random(f"responses|{seed}")
    letters = "ABCD"
    with path.open("w", encoding="utf-8") as out:
        for n in range(lines):
            item = item_ids[n % len(item_ids)]
            block = n // len(item_ids)
            condition = "motivation" if block % 2 else "default"
            model = f"outside-{(block // 2) % 60:02d}"
            answer = {"Answers": [{"id": rng.choice(letters)}]}
            if condition == "motivation":
                answer["motivation"] = f"Synthetic reasoning {n}."
            line = {"dataset": dataset, "item_id": item, "model": model, "condition": condition,
                    "raw_response": json.dumps(answer), "input_tokens": 120 + n % 50, "output_tokens": 12,
                    "run_id": f"outside:{model}:{condition}:{block // 120}"}
            out.write(json.dumps(line) + "\n")
    return path.stat().st_size


def _child(argv: list[str], code: Path, env_extra: dict | None = None) -> dict:
    """Run ``python -m eduart_core ARGV`` with the code of ``code``; wall, CPU and peak memory."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(code)
    env.update(env_extra or {})
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "eduart_core", *argv], cwd=str(code), env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024,
            "rc": proc.returncode, "stderr": stderr}


def _fmt(runs: list[dict]) -> str:
    med = {k: statistics.median(r[k] for r in runs) for k in ("cpu_s", "wall_s", "peak_mb")}
    return f"CPU {med['cpu_s']:7.1f} s  wall {med['wall_s']:7.1f} s  peak {med['peak_mb']:6.0f} MB"


def _codes(args) -> list[tuple[str, Path]]:
    codes = [("this checkout", PROJECT_ROOT)]
    if args.against:
        codes.append((f"against {args.against}", Path(args.against).resolve()))
    return codes


def bench_eduart(args, work: Path) -> dict[tuple[int, str], list[dict]]:
    results: dict[tuple[int, str], list[dict]] = {}
    for scale in args.scales:
        root = _layout(args, work, scale)
        for rep in range(args.repeat):
            for name, code in _codes(args):
                db = work / f"eduart-{scale}-{rep}-{len(results)}" / "eduart.duckdb"
                run = _child(["import-eduart", str(root), "--dataset", "eduart", "--db", str(db)], code)
                if run["rc"] != 0:
                    print(f"  {name}: exit {run['rc']}: {run['stderr'].strip().splitlines()[-1:]}")
                results.setdefault((scale, name), []).append(run)
                print(f"  run {rep + 1} {name:32} CPU {run['cpu_s']:7.1f} s  wall {run['wall_s']:7.1f} s  "
                      f"peak {run['peak_mb']:6.0f} MB", flush=True)
                shutil.rmtree(db.parent, ignore_errors=True)
        if scale != min(args.scales) and not args.layouts:
            shutil.rmtree(root, ignore_errors=True)
    return results


def _layout(args, work: Path, scale: int) -> Path:
    """The synthetic folder at ``scale``: kept in ``--layouts DIR`` between runs (written once), else
    written in the work folder."""
    root = (Path(args.layouts) if args.layouts else work) / f"layout-{scale}x-seed{args.seed}"
    done = root / LAYOUT_DONE  # written last: a folder without it was cut short and is written again
    if not done.is_file():
        shutil.rmtree(root, ignore_errors=True)
        t0 = time.perf_counter()
        facts = write_layout(root, scale, args.seed)
        done.write_text(json.dumps(facts), encoding="utf-8")
        print(f"  (layout {scale}x written in {time.perf_counter() - t0:.0f} s)", flush=True)
    facts = json.loads(done.read_text(encoding="utf-8"))
    print(f"import-eduart {scale}x: {facts['items']} items, {facts['answer_files']} answer files, "
          f"{facts['bytes'] / 1e6:.0f} MB", flush=True)
    return root


def bench_responses(args, work: Path) -> dict[str, list[dict]]:
    from ..simulate.placeholders import synthesise_items

    scale = min(args.scales) if args.scales else 1
    base = _layout(args, work, scale)
    items_db = work / "items" / "eduart.duckdb"
    run = _child(["import-eduart", str(base), "--dataset", "eduart", "--db", str(items_db)], PROJECT_ROOT)
    if run["rc"] not in (0, 2):
        raise SystemExit(f"could not prepare the items: {run['stderr'][-500:]}")
    ids = [r["item_id"] for r in synthesise_items(ITEMS_1X * scale, args.seed)]
    path = work / "responses.jsonl"
    size = write_responses(path, args.responses, ids)
    limit_mb = max(50, int(size / 1024 / 1024) + 1)
    print(f"import-responses: {args.responses:,} lines, {size / 1e6:.0f} MB (EDUART_MAX_FILE_MB={limit_mb})",
          flush=True)
    results: dict[str, list[dict]] = {}
    for rep in range(args.responses_repeat):
        for name, code in _codes(args):
            db = work / f"responses-{rep}-{len(results)}" / "eduart.duckdb"
            db.parent.mkdir(parents=True)
            shutil.copy(items_db, db)
            run = _child(["import-responses", str(path), "--db", str(db)], code,
                         {"EDUART_MAX_FILE_MB": str(limit_mb)})
            progress = sum(1 for line in run["stderr"].splitlines() if "lines read" in line)
            if run["rc"] != 0:
                print(f"  {name}: exit {run['rc']}: {run['stderr'].strip().splitlines()[-1:]}")
            results.setdefault(name, []).append(run)
            print(f"  run {rep + 1} {name:32} CPU {run['cpu_s']:7.1f} s  wall {run['wall_s']:7.1f} s  "
                  f"peak {run['peak_mb']:6.0f} MB  ({progress} progress lines)", flush=True)
            shutil.rmtree(db.parent, ignore_errors=True)
    return results


def main(args) -> int:
    if args.inspect:  # import-inspect only (bench.inspect_logs)
        from .inspect_logs import bench_inspect

        load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
        print(f"import bench (Inspect logs): {args.repeat} run(s), medians; load average at start {' '.join(load)}")
        with tempfile.TemporaryDirectory(prefix="eduart-bench-inspect-", dir=args.work) as tmp:
            code = bench_inspect(args, Path(tmp), _child, PROJECT_ROOT)
        load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
        print(f"load average at the end {' '.join(load)}")
        return code
    args.scales = sorted({int(s) for s in str(args.scales).split(",") if s.strip()})
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    print(f"import bench: {args.repeat} run(s) per scale, medians; load average at start {' '.join(load)}")
    with tempfile.TemporaryDirectory(prefix="eduart-bench-import-", dir=args.work) as tmp:
        work = Path(tmp)
        eduart = bench_eduart(args, work) if args.scales else {}
        responses = bench_responses(args, work) if args.responses else {}
    print("medians:")
    for (scale, name), runs in eduart.items():
        print(f"  import-eduart {scale:2d}x  {name:32} {_fmt(runs)}")
    for name, runs in responses.items():
        print(f"  import-responses {args.responses:,} lines  {name:20} {_fmt(runs)}")
    if args.against and eduart:
        top = max(args.scales)
        mine = statistics.median(r["cpu_s"] for r in eduart[(top, "this checkout")])
        other = statistics.median(r["cpu_s"] for r in eduart[(top, f"against {args.against}")])
        verdict = ("meets" if other >= 3 * mine else "misses") if top >= 10 else "set at 10x"
        print(f"import-eduart {top}x: {other / mine:.1f}x less CPU than {args.against}; target (>= 3x at 10x): "
              f"{verdict}")
    if responses:
        peak = max(r["peak_mb"] for r in responses["this checkout"])
        print(f"import-responses peak memory {peak:.0f} MB; target (< 1024 MB): {'meets' if peak < 1024 else 'misses'}")
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    print(f"load average at the end {' '.join(load)}")
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser("import", help="CPU, wall time and peak memory of import-eduart and import-responses",
                                  description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", default="1,10", help="published-layout sizes, in multiples of 871 items (default 1,10)")
    parser.add_argument("--repeat", type=int, default=3, help="import-eduart runs per scale (default 3)")
    parser.add_argument("--responses", type=int, default=1_000_000,
                        help="lines of the import-responses file (default 1,000,000; 0 skips it)")
    parser.add_argument("--responses-repeat", type=int, default=1, help="import-responses runs (default 1)")
    parser.add_argument("--against", metavar="DIR", help="also run the imports with the code of another checkout")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", metavar="DIR", default=None, help="folder for the generated files (default: temp)")
    parser.add_argument("--layouts", metavar="DIR", default=None,
                        help="keep the synthetic folders here and reuse them next time (writing 10x takes minutes)")
    parser.add_argument("--inspect", type=int, nargs="?", const=100_000, default=0, metavar="N",
                        help="instead: import-inspect of one Inspect .eval log of N samples x epochs (default "
                             "100,000; needs inspect-ai)")
    parser.add_argument("--inspect-epochs", type=int, default=2, help="epochs of the --inspect log (default 2)")
    parser.set_defaults(func=main)

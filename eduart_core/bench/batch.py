"""`bench batch`: preparing and reconciling a full EduArt sweep in batch mode.

A temporary store gets 871 made-up items, half of them with their own image of about 200 KB (random
pixels, JPEG); the launch is the 12 models of the shipped registry (3 OpenAI, 3 Gemini, 6 Bedrock)
x 2 conditions = 20,904 requests. Each repetition runs in a fresh process (so its peak memory is its
own) and measures:

- **plan**: items -> the launch's 20,904 requests (prompts rendered, cache keys), as ``run`` does;
- **prepare**: custom ids, the ledger, encoding every request in its provider's JSONL format,
  sizing by bytes and count, and writing the input files (images as base64);
- **reconcile**: the same launch's results (one result file per job in its provider's format, in
  shuffled order, generated beforehand and not timed) parsed, joined on the custom id, written to
  the run journals and the ledger; no network (downloading is the provider's part);
- **ingest** (reported, no target): the 20,904 journal answers parsed, scored under both profiles
  and inserted into the store.

Targets: prepare under 30 s and 1 GB of memory; reconcile under 10 s. Medians of the
repetitions are printed with the peak resident memory of each phase's process.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..vocab import CONDITIONS, MCQ_TYPE

MODELS = ["gpt-5.5", "gpt-5.4-mini", "gpt-5.4-nano", "gemini-3.1-pro", "gemini-3.5-flash", "gemini-3.1-flash-lite",
          "claude-opus-4.6", "claude-sonnet-4.6", "claude-haiku-4.5", "mistral-large-3", "pixtral-large",
          "qwen3-vl-235b"]


def _image(rng: random.Random) -> bytes:
    """About 200 KB of JPEG: random pixels compress as badly as a detailed photograph."""
    from PIL import Image

    side = 400
    buffer = io.BytesIO()
    Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3)).save(buffer, format="JPEG", quality=95)
    return buffer.getvalue()


def build_store(folder: Path, n_items: int, seed: int = 17) -> Path:
    """A store with ``n_items`` made-up MCQ items, every second one with its own ~200 KB image."""
    from ..scoring.item_writes import upsert_items
    from ..store import Store

    rng = random.Random(seed)
    images = folder / "src" / "imgs"
    images.mkdir(parents=True, exist_ok=True)
    records = []
    for i in range(n_items):
        has_image = i % 2 == 0
        if has_image:
            (images / f"{i:04d}.jpg").write_bytes(_image(rng))
        stem = " ".join(rng.choice(["fresco", "altar", "nave", "portal", "capital", "vault", "apse", "mosaic",
                                    "tempera", "panel", "column", "frieze"]) for _ in range(40))
        records.append({"item_id": f"{i + 1:04d}", "type": MCQ_TYPE, "language": "en",
                        "question_title": f"Exercise {i + 1:04d}", "instructions": "Choose the correct answer.",
                        "question_text": f"Question {i + 1} about the work: {stem}?",
                        "choices": [{"id": c, "text": f"option {c.lower()} {stem[:60]}"} for c in "ABCD"],
                        "answers": [{"id": "A", "description": f"option a {stem[:60]}"}],
                        "has_image": has_image, "image": f"imgs/{i:04d}.jpg" if has_image else None,
                        "source": "bench/made-up"})
    store = Store(folder / "bench.duckdb")
    upsert_items(store, records, "bench", "bench", images_root=folder / "src")
    return store.path


def _backends(plan) -> dict:
    """Real backends (for encoding only: nothing is sent) built with dummy credentials."""
    from ..providers.batch_bedrock import BedrockBatch
    from ..providers.batch_config import load_batch_limits
    from ..providers.batch_gemini import GeminiBatch
    from ..providers.batch_openai import OpenAIBatch

    limits = load_batch_limits()
    backends = {}
    for member in plan.members:
        spec = member.spec
        lim = limits[spec.provider]
        if spec.provider == "openai":
            backends[spec.key] = OpenAIBatch("openai", spec.api_model_id, lim, api_key="bench",
                                             base_url="http://127.0.0.1:9/v1")
        elif spec.provider == "gemini":
            backends[spec.key] = GeminiBatch(spec.api_model_id, lim, api_key="bench", base_url="http://127.0.0.1:9")
        elif spec.provider == "bedrock":
            backends[spec.key] = BedrockBatch(spec.api_model_id, lim, role_arn="arn:aws:iam::1:role/bench",
                                              s3_uri="s3://bench/eduart", credentials={
                                                  "region_name": "us-east-1", "aws_access_key_id": "bench",
                                                  "aws_secret_access_key": "bench"})
    return backends, limits


def _plan(db: Path, launch_id: str):
    from ..runner.launch import LaunchOptions, plan_launch
    from ..store import Store

    store = Store(db)
    options = LaunchOptions(models=list(MODELS), conditions=list(CONDITIONS), dataset="bench",
                            launch_id=launch_id, use_cache=False)
    return store, plan_launch(store, options)


def _engine(store, plan, backends, limits):
    from ..runner.batch.engine import BatchEngine, BatchSettings
    from ..runner.journal import Journal, JournalSet

    engine = BatchEngine(store, plan, BatchSettings(keep_files=True), backends=backends, limits=limits,
                         out=io.StringIO())
    engine.classify()
    engine.journals = JournalSet({m.run_id: Journal(m.journal_path) for m in plan.members})
    return engine


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def phase_prepare(db: Path, launch_id: str) -> dict:
    t0 = time.perf_counter()
    store, plan = _plan(db, launch_id)
    t1 = time.perf_counter()
    backends, limits = _backends(plan)
    engine = _engine(store, plan, backends, limits)
    t2 = time.perf_counter()
    engine.load_requests()
    keys = engine.prepare_ready()
    t3 = time.perf_counter()
    jobs = [engine.ledger.jobs[k] for k in keys]
    files = [engine.files / f"{j['tag']}.jsonl" for j in jobs]
    exact = all(f.stat().st_size == j["input_bytes"] for f, j in zip(files, jobs))
    engine.journals.close()
    engine.ledger.close()
    return {"requests": len(plan.jobs), "jobs": len(jobs), "bytes": sum(f.stat().st_size for f in files),
            "plan_s": t1 - t0, "prepare_s": t3 - t2, "setup_s": t2 - t1, "peak_mb": _peak_mb(),
            "largest_file_mb": max(f.stat().st_size for f in files) / 1e6, "sizes_exact": exact,
            "within_limits": all(j["input_bytes"] <= limits[j["provider"]].max_bytes
                                 and j["n_requests"] <= limits[j["provider"]].max_requests for j in jobs)}


def _fake_results(engine, folder: Path, seed: int) -> None:
    """One result file per prepared job, in its provider's format, shuffled (not timed)."""
    rng = random.Random(seed)
    answer = json.dumps({"Answers": [{"id": "A"}]})
    for n, (key, job) in enumerate(sorted(engine.ledger.jobs.items())):
        job_id = f"bench-{n:03d}"
        engine.ledger.put_job(key, job_id=job_id, state="in_progress")
        ids = list(job["custom_ids"])
        rng.shuffle(ids)
        lines = []
        for cid in ids:
            if job["provider"] == "openai":
                lines.append({"id": "r", "custom_id": cid, "error": None, "response": {"status_code": 200, "body": {
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {"content": answer}}],
                    "usage": {"prompt_tokens": 900, "completion_tokens": 12}}}})
            elif job["provider"] == "gemini":
                lines.append({"key": cid, "response": {"candidates": [{"content": {"parts": [{"text": answer}]},
                                                                        "finishReason": "STOP"}],
                                                       "usageMetadata": {"promptTokenCount": 900,
                                                                         "candidatesTokenCount": 12}}})
            else:
                lines.append({"recordId": cid[:11], "modelInput": {}, "modelOutput": {
                    "output": {"message": {"content": [{"text": answer}]}}, "stopReason": "end_turn",
                    "usage": {"inputTokens": 900, "outputTokens": 12}}})
        with open(folder / f"{job_id}.out", "w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(json.dumps(line) + "\n")


class LocalResults:
    """A backend whose results come from a local file in the provider's own format (no network)."""

    def __init__(self, inner, folder: Path):
        self.inner, self.folder, self.provider = inner, folder, inner.provider

    def encode(self, *args):
        return self.inner.encode(*args)

    def results(self, job_id, status, custom_ids):
        from ..providers import batch_bedrock, batch_gemini, batch_openai

        by_record = {batch_bedrock.record_id(c): c for c in custom_ids}
        with open(self.folder / f"{job_id}.out", "rb") as handle:
            for line in handle:
                record = json.loads(line)
                if self.provider == "openai":
                    yield batch_openai.parse_result(record)
                elif self.provider == "gemini":
                    yield batch_gemini.parse_result(record)
                else:
                    yield batch_bedrock.parse_result(record, by_record)


def phase_reconcile(db: Path, launch_id: str, results_dir: Path) -> dict:
    from ..providers.batch_base import JobStatus
    from ..runner.ingestion import ingest_journal

    store, plan = _plan(db, launch_id)
    backends, limits = _backends(plan)
    engine = _engine(store, plan, backends, limits)
    engine.load_requests()
    _fake_results(engine, results_dir, seed=len(launch_id))
    engine.backends = {k: LocalResults(b, results_dir) for k, b in backends.items()}
    t0 = time.perf_counter()
    for key in sorted(engine.ledger.jobs):
        engine.join(key, JobStatus(state="completed", provider_state="completed"))
    engine.journals.close()
    t1 = time.perf_counter()
    answered = sum(1 for r in engine.ledger.requests.values() if r["state"] == "answered")
    engine.ledger.close()
    from ..store.runs import create_run, ensure_model

    for member in plan.members:
        spec = member.spec
        ensure_model(store, spec.key, spec.display_name, spec.family, spec.provider, spec.api_model_id, kind=spec.kind)
        create_run(store, member.run_id, plan.dataset, spec.key, member.condition, "live", launch_id=launch_id,
                   prompt_hash=member.template_hash, exist_ok=True)
    t2 = time.perf_counter()
    stored = sum(ingest_journal(store, m.run_id, m.journal_path) for m in plan.members)
    t3 = time.perf_counter()
    return {"answered": answered, "reconcile_s": t1 - t0, "ingest_s": t3 - t2, "stored": stored,
            "peak_mb": _peak_mb()}


def _child(phase: str, db: Path, launch_id: str, results_dir: Path | None) -> dict:
    argv = [sys.executable, "-m", "eduart_core.bench.batch", "--phase", phase, str(db), launch_id,
            str(results_dir or "")]
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=3600, env=env, cwd=root)
    if done.returncode != 0:
        raise RuntimeError(f"bench phase {phase} failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(args) -> int:
    with tempfile.TemporaryDirectory(prefix="eduart-bench-batch-", dir=args.tmp) as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        db = build_store(folder, args.items)
        print(f"batch bench: {args.items} items (every second one with a ~200 KB image), {len(MODELS)} models x 2 "
              f"conditions; store built in {time.perf_counter() - t0:.1f}s; {args.repeat} runs, each phase in a "
              "fresh process (medians)", flush=True)
        prep, rec = [], []
        for rep in range(args.repeat):
            launch = f"bench{rep}"
            prep.append(_child("prepare", db, launch, None))
            results = folder / f"results{rep}"
            results.mkdir()
            rec.append(_child("reconcile", db, launch, results))
            shutil.rmtree(folder / "bench_runs" / "_batches" / launch / "files", ignore_errors=True)
            shutil.rmtree(results, ignore_errors=True)
            print(f"  run {rep + 1}: plan {prep[-1]['plan_s']:.1f}s + clients {prep[-1]['setup_s']:.1f}s + "
                  f"prepare {prep[-1]['prepare_s']:.1f}s "
                  f"(peak {prep[-1]['peak_mb']:.0f} MB); reconcile {rec[-1]['reconcile_s']:.2f}s, "
                  f"ingest {rec[-1]['ingest_s']:.1f}s (peak {rec[-1]['peak_mb']:.0f} MB)", flush=True)
        med = {k: statistics.median(r[k] for r in prep) for k in ("plan_s", "setup_s", "prepare_s", "peak_mb")}
        total = statistics.median(r["plan_s"] + r["setup_s"] + r["prepare_s"] for r in prep)
        mrec = {k: statistics.median(r[k] for r in rec) for k in ("reconcile_s", "ingest_s", "peak_mb")}
        first = prep[0]
        print(f"prepare: {first['requests']} requests -> {first['jobs']} input files, {first['bytes'] / 1e9:.2f} GB "
              f"(largest file {first['largest_file_mb']:.0f} MB; sizes as planned: "
              f"{'yes' if all(r['sizes_exact'] for r in prep) else 'NO'}; within the provider limits: "
              f"{'yes' if all(r['within_limits'] for r in prep) else 'NO'})")
        print(f"  plan {med['plan_s']:.1f}s + clients {med['setup_s']:.1f}s + prepare {med['prepare_s']:.1f}s: "
              f"total {total:.1f}s, peak memory {med['peak_mb']:.0f} MB (max {max(r['peak_mb'] for r in prep):.0f} MB)")
        print(f"reconcile: {rec[0]['answered']} results joined in {mrec['reconcile_s']:.2f}s, peak memory "
              f"{mrec['peak_mb']:.0f} MB; store ingestion (parse, score, insert) {mrec['ingest_s']:.1f}s")
        ok = total < 30 and max(r["peak_mb"] for r in prep) < 1024 and mrec["reconcile_s"] < 10
        print(f"target (prepare < 30 s and < 1 GB, reconcile < 10 s): {'meets' if ok else 'misses'}")
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser("batch", help="prepare and reconcile a full sweep in batch mode",
                                  description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=871, help="items (default 871: the EduArt size)")
    parser.add_argument("--repeat", type=int, default=3, help="runs to take the median of (default 3)")
    parser.add_argument("--tmp", help="folder for the temporary store and files (default: the system's)")
    parser.set_defaults(func=main)


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--phase":
        phase, db, launch, results = sys.argv[2], Path(sys.argv[3]), sys.argv[4], sys.argv[5]
        out = phase_prepare(db, launch) if phase == "prepare" else phase_reconcile(db, launch, Path(results))
        print(json.dumps(out))

"""`bench variants`: wall time and peak memory of making every rotation and image variant of a large dataset.

A synthetic dataset of ``--items`` four-option items (default 5,000), each with an image (``--images``
distinct generated JPEGs of 800 x 600, shared by items as exam exercises share a plate), is built
once; each run copies it and makes, in one process of its own, the kinds ``rotate`` (four variants
per item), ``no_image``, ``grayscale``, ``crop``, ``downscale`` and ``mirror``. Printed: per run the
seconds of each kind, the total and the process's peak resident memory; then the medians.
Target: the whole under 60 s on the project's machine, with memory bounded (images are decoded
one at a time and items written in chunks: see `eduart_core.variants.CHUNK_ITEMS`).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..vocab import MCQ_TYPE

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DATASET = "bench-variants"
KINDS = ("rotate", "no_image", "grayscale", "crop", "downscale", "mirror")

_WORKER = """
import json, resource, sys, time
from eduart_core.store import Store
from eduart_core.variants import make_variants
store = Store(sys.argv[1])
out = {}
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
for kind in sys.argv[3].split(","):
    start, cpu_start = time.perf_counter(), cpu()
    report = make_variants(store, sys.argv[2], kind)
    out[kind] = {"seconds": time.perf_counter() - start, "cpu": cpu() - cpu_start, "made": len(report.made),
                 "refused": len(report.refused)}
out["cpu_s"] = cpu()
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def _image(k: int) -> bytes:
    from PIL import Image, ImageDraw

    rng = random.Random(k)
    img = Image.new("RGB", (800, 600), tuple(rng.randrange(256) for _ in range(3)))
    draw = ImageDraw.Draw(img)
    for _ in range(12):
        x, y = rng.randrange(700), rng.randrange(500)
        draw.rectangle([x, y, x + rng.randrange(20, 200), y + rng.randrange(20, 200)],
                       fill=tuple(rng.randrange(256) for _ in range(3)))
    buffer = io.BytesIO()
    img.save(buffer, format="JPEG", quality=85)
    return buffer.getvalue()


def build_base(root: Path, items: int, images: int) -> Path:
    """The synthetic store (items with images) the runs copy."""
    from ..scoring.item_writes import upsert_items
    from ..store import Store
    from ..store.runs import ensure_dataset

    pictures = root / "pictures"
    pictures.mkdir(parents=True)
    for k in range(images):
        (pictures / f"plate{k:04d}.jpg").write_bytes(_image(k))
    records = []
    for i in range(items):
        key = "ABCD"[i % 4]
        records.append({"item_id": f"b{i:05d}", "type": MCQ_TYPE, "question_text": f"Question {i}?",
                        "choices": [{"id": c, "text": f"option {c} of {i}"} for c in "ABCD"],
                        "answers": [{"id": key, "description": f"option {key} of {i}"}], "language": "en",
                        "has_image": True, "image": f"plate{i % images:04d}.jpg"})
    store = Store(root / "base" / "bench.duckdb")
    ensure_dataset(store, DATASET, "bench variants (synthetic)", "benchmark", simulated=True)
    upsert_items(store, records, DATASET, "bench", images_root=pictures)
    return Path(store.path)


def _copy(base: Path, target_dir: Path) -> Path:
    shutil.copytree(base.parent, target_dir)
    return target_dir / base.name


def one_run(base: Path, scratch: Path) -> dict:
    db = _copy(base, scratch)
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    env.pop("EDUART_IMAGES", None)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _WORKER, str(db), DATASET, ",".join(KINDS)], env=env,
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"bench variants: the run failed: {done.stderr.strip().splitlines()[-1:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = wall
    shutil.rmtree(scratch, ignore_errors=True)
    return result


def cmd(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="eduart-bench-variants-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        base = build_base(root, args.items, args.images)
        print(f"setup: {args.items} items with {args.images} distinct 800x600 JPEG images in "
              f"{time.perf_counter() - started:.1f} s (not measured)")
        print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
        runs = []
        for k in range(args.runs):
            result = one_run(base, root / f"run{k}")
            runs.append(result)
            kinds = ", ".join(f"{kind} {result[kind]['seconds']:.1f} s / {result[kind]['cpu']:.1f} s CPU "
                              f"({result[kind]['made']} made)" for kind in KINDS)
            print(f"run {k + 1}: {result['wall_s']:.1f} s in all (process start included), {result['cpu_s']:.1f} s CPU, "
                  f"peak {result['peak_mb']:.0f} MB; {kinds}; load {os.getloadavg()[0]:.2f}")
        wall = statistics.median(r["wall_s"] for r in runs)
        cpu = statistics.median(r["cpu_s"] for r in runs)
        peak = statistics.median(r["peak_mb"] for r in runs)
        print(f"median of {len(runs)} runs: {wall:.1f} s wall, {cpu:.1f} s CPU, peak {peak:.0f} MB "
              f"(target: under 60 s for all rotation and image variants of {args.items} items)")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("variants", help="make every rotation and image variant of a 5,000-item dataset: time, memory")
    p.add_argument("--items", type=int, default=5000, help="items of the synthetic dataset (default 5000)")
    p.add_argument("--images", type=int, default=500, help="distinct images the items share (default 500)")
    p.add_argument("--runs", type=int, default=3, help="runs to take the median of (default 3)")
    p.set_defaults(func=cmd)

"""`bench capture`: wall time of capturing the local exercise site (7 pages, 14 questions) with Chromium.

Each run serves the site on 127.0.0.1, captures every page into a fresh folder with no pause between
pages (the `--delay` a real platform gets is left out: it is waiting, not work), then runs the same
command again, which must skip every page. Printed: per run the seconds of the capture (browser start
included), per question, and of the resuming run; then the medians and the load average.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def one_run(url_file: Path, out: Path) -> dict[str, float]:
    from ..capture.config import load_config
    from ..capture.run import capture_pages

    config = load_config()
    start = time.perf_counter()
    first = capture_pages(url_file, out, config, delay_s=0, say=lambda _: None)
    capture_s = time.perf_counter() - start
    start = time.perf_counter()
    again = capture_pages(url_file, out, config, delay_s=0, say=lambda _: None)
    resume_s = time.perf_counter() - start
    if first.failures or again.captured or first.questions == 0:
        raise SystemExit(f"bench capture: the run did not capture the site cleanly ({first.failures[:1]})")
    return {"capture_s": capture_s, "questions": first.questions, "pages": first.captured, "resume_s": resume_s}


def cmd(args: argparse.Namespace) -> int:
    from ..capture.site import exercise_urls, serve_site

    print(f"load average: {_load()}")
    runs = []
    with tempfile.TemporaryDirectory(prefix="eduart-bench-capture-") as tmp, serve_site() as url:
        url_file = Path(tmp) / "pages.txt"
        url_file.write_text("\n".join(exercise_urls(url)) + "\n", encoding="utf-8")
        for k in range(args.runs):
            result = one_run(url_file, Path(tmp) / f"run{k}")
            runs.append(result)
            print(f"run {k + 1}: {result['pages']:.0f} pages, {result['questions']:.0f} questions in "
                  f"{result['capture_s']:.1f} s ({result['capture_s'] / result['questions']:.2f} s per question); "
                  f"resuming run {result['resume_s']:.2f} s; load {_load()}")
    capture = statistics.median(r["capture_s"] for r in runs)
    per_question = statistics.median(r["capture_s"] / r["questions"] for r in runs)
    resume = statistics.median(r["resume_s"] for r in runs)
    print(f"median of {len(runs)} runs: capture {capture:.1f} s ({per_question:.2f} s per question), "
          f"resuming run {resume:.2f} s")
    print(f"load average after: {_load()}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("capture", help="capture the local exercise site with Chromium: time per page and question")
    p.add_argument("--runs", type=int, default=3, help="runs to take the median of (default 3)")
    p.set_defaults(func=cmd)

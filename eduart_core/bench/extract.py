"""`bench extract`: reading an exam paper PDF, the part of `extract` before the models are asked.

Target: a 40-page paper (three questions and one embedded 800x600 artwork photograph per page) is
rendered, its text layer and images read, and everything stored in a fresh store in under 20 s,
median of the runs. Memory: the growth of the process's peak resident memory while reading is
reported beside a 10-page paper's, so a reader sees whether it grows with the length (it should
not: pages are read and stored one at a time). The paper is made here with fpdf2 (synthetic text and
noise images, labelled so).
"""
from __future__ import annotations

import argparse
import io
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 20.0


def make_paper(path: Path, pages: int, seed: int = 0) -> Path:
    """A synthetic paper: per page three four-option questions and one noisy 800x600 JPEG."""
    import numpy as np
    from fpdf import FPDF
    from PIL import Image

    rng = np.random.default_rng(seed)
    pdf = FPDF(format="A4")
    pdf.set_font("helvetica", size=11)
    for page in range(pages):
        pdf.add_page()
        pixels = rng.integers(0, 255, size=(600, 800, 3), dtype=np.uint8)
        jpeg = io.BytesIO()
        Image.fromarray(pixels).save(jpeg, "JPEG", quality=80)
        pdf.image(io.BytesIO(jpeg.getvalue()), x=pdf.l_margin, y=20, w=90)
        pdf.set_y(92)
        for q in range(3):
            number = page * 3 + q + 1
            pdf.multi_cell(0, 7, f"{number}. Which of the following best describes the work shown in figure "
                                 f"{page + 1} and its place in the history of art (synthetic question)?",
                           new_x="LMARGIN", new_y="NEXT")
            for letter in "ABCD":
                pdf.multi_cell(0, 7, f"   ({letter}) a synthetic option {letter} of question {number}",
                               new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
    pdf.output(str(path))
    return path


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def read_once(paper: Path, workdir: Path) -> tuple[float, int, int]:
    """Seconds to read and store the paper in a fresh store; (seconds, pages, images)."""
    from ..extraction.paper_pipeline import PaperSummary, read_papers
    from ..store import Store

    store = Store(workdir / f"bench-{time.perf_counter_ns()}.duckdb")
    with store.connect():
        pass  # the schema is made before the clock starts
    summary = PaperSummary()
    start = time.perf_counter()
    pages = read_papers(store, [paper], summary, lambda _: None)
    return time.perf_counter() - start, len(pages), sum(len(p.candidates) for p in pages)


def main(args: argparse.Namespace) -> int:
    from ..errors import UserError

    if args.pages < 1 or args.runs < 1:
        raise UserError("bench extract needs --pages >= 1 and --runs >= 1")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="eduart-bench-extract-") as tmp:
        work = Path(tmp)
        small = make_paper(work / "paper-10.pdf", 10)
        paper = make_paper(work / f"paper-{args.pages}.pdf", args.pages)
        print(f"synthetic paper: {args.pages} pages, {paper.stat().st_size / 1024 / 1024:.1f} MB")
        before = _peak_mb()
        read_once(small, work)
        small_growth = _peak_mb() - before
        times = []
        for run in range(args.runs):
            seconds, pages, images = read_once(paper, work)
            times.append(seconds)
            print(f"run {run + 1}: {seconds:.2f} s ({pages} pages, {images} images, "
                  f"{seconds / max(pages, 1):.2f} s per page)")
        growth = _peak_mb() - before
    median = statistics.median(times)
    verdict = "within" if median < TARGET_SECONDS else "OVER"
    print(f"median {median:.2f} s of {args.runs} runs for {args.pages} pages: {verdict} the target of "
          f"{TARGET_SECONDS:.0f} s")
    print(f"peak resident memory grew by {small_growth:.0f} MB reading 10 pages and by {growth:.0f} MB in all "
          f"after the {args.pages}-page runs (pages are read and stored one at a time)")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if median < TARGET_SECONDS else 1


def register(bench_sub) -> None:
    parser = bench_sub.add_parser("extract", help="render and read a 40-page exam paper PDF (target under 20 s)",
                                  description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=40, help="pages of the synthetic paper (default 40)")
    parser.add_argument("--runs", type=int, default=3, help="runs; the median is reported (default 3)")
    parser.set_defaults(func=main)

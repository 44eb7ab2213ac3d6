"""`bench analysis --study vqa|muse`: the study analyses and the Tasks page at published scale.

Targets: every study analysis under 2 s and the Tasks and dimensions page's first render
under 1.5 s, for 30 models x 2,400 questions (MUSE) and 14 models x 14,463 questions (VQArt-Bench).
The store is built first (simulated respondents answer through the real parser and scorer; the
build time is printed but is not a target); the analyses are timed on the frames the views load,
the page with AppTest from a fresh session with empty caches. Medians of ``--repeat`` runs.
"""
from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from eduart_core.selection import Selection
from eduart_core.store import Store
from eduart_core.vocab import DIMENSION_MACRO_AGGREGATION, MICRO_AGGREGATION, MUSE_REFERENCE_DATASET, TASK_COLUMN

ROOT = Path(__file__).resolve().parents[1]
PAGE = "pages/02_tasks.py"
ANALYSIS_TARGET_S, PAGE_TARGET_S = 2.0, 1.5


def _median(call: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall-clock and CPU seconds: on a shared machine the CPU time says what the code costs."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        call()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def suite(db: str, dataset: str) -> dict[str, Callable[[], object]]:
    """Every study analysis the Tasks page, the Images page and the report call, on loaded frames."""

    # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
    from eduart_core import analysis as A
    from eduart_core import views

    src = views.Source.of(db)
    sel = Selection(dataset=dataset)
    features = views.study_features(src, dataset)
    by = features.grouping
    rows = views.studies._item_rows(src, sel)
    answers, items = views.studies._answer_rows(src, sel)
    statuses = A.answer_statuses(answers, items, by=by)
    attributes = views.studies._attributes(src, dataset)
    scores = A.dimension_scores(rows, by=by)
    grid = A.score_grid(scores)
    families, access = views.family_map(src), views.access_map(src)
    external = pd.DataFrame([{"model": m, "benchmark": b, "score": float(hash((m, b)) % 100)}
                             for m in grid.index for b in ("Bench 1", "Bench 2", "Bench 3")])
    cells = scores.loc[~scores["is_median"], ["model", "column", "score", "n"]]
    columns = scores.drop_duplicates("column")[["column", "kind", "dimension", "chance"]].rename(
        columns={"column": "column_name"})
    calls = {
        "dimension_scores (micro)": lambda: A.dimension_scores(rows, by=by, aggregation=MICRO_AGGREGATION),
        "dimension_scores (macro)": lambda: A.dimension_scores(rows, by=by, aggregation=DIMENSION_MACRO_AGGREGATION),
        "task_correlations": lambda: A.task_correlations(grid),
        "family_best": lambda: A.family_best(scores, families, access),
        "answer_statuses": lambda: A.answer_statuses(answers, items, by=by),
        "distractor_choices (statuses)": lambda: A.distractor_choices(answers, items, by=by, statuses=statuses),
        "invalid_rates (statuses)": lambda: A.invalid_rates(answers, items, by=by, statuses=statuses),
        "external_correlations": lambda: A.external_correlations(grid, external),
        "consistency_checks": lambda: A.consistency_checks(cells, columns, declared=MICRO_AGGREGATION),
        "attribute_scores": lambda: A.attribute_scores(rows, attributes),
    }
    if by == TASK_COLUMN:
        calls["dimension_scores (task-macro)"] = lambda: A.dimension_scores(rows, by=by, aggregation="task_macro")
    return calls


def page_first_render(db: str, dataset: str, repeat: int) -> tuple[float, float]:
    """Median first render of the Tasks page (wall, CPU): a fresh session, empty caches, the dataset chosen."""
    # deferred: Streamlit's test harness loads only when pages are measured
    from streamlit import logger as st_logger
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    st_logger.set_log_level("error")
    os.environ["EDUART_DB"] = db
    wall, cpu = [], []
    for _ in range(repeat):
        views.clear_caches()
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        # the session opens on the overview of a small dataset (a published table: one line), so that
        # only the Tasks page is timed, then the sidebar's dataset becomes the benchmark's
        at.session_state["f_dataset"] = MUSE_REFERENCE_DATASET
        at.run()
        at.session_state["f_dataset"] = dataset
        views.clear_caches()
        start, start_cpu = time.perf_counter(), time.process_time()
        at.switch_page(PAGE).run()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        if at.exception:
            raise RuntimeError(f"{PAGE} raised: {at.exception[0].value}")
    return statistics.median(wall), statistics.median(cpu)


def main(args) -> int:
    # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
    from eduart_core.studies.references import load_study_references
    from eduart_core.studies.scaled import build_synthetic_study

    with tempfile.TemporaryDirectory(prefix="eduart-bench-study-") as tmp:
        db = str(Path(args.db) if getattr(args, "db", None) else Path(tmp) / "study.duckdb")
        dataset = f"synthetic-{args.study}"
        start = time.perf_counter()
        if not Path(db).exists():  # --db: measure an existing bench store again
            build_synthetic_study(Store(db), args.study, args.models, args.items, seed=args.seed, dataset=dataset)
            load_study_references(Store(db))  # a small dataset to open the session on
            print(f"\n{args.study}: {args.models} models x {args.items} items (simulated, one condition); store built "
                  f"in {time.perf_counter() - start:.1f} s")
        else:
            print(f"\n{args.study}: measuring the existing store {db}")
        calls = suite(db, dataset)
        print(f"{'study analysis':<34}{'wall s':>9}{'cpu s':>9}")
        worst = 0.0
        for name, call in calls.items():
            wall, cpu = _median(call, args.repeat)
            worst = max(worst, wall)
            print(f"{name:<34}{wall:>9.3f}{cpu:>9.3f}{'  (over target)' if wall >= ANALYSIS_TARGET_S else ''}",
                  flush=True)
        wall, cpu = page_first_render(db, dataset, args.repeat)
        print(f"{'Tasks page first render':<34}{wall:>9.3f}{cpu:>9.3f}"
              f"{'  (over target)' if wall >= PAGE_TARGET_S else ''}")
        load = os.getloadavg()[0]
        print(f"medians of {args.repeat}; targets: every analysis < {ANALYSIS_TARGET_S:.0f} s (slowest "
              f"{worst:.3f} s), first render < {PAGE_TARGET_S} s; load average {load:.1f} on {os.cpu_count()} cores "
              "(CPU seconds are what the code costs; wall seconds include waiting for the cores)")
    return 0

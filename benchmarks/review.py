"""`bench review`: how long the review page takes to redraw after each action, and how long
agreement statistics take for 1,000 decided fields.

Targets: accept, edit save and next page each re-render in under 0.5 s (median) on the
demo store, through the whole app (sidebar included), timed with AppTest; agreement statistics for
1,000 fields decided by two reviewers in under 1 s (reading the store included).

AppTest compiles app.py and the page again on every run (a fresh script cache per run, with
Streamlit's "magic" rewrite of the syntax tree), which a server does once; by default the
benchmark gives AppTest one shared script cache so the numbers are what a user waits for
(`--recompile` measures AppTest as it is).
"""
from __future__ import annotations

import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from eduart_core.store import Store
from eduart_core.store import extraction as db

from .apptest import compiled_once

ROOT = Path(__file__).resolve().parents[1]
PAGE = "pages/11_review.py"
BENCH_REVIEWER = "Bench"


def _copy_store(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, target)
    for suffix in ("_images", "_runs", "_cache"):
        folder = source.parent / f"{source.stem}{suffix}"
        if folder.is_dir():
            shutil.copytree(folder, target.parent / f"{target.stem}{suffix}")
    return target


def _timed(at, action) -> float:
    t0 = time.perf_counter()
    action(at).run()
    elapsed = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(f"the review page raised: {at.exception[0].value}")
    return elapsed


def _open_fields(store, current) -> list[dict]:
    # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
    from eduart_core.extraction import review

    fields = review.page_fields(store, current[0], current[1], BENCH_REVIEWER)
    return [f for f in fields.to_dict("records") if f["mine"]]


def _edit_targets(store) -> list[tuple[tuple[str, int], dict]]:
    """Open text fields (a text editor) on the queued pages: where an edit can be timed."""
    # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
    from eduart_core.extraction import review

    queue = review.review_queue(store, reviewer=BENCH_REVIEWER)
    out = []
    for page_id, rnd in zip(queue["page_id"], queue["round"]):
        for f in _open_fields(store, (page_id, int(rnd))):
            if isinstance(f["a"], str) and f["a"].strip() and f["path"] in ("question_text", "question_title"):
                out.append(((page_id, int(rnd)), f))
    return out


def measure_actions(demo_store: Path, repeats: int = 3, recompile: bool = False) -> dict[str, list[float]]:
    """Seconds per action over ``repeats`` fresh copies of the demo store."""
    with compiled_once(not recompile):
        return _measure_actions(demo_store, repeats)


def _measure_actions(demo_store: Path, repeats: int) -> dict[str, list[float]]:
    # deferred: Streamlit's test harness loads only when pages are measured
    from streamlit import logger as st_logger
    from streamlit.testing.v1 import AppTest


    st_logger.set_log_level("error")
    times: dict[str, list[float]] = {"accept": [], "edit save": [], "next page": []}
    for rep in range(repeats):
        with tempfile.TemporaryDirectory(prefix="eduart-bench-review-") as tmp:
            path = _copy_store(demo_store, Path(tmp) / "bench.duckdb")
            os.environ["EDUART_DB"] = str(path)
            store = Store(path)
            # deferred: Streamlit's test harness loads only when pages are measured
            import streamlit as st

            st.cache_data.clear()
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
            at.run()
            at.switch_page(PAGE).run()
            at.text_input(key="review_name").input(BENCH_REVIEWER).run()
            for _ in range(3):  # next page
                times["next page"].append(_timed(at, lambda a: a.button(key="review_next").click()))
            for current, target in _edit_targets(store)[:2]:  # edit save: open the page and the editor untimed
                at.session_state["review_round"] = current[1]
                at.session_state["review_current"] = current
                at.run()
                base = f"{current[0]}|{current[1]}|{target['path']}"
                at.toggle(key=f"edit_open::{base}").set_value(True).run()
                box = at.text_area(key=f"ed::{base}::A::text") if target["path"] == "question_text" else \
                    at.text_input(key=f"ed::{base}::A::text")
                box.set_value(" ".join(target["a"].split()) + f" (checked {rep})")
                times["edit save"].append(_timed(at, lambda a, b=base: a.button(key=f"edit::{b}").click()))
            at.session_state["review_round"] = 1
            at.run()
            for _ in range(8):  # accept (a page without open fields first moves on, untimed)
                if len(times["accept"]) >= 4 * (rep + 1):
                    break
                current = at.session_state["review_current"]
                fields = _open_fields(store, current)
                if not fields:
                    at.button(key="review_next_open").click().run()
                    continue
                base = f"{current[0]}|{current[1]}|{fields[0]['path']}"
                times["accept"].append(_timed(at, lambda a, b=base: a.button(key=f"accept_a::{b}").click()))
    return times


def build_agreement_store(path: Path, fields: int = 1000, agree: float = 0.85, seed: int = 12) -> Path:
    """A store with ``fields`` queued fields (10 per page), each decided by two reviewers."""

    # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
    from eduart_core.extraction.review import now_utc

    rng = random.Random(seed)
    store = Store(path)
    pages = [f"p{i:04d}/q01" for i in range(fields // 10)]
    db.save_pages(store, [{"page_id": p, "dataset": "bench", "item_id": p.replace("/", "-"), "exercise": p[:5],
                           "question": "q01"} for p in pages])
    outcomes, decisions = [], []
    for p in pages:
        diffs = []
        for j in range(10):
            a, b = f"{p} value {j}", f"{p} value {j} (misread)"
            diffs.append({"path": f"answers[{j}].error", "field": "answers", "category": "content", "a": a, "b": b,
                          "queued": True})
            first = rng.choice(["accept_a", "accept_b"])
            second = first if rng.random() < agree else ("accept_b" if first == "accept_a" else "accept_a")
            # the adjudicator settles what the two differ on: a blind round shows its agreement once settled
            for reviewer, action, role in (("Anna", first, "review"), ("Bruno", second, "review"),
                                           *((("Carla", first, "adjudicate"),) if second != first else ())):
                decisions.append({"page_id": p, "round": 1, "path": f"answers[{j}].error", "action": action,
                                  "reviewer": reviewer, "role": role, "new_value": a if action == "accept_a" else b,
                                  "source": "bench", "decided_at": now_utc()})
        outcomes.append({"page_id": p, "round": 1, "merge_status": "queued", "format": None, "base_record": {},
                         "merged_record": None, "diffs": diffs})
    db.save_outcomes(store, outcomes)
    db.set_round_reviewers(store, "bench", 1, 2, "bench")
    db.append_decisions(store, decisions)
    return path


def measure_agreement(path: Path, repeats: int = 5) -> dict[str, list[float]]:
    # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
    from eduart_core.analysis.agreement import agreement
    from eduart_core.extraction.review import load_state
    from eduart_core.extraction.stats import agreement_by, review_ratings

    store = Store(path)
    out: dict[str, list[float]] = {"read + agreement": [], "agreement only": []}
    ratings = review_ratings(load_state(store))
    for _ in range(repeats):
        t0 = time.perf_counter()
        table = agreement_by(load_state(store), ["dataset", "round"])
        out["read + agreement"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        agreement(ratings)
        out["agreement only"].append(time.perf_counter() - t0)
    units = int(table["units"].iloc[-1])
    if units != len(ratings) // 2:
        raise RuntimeError(f"expected {len(ratings) // 2} units, got {units}")
    return out


def run(args) -> int:
    # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
    from eduart_core.demo import build_demo

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="eduart-bench-review-") as tmp:
        demo = Path(args.db) if args.db else Path(tmp) / "demo" / "eduart.duckdb"
        if not demo.exists():
            t0 = time.perf_counter()
            build_demo(Store(demo))
            print(f"built the demo store in {time.perf_counter() - t0:.1f} s")
        actions = measure_actions(demo, repeats=args.repeats, recompile=args.recompile)
        agreement_db = build_agreement_store(Path(tmp) / "agreement" / "eduart.duckdb", fields=args.fields)
        stats = measure_agreement(agreement_db, repeats=max(args.repeats, 3))
    print(f"{'action':28} {'median':>8} {'max':>8} {'n':>4}")
    for name, values in actions.items():
        if values:
            over = "  (over target 0.5 s)" if statistics.median(values) >= 0.5 else ""
            print(f"{name:28} {statistics.median(values):7.3f}s {max(values):7.3f}s {len(values):>4}{over}")
    for name, values in stats.items():
        over = "  (over target 1 s)" if statistics.median(values) >= 1.0 else ""
        print(f"{name + f' ({args.fields} fields)':28} {statistics.median(values):7.3f}s {max(values):7.3f}s "
              f"{len(values):>4}{over}")
    how = "AppTest recompiling the scripts every run" if args.recompile else "scripts compiled once, as a server does"
    print(f"medians over {args.repeats} fresh copies of the demo store (actions through app.py, AppTest, {how}); "
          "targets: each action < 0.5 s, agreement for 1,000 fields < 1 s")
    print(f"machine load average (1 min): {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, "
          f"{os.cpu_count()} CPUs (a busy shared machine slows every number)")
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser("review", help="time the review page's actions and the agreement statistics")
    parser.add_argument("--db", default=None, help="existing demo store to copy (default: build one)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fields", type=int, default=1000, help="decided fields for the agreement timing")
    parser.add_argument("--recompile", action="store_true",
                        help="let AppTest recompile app.py and the page on every run (a server compiles once)")
    parser.set_defaults(func=run)

"""`bench pages`: first render and two interactions per dashboard page, timed with AppTest.

Every page of the app is measured (the overview plus every page script of `pages.ui.menu.PAGES`: the
inspector/failure explorer, runs and review included). The store is simulated at published scale
(12 models x 871 items x 2 conditions by default) with a simulated extraction round for the
review page, so the numbers say whether a stakeholder waits on a page. Targets: at
published scale a first render under 1 s and interactions under 0.3 s (medians); at larger
scales (e.g. ``--models 50 --items 5000``) a first render under 2 s and interactions under 1 s.
"""
from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from eduart_core.store import Store
from eduart_core.store.scores import list_datasets, list_models
from eduart_core.vocab import DEFAULT_DATASET, PAPER_PROFILE

from .apptest import compiled_once

ROOT = Path(__file__).resolve().parents[1]
#: Published scale: 12 models x 871 items (above it the larger-scale targets apply).
PUBLISHED_MODELS, PUBLISHED_ITEMS = 12, 871
TARGETS = {"published": {"first": 1.0, "interaction": 0.3}, "large": {"first": 2.0, "interaction": 1.0}}


def page_files() -> list[str]:
    """Every page the bench measures, in menu order: the overview (app.py draws it), then each page's script."""
    from pages.ui.menu import PAGES as APP_PAGES  # deferred: the registry loads the views, `bench --help` need not

    return ["overview"] + [spec.script for spec in APP_PAGES.values() if spec.script]


def build_simulated_store(path: str | os.PathLike, models: int = 12, items: int = 871, seed: int = 7,
                          dataset: str = DEFAULT_DATASET, with_reference: bool = True,
                          with_extraction: bool = True) -> Store:
    """A store with synthetic items and simulated runs (both conditions, both profiles), the
    published reference, and a simulated extraction round (so the review page has work)."""
    # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
    from eduart_core.simulate import add_synthetic_items, make_models, simulate_into_store

    store = Store(path)
    add_synthetic_items(store, dataset, items, seed)
    simulate_into_store(store, dataset, make_models(models, seed), seed)
    if with_reference:
        # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
        from eduart_core.store.reference import load_reference

        load_reference(store)
    if with_extraction:
        # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
        from eduart_core.extraction.simulated import build_extraction_demo

        build_extraction_demo(store)
    return store


def _render(at, page: str) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of a page's first render."""
    t0, c0 = time.perf_counter(), time.process_time()
    if page == "overview":
        at.run()
    else:
        at.switch_page(page).run()
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    if at.exception:
        raise RuntimeError(f"{page} raised: {at.exception[0].value}")
    return elapsed, cpu


def _has(values, name: str) -> bool:
    try:
        return name in list(values)
    except TypeError:
        return False


def _clear_caches() -> None:
    # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
    from eduart_core import views

    views.clear_caches()


def _change(at, key: str, value) -> tuple[float, float]:
    """Time one sidebar change (wall, CPU). After switch_page the sidebar widgets are missing from
    AppTest's element tree but their state is not, so the change goes through session_state."""
    t0, c0 = time.perf_counter(), time.process_time()
    at.session_state[key] = value
    at.run()
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    if at.exception:
        raise RuntimeError(f"raised after changing {key}: {at.exception[0].value}")
    return elapsed, cpu


def measure(store_path: str, repeats: int = 3, recompile: bool = False) -> list[dict]:
    """Medians per page: first render (fresh session, empty caches), a model filter change, and a
    scoring-profile switch (the heaviest change: a second score frame is read from the store)."""
    # deferred: Streamlit's test harness loads only when pages are measured
    from streamlit import logger as st_logger


    st_logger.set_log_level("error")  # AppTest's bare-mode warnings would drown the table
    os.environ["EDUART_DB"] = str(store_path)
    models = list_models(Store(store_path))
    names = [m for m, ds in zip(models["display_name"], models["datasets"]) if _has(ds, DEFAULT_DATASET)]
    fewer = sorted(names)[1:] if len(names) > 2 else names  # drop one model: a real recomputation
    with compiled_once(not recompile):
        results = _measure_pages(fewer, repeats)

    def median(pairs: list[tuple[float, float]], k: int) -> float:
        return statistics.median(p[k] for p in pairs)

    return [{"page": p, "first_render_s": median(v["first"], 0), "model_filter_s": median(v["models"], 0),
             "profile_switch_s": median(v["profile"], 0), "first_render_cpu_s": median(v["first"], 1),
             "model_filter_cpu_s": median(v["models"], 1), "profile_switch_cpu_s": median(v["profile"], 1)}
            for p, v in results.items()]


def _measure_pages(fewer: list[str], repeats: int) -> dict[str, dict[str, list]]:
    # deferred: Streamlit's test harness loads only when pages are measured
    from streamlit.testing.v1 import AppTest

    pages = page_files()
    results = {p: {k: [] for k in ("first", "models", "profile")} for p in pages}
    for _ in range(repeats):
        for page in pages:
            _clear_caches()
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
            if page != "overview":
                at.run()  # the session starts on the overview, as in a browser
                _clear_caches()
            results[page]["first"].append(_render(at, page))
            results[page]["models"].append(_change(at, "f_models", fewer))
            results[page]["profile"].append(_change(at, "f_profile", PAPER_PROFILE))
    return results


def scale_of(models: int, items: int) -> str:
    """"published" up to the published size, "large" beyond it (which targets apply)."""
    return "published" if models <= PUBLISHED_MODELS and items <= PUBLISHED_ITEMS else "large"


def _store_size(path: Path) -> tuple[int, int]:

    ds = list_datasets(Store(path))
    row = ds[ds["dataset"] == DEFAULT_DATASET]
    return (int(row["n_models"].iloc[0]), int(row["n_items"].iloc[0])) if len(row) else (0, 0)


def run(args) -> int:
    with tempfile.TemporaryDirectory(prefix="eduart-bench-pages-") as tmp:
        path = Path(args.db) if args.db else Path(tmp) / "bench.duckdb"
        if not path.exists():
            t0 = time.perf_counter()
            build_simulated_store(path, models=args.models, items=args.items, seed=args.seed)
            print(f"built simulated store ({args.models} models x {args.items} items x 2 conditions) "
                  f"in {time.perf_counter() - t0:.1f} s")
        n_models, n_items = _store_size(path)
        rows = measure(str(path), repeats=args.repeats, recompile=args.recompile)
    scale = scale_of(n_models, n_items)
    target = TARGETS[scale]
    print(f"store: {n_models} models x {n_items} items x 2 conditions ({scale} scale); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'page':30} {'first render':>20} {'model filter':>20} {'profile switch':>20}")
    print(f"{'':30} {'wall (cpu) s':>20} {'wall (cpu) s':>20} {'wall (cpu) s':>20}")
    for r in rows:
        over = r["first_render_s"] >= target["first"] or (
            target["interaction"] is not None
            and max(r["model_filter_s"], r["profile_switch_s"]) >= target["interaction"])
        cells = [f"{r[f'{k}_s']:.2f} ({r[f'{k}_cpu_s']:.2f})" for k in ("first_render", "model_filter",
                                                                        "profile_switch")]
        print(f"{r['page']:30} {cells[0]:>20} {cells[1]:>20} {cells[2]:>20}{'  (over target)' if over else ''}")
    interaction = (f", interactions < {target['interaction']} s" if target["interaction"] is not None
                   else " (no interaction target at this scale)")
    print(f"medians of {args.repeats} runs; targets ({scale} scale, wall): first render < {target['first']} s"
          f"{interaction}. CPU = process CPU seconds during the render: on a shared machine the wall time "
          "also counts waiting for a core.")
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser("pages", help="time each dashboard page's first render and a filter change")
    parser.add_argument("--db", default=None, help="existing store to measure (default: build a simulated one)")
    parser.add_argument("--models", type=int, default=12)
    parser.add_argument("--items", type=int, default=871)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--recompile", action="store_true",
                        help="let AppTest recompile app.py and the page on every run (a server compiles them once)")
    parser.set_defaults(func=run)

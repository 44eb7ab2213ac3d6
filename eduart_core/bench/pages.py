"""`bench pages`: first render and one filter change per dashboard page, timed with AppTest.

The store is simulated at published scale (12 models x 871 items x 2 conditions by default), so
the numbers say whether a stakeholder waits on a page. Targets: first render < 2 s, a filter
change < 0.5 s on the 2-core machine (analysis results are cached by store version + filters).
"""
from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from ..store import Store

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["overview", "pages/1_inspector.py", "pages/2_psychometrics.py", "pages/3_formats.py",
         "pages/4_motivation.py", "pages/5_images.py", "pages/6_profiles.py"]


def build_simulated_store(path: str | os.PathLike, models: int = 12, items: int = 871, seed: int = 7,
                          dataset: str = "demo", with_reference: bool = True) -> Store:
    """A store with synthetic items and simulated runs (both conditions, both profiles)."""
    from ..simulate import add_synthetic_items, make_models, simulate_into_store

    store = Store(path)
    add_synthetic_items(store, dataset, items, seed)
    simulate_into_store(store, dataset, make_models(models, seed), seed)
    if with_reference:
        from ..store.reference import load_reference

        load_reference(store)
    return store


def _render(at, page: str) -> float:
    t0 = time.perf_counter()
    if page == "overview":
        at.run()
    else:
        at.switch_page(page).run()
    elapsed = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(f"{page} raised: {at.exception[0].value}")
    return elapsed


def measure(store_path: str, repeats: int = 3) -> list[dict]:
    """Median first render (fresh session, cold Streamlit cache) and filter change per page."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    os.environ["EDUART_DB"] = str(store_path)
    results = {p: {"first": [], "change": []} for p in PAGES}
    for _ in range(repeats):
        for page in PAGES:
            st.cache_data.clear()
            from .. import views

            for fn in (views.scores, views.items, views.datasets, views.models):
                fn.cache_clear()
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
            if page != "overview":
                at.run()  # the session starts on the overview, as in a browser
                st.cache_data.clear()
                for fn in (views.scores, views.items, views.datasets, views.models):
                    fn.cache_clear()
            results[page]["first"].append(_render(at, page))
            t0 = time.perf_counter()
            at.radio(key="f_profile").set_value("paper").run()
            results[page]["change"].append(time.perf_counter() - t0)
            if at.exception:
                raise RuntimeError(f"{page} raised after a filter change: {at.exception[0].value}")
    return [{"page": p, "first_render_s": statistics.median(v["first"]),
             "filter_change_s": statistics.median(v["change"])} for p, v in results.items()]


def run(args) -> int:
    with tempfile.TemporaryDirectory(prefix="eduart-bench-pages-") as tmp:
        path = Path(args.db) if args.db else Path(tmp) / "bench.duckdb"
        if not path.exists():
            t0 = time.perf_counter()
            build_simulated_store(path, models=args.models, items=args.items, seed=args.seed)
            print(f"built simulated store ({args.models} models x {args.items} items x 2 conditions) "
                  f"in {time.perf_counter() - t0:.1f} s")
        rows = measure(str(path), repeats=args.repeats)
    print(f"{'page':28} {'first render (s)':>17} {'filter change (s)':>18}")
    for r in rows:
        flag = "" if r["first_render_s"] < 2 and r["filter_change_s"] < 0.5 else "  (over target)"
        print(f"{r['page']:28} {r['first_render_s']:17.2f} {r['filter_change_s']:18.2f}{flag}")
    print(f"medians of {args.repeats} runs; targets: first render < 2 s, filter change < 0.5 s")
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser("pages", help="time each dashboard page's first render and a filter change")
    parser.add_argument("--db", default=None, help="existing store to measure (default: build a simulated one)")
    parser.add_argument("--models", type=int, default=12)
    parser.add_argument("--items", type=int, default=871)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=3)
    parser.set_defaults(func=run)

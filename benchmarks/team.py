"""`bench team`: a shared PostgreSQL store under a review team's load, beside the DuckDB file.

Four measurements, each with the target a review team needs:

1. **Concurrent reviewers**: ``--reviewers`` processes (default 20) each append ``--decisions``
   decisions (default 100) to one PostgreSQL store at the same moment, through the store's own
   decision write (``store.extraction.append_decision``: the field's lock, the in-transaction
   read of the field's decisions, the insert, the commit). Reviewers work in pairs on the same
   fields, as in a blind double-review round, so two processes decide one field at the same
   time. Counted afterwards in the store: decisions lost (an id a process got back that is not
   stored, or fewer rows than decided) and failed (an exception in a process). Target: 0 lost,
   0 failed, p95 commit < 50 ms.
1b. **"Next" from the work queue** (``--parts queue``): ``--reviewers`` processes ask the review
   queue for the next page ``--asks`` times in all (default 500) at the same moment, each keeping
   what it was handed (``queues.next_review_page`` with the round state a page holds; each process
   opens its own connections, as an app server does). Counted in the store afterwards, over every
   hold the queue gave: pages held by two people at the same moment (single review). Then one more
   person per process takes a page with a 5-second hold and vanishes; once the holds ran out, one
   more person walks the queue: every vanished holder's page must come back (to that person, or to
   a reviewer of a slower process who was handed it after the hold ran out). Two rounds: paced (each process pauses a random time, mean
   ``--think-ms``, default 500 ms, between asks: 20 people clicking Next about twice a second each,
   far faster than anyone reads a page) and back to back (no pause: a stress test of 20 processes
   on the machine's cores, where the time is mostly waiting for a core). Target: 0 double, 0 lost,
   p95 of "next" < 50 ms (paced).
2. **Run ingest**: the final ingest of a launch of 12 models x 871 items x 2 conditions
   (20,904 responses) from its run journals, as the runner does it (``ingest_journal`` per run:
   parse, score under both profiles, insert), into PostgreSQL and into a DuckDB file. Target on
   PostgreSQL: < 30 s.
3. **Page first render** at published scale (12 models x 871 items) on the DuckDB file and on a
   PostgreSQL copy of it (``store-copy``), measured alternately page by page in one run (AppTest,
   as `bench pages`). Target: PostgreSQL within 1.5x of DuckDB.

Without ``--url`` the bench starts its own PostgreSQL server from the Debian binaries in a temp
folder (durable settings: fsync and synchronous commit on); with ``--url`` it uses that server
(the URL of a database it may create databases next to, e.g. ``postgresql://u:pw@host/postgres``).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from eduart_core.bench.pgserver import TempPostgres
from eduart_core.store import Store, release_readers
from eduart_core.store import extraction as db
from eduart_core.store import holds as hold_db
from eduart_core.store.items import load_items
from eduart_core.store.runs import create_run, ensure_dataset, ensure_model
from eduart_core.team import local
from eduart_core.vocab import BENCHMARK_KIND, CONDITIONS

from .apptest import compiled_once
from .pages import _clear_caches, _render, build_simulated_store, page_files

ROOT = Path(__file__).resolve().parents[1]
DATASET = "bench-team"
TARGETS = {"p95_commit_ms": 50.0, "p95_next_ms": 50.0, "ingest_s": 30.0, "render_ratio": 1.5}


# ---------------------------------------------------------------- the server

@contextmanager
def _server(url: str | None):
    """(create_database(name) -> URL, drop_database(name)) on the given server or a temporary one."""
    if url:
        # deferred: psycopg is needed only with --url (PostgreSQL)
        import psycopg

        from eduart_core.store.postgres import DatabaseURL

        admin = DatabaseURL(url)

        def run(sql: str) -> None:
            with psycopg.connect(**admin.connect_kwargs(), autocommit=True) as con:
                con.execute(sql)

        def create(name: str) -> str:
            run(f'CREATE DATABASE "{name}"')
            return admin.with_database(name)

        yield create, lambda name: run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        return

    server = TempPostgres(durable=True).start()
    try:
        yield server.create_database, server.drop_database
    finally:
        server.cleanup()


# ---------------------------------------------------------------- 1. concurrent reviewers

def _prepare_round(url: str, reviewers: int, decisions: int) -> dict[int, list[tuple[str, str]]]:
    """A blind double-review round: per reviewer pair, one queued field for each decision."""

    store = Store(url)
    ensure_dataset(store, DATASET, "Team bench", BENCHMARK_KIND, simulated=True)
    per_page = 10
    fields: dict[int, list[tuple[str, str]]] = {}
    pages = []
    for pair in range(max(1, (reviewers + 1) // 2)):
        for n in range((decisions + per_page - 1) // per_page):
            page = f"p{pair:02d}-{n:03d}"
            pages.append(page)
            fields.setdefault(pair, []).extend((page, f"f{k}") for k in range(per_page))
    db.save_pages(store, [{"page_id": p, "dataset": DATASET, "item_id": p, "exercise": p.split("-")[0],
                           "question": p, "simulated": True} for p in pages])
    db.save_outcomes(store, [{"page_id": p, "round": 1, "merge_status": "queued", "format": "multiple_choice_radio",
                              "base_record": {"item_id": p}, "merged_record": None,
                              "diffs": [{"path": f"f{k}", "field": f"f{k}", "category": "text", "a": f"a{k}",
                                         "b": f"b{k}", "queued": True} for k in range(per_page)]} for p in pages])
    db.set_round_reviewers(store, DATASET, 1, 2, "bench")
    return {pair: f[:decisions] for pair, f in fields.items()}


def _reviewer(url: str, index: int, fields: list[tuple[str, str]], ready, go, out) -> None:
    """One reviewer process: decide each field once (blind rule: only this reviewer's own decisions
    count as seen), timing each commit."""

    name = f"reviewer-{index:02d}"
    store = Store(url)
    with store.connect(read_only=True) as con:  # the process's pool is warm, as in a running app
        con.execute("SELECT 1").fetchall()
    latencies, ids, errors = [], [], []

    def check(decisions: list[dict]) -> dict:
        if any(d["reviewer"] == name for d in decisions):
            raise db.ReviewConflict(decisions[-1]["path"], decisions[-1])
        return {"conflict": False}

    ready.put(index)
    go.wait(600)
    for page, path in fields:
        action = "accept_a" if index % 2 == 0 or int(path[1:]) % 3 else "accept_b"  # pairs disagree on some
        t0 = time.perf_counter()
        try:
            ids.append(db.append_decision(store, page, 1, path, action, name, None, action, None, None,
                                          check=check, role="review", source="page", shown_order="AB"))
        except Exception as exc:  # noqa: BLE001 - counted and reported, never hidden
            errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            continue
        latencies.append(time.perf_counter() - t0)
    out.put({"reviewer": name, "latencies": latencies, "ids": ids, "errors": errors})


def bench_reviewers(url: str, reviewers: int, decisions: int) -> dict:

    fields = _prepare_round(url, reviewers, decisions)
    ctx = multiprocessing.get_context("spawn")
    ready, out, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=_reviewer, args=(url, i, fields[i // 2], ready, go, out)) for i in range(reviewers)]
    for p in procs:
        p.start()
    for _ in procs:  # every process imported, connected and waiting: then all start at once
        ready.get(timeout=600)
    started = time.perf_counter()
    go.set()
    results = [out.get(timeout=600) for _ in procs]
    wall = time.perf_counter() - started
    for p in procs:
        p.join(60)
    latencies = sorted(x for r in results for x in r["latencies"])
    returned = {i for r in results for i in r["ids"]}
    stored = db.load_decisions(Store(url))
    stored_ids = set(int(i) for i in stored["decision_id"])
    failed = sum(len(r["errors"]) for r in results)
    rows = int(stored["reviewer"].astype(str).str.startswith("reviewer-").sum())
    return {"reviewers": reviewers, "decisions_each": decisions, "decided": len(returned), "stored": rows,
            "lost": max(len(returned - stored_ids), reviewers * decisions - failed - rows),
            "failed": failed, "errors": sorted({e for r in results for e in r["errors"]})[:3],
            "p50_ms": 1000 * statistics.median(latencies) if latencies else None,
            "p95_ms": 1000 * latencies[int(0.95 * (len(latencies) - 1))] if latencies else None,
            "max_ms": 1000 * latencies[-1] if latencies else None,
            "commits_per_s": len(latencies) / wall if wall > 0 else None}


# ---------------------------------------------------------------- 1b. "next" from the work queue

def build_queue_round(store, pages: int, reviewers: int = 1, fields: int = 2, round: int = 1,
                      dataset: str = DATASET) -> list[str]:
    """A review round of ``pages`` simulated pages of ``fields`` queued fields each, ``reviewers`` per page
    (the work-queue bench and tests build on it); returns the page ids in queue order."""

    ensure_dataset(store, dataset, "Team bench", BENCHMARK_KIND, simulated=True)
    ids = [f"q{n:04d}" for n in range(pages)]
    db.save_pages(store, [{"page_id": p, "dataset": dataset, "item_id": p, "exercise": p, "question": p,
                           "simulated": True} for p in ids])
    db.save_outcomes(store, [{"page_id": p, "round": round, "merge_status": "queued", "format": "multiple_choice_radio",
                              "base_record": {"item_id": p}, "merged_record": None,
                              "diffs": [{"path": f"f{k}", "field": f"f{k}", "category": "text", "a": f"a{k}",
                                         "b": f"b{k}", "queued": True} for k in range(fields)]} for p in ids])
    db.set_round_reviewers(store, dataset, round, reviewers, "bench")
    return ids


def _asker(url: str, index: int, asks: int, hold_s: float, vanish_s: float, think_s: float, ready, go,
           out) -> None:
    """One reviewer process asking "next" ``asks`` times, keeping every page it was handed (so that a page
    handed to two people at once shows as two holds at the end), pausing a random time of mean ``think_s``
    before each ask (0: back to back); then a person who takes one page and vanishes (a hold of
    ``vanish_s`` seconds that nobody releases)."""

    # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
    from eduart_core.extraction.review import REVIEW_ROLE, load_state, review_queue
    from eduart_core.queues import next_review_page

    store = Store(url)
    who = local(f"asker-{index:02d}")
    state = load_state(store, 1)  # what the review page holds already when "Next" is clicked
    queue = review_queue(state, round=1, reviewer=who.key, role=REVIEW_ROLE)
    handed, latencies, errors = [], [], []
    ready.put(index)
    go.wait(600)
    after = None
    pause = random.Random(index)
    for _ in range(asks):
        if think_s > 0:
            time.sleep(pause.expovariate(1.0 / think_s))
        t0 = time.perf_counter()
        try:
            got = next_review_page(store, who, 1, state=state, queue=queue, after=after, leave=False, hold_s=hold_s)
        except Exception as exc:  # noqa: BLE001 - counted and reported, never hidden
            errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            continue
        latencies.append(time.perf_counter() - t0)
        handed.append((got.unit if got else None, time.time()))
        after = got.unit if got else after
    # then someone else at this desk takes a page and closes the browser: nobody releases it
    gone = next_review_page(store, local(f"gone-{index:02d}"), 1, hold_s=vanish_s)
    out.put({"who": who.key, "handed": handed, "latencies": latencies, "errors": errors,
             "gone": gone.unit if gone else None, "gone_until": time.time() + vanish_s})


def bench_queue(url: str, reviewers: int, asks: int, vanish_s: float = 5.0, think_s: float = 0.0) -> dict:
    """``reviewers`` processes ask "next" ``asks`` times in all on one PostgreSQL store (single review),
    each pausing a random time of mean ``think_s`` between asks (0: back to back); then every page handed
    to a person who vanished must come back once the hold ran out."""
    # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
    from eduart_core.queues import next_review_page

    store = Store(url)
    pages = build_queue_round(store, asks + 2 * reviewers)
    ctx = multiprocessing.get_context("spawn")
    ready, out, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    each = [asks // reviewers + (1 if i < asks % reviewers else 0) for i in range(reviewers)]
    procs = [ctx.Process(target=_asker, args=(url, i, each[i], 3600.0, vanish_s, think_s, ready, go, out))
             for i in range(reviewers)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=600)
    go.set()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(60)
    latencies = sorted(x for r in results for x in r["latencies"])
    units = [unit for r in results for unit, _ in r["handed"] if unit]
    # the askers' holds are all still active (an hour): a page handed to two of them is held by both now
    gone = {r["gone"] for r in results if r["gone"]}
    missing = sum(1 for r in results if not r["gone"])  # a vanishing person who was handed nothing
    time.sleep(max(0.0, max(r["gone_until"] for r in results) - time.time()) + 0.5)
    back: set[str] = set()
    after = None
    for _ in range(len(pages)):  # one more person walks the queue, keeping what they are handed
        got = next_review_page(store, local("finder"), 1, after=after, leave=False, hold_s=3600.0)
        if got is None or got.unit in back:
            break
        back.add(got.unit)
        after = got.unit
    history = hold_db.hold_history(store, "review:1")
    double = max(_overlapping(history), len(units) - len(set(units)))
    # a vanished holder's page is back when the finder got it, or someone did after the hold ran out
    # (askers of a slower process may still be asking then)
    gone_end = {unit: end for unit, who, _start, end in history if who.startswith("gone-")}
    later = {unit for unit, who, start, _end in history
             if unit in gone_end and not who.startswith("gone-") and start >= gone_end[unit]}
    return {"reviewers": reviewers, "asks": sum(each), "think_ms": 1000 * think_s, "handed": len(units), "double": double,
            "disconnected": len(gone), "unserved": missing, "lost": len(gone - back - later),
            "failed": sum(len(r["errors"]) for r in results),
            "errors": sorted({e for r in results for e in r["errors"]})[:3],
            "p50_ms": 1000 * statistics.median(latencies) if latencies else None,
            "p95_ms": 1000 * latencies[int(0.95 * (len(latencies) - 1))] if latencies else None,
            "max_ms": 1000 * latencies[-1] if latencies else None}


def _overlapping(history: list[tuple[str, str, object, object]]) -> int:
    """Units held by two people at the same moment at some time (single review), over the whole history."""
    by_unit: dict[str, list[tuple[object, object]]] = {}
    for unit, _who, start, end in history:
        by_unit.setdefault(unit, []).append((start, end))
    double = 0
    for spans in by_unit.values():
        spans.sort()
        double += int(any(spans[k + 1][0] < spans[k][1] for k in range(len(spans) - 1)))
    return double


# ---------------------------------------------------------------- 2. run ingest

def _journals(store, folder: Path, models: int, items: int, seed: int) -> list[tuple[str, Path]]:
    """Run journals of a finished launch (models x 2 conditions over the store's items)."""
    # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
    from eduart_core.runner.journal import Journal
    from eduart_core.simulate import add_synthetic_items, make_models
    from eduart_core.simulate.respond import plan_items, simulate_run

    add_synthetic_items(store, DATASET, items, seed)
    records = [dict(r, item_id=i) for i, r in zip(load_items(store, DATASET)["item_id"],
                                                   load_items(store, DATASET)["record"])]
    plans = plan_items(records, seed)
    out = []
    for model in make_models(models, seed):
        ensure_model(store, model.key, model.display_name, "Simulated", "simulated", None, simulated=True)
        for condition in CONDITIONS:
            run_id = f"bench:{model.key}:{condition}"
            path = folder / run_id.replace(":", "_") / "responses.jsonl"
            journal = Journal(path)
            for r in simulate_run(model, plans, condition, seed):
                journal.append({"request_key": f"{r.item_id}:{condition}", "run_id": run_id, "item_id": r.item_id,
                                "status": "ok", "raw_text": r.raw_text, "input_tokens": r.input_tokens,
                                "output_tokens": r.output_tokens, "latency_s": r.latency_s,
                                "image_sent": r.image_sent, "repetition": 0, "ts": time.time()})
            journal.close()
            create_run(store, run_id, DATASET, model.key, condition, "live", journal_path=str(path))
            out.append((run_id, path))
    return out


def bench_ingest(location: str, folder: Path, models: int, items: int, seed: int) -> dict:
    # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
    from eduart_core.runner.ingestion import ingest_journal

    store = Store(location)
    journals = _journals(store, folder, models, items, seed)
    t0 = time.perf_counter()
    added = sum(ingest_journal(store, run_id, path) for run_id, path in journals)
    return {"responses": added, "runs": len(journals), "seconds": time.perf_counter() - t0}


# ---------------------------------------------------------------- 3. page first render

def bench_pages(duck_path: Path, pg_url: str, repeats: int) -> list[dict]:
    """Median first render per page on both stores, measured alternately (one AppTest session each)."""
    # deferred: Streamlit's test harness loads only when pages are measured
    from streamlit import logger as st_logger
    from streamlit.testing.v1 import AppTest


    st_logger.set_log_level("error")
    os.environ.pop("EDUART_DATABASE_URL", None)
    pages = page_files()
    times = {(page, backend): [] for page in pages for backend in ("duckdb", "postgres")}
    with compiled_once(True):
        for _ in range(repeats):
            for page in pages:
                for backend, location in (("duckdb", str(duck_path)), ("postgres", pg_url)):
                    os.environ["EDUART_DB"] = location
                    _clear_caches()
                    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
                    if page != "overview":
                        at.run()
                        _clear_caches()
                    times[(page, backend)].append(_render(at, page)[0])
    return [{"page": page, "duckdb_s": statistics.median(times[(page, "duckdb")]),
             "postgres_s": statistics.median(times[(page, "postgres")])} for page in pages]


# ---------------------------------------------------------------- the command

def run(args: argparse.Namespace) -> int:
    # deferred: rooms the CLI need not load to build `bench --help` (it imports every bench module)
    from eduart_core.store.copy import copy_store


    load = os.getloadavg()
    print(f"bench team: load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    summary: dict = {}
    with tempfile.TemporaryDirectory(prefix="eduart-bench-team-") as tmp, _server(args.url) as (create, drop):
        work = Path(tmp)
        os.environ["EDUART_WORK_DIR"] = str(work / "work")
        stamp = f"{os.getpid()}"
        made: list[str] = []

        def database(label: str) -> str:
            name = f"eduart_bench_{label}_{stamp}"
            made.append(name)
            return create(name)

        try:
            if "reviewers" in args.parts:
                url = database("review")
                r = bench_reviewers(url, args.reviewers, args.decisions)
                release_readers(url)
                summary["reviewers"] = r
                print(f"1. {r['reviewers']} reviewer processes x {r['decisions_each']} decisions on one PostgreSQL "
                      f"store: {r['stored']} stored, {r['lost']} lost, {r['failed']} failed; commit p50 "
                      f"{r['p50_ms']:.1f} ms, p95 {r['p95_ms']:.1f} ms, max {r['max_ms']:.1f} ms; "
                      f"{r['commits_per_s']:.0f} commits/s (target: 0 lost, 0 failed, p95 < "
                      f"{TARGETS['p95_commit_ms']:.0f} ms)")
                for e in r["errors"]:
                    print(f"   error: {e}")
            if "queue" in args.parts:
                summary["queue"] = []
                for label, think_ms in (("paced", args.think_ms), ("back to back", 0.0)):
                    url = database("queue" + ("p" if think_ms else "b"))
                    q = bench_queue(url, args.reviewers, args.asks, think_s=think_ms / 1000)
                    release_readers(url)
                    summary["queue"].append(q)
                    pace = (f"each pausing a random {think_ms:.0f} ms on average between asks" if think_ms
                            else "each asking again the moment it is answered")
                    print(f"1b. {q['reviewers']} reviewer processes asking \"next\" {q['asks']} times in all on one "
                          f"PostgreSQL store (single review), {label}: {pace}: {q['handed']} pages handed, "
                          f"{q['double']} held by two people at once, {q['failed']} failed; {q['disconnected']} "
                          f"holders vanished ({q['unserved']} more were handed nothing) and {q['lost']} of their pages "
                          f"did not come back after the hold ran out; \"next\" p50 {q['p50_ms']:.1f} ms, p95 {q['p95_ms']:.1f} ms, max {q['max_ms']:.1f} ms "
                          f"(target: 0 double, 0 lost, p95 < {TARGETS['p95_next_ms']:.0f} ms)")
                    for e in q["errors"]:
                        print(f"   error: {e}")
            if "ingest" in args.parts:
                url = database("ingest")
                pg = bench_ingest(url, work / "journals-pg", args.models, args.items, args.seed)
                release_readers(url)
                duck = bench_ingest(str(work / "ingest.duckdb"), work / "journals-duck", args.models, args.items,
                                    args.seed)
                summary["ingest"] = {"postgres": pg, "duckdb": duck}
                print(f"2. ingest of a {pg['responses']}-response launch ({pg['runs']} run journals): PostgreSQL "
                      f"{pg['seconds']:.1f} s, DuckDB file {duck['seconds']:.1f} s "
                      f"(target on PostgreSQL < {TARGETS['ingest_s']:.0f} s)")
            if "pages" in args.parts:
                os.environ.pop("EDUART_IMAGES", None)
                duck_path = work / "pages.duckdb"
                t0 = time.perf_counter()
                build_simulated_store(duck_path, models=args.models, items=args.items, seed=args.seed)
                url = database("pages")
                os.environ["EDUART_IMAGES"] = str(work / "pages_images")  # both stores read one image folder
                copy_store(Store(duck_path), Store(url))
                print(f"   (simulated store {args.models} x {args.items} built and copied to PostgreSQL in "
                      f"{time.perf_counter() - t0:.0f} s)")
                rows = bench_pages(duck_path, url, args.repeats)
                release_readers(url)
                summary["pages"] = rows
                total_d = sum(r["duckdb_s"] for r in rows)
                total_p = sum(r["postgres_s"] for r in rows)
                print(f"3. page first render, {args.models} models x {args.items} items, medians of "
                      f"{args.repeats} (s):")
                print(f"   {'page':30} {'DuckDB':>8} {'PostgreSQL':>11} {'ratio':>6}")
                for r in rows:
                    ratio = r["postgres_s"] / r["duckdb_s"] if r["duckdb_s"] else float("nan")
                    print(f"   {r['page']:30} {r['duckdb_s']:>8.2f} {r['postgres_s']:>11.2f} {ratio:>6.2f}")
                print(f"   all pages: DuckDB {total_d:.2f} s, PostgreSQL {total_p:.2f} s, ratio "
                      f"{total_p / total_d:.2f} (target <= {TARGETS['render_ratio']})")
        finally:
            for name in made:
                try:
                    drop(name)
                except Exception as exc:  # noqa: BLE001 - cleanup of a bench database
                    print(f"   (could not drop {name}: {exc})")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1, default=str), encoding="utf-8")
    return 0


PARTS = ("reviewers", "queue", "ingest", "pages")


def register(bench_sub) -> None:
    parser = bench_sub.add_parser("team", help="PostgreSQL under a team's load: concurrent reviewers, run ingest, "
                                               "page renders beside DuckDB")
    parser.add_argument("--url", default=None, help="a PostgreSQL server to use (default: start a temporary one)")
    parser.add_argument("--reviewers", type=int, default=20)
    parser.add_argument("--decisions", type=int, default=100)
    parser.add_argument("--asks", type=int, default=500, help='"next" requests in all (the queue part)')
    parser.add_argument("--think-ms", type=float, default=500.0,
                        help="mean pause of a reviewer between two asks in the paced queue round (a person reads a "
                             "page between two clicks of Next; the back-to-back round follows with no pause)")
    parser.add_argument("--models", type=int, default=12)
    parser.add_argument("--items", type=int, default=871)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS), help="which measurements")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the numbers as JSON")
    parser.set_defaults(func=run)

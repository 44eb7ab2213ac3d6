"""`bench scoring`: scoring speed of the newer formats.

Targets: open-text scoring of 2,000 answers with a cold embedding cache in under
10 s on the 2-core machine, under 1 s warm; numeric and multi-part scoring of 100,000 responses
in under 5 s.

Open text runs through a real store in a temporary folder, exactly as an import or a run stores
responses (`scoring.responses.add_responses`: parse, embed, score under both profiles, insert): *cold*
= a fresh store whose embedding cache is empty (2,000 distinct answers plus the references are
embedded), *warm* = `rescore` of the same responses (every vector comes from the store's cache).
The offline model is loaded once before timing (its load time is printed apart). Numeric and
multi-part: `score_item` on raw JSON replies, 50,000 of each, under the strict profile (the
default), and under both profiles as the store does. Every number is the median of --repeat runs;
CPU seconds (this process, all threads) are printed beside wall seconds because the machine is
shared: wall time grows with other people's load, CPU time does not.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ..vocab import DEFAULT_CONDITION, MULTI_PART_TYPE, NUMERIC_TYPE, OPEN_TEXT_TYPE, PAPER_PROFILE

_SUBJECTS = ["la Madonna", "il Bambino", "the Virgin", "the saint", "un angelo", "the donor", "il pittore",
             "the sculptor", "la figura", "the horseman", "il paesaggio", "the city", "la luce", "the shadow"]
_VERBS = ["tiene", "holds", "guarda", "looks at", "indica", "points to", "illumina", "lights",
          "copre", "covers", "circonda", "surrounds", "regge", "carries"]
_OBJECTS = ["un libro", "a lily", "il cielo", "the river", "una colonna", "a column", "il manto blu",
            "the red cloak", "la croce", "the cross", "una mela", "an apple", "le rovine", "the ruins",
            "la cupola", "the dome", "un cane", "a small dog", "la finestra", "the window"]
_EXTRAS = ["in primo piano", "in the foreground", "sullo sfondo", "in the background", "a sinistra",
           "on the left", "con dolcezza", "with care", "alla luce del tramonto", "at dusk", "", ""]


def sentence(rng: random.Random) -> str:
    """A made-up description sentence in Italian or English (mixed, as real answers are)."""
    parts = [rng.choice(_SUBJECTS), rng.choice(_VERBS), rng.choice(_OBJECTS), rng.choice(_EXTRAS)]
    return " ".join(p for p in parts if p) + rng.choice([".", "", " e nient'altro.", ", I think."])


def open_text_records(n_items: int, rng: random.Random) -> list[dict]:
    return [{"item_id": f"ot{n:04d}", "type": OPEN_TEXT_TYPE, "question_text": f"Describe detail {n} of the made-up panel.",
             "choices": None, "answers": [{"id": "A", "references": [sentence(rng) for _ in range(3)]}],
             "language": "en", "has_image": False, "image": None} for n in range(n_items)]


def _median(call: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """(median wall seconds, median CPU seconds, last result)."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        result = call()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def bench_open_text(n_answers: int, n_items: int, repeat: int, seed: int, out) -> tuple[float, float]:
    from ..embeddings.local import USEEmbedder
    from ..scoring.item_writes import upsert_items
    from ..scoring.rescore import rescore
    from ..scoring.responses import add_responses
    from ..store import Store
    from ..store.embeddings import embedding_cache_stats
    from ..store.runs import create_run, ensure_model

    start = time.perf_counter()
    USEEmbedder().embed(["warm up the offline model"])
    print(f"offline embedding model loaded in {time.perf_counter() - start:.2f} s (not timed below)", file=out)
    rng = random.Random(seed)
    records = open_text_records(n_items, rng)
    answers: set[str] = set()
    while len(answers) < n_answers:
        answers.add(sentence(rng) + f" ({len(answers)})")
    rows = [{"item_id": records[i % n_items]["item_id"], "raw_text": json.dumps({"Answers": [{"id": "A", "text": a}]}),
             "request_key": f"k{i}"} for i, a in enumerate(sorted(answers))]
    cold_times, warm_times, cold_cpu, warm_cpu = [], [], [], []
    for rep in range(repeat):
        with tempfile.TemporaryDirectory(prefix="eduart-bench-") as tmp:
            store = Store(Path(tmp) / "bench.duckdb")
            upsert_items(store, records, "bench", origin="bench")
            ensure_model(store, "bench-model", "Bench model", "Bench", "offline", "bench")
            create_run(store, "bench-run", "bench", "bench-model", DEFAULT_CONDITION, "live")
            start, cpu = time.perf_counter(), time.process_time()
            add_responses(store, "bench-run", rows)
            cold_times.append(time.perf_counter() - start)
            cold_cpu.append(time.process_time() - cpu)
            start, cpu = time.perf_counter(), time.process_time()
            written = rescore(store)
            warm_times.append(time.perf_counter() - start)
            warm_cpu.append(time.process_time() - cpu)
            if rep == 0:
                cached = int(embedding_cache_stats(store)["n"].sum())
                print(f"{len(rows):,} open-text answers to {n_items} items, {cached:,} vectors cached, "
                      f"{written:,} score rows per rescore", file=out)
    cold, warm = statistics.median(cold_times), statistics.median(warm_times)
    print(f"open text, cold cache (store + score + embed): {cold:8.3f} s  target < 10 s  "
          f"(CPU {statistics.median(cold_cpu):.3f} s; runs {', '.join(f'{t:.2f}' for t in cold_times)})", file=out)
    print(f"open text, warm cache (rescore):               {warm:8.3f} s  target <  1 s  "
          f"(CPU {statistics.median(warm_cpu):.3f} s; runs {', '.join(f'{t:.2f}' for t in warm_times)})",
          file=out, flush=True)
    return cold, warm


def numeric_and_parts(n: int, seed: int) -> list[tuple[dict, str]]:
    """n (record, raw reply) pairs, half numeric, half three-part, about half of them right."""
    rng = random.Random(seed)
    numeric = {"type": NUMERIC_TYPE, "question_text": "How many?", "choices": None,
               "answers": [{"id": "A", "value": 7, "tolerance": 0}]}
    parts = {"type": MULTI_PART_TYPE, "question_text": "Where is the dog?",
             "choices": [{"id": "A", "label": "lateral", "options": ["left", "none", "right"]},
                         {"id": "B", "label": "depth", "options": ["front", "none", "back"]},
                         {"id": "C", "label": "vertical", "options": ["up", "none", "down"]}],
             "answers": [{"id": "A", "description": "left"}, {"id": "B", "description": "back"},
                         {"id": "C", "description": "none"}]}
    words = ["sette", "seven", "7", "6", "otto", "circa 7", "7 figure", "sei o sette"]
    out = []
    for i in range(n):
        if i % 2 == 0:
            raw = json.dumps({"Answers": [{"id": "A", "text": rng.choice(words)}]})
            out.append((numeric, raw))
        else:
            given = [{"id": c["id"], "text": rng.choice(c["options"])} for c in parts["choices"]]
            out.append((parts, json.dumps({"Answers": given})))
    return out


def bench_numeric_parts(n: int, repeat: int, seed: int, out) -> tuple[float, float]:
    from ..scoring import score_item

    pairs = numeric_and_parts(n, seed)
    strict, strict_cpu, scores = _median(lambda: [score_item(r, raw).score for r, raw in pairs], repeat)
    both, both_cpu, _ = _median(
        lambda: [(score_item(r, raw).score, score_item(r, raw, PAPER_PROFILE).score) for r, raw in pairs], repeat)
    print(f"numeric + multi-part, {n:,} responses, strict:        {strict:8.3f} s  target < 5 s "
          f"(CPU {strict_cpu:.3f} s; mean score {sum(scores) / len(scores):.3f})", file=out)
    print(f"numeric + multi-part, {n:,} responses, both profiles: {both:8.3f} s  (CPU {both_cpu:.3f} s)",
          file=out, flush=True)
    return strict, both


def main(args: argparse.Namespace) -> int:
    out = sys.stdout
    print(f"bench scoring (median of {args.repeat} runs)", file=out)
    bench_open_text(args.answers, args.items, args.repeat, args.seed, out)
    bench_numeric_parts(args.responses, args.repeat, args.seed, out)
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser(
        "scoring", help="time open-text (cold/warm embedding cache), numeric and multi-part scoring",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", type=int, default=2000, help="open-text answers (default 2000)")
    parser.add_argument("--items", type=int, default=100, help="open-text items, 3 references each (default 100)")
    parser.add_argument("--responses", type=int, default=100_000,
                        help="numeric + multi-part responses (default 100000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.set_defaults(func=main)

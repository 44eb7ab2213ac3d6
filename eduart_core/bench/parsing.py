"""`bench parsing`: how fast the answer parser and the scorers are on hostile and bulk input.

Why a benchmark and not a test: the machines are shared and noisy, so timing belongs in a command
whose medians go in the closing note. Targets: a ~6 MB response with prose around the JSON parses
in under 2 s; an `Answers` list of 100,000 entries in under 3 s; 14,000 `score_item` calls (7
formats x 2 profiles x 1,000) in under 5 s.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

from ..vocab import COMPLETION_OPEN_TYPE, MCQ_TYPE


def _cases() -> dict[str, Callable[[], object]]:
    from ..answers import parse_answer
    from ..scoring import score_item
    from ..vocab import PROFILES

    prose = "Analisi della pittura veneta. " * 200_000  # ~6 MB
    huge = prose + '{"Answers": [{"id": "D"}]}' + prose + "{ non chiuso"
    many = '{"Answers": [' + ", ".join('{"id": "A", "text": "x"}' for _ in range(100_000))

    def answer(*entries: dict) -> str:
        return json.dumps({"Answers": list(entries)})

    radio = {"type": MCQ_TYPE, "choices": [{"id": "A", "text": "a"}, {"id": "B", "text": "b"}],
             "answers": [{"id": "B", "description": "b"}]}
    blank = {"type": COMPLETION_OPEN_TYPE, "question_text": "[A]", "answers": [{"id": "A", "description": "prospettiva"}]}
    pairs = [(radio, answer({"id": "B"})), (blank, answer({"id": "A", "text": "prospetiva"}))] * 7000

    def score_all() -> None:
        for item, raw in pairs:
            for profile in PROFILES:
                score_item(item, raw, profile)

    return {"parse a 6 MB response (target < 2 s)": lambda: parse_answer(huge),
            "parse 100,000 answer entries (target < 3 s)": lambda: parse_answer(many),
            "28,000 score_item calls (target < 5 s)": score_all}


def cmd(args: argparse.Namespace) -> int:
    for name, call in _cases().items():
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        print(f"{name:46} median {statistics.median(times):7.3f} s  (min {min(times):.3f}, max {max(times):.3f}, "
              f"{args.repeat} runs)")
    return 0


def register(sub) -> None:
    p = sub.add_parser("parsing", help="answer parser and scorers on hostile and bulk input")
    p.add_argument("--repeat", type=int, default=3, help="runs per case (median reported)")
    p.set_defaults(func=cmd)

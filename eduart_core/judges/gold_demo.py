"""The seeded-gold demo (`demo-gold`): a simulated lenient grader and a simulated careless reviewer,
caught by gold answers seeded into a grading round. Everything in it is simulated and labelled so.

Why a dataset of its own: the written-answers demo's round and numbers are pinned by tests and
pages; this one answers the same 24 items with the same eight simulated examinees, so nothing there
moves. Round 1: the first four examinees' answers, graded blind by the simulated panel of three and
settled by the simulated adjudicator (the gold). Round 2: the other four examinees' answers with gold
seeded at a rate of 0.4 (64 of its 160 answers), graded by three simulated people: an accurate grader,
a lenient grader (gives the point to 40% of the answers that do not earn it) and a careless reviewer
(a reviewer who grades: flips 25% of marks either way); the simulated adjudicator settles the
round's disagreements. Their marks are written in one transaction, as a file import would (the
demo must build in seconds); on the seeded answers they are gold checks, like a grader's marks
through the grading page. The round stays open, so the records and flags show what an adjudicator
or admin sees live (`show gold_flags`, `show my_gold --option rater=...`).

Idempotent: a second build finds round 2 and adds nothing.
"""
from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable

from ..store import Store
from ..team.identity import local
from ..vocab import ADJUDICATE_ROLE, DEFAULT_CONDITION, DEMO_KIND, GOLD_CHECK_ROLE, GRADE_ROLE

Progress = Callable[[str], None]
DATASET = "demo-gold"
RUBRIC = "open-v1"
SEED = 2026
N_MODELS = 8
GOLD_RATE = 0.4
TITLE = "Seeded gold demo (simulated answers and graders)"
BY = "demo (simulated)"
#: The three simulated people of round 2: (name, chance of giving the point an answer does not earn,
#: chance of taking away a point it earns).
PEOPLE = (("Sim accurate grader (simulated)", 0.04, 0.04), ("Sim lenient grader (simulated)", 0.40, 0.02),
          ("Sim careless reviewer (simulated)", 0.25, 0.25))
ADJUDICATOR = "Sim adjudicator (simulated)"


def _answers(store: Store, records: list[dict]) -> list:
    """Every simulated examinee answers every item once (runs of this dataset); returns the models."""
    from ..scoring.responses import add_responses_con
    from ..simulate import make_models
    from ..store.runs import create_run_con, current_items_con, ensure_model_con
    from .simulated import write_answer

    models = make_models(N_MODELS, SEED)
    with store.transaction() as con:
        items = current_items_con(con, DATASET)
        for model in models:
            ensure_model_con(con, model.key, model.display_name, "Simulated", "simulated", None, simulated=True)
            run_id = f"sim:{DATASET}:{model.key}:{DEFAULT_CONDITION}:s{SEED}"
            if not create_run_con(con, run_id, DATASET, model.key, DEFAULT_CONDITION, "simulated",
                                  params={"simulated": True, "seed": SEED, "ability": model.ability},
                                  status="completed", exist_ok=True):
                continue
            rows = [{"item_id": r["item_id"], "request_key": r["item_id"], "input_tokens": 420, "latency_s": 1.0,
                     "raw_text": (raw := write_answer(model.ability, r["item_id"], r["language"], SEED, model.key)),
                     "output_tokens": max(1, len(raw) // 4), "image_sent": False} for r in records]
            add_responses_con(con, run_id, rows, items=items)
    return models


def _truths(store: Store) -> dict[tuple, dict[str, int]]:
    """(item_id, model, condition) -> what each criterion truly earns (the checks, or the demo's facts)."""
    from ..store.scores import load_responses
    from .checks import run_check
    from .prompts import answer_text
    from .rubric import load_rubric
    from .simulated import deserved

    rubric = load_rubric(RUBRIC)
    responses = load_responses(store, DATASET, extra_profiles=())
    latest = responses[responses["is_latest"].astype(bool) & responses["error"].isna()]
    out = {}
    for row in latest.itertuples(index=False):
        text = answer_text(row.parsed_answers, row.raw_text)
        truth = {}
        for c in rubric.criteria:
            if c.check:
                expected = rubric.expected(c, row.item_id)
                if expected is not None:
                    truth[c.id] = int(run_check(c, expected, text))
            else:
                truth[c.id] = int(deserved(row.item_id, c.id, text) or 0)
        out[(row.item_id, row.model_key, row.condition)] = truth
    return out


def _gold(store: Store, truths: dict, first: set[str]) -> int:
    """Round 1's panel grades and adjudications of the first examinees' answers, imported like a file."""
    from .exchange import import_lines
    from .rubric import load_rubric
    from .simulated import simulated_grades

    answers = [{"dataset": DATASET, "item_id": k[0], "model": k[1], "condition": k[2], "truth": t}
               for k, t in truths.items() if k[1] in first]
    lines = [(f"simulated panel {n + 1}", {**line, "simulated": True})
             for n, line in enumerate(simulated_grades(load_rubric(RUBRIC), answers, SEED))]
    report = import_lines(store, lines, recorded_by=local(BY), source="simulated")
    if report.skipped:
        raise RuntimeError(f"demo gold grades rejected: {report.skipped[:3]}")
    return report.added


def _row(answer: dict, criterion: str, grader: str, role: str, points: int, round_: int, stamp: str) -> dict:
    key = hashlib.sha256(json.dumps([DATASET, answer["item_id"], answer["model"], answer["condition"], RUBRIC,
                                     criterion, grader, role, points, round_]).encode()).hexdigest()
    return {"grade_key": key, "dataset": DATASET, "item_id": answer["item_id"], "model": answer["model"],
            "condition": answer["condition"], "rubric": RUBRIC, "rubric_hash": None, "criterion": criterion,
            "grader": grader, "role": role, "points": float(points), "response_id": int(answer["response_id"]),
            "round": round_, "source": "simulated", "simulated": True, "note": None, "recorded_by": BY,
            "actor_subject": None, "actor_provider": None, "actor_name": None, "graded_at": stamp}


def _round_two(store: Store, truths: dict, round_: int) -> int:
    """The three simulated people mark every answer of round 2 (gold checks on the seeded ones); the
    simulated adjudicator settles the others' disagreements by what the answer earns."""
    from ..store.gold import seeds_con
    from ..store.grades import add_grades_con, round_answers_con

    rng = random.Random(SEED + 20)
    rows: list[dict] = []
    with store.connect(read_only=True) as con:
        answers = round_answers_con(con, DATASET, RUBRIC, round_).to_dict("records")
        seeded = set(seeds_con(con, DATASET, RUBRIC, round_)["token"].astype(str))
    for n, answer in enumerate(answers):
        truth = truths[(answer["item_id"], answer["model"], answer["condition"])]
        gold = str(answer["token"]) in seeded
        stamp = f"2026-11-{2 + n * 27 // len(answers):02d} 10:00:00"  # four weeks of work
        marks: dict[str, list[int]] = {}
        for name, up, down in PEOPLE:
            for criterion, right in truth.items():
                flip = rng.random() < (down if right else up)
                marks.setdefault(criterion, []).append(int(right != flip))
                rows.append(_row(answer, criterion, name, GOLD_CHECK_ROLE if gold else GRADE_ROLE,
                                 int(right != flip), round_, stamp))
        if not gold:
            rows += [_row(answer, c, ADJUDICATOR, ADJUDICATE_ROLE, truth[c], round_, stamp.replace("10:", "16:"))
                     for c, given in marks.items() if len(set(given)) > 1]
    with store.transaction() as con:
        return add_grades_con(con, rows)


def build_gold_demo(store: Store, say: Progress) -> dict:
    """`demo-gold`: a grading round with seeded gold that catches a lenient grader and a careless reviewer."""
    from ..scoring.item_writes import upsert_items
    from ..store.grades import latest_round_con
    from ..store.runs import ensure_dataset
    from .demo import _records
    from .grading import start_round

    started = time.perf_counter()
    if store.exists():
        with store.connect(read_only=True) as con:
            if (latest_round_con(con, DATASET, RUBRIC) or (0, 0))[0] >= 2:
                return {"gold_demo_seconds": 0.0}
    say("demo: seeded gold (demo-gold): a simulated lenient grader and careless reviewer checked on gold answers")
    ensure_dataset(store, DATASET, TITLE, DEMO_KIND, simulated=True,
                   description="The written-answers items answered by simulated models; a grading round seeds "
                               "settled answers (gold) among the rest and checks three simulated graders on them.")
    records = _records()
    upsert_items(store, [{k: v for k, v in r.items() if k != "sim"} for r in records], DATASET, DEMO_KIND)
    models = [m.key for m in _answers(store, records)]
    truths = _truths(store)
    first, rest = models[: N_MODELS // 2], models[N_MODELS // 2:]
    start_round(store, DATASET, RUBRIC, graders=3, set_by=local(BY), models=first, seed=SEED)
    added = _gold(store, truths, set(first))
    number = start_round(store, DATASET, RUBRIC, graders=len(PEOPLE), set_by=local(BY), models=rest, seed=SEED + 1,
                         seed_gold=GOLD_RATE)
    added += _round_two(store, truths, number)
    seconds = round(time.perf_counter() - started, 2)
    say(f"demo: seeded gold done in {seconds} s")
    return {"gold_demo_grades": added, "gold_demo_seconds": seconds}

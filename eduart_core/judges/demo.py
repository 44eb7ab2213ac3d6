"""The written-answers demo (`demo-open`): open answers, a rubric, three judges, a panel of graders.

Everything in it is simulated and labelled so: eight simulated examinees write short answers to 24
original items (12 Italian, 12 English); three simulated judges (faithful, lenient, position-biased)
mark them through the runner with the shipped rubric ``open-v1`` (twice each, with position and
verbosity probes on a sample); a simulated panel of three graders marks every answer blind on
every criterion, and a simulated adjudicator settles their disagreements. The calibration then
finds, by computation, that no judge passes the gate: the faithful judge agrees and its severity is
near the graders', but 192 answers leave its severity interval wider than the gate; the others
fail on agreement and severity.

Idempotent: runs, judge launches (resumed from their journals) and grade imports add nothing the
second time.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable

from ..store import Store
from ..team.identity import local
from ..vocab import DEFAULT_CONDITION, DEMO_KIND, DEMO_OPEN_DATASET
from .simulated import (
    DEMO_OPEN_DIR,
    SIM_JUDGES,
    SimulatedJudge,
    deserved,
    judge_spec,
    simulated_grades,
    write_answer,
)

Progress = Callable[[str], None]
RUBRIC = "open-v1"
SEED = 2026
N_MODELS = 8
REPEAT = 2
PROBES = 24
TITLE = "Written answers demo (simulated answers, judges and graders)"
BY = "demo (simulated)"


def _records() -> list[dict]:
    lines = (DEMO_OPEN_DIR / "items.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _answer(store: Store, records: list[dict]) -> int:
    """Every simulated examinee answers every item once (default condition); returns responses stored."""
    from ..scoring.responses import add_responses_con
    from ..simulate import make_models
    from ..store.runs import create_run_con, current_items_con, ensure_model_con

    stored = 0
    with store.transaction() as con:
        items = current_items_con(con, DEMO_OPEN_DATASET)
        for model in make_models(N_MODELS, SEED):
            ensure_model_con(con, model.key, model.display_name, "Simulated", "simulated", None, simulated=True)
            run_id = f"sim:{DEMO_OPEN_DATASET}:{model.key}:{DEFAULT_CONDITION}:s{SEED}"
            params = {"simulated": True, "seed": SEED, "ability": model.ability}
            if not create_run_con(con, run_id, DEMO_OPEN_DATASET, model.key, DEFAULT_CONDITION, "simulated",
                                  params=params, status="completed", exist_ok=True):
                continue
            rows = []
            for record in records:
                raw = write_answer(model.ability, record["item_id"], record["language"], SEED, model.key)
                rows.append({"item_id": record["item_id"], "raw_text": raw, "request_key": record["item_id"],
                             "input_tokens": 420, "output_tokens": max(1, len(raw) // 4), "latency_s": 1.0,
                             "image_sent": False})
            stored += add_responses_con(con, run_id, rows, items=items)
    return stored


def _judge(store: Store, say: Progress) -> int:
    """The three simulated judges mark every answer through the runner (journals beside the store)."""
    from .launch import JudgeOptions, execute_judging, plan_judging

    asked = 0
    for behaviour in SIM_JUDGES:
        spec = judge_spec(behaviour)
        options = JudgeOptions(judge=spec.key, rubric=RUBRIC, dataset=DEMO_OPEN_DATASET, repeat=REPEAT,
                               probes=PROBES, use_cache=False, concurrency=4, created_by=BY, max_attempts=1)
        plan = plan_judging(store, options, registry={spec.key: spec})
        summary = execute_judging(store, plan, providers={spec.key: SimulatedJudge(behaviour)}, progress=False,
                                  ingest_interval_s=30.0)
        asked += summary["result"].ok
        say(f"demo: {behaviour.label}: {len(plan.jobs)} judge requests ({summary['status']})")
    return asked


def _grade(store: Store) -> int:
    """The simulated panel's blind grades and the adjudicator's decisions, imported like a file."""
    from ..store.scores import load_responses
    from .checks import run_check
    from .exchange import import_lines
    from .prompts import answer_text
    from .rubric import load_rubric

    rubric = load_rubric(RUBRIC)
    responses = load_responses(store, DEMO_OPEN_DATASET, extra_profiles=())
    latest = responses[responses["is_latest"].astype(bool) & responses["error"].isna()]
    answers = []
    for row in latest.itertuples(index=False):
        text = answer_text(row.parsed_answers, row.raw_text)
        truth = {}
        for c in rubric.criteria:
            if c.check:
                expected = rubric.expected(c, row.item_id)
                if expected is not None:
                    truth[c.id] = run_check(c, expected, text)
            else:
                truth[c.id] = deserved(row.item_id, c.id, text) or 0
        answers.append({"dataset": DEMO_OPEN_DATASET, "item_id": row.item_id, "model": row.model_key,
                        "condition": row.condition, "truth": truth})
    lines = [(f"simulated panel {k + 1}", {**line, "simulated": True})
             for k, line in enumerate(simulated_grades(rubric, answers, SEED))]
    report = import_lines(store, lines, recorded_by=local(BY), source="simulated")
    if report.skipped:
        raise RuntimeError(f"demo grades rejected: {report.skipped[:3]}")
    return report.added


def build_open_answers(store: Store, say: Progress) -> dict:
    """`demo-open`: written answers with a rubric, three simulated judges and a simulated grading panel."""
    from ..scoring.item_writes import upsert_items
    from ..store.runs import ensure_dataset
    from .grading import start_round

    started = time.perf_counter()
    say("demo: written answers with a rubric (demo-open): simulated examinees, judges and graders")
    ensure_dataset(store, DEMO_OPEN_DATASET, TITLE, DEMO_KIND, simulated=True,
                   description="Original questions about artworks answered in writing by simulated models, marked "
                               "with the rubric open-v1 by three simulated judges and a simulated panel of graders.")
    records = _records()
    upsert_items(store, [{k: v for k, v in r.items() if k != "sim"} for r in records], DEMO_OPEN_DATASET, DEMO_KIND)
    responses = _answer(store, records)
    asked = _judge(store, say)
    grades = _grade(store)
    from ..store.grades import latest_round_con

    with store.connect(read_only=True) as con:
        has_round = latest_round_con(con, DEMO_OPEN_DATASET, RUBRIC) is not None
    if not has_round:
        start_round(store, DEMO_OPEN_DATASET, RUBRIC, graders=3, set_by=local(BY), seed=SEED)
    seconds = round(time.perf_counter() - started, 2)
    say(f"demo: written answers done in {seconds} s")
    return {"open_items": len(records), "open_responses": responses, "judge_requests": asked, "grades": grades,
            "open_seconds": seconds}

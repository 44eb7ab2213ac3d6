"""Answers another tool produced, written as one run of one model: the path every harness import shares.

Why one writer: lm-eval / lmms-eval samples and VLMEvalKit predictions all end the same way: a
model (registered when the store does not know it), a run of it on a dataset, its answers stored
and scored under every built-in profile by ``scoring.responses.add_responses_con`` (the path of a live run
and of ``import-responses``), and, for harness samples, the score the harness recorded per answer
under a profile named after its metric (``vocab.harness_profile_name``). Each answer's request key
is a hash of its content, so writing the same answers again adds nothing, and a recorded score of
an answer replaces the one stored before. The caller's transaction holds it all: a file is in or out.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from ..scoring.responses import add_responses_con
from ..store.connection import Connection
from ..store.judges import replace_profile_scores_con
from ..store.recorded import register_recorded_profiles_con, response_ids_by_key_con
from ..store.runs import (
    complete_if_running_con,
    create_run_con,
    current_items_con,
    ensure_model_con,
    refresh_run_totals_con,
)
from ..store.team import add_event_con
from ..vocab import DEFAULT_CONDITION


@dataclass(frozen=True)
class OutsideModel:
    """A model as another tool names it: the key, and where it runs when the tool says."""

    key: str
    provider: str | None = None
    api_model_id: str | None = None


@dataclass
class OutsideAnswer:
    """One answer to store: the item, the raw text, the answer the tool picked (None: read the
    text), and the scores the tool recorded (profile -> score in [0, 1])."""

    item_id: str
    raw_text: str
    llm_answer: list[dict] | None = None
    recorded: dict[str, float] = field(default_factory=dict)
    detail: dict = field(default_factory=dict)


@dataclass
class Written:
    """What one write did."""

    added: int = 0          # new responses (each scored under every built-in profile)
    unchanged: int = 0      # answers already stored
    recorded: int = 0       # recorded scores written (a re-import replaces them with the same values)


def request_key(origin: str, answer: OutsideAnswer) -> str:
    """Content key of an answer within its run: the same answer is the same response."""
    content = json.dumps([answer.raw_text, answer.llm_answer], ensure_ascii=False, sort_keys=True)
    return f"{answer.item_id}:{origin}:{hashlib.sha256(content.encode()).hexdigest()[:16]}"


def run_id_of(origin: str, dataset: str, model: str) -> str:
    return f"{origin}:{dataset}:{model}"


def _ensure_model(con: Connection, model: OutsideModel) -> None:
    if con.execute("SELECT 1 FROM models WHERE model = ?", [model.key]).fetchone():
        return  # a model the store knows keeps its name and family
    ensure_model_con(con, model.key, model.key, None, model.provider, model.api_model_id)


def write_answers_con(con: Connection, dataset: str, model: OutsideModel, origin: str,
                      answers: list[OutsideAnswer], actor: dict, source: str,
                      recorded_by: str | None = None) -> Written:
    """Store ``answers`` of ``model`` on ``dataset`` as the run ``origin:dataset:model`` (module doc);
    ``source``: the file (in the audit event), ``recorded_by``: the tool that recorded the scores."""
    out = Written()
    if not answers:
        return out
    run_id = run_id_of(origin, dataset, model.key)
    _ensure_model(con, model)
    create_run_con(con, run_id, dataset, model.key, DEFAULT_CONDITION, origin, status="running", exist_ok=True)
    items = current_items_con(con, dataset)
    keyed: dict[str, OutsideAnswer] = {}
    for answer in answers:
        key = request_key(origin, answer)
        if key in keyed:  # the same answer logged twice (one document under two filters): one response
            keyed[key].recorded.update(answer.recorded)
        else:
            keyed[key] = OutsideAnswer(answer.item_id, answer.raw_text, answer.llm_answer, dict(answer.recorded),
                                       answer.detail)
    rows = [{"item_id": a.item_id, "raw_text": a.raw_text, "llm_answer": a.llm_answer,
             "has_llm_answer": a.llm_answer is not None, "request_key": key, "repetition": 0, "error": None}
            for key, a in keyed.items()]
    out.added = add_responses_con(con, run_id, rows, items)
    out.unchanged = len(rows) - out.added
    if out.added:
        refresh_run_totals_con(con, run_id)
    complete_if_running_con(con, run_id)
    out.recorded = _write_recorded(con, run_id, keyed, items)
    register_recorded_profiles_con(con, dataset, {p for a in keyed.values() for p in a.recorded},
                                   recorded_by or origin)
    if out.added or out.recorded:
        add_event_con(con, origin, run_id, {"source": source, "dataset": dataset, "model": model.key,
                                            "added": out.added, "recorded": out.recorded}, actor)
    return out


def _write_recorded(con: Connection, run_id: str, keyed: dict[str, OutsideAnswer],
                    items: dict[str, tuple[int, dict]]) -> int:
    """Each recorded score under its profile, on the response it belongs to."""
    ids = response_ids_by_key_con(con, run_id, [k for k, a in keyed.items() if a.recorded])
    by_profile: dict[str, list[dict]] = {}
    for key, answer in keyed.items():
        for profile, score in answer.recorded.items():
            if key not in ids:
                continue
            by_profile.setdefault(profile, []).append({
                "response_id": ids[key], "item_version": items[answer.item_id][0], "score": score,
                "correct": score >= 1.0, "details": [{"recorded": profile, "score": score, **answer.detail}],
                "scorer": profile})
    return sum(replace_profile_scores_con(con, profile, rows) for profile, rows in sorted(by_profile.items()))

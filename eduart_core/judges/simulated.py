"""Simulated examinees, judges and graders of the written-answers demo (always labelled simulated).

Why simulate all three: the calibration must be explorable with no key and no network, and it
must show what it is for: a judge that agrees with the graders passes, a lenient one and one
swayed by the order of the options fail, for reasons the calibration computes, not by decree.

How it works: each demo item carries (in bookkeeping fields the importer ignores) the facts an
answer may get right or wrong: the artist, the date, the technique, visual features that support
the attribution, and whom the work was made for. A simulated examinee writes a few sentences
from those facts, each part right with a probability that follows its ability. What an answer
truly deserves on the judge criteria is read from its words (does it name one of the item's
visual features? the right patron or place?), and on the checked criteria it is what the checks
compute. Graders and judges start from that truth:

- graders (a panel of three, and an adjudicator) slip now and then, at their own rates;
- the faithful judge slips rarely;
- the lenient judge often gives the point an answer does not earn, and rewards padding;
- the position-biased judge often takes whichever option the prompt lists first.

Judges answer through the runner like any model: `SimulatedJudge` is an offline provider that
reads the request's task (the item, the criterion, the answer and the option order it was shown).
"""
from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..providers.base import ProviderReply, ProviderRequest
from ..providers.registry import ModelSpec
from ..text import norm_strict
from ..vocab import ADJUDICATE_ROLE, GRADE_ROLE, PADDED_PROBE, SIMULATED_KIND
from .rubric import Rubric

DEMO_OPEN_DIR = Path(__file__).resolve().parents[2] / "data" / "demo" / "open"

#: How hard each part of an answer is to get right (logit, subtracted from the examinee's ability).
PART_DIFFICULTY = {"attribution": -0.8, "date": -0.1, "technique": -0.4, "evidence": 0.1, "context": 0.5}


def _rng(*parts: object) -> random.Random:
    return random.Random(hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest())


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@lru_cache(maxsize=4)
def demo_facts(folder: str = str(DEMO_OPEN_DIR)) -> dict[str, dict]:
    """item id -> the facts of the demo item (its ``sim`` bookkeeping field)."""
    out = {}
    for line in (Path(folder) / "items.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            out[str(record["item_id"])] = record["sim"]
    return out


# ---------------------------------------------------------------- examinees

_PHRASES = {
    "it": {"who": "L'opera è di {artist}", "unknown": "Non so chi ne sia l'autore", "date": ", realizzata intorno al {year}",
           "technique": ", in {technique}.", "no_technique": ".", "evidence": " Lo mostra {evidence}.",
           "weak": " Lo si capisce perché è un'opera molto bella e famosa.", "context": " Fu realizzata per {context}.",
           "wrong_context": " Fu realizzata per {context}."},
    "en": {"who": "The work is by {artist}", "unknown": "I do not know who made it", "date": ", made around {year}",
           "technique": ", in {technique}.", "no_technique": ".", "evidence": " This shows in {evidence}.",
           "weak": " You can tell because it is a very beautiful and famous work.", "context": " It was made for {context}.",
           "wrong_context": " It was made for {context}."},
}


def _year(date, right: bool, rng: random.Random) -> int:
    low, high = (date, date) if isinstance(date, int) else (min(date), max(date))
    if right:
        return int(rng.randint(low - 15, high + 15))
    far = rng.randint(80, 160)
    return int(low - far if high + far > 2020 or rng.random() < 0.5 else high + far)


def write_answer(ability: float, item_id: str, language: str, seed: int, model_key: str) -> str:
    """A simulated examinee's answer (the raw reply, JSON as the prompt asks) to one demo item."""
    facts = demo_facts()[item_id]
    words = _PHRASES.get(language, _PHRASES["en"])
    rng = _rng("open-answer", seed, model_key, item_id)
    knows = {part: rng.random() < _sigmoid(ability - d + rng.gauss(0.0, 0.3)) for part, d in PART_DIFFICULTY.items()}
    if knows["attribution"] or rng.random() < 0.6:
        text = words["who"].format(artist=facts["artist"] if knows["attribution"] else facts["wrong_artist"])
    else:
        text = words["unknown"]
    text += words["date"].format(year=_year(facts["date"], knows["date"], rng))
    text += words["technique"].format(technique=facts["technique"] if knows["technique"] else facts["wrong_technique"])
    text += words["evidence"].format(evidence=rng.choice(facts["evidence"])) if knows["evidence"] else words["weak"]
    if knows["context"]:
        text += words["context"].format(context=facts["context"][0])
    elif rng.random() < 0.6:
        text += words["wrong_context"].format(context=facts["wrong_context"])
    return json.dumps({"Answers": [{"id": "A", "text": text}]}, ensure_ascii=False)


def deserved(item_id: str, criterion: str, text: str) -> int | None:
    """What an answer truly earns on a judge criterion of the demo rubric (None: not a judged one)."""
    facts = demo_facts().get(item_id)
    if facts is None:
        return None
    folded = f" {norm_strict(text)} "
    if criterion == "evidence":
        return int(any(f" {norm_strict(p)} " in folded for p in facts["evidence"]))
    if criterion == "context":
        return int(any(f" {norm_strict(p)} " in folded for p in facts["context"]))
    return None


# ---------------------------------------------------------------- judges

@dataclass(frozen=True)
class JudgeBehaviour:
    """How a simulated judge departs from what an answer deserves."""

    key: str
    label: str
    slip: float = 0.03            # a random wrong mark
    lenient: float = 0.0          # a point given that the answer does not earn
    padding: float = 0.0          # a point given for length alone (the padded answer)
    first_listed: float = 0.0     # whichever option the prompt lists first, whatever the answer


SIM_JUDGES: tuple[JudgeBehaviour, ...] = (
    JudgeBehaviour("sim-judge-faithful", "Sim judge Faithful (simulated)", slip=0.03),
    JudgeBehaviour("sim-judge-lenient", "Sim judge Lenient (simulated)", slip=0.03, lenient=0.45, padding=0.6),
    JudgeBehaviour("sim-judge-position", "Sim judge Position-biased (simulated)", slip=0.03, first_listed=0.5),
)


def judge_spec(behaviour: JudgeBehaviour) -> ModelSpec:
    """A simulated judge as a model of the registry would be (offline, simulated, temperature 0)."""
    return ModelSpec(key=behaviour.key, display_name=behaviour.label, family="Simulated", provider="offline",
                     api_model_id=f"{behaviour.key}-2026", accepts_images=False, temperature=0.0,
                     kind=SIMULATED_KIND)


class SimulatedJudge:
    """An offline provider answering judge requests the way its `JudgeBehaviour` says."""

    def __init__(self, behaviour: JudgeBehaviour):
        self.behaviour = behaviour

    def complete(self, request: ProviderRequest) -> ProviderReply:
        task = request.item or {}
        b = self.behaviour
        order = list(task.get("order") or [0, 1])
        truth = deserved(str(task.get("item_id")), str(task.get("criterion")), str(task.get("answer") or ""))
        truth = 0 if truth is None else truth
        rng = _rng("judge", b.key, task.get("item_id"), task.get("criterion"),
                   hashlib.sha256(str(task.get("answer")).encode()).hexdigest(), task.get("probe"),
                   task.get("repetition"), "|".join(map(str, order)))
        points = truth
        top = max(order)
        if b.first_listed and rng.random() < b.first_listed:
            points = order[0]
        elif truth < top and b.lenient and rng.random() < b.lenient:
            points = top
        elif truth < top and b.padding and task.get("probe") == PADDED_PROBE and rng.random() < b.padding:
            points = top
        elif rng.random() < b.slip:
            points = rng.choice([p for p in order if p != truth])
        reason = "The answer names a supporting feature." if points else "The answer does not meet the criterion."
        text = json.dumps({"points": int(points), "reason": reason})
        return ProviderReply(text, 400 + len(request.user_text) // 4, 18, "stop")


# ---------------------------------------------------------------- graders

@dataclass(frozen=True)
class Grader:
    name: str
    slip: float          # a random wrong mark
    harsh: float = 0.0   # a point withheld that the answer earns


SIM_GRADERS: tuple[Grader, ...] = (Grader("Sim grader A (simulated)", 0.02), Grader("Sim grader B (simulated)", 0.025),
                                   Grader("Sim grader C (simulated)", 0.02, harsh=0.02))
SIM_ADJUDICATOR = Grader("Sim adjudicator (simulated)", 0.01)


def _mark(grader: Grader, truth: int, top: int, rng: random.Random) -> int:
    if truth == top and grader.harsh and rng.random() < grader.harsh:
        return 0
    if rng.random() < grader.slip:
        return rng.choice([p for p in range(top + 1) if p != truth])
    return truth


def simulated_grades(rubric: Rubric, answers: list[dict], seed: int) -> list[dict]:
    """Import lines of the panel's blind grades of every answer on every criterion, and the
    adjudicator's marks where the panel disagreed (``answers``: dataset, item_id, model, condition,
    text, and ``truth``: criterion -> points)."""
    lines = []
    for a in answers:
        for criterion in rubric.criteria:
            if not rubric.applies(criterion, a["item_id"]):
                continue
            truth = int(a["truth"][criterion.id])
            marks = []
            for grader in SIM_GRADERS:
                rng = _rng("grade", seed, grader.name, a["item_id"], a["model"], a["condition"], criterion.id)
                marks.append(_mark(grader, truth, criterion.points, rng))
                lines.append({"dataset": a["dataset"], "item_id": a["item_id"], "model": a["model"],
                              "condition": a["condition"], "rubric": rubric.name, "criterion": criterion.id,
                              "grader": grader.name, "points": marks[-1], "role": GRADE_ROLE})
            if len(set(marks)) > 1:
                rng = _rng("adjudicate", seed, a["item_id"], a["model"], a["condition"], criterion.id)
                lines.append({"dataset": a["dataset"], "item_id": a["item_id"], "model": a["model"],
                              "condition": a["condition"], "rubric": rubric.name, "criterion": criterion.id,
                              "grader": SIM_ADJUDICATOR.name, "role": ADJUDICATE_ROLE,
                              "points": _mark(SIM_ADJUDICATOR, truth, criterion.points, rng)})
    return lines

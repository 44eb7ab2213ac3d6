"""A simulated panel of people for the demo: students and experts who sat sampled forms.

Why simulated people: the comparison of models and people must be explorable on a fresh clone,
with no class of students at hand. Each simulated person is an item-response examinee on the same
logit scale as the demo's simulated models (`eduart_core.simulate`): students recognise better than
they produce, experts produce well (open completion, spotting errors), and every person sits a form
drawn by the exam page's own sampler (`humans.forms.sample_form`). Their answers are written as the
page writes a real person's (``{"Answers": [...]}``) and go through the same parser and scorers.
Everything is labelled simulated: the respondents' origin, the models' ``simulated`` flag, the
dataset. Seeded: the same panel on every build.
"""
from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from ..scoring.responses import add_responses_con
from ..simulate.models import SimModel, skill_offsets
from ..simulate.responder import intended_answers, plan_item
from ..store import Store
from ..store import humans as db
from ..store.runs import create_run_con, current_items_con, refresh_run_totals_con
from ..vocab import DEFAULT_CONDITION
from . import forms
from .people import ALPHABET, PREFIX, register_con

ORIGIN = "simulated"
SEED = 2026


@dataclass(frozen=True)
class PanelGroup:
    """One group of simulated people: size, ability (mean, SD) and offsets by kind of format."""

    group: str
    size: int
    ability: float
    spread: float
    recognition: float
    production: float
    image_effect: float
    seconds: float              # median seconds per item
    per_cell: int               # items per format and language on each form


#: The demo's panel: a class of students and a few experts.
DEMO_PANEL: tuple[PanelGroup, ...] = (
    PanelGroup("student", 16, -0.1, 0.6, 0.3, -0.4, -0.1, 35.0, 4),
    PanelGroup("expert", 8, 1.5, 0.4, 0.2, 0.9, 0.3, 25.0, 4),
)


def _pseudonym(rng: random.Random, taken: set[str]) -> str:
    while True:
        name = PREFIX + "".join(rng.choice(ALPHABET) for _ in range(6))
        if name not in taken:
            taken.add(name)
            return name


def build_panel(store: Store, dataset: str, say: Callable[[str], None] | None = None,
                panel: tuple[PanelGroup, ...] = DEMO_PANEL, seed: int = SEED) -> dict:
    """Add the simulated panel to ``dataset`` (nothing when it is there already); returns counts."""
    say = say or (lambda _: None)
    run_prefix = f"sim-people:{dataset}:"
    have = db.count_runs(store, dataset, run_prefix)
    if have:
        return {"people": int(have)}
    with store.connect(read_only=True) as con:
        items = current_items_con(con, dataset)
    records = {item_id: {**record, "item_id": item_id} for item_id, (_v, record) in items.items()}
    pool = forms.form_items(records.values())
    plans = {item_id: plan_item(record, seed) for item_id, record in records.items()}
    rng = random.Random(f"people|{dataset}|{seed}")
    taken = db.taken_pseudonyms(store)
    people, responses = 0, 0
    with store.transaction() as con:
        for spec in panel:
            for _ in range(spec.size):
                respondent = _pseudonym(rng, taken)
                theta = rng.gauss(spec.ability, spec.spread)
                offsets = skill_offsets(spec.recognition, spec.production)
                person = SimModel(respondent, respondent, round(theta, 4), offsets, image_effect=spec.image_effect,
                                  malformed_rate=0.0)
                form = forms.sample_form(pool, spec.per_cell, f"{seed}|{respondent}")
                register_con(con, respondent, spec.group, origin=ORIGIN, simulated=True)
                run_id = run_prefix + respondent
                create_run_con(con, run_id, dataset, respondent, DEFAULT_CONDITION, ORIGIN, status="completed",
                               params={"simulated": True, "group": spec.group, "ability": person.ability,
                                       "seed": seed})
                rows = []
                for item_id in form:
                    shared = random.Random(f"{seed}|{respondent}|{item_id}")
                    answers = intended_answers(person, plans[item_id], DEFAULT_CONDITION, shared)
                    seconds = spec.seconds * math.exp(shared.gauss(0.0, 0.5))
                    rows.append({"item_id": item_id, "raw_text": json.dumps({"Answers": answers}, ensure_ascii=False),
                                 "request_key": f"{item_id}:answer", "repetition": 0,
                                 "latency_s": round(seconds, 1), "error": None})
                responses += add_responses_con(con, run_id, rows, items)
                refresh_run_totals_con(con, run_id)
                people += 1
    say(f"demo: a simulated panel of {people} people ({', '.join(f'{g.size} {g.group}s' for g in panel)}) "
        f"answered {responses} sampled items")
    return {"people": people, "people_responses": responses}


__all__ = ["DEMO_PANEL", "ORIGIN", "PanelGroup", "build_panel"]

"""Simulated respondents of the study demos: eleven models in four families, open and closed.

Why simulate this way: the study pages must show what real panels show (families whose sizes rank
in order, an open model that beats a closed one on some task, models lured by one kind of
distractor, models that refuse or write prose instead of the asked JSON) without API keys. Each
model has an ability, offsets per task or dimension, a taste for plausible distractors (`lure`) and
rates of invalid output. It writes raw response text only; the store's real parser and scorers read
it like any model output, so an invalid answer is invalid because the parser cannot read it.
Each format writes its own answers (`AnswerFormat.study_answer`).
"""
from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field

from ..formats import find_format
from ..vocab import CLOSED_ACCESS, OPEN_ACCESS

#: How tempting a kind of wrong option is to a model that does not know (1 = no pull).
PLAUSIBILITY: dict[str, float] = {
    "colour elsewhere in the picture": 2.5, "neighbouring place": 2.5, "off by one": 3.0, "reversed relation": 2.5,
    "held by another person": 2.5, "another time of day": 1.5, "refuses to infer": 0.4,
    "same category, other object": 2.5, "nearby box": 2.5, "same scene, other person": 2.5,
    "piece from the same picture": 2.5, "similar emotion": 2.5, "visually similar building": 2.5,
    "related scene type": 2.5, "object elsewhere in the picture": 2.0, "similar shape": 2.0, "mirrored piece": 2.0,
    "none of the above": 0.5,
}
#: Mean item difficulty (logit) per task or dimension: counting and relations are hard, as published.
DIFFICULTY: dict[str, float] = {
    "Instance Counting": 0.8, "Spatial Relation": 0.6, "Instance Location": 0.3, "Instance Interaction": 0.2,
    "Instance Attribute": 0.0, "Instance Identity": -0.3, "Visual-Inspired Reasoning": -0.5,
    "Object Count": 0.7, "Relative Position": 1.4, "Remote Interaction": 0.6, "Jigsaw Puzzle": 1.0,
    "Emotion Detection": 0.8, "Activity Localization": 0.2, "Cultural Identification": 0.4,
}


@dataclass(frozen=True)
class StudyModel:
    """One simulated respondent (logit-scale ability, like a 2PL examinee)."""

    key: str
    display_name: str
    family: str
    access: str
    ability: float
    offsets: dict[str, float] = field(default_factory=dict)   # per task or dimension
    lure: float = 1.0              # 0: wrong answers uniform; higher: drawn to plausible distractors
    refusal_rate: float = 0.01
    prose_rate: float = 0.02       # answers in prose, no JSON
    bad_option_rate: float = 0.01  # names an option that does not exist
    fence_rate: float = 0.2        # wraps the JSON in a markdown fence (still readable)

    def lure_weight(self, option: dict) -> float:
        """How strongly a wrong option draws this model (its `distractor_type`'s plausibility ** `lure`)."""
        return PLAUSIBILITY.get(str(option.get("distractor_type")), 1.0) ** self.lure


#: The panel: 11 models, 4 families, open and closed (display names start with "Sim ": simulated).
STUDY_MODELS: tuple[StudyModel, ...] = (
    StudyModel("sim-aurora-pro", "Sim Aurora Pro", "Sim Aurora", CLOSED_ACCESS, 1.6,
               {"Visual-Inspired Reasoning": 0.4, "Instance Counting": -0.3, "Jigsaw Puzzle": -0.6}, 0.8, 0.02),
    StudyModel("sim-aurora-flash", "Sim Aurora Flash", "Sim Aurora", CLOSED_ACCESS, 1.1,
               {"Instance Counting": -0.4}, 1.0, 0.01, 0.01),
    StudyModel("sim-aurora-lite", "Sim Aurora Lite", "Sim Aurora", CLOSED_ACCESS, 0.5, {}, 1.3, 0.01, 0.03),
    StudyModel("sim-basalt-72b", "Sim Basalt 72B", "Sim Basalt", OPEN_ACCESS, 1.2,
               {"Instance Counting": 0.5, "Object Count": 0.6, "Spatial Relation": 0.3}, 0.9, 0.0, 0.02),
    StudyModel("sim-basalt-32b", "Sim Basalt 32B", "Sim Basalt", OPEN_ACCESS, 0.8,
               {"Instance Counting": 0.4, "Object Count": 0.4}, 1.1, 0.0, 0.03),
    StudyModel("sim-basalt-7b", "Sim Basalt 7B", "Sim Basalt", OPEN_ACCESS, 0.1, {"Object Count": 0.2}, 1.4, 0.0,
               0.06, 0.03),
    StudyModel("sim-cirrus-38b", "Sim Cirrus 38B", "Sim Cirrus", OPEN_ACCESS, 0.9,
               {"Relative Position": 0.5, "Spatial Relation": 0.5, "Emotion Detection": -0.5}, 1.0, 0.01, 0.02),
    StudyModel("sim-cirrus-8b", "Sim Cirrus 8B", "Sim Cirrus", OPEN_ACCESS, 0.3, {"Spatial Relation": 0.3}, 1.6, 0.01,
               0.05, 0.02),
    StudyModel("sim-cirrus-2b", "Sim Cirrus 2B", "Sim Cirrus", OPEN_ACCESS, -0.6, {}, 2.0, 0.01, 0.10, 0.05),
    StudyModel("sim-dune-vision", "Sim Dune Vision", "Sim Dune", CLOSED_ACCESS, 1.0,
               {"Instance Identity": 0.5, "Cultural Identification": 0.8, "Instance Location": -0.4}, 0.7, 0.06, 0.01),
    StudyModel("sim-dune-mini", "Sim Dune Mini", "Sim Dune", CLOSED_ACCESS, 0.0,
               {"Instance Identity": 0.3}, 1.2, 0.08, 0.02, 0.02),
)

REFUSALS = ("I'm sorry, I cannot determine this from the image.",
            "I am unable to answer questions about people in images.",
            "Sorry, but I can't tell from this picture.")
PROSE = ("Looking at the picture, the answer seems to be the second option, although it is hard to be sure.",
         "The scene is ambiguous; I would lean towards the one on the left.",
         "It looks like there might be several of them, perhaps a few.")


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def item_parameters(record: dict, seed: int) -> tuple[float, float]:
    """(difficulty, discrimination) of an item: its task's or dimension's mean plus a seeded spread."""
    rng = random.Random(f"study-item|{seed}|{record['item_id']}")
    group = record.get("task") or record.get("dimension") or ""
    difficulty = DIFFICULTY.get(group, 0.0) + rng.gauss(0.0, 0.8)
    return difficulty, min(2.5, max(0.5, math.exp(rng.gauss(0.2, 0.3))))


def know_probability(model: StudyModel, record: dict, seed: int) -> float:
    difficulty, slope = item_parameters(record, seed)
    group = record.get("task") or record.get("dimension") or ""
    return _sigmoid(slope * (model.ability + model.offsets.get(group, 0.0) - difficulty))


def _render(answers: list[dict], fenced: bool) -> str:
    body = json.dumps({"Answers": answers}, ensure_ascii=False)
    return f"```json\n{body}\n```" if fenced else body


def respond(model: StudyModel, record: dict, seed: int, prior_right: bool | None = None) -> tuple[str, bool]:
    """(raw text, right by intent) of one model on one item, invalid output included at the model's rates.

    ``prior_right``: in a dialogue, whether the model got the previous turn right; later turns build on
    the model's own earlier answers, so a mistake makes the next turn harder (and a right answer easier).
    """
    rng = random.Random(f"study-answer|{seed}|{model.key}|{record['item_id']}")
    roll = rng.random()
    if roll < model.refusal_rate:
        return rng.choice(REFUSALS), False
    roll -= model.refusal_rate
    if roll < model.prose_rate:
        return rng.choice(PROSE), False
    roll -= model.prose_rate
    fmt = find_format(record.get("type"))
    invalid = fmt.study_invalid(record) if fmt is not None else None
    if roll < model.bad_option_rate and invalid is not None:
        return invalid, False
    p = know_probability(model, record, seed)
    if prior_right is not None:
        p = min(1.0, p * 1.15) if prior_right else p * 0.5
    written = fmt.study_answer(record, p, model, rng) if fmt is not None else None
    if written is None:  # a format the study demos do not simulate (nothing drawn from rng yet)
        return rng.choice(PROSE), False
    answers, right = written
    return _render(answers, rng.random() < model.fence_rate), right


def model_params(model: StudyModel, seed: int) -> dict:
    """What a page may show about a simulated study run (the parameters it was generated from)."""
    return {"simulated": True, "seed": seed, "ability": model.ability, "offsets": model.offsets, "lure": model.lure,
            "refusal_rate": model.refusal_rate, "prose_rate": model.prose_rate,
            "bad_option_rate": model.bad_option_rate}

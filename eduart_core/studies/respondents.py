"""Simulated respondents of the study demos: eleven models in four families, open and closed.

Why simulate this way: the study pages must show what real panels show (families whose sizes rank
in order, an open model that beats a closed one on some task, models lured by one kind of
distractor, models that refuse or write prose instead of the asked JSON) without API keys. Each
model has an ability, offsets per task or dimension, a taste for plausible distractors (`lure`) and
rates of invalid output. It writes raw response text only; the store's real parser and scorers read
it like any model output, so an invalid answer is invalid because the parser cannot read it.
One answer writer per format, listed in `ANSWER_WRITERS`.
"""
from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from ..vocab import CLOSED_ACCESS, MCQ_TYPE, MULTI_PART_TYPE, NUMERIC_TYPE, OPEN_ACCESS, OPEN_TEXT_TYPE

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


def _wrong_choice(choices: list[dict], gold: set[str], model: StudyModel, rng: random.Random) -> str:
    """A wrong option, drawn towards plausible distractor kinds as much as the model's `lure` says."""
    wrong = [c for c in choices if str(c.get("id")) not in gold]
    weights = [PLAUSIBILITY.get(str(c.get("distractor_type")), 1.0) ** model.lure for c in wrong]
    return str(rng.choices(wrong, weights=weights)[0]["id"])


def write_choice(record: dict, p: float, model: StudyModel, rng: random.Random) -> tuple[list[dict], bool]:
    """A one-option item: the right id with probability p, else a tempting wrong one."""
    choices = [c for c in record.get("choices") or [] if isinstance(c, dict)]
    gold = {str(a.get("id")) for a in record.get("answers") or [] if isinstance(a, dict)}
    if (rng.random() < p and gold) or len(choices) <= len(gold):
        return [{"id": sorted(gold)[0] if gold else "A"}], True
    return [{"id": _wrong_choice(choices, gold, model, rng)}], False


NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def write_number(record: dict, p: float, model: StudyModel, rng: random.Random) -> tuple[list[dict], bool]:
    """A count: right with probability p, else off by one (the usual slip) or further; digits or a word."""
    gold = int((record.get("answers") or [{}])[0].get("value") or 0)
    value = gold
    if rng.random() >= p:
        step = 1 if rng.random() < 0.5 + 0.15 * model.lure else rng.choice((2, 3))
        value = max(0, gold + step if rng.random() < 0.5 or gold - step < 0 else gold - step)
    text = NUMBER_WORDS[value] if value < len(NUMBER_WORDS) and rng.random() < 0.3 else str(value)
    return [{"id": "A", "text": text}], value == gold


def write_parts(record: dict, p: float, model: StudyModel, rng: random.Random) -> tuple[list[dict], bool]:
    """A multi-part answer: each part right with probability p ** (1 / parts), so all parts right about p."""
    gold = {str(a.get("id")): a.get("description") for a in record.get("answers") or [] if isinstance(a, dict)}
    parts = [c for c in record.get("choices") or [] if isinstance(c, dict)]
    p_part = p ** (1.0 / max(1, len(parts)))
    out = []
    for c in parts:
        ident, options = str(c.get("id")), [str(o) for o in c.get("options") or []]
        if rng.random() < p_part or len(options) < 2:
            out.append({"id": ident, "text": gold.get(ident)})
        else:
            out.append({"id": ident, "text": rng.choice([o for o in options if o != gold.get(ident)])})
    return out, all(e["text"] == gold.get(e["id"]) for e in out)


UNRELATED = ("The picture shows a quiet scene with several objects.", "The colours of the painting are bright.",
             "There is a building far away on the horizon.", "It is hard to say; the scene is ordinary.",
             "The sky takes up the top of the picture.")
HEDGES = ("I think ", "Probably ", "It seems that ", "")


def write_text(record: dict, p: float, model: StudyModel, rng: random.Random) -> tuple[list[dict], bool]:
    """A free-text answer: close to a reference with probability p (reworded), else an unrelated sentence."""
    references = [str(r) for r in (record.get("answers") or [{}])[0].get("references") or []]
    if references and rng.random() < p:
        sentence = rng.choice(references)
        return [{"id": "A", "text": rng.choice(HEDGES) + sentence[0].lower() + sentence[1:]}], True
    return [{"id": "A", "text": rng.choice(UNRELATED)}], False


#: One answer writer per format (explicit): (record, p_know, model, rng) -> (the Answers list, right?).
ANSWER_WRITERS: dict[str, Callable[[dict, float, StudyModel, random.Random], tuple[list[dict], bool]]] = {
    MCQ_TYPE: write_choice,
    NUMERIC_TYPE: write_number,
    MULTI_PART_TYPE: write_parts,
    OPEN_TEXT_TYPE: write_text,
}


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
    if roll < model.bad_option_rate and record.get("type") == NUMERIC_TYPE:
        return "Maybe two or three, it is hard to count.", False  # two numbers: no single count to read
    if roll < model.bad_option_rate and record.get("type") == MCQ_TYPE and record.get("choices"):
        return _render([{"id": "E" if len(record["choices"]) < 5 else "Z"}], False), False
    writer = ANSWER_WRITERS.get(str(record.get("type")))
    if writer is None:
        return rng.choice(PROSE), False
    p = know_probability(model, record, seed)
    if prior_right is not None:
        p = min(1.0, p * 1.15) if prior_right else p * 0.5
    answers, right = writer(record, p, model, rng)
    return _render(answers, rng.random() < model.fence_rate), right


def model_params(model: StudyModel, seed: int) -> dict:
    """What a page may show about a simulated study run (the parameters it was generated from)."""
    return {"simulated": True, "seed": seed, "ability": model.ability, "offsets": model.offsets, "lure": model.lure,
            "refusal_rate": model.refusal_rate, "prose_rate": model.prose_rate,
            "bad_option_rate": model.bad_option_rate}

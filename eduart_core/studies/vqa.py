"""`demo-vqa`: an original VQArt-style benchmark of four-option questions on generated scenes.

Why this shape: VQArt-Bench asks four-option questions about artworks in seven reasoning
dimensions (instance identity, attribute, location, counting, spatial relation, interaction,
visual-inspired reasoning) and describes each image by attributes. Here every question is written
from a `scenes.Scene` whose contents are known by construction, so every gold answer is right by
construction, and every wrong option is labelled with the kind of trap it is (`distractor_type`).
Several questions share one picture, as in the real benchmark, which is why the analysis clusters
its intervals by image. One builder per dimension, listed in `QUESTION_BUILDERS`.
"""
from __future__ import annotations

import random
from collections.abc import Callable

from ..text import letter_id
from ..vocab import MCQ_TYPE
from .scenes import COLOURS, GROUND_THINGS, HELD_THINGS, INDOOR_THINGS, SKY_THINGS, TIMES, Scene, place_name

DIMENSIONS: tuple[str, ...] = (
    "Instance Identity", "Instance Attribute", "Instance Location", "Instance Counting", "Spatial Relation",
    "Instance Interaction", "Visual-Inspired Reasoning",
)
#: Questions per dimension: unequal, like VQArt-Bench's Table 1, so that a micro and a macro overall differ.
PER_DIMENSION: dict[str, int] = dict(zip(DIMENSIONS, (10, 14, 12, 8, 10, 8, 12)))
SCENES_FOLDER = "scenes"
Question = dict  # question_text, right, wrong: [(text, distractor_type)], kind


def _identity(scene: Scene, rng: random.Random) -> list[Question]:
    present = sorted({t.kind for t in scene.things})
    absent = sorted(set(GROUND_THINGS + SKY_THINGS + INDOOR_THINGS) - set(present))
    if not present or len(absent) < 3:
        return []
    right = rng.choice(present)
    wrong = [(k, "absent object") for k in rng.sample(absent, 3)]
    return [{"question_text": "Which of these objects appears in the picture?", "right": right, "wrong": wrong,
             "kind": "object present"}]


def _attribute(scene: Scene, rng: random.Random) -> list[Question]:
    out = []
    kinds = [t.kind for t in scene.things]
    for t in scene.things:
        if kinds.count(t.kind) != 1:
            continue
        elsewhere = sorted({o.colour for o in scene.things if o.colour != t.colour}
                           | {f.colour for f in scene.figures if f.colour != t.colour})
        other = sorted(set(COLOURS) - set(elsewhere) - {t.colour})
        picks = [(c, "colour elsewhere in the picture") for c in rng.sample(elsewhere, min(2, len(elsewhere)))]
        picks += [(c, "colour not in the picture") for c in rng.sample(other, 3 - len(picks))]
        out.append({"question_text": f"What colour is the {t.kind}?", "right": t.colour, "wrong": picks,
                    "kind": "colour"})
    return out


def _neighbours(row: int, col: int) -> set[tuple[int, int]]:
    return {(r, c) for r in range(3) for c in range(3) if abs(r - row) + abs(c - col) == 1}


def _location(scene: Scene, rng: random.Random) -> list[Question]:
    out = []
    kinds = [t.kind for t in scene.things]
    for t in scene.things:
        if kinds.count(t.kind) != 1:
            continue
        near = sorted(_neighbours(t.row, t.col))
        far = sorted({(r, c) for r in range(3) for c in range(3)} - set(near) - {(t.row, t.col)})
        picks = [(place_name(*p), "neighbouring place") for p in rng.sample(near, min(2, len(near)))]
        picks += [(place_name(*p), "distant place") for p in rng.sample(far, 3 - len(picks))]
        out.append({"question_text": f"Where in the picture is the {t.kind}?", "right": place_name(t.row, t.col),
                    "wrong": picks, "kind": "place"})
    return out


def _count_options(n: int) -> list[tuple[str, str]]:
    near = [v for v in (n - 1, n + 1) if v >= 0]
    far = [v for v in (n + 2, n + 3, n - 2) if v >= 0 and v not in near]
    picks = [(str(v), "off by one") for v in near] + [(str(v), "off by more than one") for v in far]
    return picks[:3]


def _counting(scene: Scene, rng: random.Random) -> list[Question]:
    out = [{"question_text": "How many people are in the picture?", "right": str(len(scene.figures)),
            "wrong": _count_options(len(scene.figures)), "kind": "people"}]
    held = sum(1 for f in scene.figures if f.holding)
    if scene.figures:
        out.append({"question_text": "How many people are holding something?", "right": str(held),
                    "wrong": _count_options(held), "kind": "holding"})
    return out


def _relation(scene: Scene, rng: random.Random) -> list[Question]:
    objects = [(t.kind, t.row, t.col) for t in scene.things if [o.kind for o in scene.things].count(t.kind) == 1]
    out = []
    for a in objects:
        for b in objects:
            if a is b:
                continue
            if a[1] == b[1] and a[2] != b[2]:
                right, reverse = ("to the left of", "to the right of") if a[2] < b[2] else \
                    ("to the right of", "to the left of")
                other = ["above", "below"]
            elif a[2] == b[2] and a[1] != b[1]:
                right, reverse = ("above", "below") if a[1] < b[1] else ("below", "above")
                other = ["to the left of", "to the right of"]
            else:
                continue
            out.append({"question_text": f"Where is the {a[0]} relative to the {b[0]}?", "right": right,
                        "wrong": [(reverse, "reversed relation")] + [(o, "other direction") for o in other],
                        "kind": "relation"})
    rng.shuffle(out)
    return out[:2]


def _interaction(scene: Scene, rng: random.Random) -> list[Question]:
    out = []
    for f in scene.figures:
        if not f.holding:
            continue
        others = sorted({g.holding for g in scene.figures if g.holding and g.holding != f.holding})
        absent = sorted(set(HELD_THINGS) - set(others) - {f.holding})
        picks = [(h, "held by another person") for h in others[:2]]
        picks += [(h, "not in the picture") for h in rng.sample(absent, 3 - len(picks))]
        where = place_name(f.row, f.col)
        out.append({"question_text": f"What is the person in the {where} of the picture holding?",
                    "right": f.holding, "wrong": picks, "kind": "holding"})
    return out


_TIME_WORDS = {"day": "daytime", "evening": "evening, at sunset", "night": "night"}


def _reasoning(scene: Scene, rng: random.Random) -> list[Question]:
    other_times = [(_TIME_WORDS[t], "another time of day") for t in TIMES if t != scene.time]
    out = [{"question_text": "What time of day does the picture suggest?", "right": _TIME_WORDS[scene.time],
            "wrong": other_times + [("it cannot be told from the picture", "refuses to infer")], "kind": "time"}]
    if not scene.indoor:
        seasons = {"summer": "summer", "autumn": "autumn", "winter": "winter"}
        wrong = [(s, "another season") for s in seasons if s != scene.season] + [("spring", "another season")]
        out.append({"question_text": "Which season does the landscape suggest?", "right": seasons[scene.season],
                    "wrong": wrong[:3], "kind": "season"})
    return out


#: One question builder per reasoning dimension (explicit, in the dimensions' order).
QUESTION_BUILDERS: dict[str, Callable[[Scene, random.Random], list[Question]]] = dict(zip(DIMENSIONS, (
    _identity, _attribute, _location, _counting, _relation, _interaction, _reasoning)))


def scene_file(scene: Scene) -> str:
    return f"{SCENES_FOLDER}/{scene.scene_id}.png"


def _record(item_id: str, dimension: str, scene: Scene, q: Question, attributes: dict, rng: random.Random) -> dict:
    options = [(q["right"], None)] + list(q["wrong"])[:3]
    rng.shuffle(options)
    choices = []
    gold = None
    for index, (text, kind) in enumerate(options):
        entry = {"id": letter_id(index), "text": text}
        if kind:
            entry["distractor_type"] = kind
        else:
            gold = entry
        choices.append(entry)
    assert gold is not None  # every generated question lists its right option
    return {"item_id": item_id, "type": MCQ_TYPE, "question_text": q["question_text"],
            "instructions": "Look at the picture and choose the one right option.", "choices": choices,
            "answers": [{"id": gold["id"], "description": gold["text"]}], "language": "en",
            "source": "demo-vqa (generated scene)", "has_image": True, "image": scene_file(scene),
            "dimension": dimension, "tags": {"question_kind": q["kind"], "scene": scene.scene_id},
            "image_attributes": attributes}


def build_vqa_items(scenes: list[Scene], attributes: dict[str, dict], seed: int,
                    per_dimension: dict[str, int] | None = None) -> list[dict]:
    """Items in all seven dimensions (`PER_DIMENSION` each by default), spread over the scenes (deterministic)."""
    wanted = per_dimension or PER_DIMENSION
    rng = random.Random(f"vqa|{seed}")
    records: list[dict] = []
    for dimension, builder in QUESTION_BUILDERS.items():
        candidates = []
        for scene in scenes:
            for q in builder(scene, random.Random(f"{seed}|{dimension}|{scene.scene_id}")):
                if len(q["wrong"]) >= 3:
                    candidates.append((scene, q))
        # round-robin over scenes so one picture does not carry a whole dimension
        by_scene: dict[str, list] = {}
        for scene, q in candidates:
            by_scene.setdefault(scene.scene_id, []).append((scene, q))
        picked: list[tuple] = []
        while len(picked) < wanted[dimension] and any(by_scene.values()):
            for key in list(by_scene):
                if by_scene[key] and len(picked) < wanted[dimension]:
                    picked.append(by_scene[key].pop(0))
        if len(picked) < wanted[dimension]:
            raise ValueError(f"demo-vqa: only {len(picked)} questions for {dimension}; add scenes")
        for scene, q in picked:
            item_id = f"vqa-{len(records) + 1:03d}"
            records.append(_record(item_id, dimension, scene, q, attributes[scene.scene_id], rng))
    return records

"""`demo-muse`: an original MUSE-style benchmark of twelve task kinds on generated scenes.

Why this shape: MUSE asks twelve kinds of question in five capability dimensions, in the answer
formats those kinds need: a number (counting), a choice among boxes drawn on the image, a
three-part relative position, a linked entity and evidence pair, pieces of the picture as options
(jigsaw), free-text answers scored against human-like references, and a four-turn dialogue in which
later questions build on earlier ones. Every question here is written from a `scenes.Scene`, so
every gold answer is right by construction, and every wrong option says which kind of trap it is
(`distractor_type`). One builder per task, listed in `TASK_BUILDERS` (explicit, in MUSE's order).
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..text import letter_id
from ..vocab import MCQ_TYPE, MULTI_PART_TYPE, NUMERIC_TYPE, OPEN_TEXT_TYPE
from .scenes import EMOTIONS, Figure, Scene, place_name, region_bbox

#: MUSE's tasks and their capability dimensions (Table 1), in the published column order.
TASKS: dict[str, str] = {
    "Object Classification": "Visual Perception", "Object Count": "Visual Perception",
    "Activity Localization": "Semantic Understanding", "Activity Description": "Semantic Understanding",
    "Scene Classification": "Semantic Understanding", "Emotion Detection": "Affective Interpretation",
    "Visual Clue Identification": "Affective Interpretation", "Emotion Cause Inference": "Affective Interpretation",
    "Relative Position": "Compositional Reasoning", "Remote Interaction": "Compositional Reasoning",
    "Jigsaw Puzzle": "Compositional Reasoning", "Cultural Identification": "Cultural Understanding",
}
ALL_EMOTIONS = ("happy", "sad", "surprised", "calm", "angry", "afraid", "disgusted", "excited", "bored", "confused",
                "proud")
SIMILAR_EMOTION = {"happy": {"excited", "proud"}, "sad": {"bored", "afraid"}, "surprised": {"afraid", "confused"},
                   "calm": {"bored", "proud"}}
CLUES = {"happy": ["the smile on the face", "the corners of the mouth turn up"],
         "sad": ["the mouth turns down at the corners", "a downturned mouth on the face"],
         "surprised": ["the mouth is open in a small round O", "the round open mouth"],
         "calm": ["the straight, relaxed mouth", "a neutral face with a level mouth"]}
CULTURES = {"pagoda roof": "an East Asian pagoda", "onion dome": "an onion-domed church",
            "pointed arch": "a Gothic pointed arch", "stepped pyramid": "a Mesoamerican stepped pyramid",
            "columned temple": "a Greek columned temple"}
SIMILAR_BUILDING = {"pagoda roof": "stepped pyramid", "stepped pyramid": "pagoda roof", "onion dome": "pointed arch",
                    "pointed arch": "onion dome", "columned temple": "pointed arch"}
SCENE_TYPES = ("landscape", "seascape", "interior", "still life", "nocturne", "genre scene")
RELATED_SCENES = {"landscape": "seascape", "seascape": "landscape", "interior": "still life",
                  "still life": "interior", "nocturne": "landscape", "genre scene": "interior"}
PIECES_FOLDER = "pieces"


@dataclass
class Draft:
    """One question before ids are given: the record's content plus what the demo builder must draw."""

    task: str
    record: dict
    scene: Scene
    blank: tuple[int, int] | None = None                 # jigsaw: the place greyed out in the item image
    pieces: dict[str, tuple[Scene, int, int, bool]] = field(default_factory=dict)  # option id -> crop


def _radio(question: str, right: str, wrong: list[tuple[str, str]], rng: random.Random, **extra) -> dict:
    options = [(right, None), *wrong]
    rng.shuffle(options)
    choices, gold = [], None
    for index, (text, kind) in enumerate(options):
        entry = {"id": letter_id(index), "text": text}
        if kind:
            entry["distractor_type"] = kind
        else:
            gold = entry
        choices.append(entry)
    assert gold is not None  # every generated question lists its right option
    return {"type": MCQ_TYPE, "question_text": question, "choices": choices,
            "answers": [{"id": gold["id"], "description": gold["text"]}], **extra}


def _region(row: int, col: int, label: str) -> list[dict]:
    return [{"id": "R1", "bbox": region_bbox(row, col), "label": label}]


def _figure_words(f: Figure) -> str:
    return f"holding a {f.holding}" if f.holding else ("waving" if f.waving else "standing with empty hands")


# ---------------------------------------------------------------- the twelve tasks

def object_classification(scene: Scene, rng: random.Random) -> list[Draft]:
    out = []
    kinds = [t.kind for t in scene.things]
    for t in scene.things:
        if t.row == 0 or kinds.count(t.kind) != 1:
            continue
        elsewhere = sorted(set(kinds) - {t.kind})[:2]
        absent = sorted({"statue", "boat", "horse", "piano", "bicycle", "fountain"} - set(kinds))
        wrong = [(k, "object elsewhere in the picture") for k in elsewhere]
        wrong += [(k, "absent object") for k in rng.sample(absent, 4 - len(wrong))]
        out.append(Draft("Object Classification", _radio("What is the object in region R1?", t.kind, wrong, rng,
                                                         regions=_region(t.row, t.col, "object")), scene))
    return out


def object_count(scene: Scene, rng: random.Random) -> list[Draft]:
    out = [Draft("Object Count", {"type": NUMERIC_TYPE, "question_text": "How many people are in the picture?",
                                  "choices": None, "answers": [{"id": "A", "value": len(scene.figures),
                                                                "tolerance": 0}]}, scene)]
    sky = [t for t in scene.things if t.row == 0]
    if sky:
        out.append(Draft("Object Count", {"type": NUMERIC_TYPE, "question_text": "How many things are in the sky, "
                                          "not counting the sun or the moon?", "choices": None,
                                          "answers": [{"id": "A", "value": len(sky), "tolerance": 0}]}, scene))
    return out


def activity_localization(scene: Scene, rng: random.Random) -> list[Draft]:
    out = []
    holders = [f for f in scene.figures if f.holding]
    for f in holders:
        others = [(g.row, g.col, "same scene, other person") for g in scene.figures if g is not f]
        things = [(t.row, t.col, "box on an object") for t in scene.things if t.row > 0]
        near = [(r, c, "nearby box") for r in range(3) for c in range(3) if abs(r - f.row) + abs(c - f.col) == 1
                and all((r, c) != (g.row, g.col) for g in scene.figures)]
        pool = others[:1] + things[:1] + near
        seen: set[tuple[int, int]] = {(f.row, f.col)}
        boxes: list[tuple[int, int, str]] = []
        for r, c, kind in pool:
            if (r, c) not in seen and len(boxes) < 3:
                seen.add((r, c))
                boxes.append((r, c, kind))
        if len(boxes) < 3:
            continue
        options: list[tuple[tuple[int, int], str | None]] = [((f.row, f.col), None)]
        options += [((r, c), kind) for r, c, kind in boxes]
        rng.shuffle(options)
        choices: list[dict[str, Any]] = []
        gold: dict[str, Any] | None = None
        for index, ((r, c), distractor) in enumerate(options):
            entry = {"id": letter_id(index), "text": f"Box {index + 1}", "bbox": region_bbox(r, c)}
            if distractor:
                entry["distractor_type"] = distractor
            else:
                gold = entry
            choices.append(entry)
        choices.append({"id": letter_id(len(choices)), "text": "None of the above",
                        "distractor_type": "none of the above"})
        assert gold is not None
        out.append(Draft("Activity Localization", {
            "type": MCQ_TYPE, "question_text": f"Which box shows the person holding a {f.holding}?",
            "choices": choices, "answers": [{"id": gold["id"], "description": gold["text"]}]}, scene))
    return out


def activity_description(scene: Scene, rng: random.Random) -> list[Draft]:
    out = []
    for f in scene.figures:
        right = _figure_words(f)
        others = sorted({_figure_words(g) for g in scene.figures if g is not f} - {right})
        absent = sorted({"reading a map", "riding a bicycle", "sitting on a bench", "carrying a basket",
                         "playing a flute"} - {right})
        wrong = [(w, "same scene, other person") for w in others[:2]]
        wrong += [(w, "action not in the picture") for w in rng.sample(absent, 3 - len(wrong))]
        out.append(Draft("Activity Description", _radio("What is the person in region R1 doing?", right, wrong, rng,
                                                        regions=_region(f.row, f.col, "person")), scene))
    return out


def scene_classification(scene: Scene, rng: random.Random) -> list[Draft]:
    related = RELATED_SCENES[scene.genre]
    others = [s for s in SCENE_TYPES if s not in (scene.genre, related)]
    wrong = [(related, "related scene type")] + [(s, "other scene type") for s in rng.sample(others, 2)]
    return [Draft("Scene Classification", _radio("What kind of scene is this?", scene.genre, wrong, rng), scene)]


def emotion_detection(scene: Scene, rng: random.Random) -> list[Draft]:
    out = []
    for f in scene.figures:
        wrong = [(e, "similar emotion" if e in SIMILAR_EMOTION[f.emotion] else "other emotion")
                 for e in ALL_EMOTIONS if e != f.emotion]
        out.append(Draft("Emotion Detection", _radio("What emotion does the person in region R1 show?", f.emotion,
                                                     wrong, rng, regions=_region(f.row, f.col, "person")), scene))
    return out


def _open(task: str, question: str, references: list[str], scene: Scene, f: Figure) -> Draft:
    return Draft(task, {"type": OPEN_TEXT_TYPE, "question_text": question, "choices": None,
                        "answers": [{"id": "A", "references": references}],
                        "regions": _region(f.row, f.col, "person")}, scene)


def visual_clue(scene: Scene, rng: random.Random) -> list[Draft]:
    return [_open("Visual Clue Identification", "Which visual clue in region R1 shows how the person feels? "
                  "Answer in one sentence.", CLUES[f.emotion], scene, f) for f in scene.figures]


def cause_references(scene: Scene, f: Figure) -> list[str]:
    """Reasons a reader of the picture would give for the person's feeling (the human-like references)."""
    where = "indoors" if scene.indoor else f"outside on a {scene.season} {'night' if scene.time == 'night' else 'day'}"
    thing = f"the {f.holding} they are holding" if f.holding else "their surroundings"
    return {"happy": [f"They are enjoying {thing}.", f"They like being {where}."],
            "sad": [f"They feel lonely {where}.", f"Something about {thing} disappoints them."],
            "surprised": [f"Something unexpected just happened {where}.", f"They did not expect {thing}."],
            "calm": [f"They are resting quietly {where}.", f"Nothing is troubling them; {thing} is familiar."],
            }[f.emotion]


def emotion_cause(scene: Scene, rng: random.Random) -> list[Draft]:
    return [_open("Emotion Cause Inference", "What might be the cause of the feeling of the person in region R1? "
                  "Answer in one sentence.", cause_references(scene, f), scene, f) for f in scene.figures]


PARTS = (("A", "lateral", ("left", "none", "right")), ("B", "depth", ("front", "none", "back")),
         ("C", "vertical", ("above", "none", "under")))


def relative_position(scene: Scene, rng: random.Random) -> list[Draft]:
    objects = [(t.kind, t.row, t.col) for t in scene.things if [o.kind for o in scene.things].count(t.kind) == 1]
    out = []
    for a in objects:
        for b in objects:
            if a is b or (a[1] == b[1] and a[2] == b[2]):
                continue
            lateral = "left" if a[2] < b[2] else ("right" if a[2] > b[2] else "none")
            vertical = "above" if a[1] < b[1] else ("under" if a[1] > b[1] else "none")
            on_ground = a[1] > 0 and b[1] > 0
            depth = ("front" if a[1] > b[1] else "back") if on_ground and a[1] != b[1] else "none"
            gold = {"A": lateral, "B": depth, "C": vertical}
            out.append(Draft("Relative Position", {
                "type": MULTI_PART_TYPE,
                "question_text": f"Where is the {a[0]} relative to the {b[0]}? Give its lateral position (left, none, "
                                 "right), its depth (front, none, back) and its vertical position (above, none, under).",
                "choices": [{"id": i, "label": label, "options": list(opts)} for i, label, opts in PARTS],
                "answers": [{"id": i, "description": gold[i]} for i, _, _ in PARTS]}, scene))
    rng.shuffle(out)
    return out[:1]


def remote_interaction(scene: Scene, rng: random.Random) -> list[Draft]:
    out = []
    for f in scene.figures:
        others = [g for g in scene.figures if g is not f]
        if not f.waving or not others:
            continue
        target = min(others, key=lambda g: (abs(g.row - f.row) + abs(g.col - f.col), g.row, g.col))
        people = [f"the person at the {place_name(g.row, g.col)}" for g in others][:3] + ["nobody"]
        evidence = ["the raised hand", "the open mouth", "the held object", "the bent knees"]
        out.append(Draft("Remote Interaction", {
            "type": MULTI_PART_TYPE,
            "question_text": "The person in region R1 is greeting someone. Who is it (entity), and what in the picture "
                             "shows the greeting (evidence)?",
            "choices": [{"id": "A", "label": "entity", "options": people},
                        {"id": "B", "label": "evidence", "options": evidence}],
            "answers": [{"id": "A", "description": f"the person at the {place_name(target.row, target.col)}"},
                        {"id": "B", "description": "the raised hand"}],
            "regions": _region(f.row, f.col, "person")}, scene))
    return out


def jigsaw(scene: Scene, rng: random.Random, others: list[Scene]) -> list[Draft]:
    occupied = [(t.row, t.col) for t in scene.things if t.row > 0] + [(f.row, f.col) for f in scene.figures]
    if not occupied or not others:
        return []
    row, col = rng.choice(sorted(occupied))
    other_place = rng.choice(sorted(set(occupied) - {(row, col)}) or [(0, 0) if (row, col) != (0, 0) else (2, 2)])
    pieces = [((scene, row, col, False), None), ((scene, other_place[0], other_place[1], False),
                                                 "piece from the same picture"),
              ((rng.choice(others), row, col, False), "same place, other picture"),
              ((scene, row, col, True), "mirrored piece")]
    rng.shuffle(pieces)
    choices, gold, crops = [], None, {}
    for index, (crop, kind) in enumerate(pieces):
        ident = letter_id(index)
        entry = {"id": ident, "text": f"Piece {ident}"}
        if kind:
            entry["distractor_type"] = kind
        else:
            gold = entry
        choices.append(entry)
        crops[ident] = crop
    assert gold is not None
    return [Draft("Jigsaw Puzzle", {"type": MCQ_TYPE, "question_text": "A square of the picture is missing (grey). "
                                    "Which piece fits the gap exactly?", "choices": choices,
                                    "answers": [{"id": gold["id"], "description": gold["text"]}]},
                  scene, blank=(row, col), pieces=crops)]


def cultural_identification(scene: Scene, rng: random.Random) -> list[Draft]:
    if not scene.building:
        return []
    similar = SIMILAR_BUILDING[scene.building]
    others = [b for b in CULTURES if b not in (scene.building, similar)]
    wrong = [(CULTURES[similar], "visually similar building")] + \
        [(CULTURES[b], "other tradition") for b in rng.sample(others, 2)]
    return [Draft("Cultural Identification", _radio("Which architectural tradition does the building on the horizon "
                                                    "belong to?", CULTURES[scene.building], wrong, rng), scene)]


#: One builder per task (explicit, MUSE's column order); the jigsaw builder also gets the other scenes.
TASK_BUILDERS: dict[str, Callable[..., list[Draft]]] = {
    "Object Classification": object_classification, "Object Count": object_count,
    "Activity Localization": activity_localization, "Activity Description": activity_description,
    "Scene Classification": scene_classification, "Emotion Detection": emotion_detection,
    "Visual Clue Identification": visual_clue, "Emotion Cause Inference": emotion_cause,
    "Relative Position": relative_position, "Remote Interaction": remote_interaction, "Jigsaw Puzzle": jigsaw,
    "Cultural Identification": cultural_identification,
}
PER_TASK = 5
DIALOGUE_ID = "muse-dialogue-01"


def dialogue(scene: Scene, rng: random.Random) -> list[Draft]:
    """MUSE's four-turn affective sequence on one person: what is in the region, the emotion, its clue, its cause."""
    f = next((g for g in scene.figures if g.emotion != "calm"), scene.figures[0])
    kinds = [t.kind for t in scene.things]
    first = Draft("Object Classification", _radio(
        "What is in region R1?", "a person",
        [("a statue", "similar shape"), ("a coat on a stand", "similar shape"),
         ("a tree", "object elsewhere in the picture" if "tree" in kinds else "absent object"),
         ("a dog", "object elsewhere in the picture" if "dog" in kinds else "absent object")],
        rng, regions=_region(f.row, f.col, "person")), scene)
    second = emotion_detection(Scene(scene.scene_id, scene.indoor, scene.time, scene.season, scene.things, (f,),
                                     scene.sea, scene.building), rng)[0]
    second.record["question_text"] = "What emotion does this person show?"
    third = _open("Visual Clue Identification", "Which visual clue shows that emotion? Answer in one sentence.",
                  CLUES[f.emotion], scene, f)
    fourth = _open("Emotion Cause Inference", "What might have caused it? Answer in one sentence.",
                   cause_references(scene, f), scene, f)
    for turn, draft in enumerate((first, second, third, fourth), start=1):
        draft.record.update(dialogue_id=DIALOGUE_ID, turn=turn)
    return [first, second, third, fourth]


def build_muse_drafts(scenes: list[Scene], seed: int, per_task: int = PER_TASK) -> list[Draft]:
    """`per_task` questions of each of the twelve tasks (the dialogue's turns included), deterministic."""
    rng = random.Random(f"muse|{seed}")
    dialogue_scene = next(s for s in scenes if len(s.figures) >= 2)
    drafts = dialogue(dialogue_scene, random.Random(f"muse-dialogue|{seed}"))
    counts = {task: sum(d.task == task for d in drafts) for task in TASKS}
    for task, builder in TASK_BUILDERS.items():
        candidates = []
        for scene in scenes:
            local = random.Random(f"{seed}|{task}|{scene.scene_id}")
            made = builder(scene, local, [s for s in scenes if s is not scene]) if builder is jigsaw \
                else builder(scene, local)
            candidates.extend(made)
        rng.shuffle(candidates)
        for draft in candidates:
            if counts[task] >= per_task:
                break
            drafts.append(draft)
            counts[task] += 1
    short = {t: n for t, n in counts.items() if n < 4}
    if short:
        raise ValueError(f"demo-muse: too few questions for {short}; add scenes")
    return drafts


def finish_records(drafts: list[Draft], image_of: Callable[[Draft], str], piece_of: Callable[[Draft, str], str],
                   attributes: dict[str, dict]) -> list[dict]:
    """Records with ids, task, dimension, image paths (and option image paths for the jigsaw)."""
    records = []
    order = {task: i for i, task in enumerate(TASKS)}  # ids follow MUSE's column order (dialogue turns included)
    drafts = sorted(drafts, key=lambda d: order[d.task])
    for index, draft in enumerate(drafts, start=1):
        record = {"item_id": f"muse-{index:03d}", **draft.record, "language": "en",
                  "source": "demo-muse (generated scene)", "has_image": True, "image": image_of(draft),
                  "task": draft.task, "dimension": TASKS[draft.task],
                  "tags": {"scene": draft.scene.scene_id}, "image_attributes": attributes[draft.scene.scene_id]}
        if draft.pieces:
            record["choices"] = [{**c, "image": piece_of(draft, c["id"])} for c in record["choices"]]
        records.append(record)
    return records


__all__ = ["ALL_EMOTIONS", "DIALOGUE_ID", "Draft", "EMOTIONS", "TASKS", "TASK_BUILDERS", "build_muse_drafts",
           "finish_records"]

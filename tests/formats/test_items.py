"""Item model: every format validates, each rule names its field, old variants are normalised,
and the model-ready text matches the published `data/<id>.txt` layout. Items are made up."""
from __future__ import annotations

import copy
import json

import pytest

from eduart_core.items import (
    METADATA_FIELDS,
    RECORD_FIELDS,
    Item,
    ItemValidationError,
    blank_ids,
    check_item,
    normalise_record,
    render_prompt_text,
    validate_item,
)
from eduart_core.vocab import EDUART_FORMATS as ITEM_TYPES

BASE = {"language": "it", "has_image": False, "image": None, "source": "demo/1",
        "exercise": 1, "question": 2}

VALID = {
    "multiple_choice_radio": {
        "question_text": "Chi dipinse la pala dell'altare maggiore?",
        "choices": [{"id": "A", "text": "Un pittore veneto"}, {"id": "B", "text": "Un orafo"},
                    {"id": "C", "text": "Un architetto"}],
        "answers": [{"id": "A", "description": "Un pittore veneto"}]},
    "multiple_choice_check": {
        "question_text": "Quali tecniche usano un legante oleoso?",
        "choices": [{"id": "A", "text": "olio su tela"}, {"id": "B", "text": "affresco"},
                    {"id": "C", "text": "olio su tavola"}],
        "answers": [{"id": "A", "description": "olio su tela"},
                    {"id": "C", "description": "olio su tavola"}]},
    "true_false": {
        "question_text": None,
        "choices": [{"id": "A", "text": "L'affresco si dipinge su intonaco fresco."},
                    {"id": "B", "text": "La tempera usa solo olio di lino."}],
        "answers": [{"id": "A", "text": "True"}, {"id": "B", "text": "False"}]},
    "positioning": {
        "question_text": "La [A] regge l'arco e il [B] lo chiude in alto.",
        "choices": ["colonna", "concio di chiave", "abside"],
        "answers": [{"id": "A", "description": "colonna"},
                    {"id": "B", "description": "concio di chiave"}]},
    "completion_closed": {
        "question_text": "Nel [A] il pittore dipinse la [B] della cappella.",
        "choices": [{"id": "A", "options": ["1480", "1520"]},
                    {"id": "B", "options": ["volta", "abside"]}],
        "answers": [{"id": "A", "description": "1480"}, {"id": "B", "description": "volta"}]},
    "completion_open": {
        "question_text": "Il contrasto di luce e ombra si chiama [A].",
        "choices": None,
        "answers": [{"id": "A", "description": "chiaroscuro"}]},
    "select_errors": {
        "question_text": "Il ritratto fu dipinto ad affresco su tela nel Trecento.",
        "choices": None,
        "answers": [{"error": "tela", "correct": "muro"}, {"error": "Trecento", "correct": "Quattrocento"}]},
}


def record(item_type: str, item_id: str = "0042", **changes) -> dict:
    rec = {"item_id": item_id, "type": item_type, **copy.deepcopy(BASE),
           **copy.deepcopy(VALID[item_type])}
    rec.update(changes)
    return rec


def problem_of(rec: dict, **kwargs) -> ItemValidationError:
    with pytest.raises(ItemValidationError) as info:
        validate_item(rec, **kwargs)
    return info.value


@pytest.mark.parametrize("item_type", ITEM_TYPES)
def test_every_format_validates_and_round_trips(item_type):
    item = validate_item(record(item_type))
    assert isinstance(item, Item) and item.type == item_type and item.item_id == "0042"
    rec = item.to_record()
    assert tuple(rec) == tuple(f for f in RECORD_FIELDS if f not in METADATA_FIELDS)  # no metadata set
    assert json.loads(json.dumps(rec)) == rec
    assert validate_item(rec).to_record() == rec


def test_item_is_frozen():
    item = validate_item(record("completion_open"))
    with pytest.raises(AttributeError):
        item.type = "true_false"  # type: ignore[misc]


def test_item_types_in_published_order():
    assert ITEM_TYPES == ("multiple_choice_radio", "multiple_choice_check", "true_false",
                          "positioning", "completion_closed", "completion_open", "select_errors")


def test_error_message_names_item_field_and_problem():
    rec = record("completion_open", answers=[{"id": "A", "description": "chiaroscuro"},
                                             {"id": "B", "description": "sfumato"}])
    err = problem_of(rec)
    assert str(err) == "item 0042: field answers[B]: blank [B] has no marker in question_text"
    assert err.item_id == "0042" and err.field == "answers[B]" and len(err.problems) == 1


def test_every_problem_is_listed_at_once():
    rec = record("multiple_choice_radio", language="xx", has_image=True)
    err = problem_of(rec)
    assert {"language", "has_image"} <= set(err.fields)
    assert len(err.problems) == 2 and "; " in str(err)


RULES = [
    ("unknown type", "multiple_choice_radio", {"type": "matching"}, "type", "unknown type"),
    ("missing choice id", "multiple_choice_radio",
     {"choices": [{"id": "A", "text": "x"}, {"text": "y"}]}, "choices[1].id", "missing id"),
    ("duplicate choice id", "multiple_choice_check",
     {"choices": [{"id": "A", "text": "x"}, {"id": "A", "text": "y"}]}, "choices[A]", "duplicate"),
    ("duplicate answer id", "multiple_choice_check",
     {"answers": [{"id": "A"}, {"id": "A"}]}, "answers[A]", "duplicate"),
    ("missing answer id", "completion_open",
     {"answers": [{"description": "chiaroscuro"}]}, "answers[0].id", "missing id"),
    ("answer without marker", "positioning",
     {"answers": [{"id": "A", "description": "colonna"}, {"id": "B", "description": "abside"},
                  {"id": "C", "description": "abside"}]}, "answers[C]", "no marker"),
    ("marker without answer", "completion_open",
     {"question_text": "Luce [A] e ombra [B]."}, "question_text", "[B] has no answer"),
    ("marker twice", "completion_open",
     {"question_text": "Il [A] e ancora il [A]."}, "question_text", "occurs 2 times"),
    ("closed answer not an option", "completion_closed",
     {"answers": [{"id": "A", "description": "1490"}, {"id": "B", "description": "volta"}]},
     "answers[A].description", "not one of the options"),
    ("closed blank with three options", "completion_closed",
     {"choices": [{"id": "A", "options": ["1480", "1520", "1600"]},
                  {"id": "B", "options": ["volta", "abside"]}]},
     "choices[A].options", "exactly 2"),
    ("closed blank without options", "completion_closed",
     {"choices": [{"id": "A", "options": ["1480", "1520"]}]}, "choices[B]", "no options"),
    ("radio with two answers", "multiple_choice_radio",
     {"answers": [{"id": "A"}, {"id": "B"}]}, "answers", "exactly one"),
    ("radio with no answer", "multiple_choice_radio", {"answers": []}, "answers", "exactly one"),
    ("radio answer not a choice", "multiple_choice_radio",
     {"answers": [{"id": "D"}]}, "answers[D]", "does not exist"),
    ("check answer not a choice", "multiple_choice_check",
     {"answers": [{"id": "A"}, {"id": "E"}]}, "answers[E]", "does not exist"),
    ("verdict for missing statement", "true_false",
     {"answers": [{"id": "A", "text": "True"}, {"id": "B", "text": "False"},
                  {"id": "C", "text": "True"}]}, "answers[C]", "does not exist"),
    ("statement without verdict", "true_false",
     {"answers": [{"id": "A", "text": "True"}]}, "answers[B]", "no verdict"),
    ("unreadable verdict", "true_false",
     {"answers": [{"id": "A", "text": "Forse"}, {"id": "B", "text": "False"}]},
     "answers[A].text", "True/False"),
    ("has_image without image", "multiple_choice_radio", {"has_image": True}, "has_image",
     "image is null"),
    ("image without has_image", "multiple_choice_radio", {"image": "imgs/0042.jpg"}, "image",
     "has_image is false"),
    ("language", "completion_open", {"language": "eng"}, "language", "ISO 639-1"),
    ("select_errors without error text", "select_errors",
     {"answers": [{"error": "", "correct": "muro"}]}, "answers[0].error", "missing error"),
    ("select_errors error not in passage", "select_errors",
     {"answers": [{"error": "tela", "correct": "muro"}, {"error": "Seicento", "correct": "x"}]},
     "answers[1].error", "does not occur"),
    ("positioning term not in the bank", "positioning",
     {"answers": [{"id": "A", "description": "pilastro"},
                  {"id": "B", "description": "concio di chiave"}]},
     "answers[A].description", "not in the word bank"),
    ("blank type without question_text", "completion_open", {"question_text": None},
     "question_text", "blank markers"),
    ("missing item_id", "completion_open", {"item_id": ""}, "item_id", "missing"),
    ("answers not a list", "completion_open", {"answers": "chiaroscuro"}, "answers", "list"),
]


@pytest.mark.parametrize("name,item_type,changes,field,problem", RULES, ids=[r[0] for r in RULES])
def test_each_rule_names_its_field(name, item_type, changes, field, problem):
    err = problem_of(record(item_type, **changes))
    assert field in err.fields, err.problems
    hit = [p for p in err.problems if f"field {field}:" in p]
    assert any(problem in p for p in hit), err.problems
    assert all(p.startswith(f"item {err.item_id}: field ") for p in err.problems)


def test_image_exists_callback_checks_the_file():
    rec = record("multiple_choice_radio", has_image=True, image="imgs/0042.jpg")
    seen = []
    assert validate_item(rec, image_exists=lambda p: seen.append(p) or True).image == "imgs/0042.jpg"
    assert seen == ["imgs/0042.jpg"]
    err = problem_of(rec, image_exists=lambda p: False)
    assert err.field == "image" and "not found" in str(err)


def test_old_variants_are_normalised():
    tf = record("true_false", answers=[{"id": "a", "text": "Vero"}, {"id": " B ", "text": "FALSO"}])
    assert validate_item(tf).answers == [{"id": "A", "text": "True"}, {"id": "B", "text": "False"}]
    co = record("completion_open", question_text="Luce [A] e [B].",
                answers=["chiaroscuro", "sfumato"])
    canonical, problems = check_item(co)  # keyed A, B, ..., and kept as a data issue with the reason
    assert canonical["answers"] == [{"id": "A", "description": "chiaroscuro"}, {"id": "B", "description": "sfumato"}]
    assert canonical["answers_as_strings"] == ["chiaroscuro", "sfumato"]
    assert len(problems) == 1 and "plain list of strings" in problems[0]


def test_normalise_keeps_input_untouched_and_drops_bookkeeping():
    rec = record("true_false", extractor="gemini", item_id=7)
    rec["answers"][0]["text"] = "Vero"
    before = copy.deepcopy(rec)
    out = normalise_record(rec)
    assert rec == before
    assert "extractor" not in out and out["item_id"] == "7"
    assert out["answers"][0]["text"] == "True"


def test_check_item_reports_without_raising():
    rec = record("completion_closed", answers=[{"id": "A", "description": "1480"}])
    normalised, problems = check_item(rec)
    assert normalised["type"] == "completion_closed"
    assert problems == ["item 0042: field question_text: blank marker [B] has no answer"]
    assert check_item(record("select_errors"))[1] == []
    with pytest.raises(ItemValidationError):
        check_item(["not", "a", "record"])  # type: ignore[arg-type]


def test_blank_ids_in_order_of_appearance():
    assert blank_ids("Il [B] e poi il [A], ancora [B]; non [a] ne [AB].") == ["B", "A", "AB"]
    assert blank_ids(None) == [] and blank_ids("nessuna lacuna") == []


def test_render_choices_as_letter_lines():
    text = render_prompt_text(validate_item(record("multiple_choice_radio")))
    assert text == ("Chi dipinse la pala dell'altare maggiore?\n\n"
                    "A. Un pittore veneto\nB. Un orafo\nC. Un architetto")


def test_render_completion_closed_blanks():
    text = render_prompt_text(record("completion_closed"))
    assert text == ("Nel [A] il pittore dipinse la [B] della cappella.\n\n"
                    "A:\n  1. 1480\n  2. 1520\nB:\n  1. volta\n  2. abside")


def test_render_positioning_word_bank():
    text = render_prompt_text(record("positioning"))
    assert text.endswith("\n\n1. colonna\n2. concio di chiave\n3. abside")


def test_render_null_choices_and_null_question_text():
    assert render_prompt_text(record("completion_open")) == \
        "Il contrasto di luce e ombra si chiama [A]."
    tf = render_prompt_text(record("true_false"))
    assert tf == ("A. L'affresco si dipinge su intonaco fresco.\n"
                  "B. La tempera usa solo olio di lino.")

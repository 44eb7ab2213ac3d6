"""compare_records and auto-merge on hand-made pairs: every category, every format, nested paths."""
from __future__ import annotations

import copy

import pytest

from eduart_core.extraction import compare_records, merge_records
from eduart_core.extraction.paths import get_at, set_at


def diffs_of(a: dict, b: dict) -> list[tuple[str, str]]:
    return [(d.path, d.category) for d in compare_records(a, b)]


def radio() -> dict:
    return {"type": "multiple_choice_radio", "language": "it", "question_title": "Il Rinascimento",
            "instructions": "Scegli la risposta corretta.",
            "question_text": "Chi dipinse la volta della cappella?",
            "choices": [{"id": "A", "text": "Un pittore veneto"}, {"id": "B", "text": "Un pittore toscano"},
                        {"id": "C", "text": "Nessuno dei due"}],
            "answers": [{"id": "B", "description": "Un pittore toscano"}]}


def with_value(record: dict, path: str, value) -> dict:
    return set_at(copy.deepcopy(record), path, value)


@pytest.mark.parametrize("b_text, category", [
    ("Chi dipinse la  volta della cappella?", "whitespace"),
    ("Chi dipinse la volta della cappella? ", "whitespace"),
    ("Chi dipinse la\u00a0volta della cappella?", "whitespace"),
    ("Chi dipinse la volta\ndella cappella?", "whitespace"),
    ("Chi dipinse la volta della cappella\u2026?", "punctuation"),
    ("Chi dipinse la volta della Cappella?", "case"),
    ("Chi dipinse la  volta della Cappella?", "case"),      # cumulative: space + capital = case
    ("Chi dipinse la volta della cappella!", "punctuation"),
    ("Chi dipinse la vela della cappella?", "content"),
])
def test_question_text_category(b_text, category):
    assert diffs_of(radio(), with_value(radio(), "question_text", b_text)) == [("question_text", category)]


@pytest.mark.parametrize("a_text, b_text, category", [
    ("l'opera d'arte", "l\u2019opera d\u2019arte", "typography"),
    ("\"La Gioconda\"", "\u201cLa Gioconda\u201d", "typography"),
    ("1490-1495", "1490\u20131495", "typography"),
    ("e poi...", "e poi\u2026", "typography"),
    ("perché", "perche'", "accents"),
    ("perché", "perche\u2019", "accents"),
    ("città", "citta", "accents"),
    ("Città", "citta", "accents"),
    ("l'arte", "larte", "punctuation"),
])
def test_text_ladder(a_text, b_text, category):
    a = with_value(radio(), "choices[A].text", a_text)
    b = with_value(radio(), "choices[A].text", b_text)
    assert diffs_of(a, b) == [("choices[A].text", category)]


def test_identical_records_have_no_diffs():
    assert compare_records(radio(), copy.deepcopy(radio())) == []


def test_choice_order_with_ids_is_not_a_difference():
    b = radio()
    b["choices"] = list(reversed(b["choices"]))
    assert compare_records(radio(), b) == []


def test_radio_wrong_answer_key_is_one_content_diff_at_answers():
    b = radio()
    b["answers"] = [{"id": "A", "description": "Un pittore veneto"}]
    diffs = compare_records(radio(), b)
    assert [(d.path, d.category) for d in diffs] == [("answers", "content")]
    assert diffs[0].a == radio()["answers"] and diffs[0].b == b["answers"]


def test_answer_description_diff_has_nested_path():
    b = with_value(radio(), "answers[B].description", "Un pittore  toscano")
    assert diffs_of(radio(), b) == [("answers[B].description", "whitespace")]


def test_missing_option_is_content_at_choices():
    b = radio()
    b["choices"] = b["choices"][:2]
    assert diffs_of(radio(), b) == [("choices", "content")]


def test_different_type_and_missing_field_are_content():
    b = radio()
    b["type"] = "multiple_choice_check"
    del b["instructions"]
    assert diffs_of(radio(), b) == [("type", "content"), ("instructions", "content")]


def test_check_multiple_answers():
    a = radio() | {"type": "multiple_choice_check",
                   "answers": [{"id": "A", "description": "Un pittore veneto"},
                               {"id": "B", "description": "Un pittore toscano"}]}
    b = copy.deepcopy(a)
    b["answers"] = b["answers"][:1]
    assert diffs_of(a, b) == [("answers", "content")]


def true_false() -> dict:
    return {"type": "true_false", "language": "it", "question_text": None,
            "choices": [{"id": "A", "text": "La cupola è ottagonale."}, {"id": "B", "text": "Fu finita nel 1436."},
                        {"id": "C", "text": "È in marmo."}],
            "answers": [{"id": "A", "text": "True"}, {"id": "B", "text": "True"}, {"id": "C", "text": "False"}]}


def test_true_false_statement_and_verdict():
    b = true_false()
    b["choices"][0]["text"] = "La cupola e' ottagonale."
    b["answers"][2]["text"] = "True"
    assert diffs_of(true_false(), b) == [("choices[A].text", "accents"), ("answers[C].text", "content")]


def test_true_false_missed_statement():
    b = true_false()
    b["choices"] = b["choices"][:2]
    b["answers"] = b["answers"][:2]
    assert diffs_of(true_false(), b) == [("choices", "content"), ("answers", "content")]


def positioning() -> dict:
    return {"type": "positioning", "language": "it", "question_text": "Il [A] e la [B].",
            "choices": ["portico", "navata", "abside", "cripta"],
            "answers": [{"id": "A", "description": "portico"}, {"id": "B", "description": "navata"}]}


def test_word_bank_order_is_one_order_diff_at_choices():
    b = positioning()
    b["choices"] = ["navata", "portico", "cripta", "abside"]
    diffs = compare_records(positioning(), b)
    assert [(d.path, d.category) for d in diffs] == [("choices", "order")]


def test_word_bank_misread_word_and_missing_word():
    b = positioning()
    b["choices"][2] = "absìde"
    assert diffs_of(positioning(), b) == [("choices[2]", "accents")]
    b["choices"] = b["choices"][:3]
    assert diffs_of(positioning(), b) == [("choices", "content")]


def test_positioning_blank_missing_is_content():
    b = positioning()
    b["answers"] = b["answers"][:1]
    assert diffs_of(positioning(), b) == [("answers", "content")]


def closed() -> dict:
    return {"type": "completion_closed", "language": "it", "question_text": "Nel [A] dipinse la [B].",
            "choices": [{"id": "A", "options": ["1480", "1520"]}, {"id": "B", "options": ["volta", "abside"]}],
            "answers": [{"id": "A", "description": "1480"}, {"id": "B", "description": "volta"}]}


def test_completion_closed_options_order_and_text():
    b = closed()
    b["choices"][0]["options"] = ["1520", "1480"]
    b["choices"][1]["options"] = ["Volta", "abside"]
    assert diffs_of(closed(), b) == [("choices[A].options", "order"), ("choices[B].options[0]", "case")]


def test_completion_closed_wrong_answer_description():
    b = with_value(closed(), "answers[B].description", "abside")
    assert diffs_of(closed(), b) == [("answers[B].description", "content")]


def open_completion() -> dict:
    return {"type": "completion_open", "language": "en", "question_text": "The [A] was built in [B].",
            "choices": None, "answers": [{"id": "A", "description": "dome"}, {"id": "B", "description": "1436"}]}


def test_completion_open_blank_typo_and_missing_choices_field():
    b = with_value(open_completion(), "answers[A].description", "Dome")
    b.pop("choices")  # absent and null mean the same
    assert diffs_of(open_completion(), b) == [("answers[A].description", "case")]


def select_errors() -> dict:
    return {"type": "select_errors", "language": "it", "question_text": "Giotto dipinse a Milano nel 1305.",
            "choices": None,
            "answers": [{"error": "Milano", "correct": "Padova"}, {"error": "1305", "correct": "1305 circa"},
                        {"error": "dipinse", "correct": "affrescò"}]}


def test_select_errors_order_and_indexed_paths():
    b = select_errors()
    b["answers"] = [b["answers"][1], b["answers"][0], b["answers"][2]]
    assert diffs_of(select_errors(), b) == [("answers", "order")]
    c = with_value(select_errors(), "answers[2].correct", "affresco")
    assert diffs_of(select_errors(), c) == [("answers[2].correct", "accents")]
    d = with_value(select_errors(), "answers[0].error", "Milan")
    assert diffs_of(select_errors(), d) == [("answers[0].error", "content")]


def test_select_errors_missed_statement():
    b = select_errors()
    b["answers"] = b["answers"][:2]
    assert diffs_of(select_errors(), b) == [("answers", "content")]


def test_paths_read_back():
    assert get_at(closed(), "choices[B].options[1]") == "abside"
    assert get_at(select_errors(), "answers[2].error") == "dipinse"
    assert get_at(radio(), "answers[C].description") is None


# --- auto-merge ------------------------------------------------------------------------------

def test_agreeing_pages_merge_as_agreed():
    result = merge_records(radio(), copy.deepcopy(radio()))
    assert result.status == "agreed" and result.record == radio()


def test_whitespace_and_typography_are_auto_merged_in_normalised_form():
    a = with_value(radio(), "question_text", "Chi dipinse la  volta dell\u2019abside?")
    b = with_value(radio(), "question_text", "Chi dipinse la volta dell'abside? ")
    result = merge_records(a, b)
    assert result.status == "auto_merged"
    assert result.record["question_text"] == "Chi dipinse la volta dell'abside?"
    assert {d.category for d in result.diffs} == {"whitespace", "typography"} or len(result.diffs) == 1


def test_accent_difference_is_queued_by_default_but_ignorable_when_configured():
    a = with_value(radio(), "choices[A].text", "perché")
    b = with_value(radio(), "choices[A].text", "perche'")
    assert merge_records(a, b).status == "queued"
    assert merge_records(a, b, ignorable=("whitespace", "typography", "case", "accents")).status == "auto_merged"


def test_content_difference_is_queued_and_missing_extraction_fails():
    b = with_value(radio(), "answers", [{"id": "A", "description": "Un pittore veneto"}])
    result = merge_records(radio(), b)
    assert result.status == "queued" and result.record is None
    assert [d.path for d in result.open_diffs] == ["answers"]
    assert merge_records(radio(), None).status == "failed"


def test_unknown_ignorable_category_is_refused():
    with pytest.raises(ValueError):
        merge_records(radio(), radio(), ignorable=("content",))

"""Scoring: every format under both profiles, the published quirks under `paper`, the corrected
rules under `strict`. Items and answers are made up."""
from __future__ import annotations

import json

import pytest

from eduart_core.answers import parse_answer
from eduart_core.items import validate_item
from eduart_core.scoring import ItemScore, score_item
from eduart_core.vocab import PROFILES

RADIO = {"type": "multiple_choice_radio",
         "choices": [{"id": "A", "text": "Giotto"}, {"id": "B", "text": "Cimabue"},
                     {"id": "C", "text": "Duccio"}],
         "answers": [{"id": "B", "description": "Cimabue"}]}
CHECK = {"type": "multiple_choice_check",
         "choices": [{"id": c, "text": t} for c, t in zip("ABCD", ["olio", "tempera", "affresco", "pastello"])],
         "answers": [{"id": "A"}, {"id": "B"}]}
TF = {"type": "true_false",
      "choices": [{"id": c, "text": f"affermazione {c}"} for c in "ABCD"],
      "answers": [{"id": "A", "text": "True"}, {"id": "B", "text": "False"},
                  {"id": "C", "text": "False"}, {"id": "D", "text": "Vero"}]}
POSITIONING = {"type": "positioning", "choices": ["chiaroscuro", "l'equilibrio", "sfumato"],
               "answers": [{"id": "A", "description": "chiaro-scuro"},
                           {"id": "B", "description": "l'equilibrio"}]}
CLOSED = {"type": "completion_closed",
          "choices": [{"id": "A", "options": ["perché", "benché"]},
                      {"id": "B", "options": ["Città", "Paese"]}],
          "answers": [{"id": "A", "description": "perché"}, {"id": "B", "description": "Città"}]}
OPEN = {"type": "completion_open", "choices": None,
        "answers": [{"id": "A", "description": "prospettiva"}, {"id": "B", "description": "Brunelleschi"}]}
ERRORS = {"type": "select_errors", "choices": None,
          "question_text": "La cupola fu dipinta su tela da Giotto nel Seicento.",
          "answers": [{"error": "tela", "correct": "muro"},
                      {"error": "Seicento", "correct": "Trecento"}]}


def J(*entries, motivation: str | None = None) -> str:
    """A model response in the requested schema."""
    obj: dict = {"Answers": list(entries)}
    if motivation is not None:
        obj["motivation"] = motivation
    return json.dumps(obj, ensure_ascii=False)


def e(ident: str | None = None, text: str | None = None) -> dict:
    entry = {}
    if ident is not None:
        entry["id"] = ident
    if text is not None:
        entry["text"] = text
    return entry


def both(item, answer, **kw) -> tuple[float, float]:
    return (score_item(item, answer, "paper", **kw).score,
            score_item(item, answer, "strict", **kw).score)


# --- multiple_choice_radio -------------------------------------------------------------------

def test_radio_right_wrong_and_id_variants():
    assert both(RADIO, J(e("B"))) == (1.0, 1.0)
    assert both(RADIO, J(e(" b "))) == (1.0, 1.0)
    assert both(RADIO, J(e("A"))) == (0.0, 0.0)
    assert both(RADIO, J()) == (0.0, 0.0)


def test_radio_with_several_ids_paper_one_strict_zero():
    assert both(RADIO, J(e("A"), e("B"))) == (1.0, 0.0)
    assert both(RADIO, J(e("B"), e("b"))) == (1.0, 1.0)  # the same id twice is one id


def test_radio_bare_letter_is_unparseable_in_both():
    for profile in PROFILES:
        result = score_item(RADIO, "B", profile)
        assert result.score == 0.0 and not result.correct and result.parse_error


# --- multiple_choice_check -------------------------------------------------------------------

def test_check_set_f1():
    assert both(CHECK, J(e("A"), e("B"))) == (1.0, 1.0)
    assert both(CHECK, J(e("A"))) == (0.6667, pytest.approx(2 / 3))  # paper rounds F1 to 4 decimals
    assert both(CHECK, J(e("A"), e("C"))) == (0.5, 0.5)
    assert both(CHECK, J(e("C"), e("D"))) == (0.0, 0.0)


def test_check_with_true_false_marks_counts_only_true_entries():
    marked = J(e("A", "TRUE"), e("B", "vero"), e("C", "FALSE"), e("D", "Falso"))
    assert both(CHECK, marked) == (1.0, 1.0)
    # without marks every listed id is a selection
    assert both(CHECK, J(e("A", "olio"), e("B", "tempera"), e("C", "affresco"))) == (0.8, 0.8)


def test_check_malformed():
    assert both(CHECK, "A, B") == (0.0, 0.0)


# --- true_false --------------------------------------------------------------------------------

def test_true_false_english_and_italian_verdicts():
    english = J(e("A", "TRUE"), e("B", "FALSE"), e("C", "false"), e("D", "True"))
    italian = J(e("A", "Vero"), e("B", "Falso"), e("C", "FALSO"), e("D", "vero"))
    letters = J(e("A", "V"), e("B", "F"), e("C", "0"), e("D", "1"))
    for raw in (english, italian, letters):
        assert both(TF, raw) == (1.0, 1.0)


def test_true_false_partial_and_wrong():
    assert both(TF, J(e("A", "TRUE"), e("B", "TRUE"), e("C", "FALSE"), e("D", "TRUE"))) == (0.75, 0.75)
    assert both(TF, J(e("A", "FALSE"), e("B", "TRUE"), e("C", "TRUE"), e("D", "FALSE"))) == (0.0, 0.0)


def test_true_false_missing_or_unrecognised_is_false_in_paper_wrong_in_strict():
    only_true = J(e("A", "TRUE"), e("D", "TRUE"))  # B and C missing, both gold False
    assert both(TF, only_true) == (1.0, 0.5)
    unsure = J(e("A", "TRUE"), e("B", "forse"), e("C", "non so"), e("D", "TRUE"))
    assert both(TF, unsure) == (1.0, 0.5)


def test_true_false_unparseable_paper_gives_share_of_false_statements():
    paper = score_item(TF, "Non posso rispondere.", "paper")
    strict = score_item(TF, "Non posso rispondere.", "strict")
    assert paper.score == 0.5 and paper.parse_error
    assert strict.score == 0.0 and strict.parse_error


def test_true_false_conflicting_verdicts_are_wrong_in_strict():
    raw = J(e("A", "TRUE"), e("A", "FALSE"), e("B", "FALSE"), e("C", "FALSE"), e("D", "TRUE"))
    assert score_item(TF, raw, "strict").score == 0.75


# --- positioning and completion_closed ---------------------------------------------------------

@pytest.mark.parametrize("given_a,given_b,paper,strict", [
    ("chiaro-scuro", "l'equilibrio", 1.0, 1.0),
    ("chiaro scuro", "l equilibrio", 0.0, 1.0),   # punctuation deleted vs turned into space
    ("chiaroscuro", "lequilibrio", 1.0, 0.0),
    ("CHIARO-SCURO", "  L'Equilibrio ", 1.0, 1.0),
    ("chiaro  -  scuro", "l'equilibrio", 0.5, 1.0),
    ("sfumato", "l'equilibrio", 0.5, 0.5),
    ("sfumato", "chiaroscuro", 0.0, 0.0),
])
def test_positioning_normalisation_variants(given_a, given_b, paper, strict):
    assert both(POSITIONING, J(e("A", given_a), e("B", given_b))) == (paper, strict)


@pytest.mark.parametrize("given_a,given_b,expected", [
    ("perché", "Città", 1.0),
    ("perche", "citta", 1.0),        # accents and case
    ("PERCHÉ", "città ", 1.0),
    ("benché", "Città", 0.5),
    ("benché", "Paese", 0.0),
])
def test_completion_closed_accent_and_case_variants(given_a, given_b, expected):
    assert both(CLOSED, J(e("A", given_a), e("B", given_b))) == (expected, expected)


def test_blank_text_falls_back_to_description_and_ignores_extra_ids():
    raw = J({"id": "A", "description": "perché"}, e("B", "Città"), e("Z", "extra"))
    assert both(CLOSED, raw) == (1.0, 1.0)


def test_missing_blank_and_malformed_answer():
    assert both(CLOSED, J(e("A", "perché"))) == (0.5, 0.5)
    assert both(CLOSED, '{"Answers": [{"id": "A", "text": "perché"},]}') == (0.0, 0.5)
    assert both(CLOSED, "perché, Città") == (0.0, 0.0)


# --- completion_open ---------------------------------------------------------------------------

def test_open_fuzzy_in_strict_exact_in_paper():
    slip = J(e("A", "prospetiva"), e("B", "Brunelleschi"))
    assert both(OPEN, slip) == (0.5, 1.0)
    far = J(e("A", "prosa"), e("B", "Bramante"))
    assert both(OPEN, far) == (0.0, 0.0)


def test_open_fuzzy_threshold_is_configurable():
    slip = J(e("A", "prospetiva"), e("B", "Brunelleschi"))
    assert score_item(OPEN, slip, fuzzy_threshold=100).score == 0.5
    assert score_item(OPEN, slip, fuzzy_threshold=50).score == 1.0


def test_open_old_plain_list_gold_and_double_spaces():
    old = {"type": "completion_open", "answers": ["prospettiva", "Brunelleschi"]}
    raw = J(e("A", "  prospettiva "), e("B", "brunelleschi"))
    assert both(old, raw) == (0.0, 1.0)  # paper: the published evaluator reads no key from plain strings
    assert both(OPEN, J(e("A", "prospettiva   centrale"), e("B", "Brunelleschi"))) == (0.5, 0.5)


def test_open_empty_text_is_wrong_even_with_low_threshold():
    assert score_item(OPEN, J(e("A", ""), e("B", "")), fuzzy_threshold=0).score == 0.0


# --- select_errors -----------------------------------------------------------------------------

def test_select_errors_right_partial_wrong():
    assert both(ERRORS, J(e("A", "tela"), e("B", "Seicento"))) == (1.0, 1.0)
    assert both(ERRORS, J(e("A", "tela"))) == (0.6667, pytest.approx(2 / 3))
    assert both(ERRORS, J(e("A", "cupola"), e("B", "Giotto"))) == (0.0, 0.0)
    assert both(ERRORS, J({"error": "TELA", "correct": "muro"}, {"description": "seicento"})) == (1.0, 1.0)


def test_select_errors_span_rule():
    # a short span containing exactly one gold error finds it
    assert both(ERRORS, J(e("A", "su tela"), e("B", "nel Seicento"))) == (0.0, 1.0)
    # up to three words longer than the error is fine, four is not
    assert score_item(ERRORS, J(e("A", "dipinta su tela da"), e("B", "Seicento"))).score == 1.0
    assert score_item(ERRORS, J(e("A", "fu dipinta su tela da"), e("B", "Seicento"))).score == 0.5
    # a span holding two gold errors (the whole passage) finds nothing
    passage = "La cupola fu dipinta su tela da Giotto nel Seicento."
    assert both(ERRORS, J(e("A", passage))) == (0.0, 0.0)
    # whole words only: "telaio" is not "tela"
    assert score_item(ERRORS, J(e("A", "telaio"), e("B", "Seicento"))).score == 0.5


def test_select_errors_each_span_matches_one_error_once():
    result = score_item(ERRORS, J(e("A", "tela"), e("B", "su tela"), e("C", "Seicento")))
    assert result.score == pytest.approx(0.8)  # 2 found, 3 spans, 2 gold
    extras = [d for d in result.details if d["element"] == "extra"]
    assert [d["given"] for d in extras] == ["su tela"]


def test_select_errors_unparseable_paper_treats_string_as_one_prediction():
    assert both(ERRORS, "tela") == (0.6667, 0.0)
    strict = score_item(ERRORS, "tela", "strict")
    assert strict.parse_error and not strict.correct


# --- inputs, outputs, missing answers ----------------------------------------------------------

@pytest.mark.parametrize("item", [RADIO, CHECK, TF, POSITIONING, CLOSED, OPEN, ERRORS])
@pytest.mark.parametrize("profile", PROFILES)
def test_missing_answer_scores_as_unparseable(item, profile):
    for missing in ("", None, "   "):
        result = score_item(item, missing, profile)
        assert result.parse_error
        expected = 0.5 if (profile == "paper" and item is TF) else 0.0
        assert result.score == expected
        assert all(d["given"] is None for d in result.details if d["element"] != "extra")


@pytest.mark.parametrize("item", [RADIO, CHECK, TF, POSITIONING, CLOSED, OPEN, ERRORS])
def test_empty_imported_llm_answer_is_unparseable_under_paper(item):
    empty = score_item(item, [], "paper")
    garbage = score_item(item, "nessuna risposta", "paper")
    assert empty.parse_error and empty.score == (0.5 if item is TF else 0.0)
    assert garbage.score == empty.score


@pytest.mark.parametrize("profile", PROFILES)
def test_answer_forms_agree(profile):
    entries = [e("A", "chiaro-scuro"), e("B", "l'equilibrio")]
    forms = [J(*entries), {"Answers": entries}, entries, "```json\n" + J(*entries) + "\n```"]
    assert {score_item(POSITIONING, f, profile).score for f in forms} == {1.0}


def test_item_object_and_record_dict_score_alike():
    record = {"item_id": "0007", "language": "it", "has_image": False, "image": None,
              "question_text": "Luce [A] di [B].", **OPEN}
    item = validate_item(record)
    raw = J(e("A", "prospettiva"), e("B", "Bruneleschi"))
    for profile in PROFILES:
        assert score_item(item, raw, profile) == score_item(record, raw, profile)


def test_parsed_answer_object_is_accepted():
    parsed = parse_answer("Risposta: " + J(e("B")))
    assert score_item(RADIO, parsed).score == 1.0


def test_strict_recovers_prose_and_truncation_paper_does_not():
    prose = "La risposta è: " + J(e("B")) + " Grazie."
    assert both(RADIO, prose) == (0.0, 1.0)
    cut = '{"Answers": [{"id": "A", "text": "chiaro-scuro"}, {"id": "B", "text": "l\'equ'
    assert both(POSITIONING, cut) == (0.0, 0.5)


def test_details_name_expected_and_given():
    result = score_item(CLOSED, J(e("A", "benché"), e("B", "citta")))
    assert isinstance(result, ItemScore) and result.profile == "strict"
    assert result.details == [
        {"element": "A", "expected": "perché", "given": "benché", "right": False},
        {"element": "B", "expected": "Città", "given": "citta", "right": True},
    ]
    assert result.correct is True  # 0.5 counts as correct (score >= 0.5)


def test_unknown_profile_and_type_are_programming_errors():
    with pytest.raises(ValueError, match="profile"):
        score_item(RADIO, J(e("B")), "lenient")
    with pytest.raises(ValueError, match="type"):
        score_item({"type": "matching", "answers": []}, J(e("B")))


def test_defective_gold_still_scores_without_crashing():
    broken = {"type": "completion_open", "answers": [{"description": "senza id"}, "x", None]}
    for profile in PROFILES:
        assert 0.0 <= score_item(broken, J(e("A", "senza id")), profile).score <= 1.0
    assert score_item({"type": "true_false", "answers": None}, J(), "strict").score == 0.0


def test_repeated_scoring_gives_the_same_scores():  # its speed: `python -m eduart_core bench parsing`
    cases = [(RADIO, J(e("B"))), (CHECK, J(e("A"), e("C"))),
             (TF, J(e("A", "TRUE"), e("B", "FALSE"))), (POSITIONING, J(e("A", "x"))),
             (CLOSED, J(e("A", "perché"))), (OPEN, J(e("A", "prospetiva"))),
             (ERRORS, "Ecco: " + J(e("A", "su tela")))]
    first = [(score_item(item, raw, "strict").score, score_item(item, raw, "paper").score) for item, raw in cases]
    for _ in range(50):  # the normalisation caches must not change a score
        again = [(score_item(item, raw, "strict").score, score_item(item, raw, "paper").score) for item, raw in cases]
        assert again == first
    assert first[0] == (1.0, 1.0) and first[5] == (0.5, 0.0)  # one of two open blanks, a slip: strict only


def test_shared_normalisations():
    from eduart_core.text import fold_accents, norm_id, norm_paper, norm_strict

    assert norm_paper("  L'Équilibrio,  del   Chiaro-Scuro! ") == "lequilibrio del chiaroscuro"
    assert norm_strict("  L'Équilibrio,  del   Chiaro-Scuro! ") == "l equilibrio del chiaro scuro"
    assert norm_strict("chiaro-scuro") == norm_strict("chiaro scuro")
    assert norm_strict("l'equilibrio") == norm_strict("l equilibrio")
    assert fold_accents("perché città") == "perche citta"
    assert norm_id(" b ") == "B"
    assert norm_paper(None) == norm_strict(None) == norm_id(None) == ""
    assert norm_paper(True) == "true" and norm_strict(1) == "1"
    long_text = "Pérché, " * 100
    assert norm_strict(long_text) == ("perche " * 100).strip()
    assert norm_paper(long_text) == ("perche " * 100).strip()

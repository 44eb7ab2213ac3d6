"""Field states from the decision log, and the per-format editors (values, not JSON)."""
from __future__ import annotations

import pytest

from eduart_core.extraction import consensus as C
from eduart_core.extraction import editors as E
from eduart_core.extraction.simulated import demo_truth
from eduart_core.vocab import EDUART_FORMATS


def d(i, reviewer, value, action="accept_a", role="review", conflict=False):
    return {"decision_id": i, "reviewer": reviewer, "role": role, "action": action, "new_value": value,
            "conflict": conflict}


# --------------------------------------------------------------------------- consensus

def test_single_review_decision_settles_and_can_be_replaced():
    st = C.walk([d(1, "Anna", "x")], 1)
    assert st.state == C.RESOLVED and st.value == "x" and st.last_id == 1
    st = C.walk([d(1, "Anna", "x"), d(2, "Bruno", "y")], 1)  # taken while seeing Anna's value
    assert st.state == C.RESOLVED and st.value == "y"


def test_blind_review_merges_agreement_and_sends_disagreement_to_adjudication():
    st = C.walk([d(1, "Anna", "x")], 2)
    assert st.state == C.AWAITING and not st.settled
    assert C.open_for(st, "Bruno", C.REVIEW_ROLE, 2) and not C.open_for(st, "Anna", C.REVIEW_ROLE, 2)
    st = C.walk([d(1, "Anna", "x"), d(2, "Bruno", "x", action="edit")], 2)  # same value by another route
    assert st.state == C.RESOLVED and st.how == "agreement"
    st = C.walk([d(1, "Anna", "x"), d(2, "Bruno", "y")], 2)
    assert st.state == C.ADJUDICATION and C.open_for(st, "Carla", C.ADJUDICATE_ROLE, 2)
    st = C.walk([d(1, "Anna", "x"), d(2, "Bruno", "y"), d(3, "Carla", "y", role="adjudicate")], 2)
    assert st.state == C.RESOLVED and st.value == "y" and st.how == "adjudication"


def test_a_conflicting_decision_never_replaces_the_settled_value():
    st = C.walk([d(1, "Anna", "x"), d(2, "Bruno", "y", conflict=True)], 1)
    assert st.state == C.ADJUDICATION and st.value == "x" and len(st.conflicts) == 1
    st = C.walk([d(1, "Anna", "x"), d(2, "Bruno", "y", conflict=True), d(3, "Carla", "x", role="adjudicate")], 1)
    assert st.state == C.RESOLVED and st.value == "x" and not st.conflicts


def test_flags_and_canonical_values():
    st = C.walk([d(1, "Anna", None, action="flag")], 1)
    assert st.state == C.FLAGGED
    assert C.walk([d(1, "Anna", None, action="flag"), d(2, "Bruno", "x")], 1).state == C.RESOLVED
    assert C.canonical({"b": 1, "a": [1, 2]}) == C.canonical({"a": [1, 2], "b": 1})
    assert C.canonical("città") != C.canonical("citta")


# --------------------------------------------------------------------------- editors

@pytest.mark.parametrize("record", demo_truth(), ids=lambda r: f"{r['type']}-{r['language']}")
def test_every_field_of_every_format_round_trips_through_its_editor(record):
    for name in ("question_title", "instructions", "question_text", "choices", "answers"):
        value = record.get(name)
        if value is None:
            continue
        editor = E.editor_for(record["type"], name, value, record)
        assert editor.kind != "json", f"{record['type']} {name} has no dedicated editor"
        assert editor.decode({}) == value, f"{record['type']} {name}: unchanged controls changed the value"
        assert editor.problems({}) == [], editor.problems({})


def test_every_format_has_a_spec_for_its_key():
    """The specs live in each format's `editor` slot of the format registry (plain data)."""
    from eduart_core.formats import editor_spec

    for fmt in EDUART_FORMATS:
        assert editor_spec(fmt)["format"] == fmt
        assert E.editor_spec(fmt).widget("answers") not in (None, "json")


NEWER = [
    {"type": "numeric", "language": "en", "question_text": "In which year was the ceiling finished?",
     "choices": None, "answers": [{"id": "A", "value": 1512, "tolerance": 0}]},
    {"type": "open_text", "language": "en", "question_text": "How was the wall painted?", "choices": None,
     "answers": [{"id": "A", "references": ["on wet plaster", "buon fresco"]}]},
    {"type": "multi_part_choice", "language": "en", "question_text": "Where is the saint?",
     "choices": [{"id": "A", "label": "lateral", "options": ["left", "none", "right"]},
                 {"id": "B", "label": "depth", "options": ["front", "back"]}],
     "answers": [{"id": "A", "description": "left"}, {"id": "B", "description": "back"}]},
]


@pytest.mark.parametrize("record", NEWER, ids=lambda r: r["type"])
def test_newer_formats_ship_editors_the_page_can_draw(record):
    from eduart_core.items import check_item

    assert check_item({**record, "item_id": "x1"})[1] == []
    paths = {"numeric": ["answers[A].value", "answers[A].tolerance"], "open_text": ["answers[A].references"],
             "multi_part_choice": ["choices", "answers"]}[record["type"]]
    from eduart_core.extraction.paths import get_at

    for path in paths:
        value = get_at(record, path)
        editor = E.editor_for(record["type"], path, value, record)
        assert editor.kind != "json" and {c.kind for c in editor.controls} <= set(E.CONTROL_KINDS)
        assert editor.decode({}) == value, (path, editor.decode({}))
        assert editor.problems({}) == []
    value_editor = E.editor_for("numeric", "answers[A].value", 1512, NEWER[0])
    assert value_editor.label == "Correct value" and value_editor.decode({"number": 1508.0}) == 1508
    parts = E.editor_for("multi_part_choice", "choices", NEWER[2]["choices"], NEWER[2])
    assert parts.decode({"options0": "left | right"})[0]["options"] == ["left", "right"]
    assert "choices[0].options: at least 2 entries" in parts.problems({"options0": "left"})[0]


def test_controls_speak_the_item():
    radio, check, tf = demo_truth()[0], demo_truth()[2], demo_truth()[4]
    key = E.editor_for(radio["type"], "answers", radio["answers"], radio).controls
    assert [c.kind for c in key] == ["radio"] and "B. Padova" in key[0].options
    assert {c.kind for c in E.editor_for(check["type"], "answers", check["answers"], check).controls} == {"checkbox"}
    assert {c.kind for c in E.editor_for(tf["type"], "answers", tf["answers"], tf).controls} == {"toggle"}
    closed = demo_truth()[8]
    leaf = E.editor_for(closed["type"], "answers[A].description", "Santa Maria Novella", closed)
    assert leaf.kind == "option_pick" and leaf.controls[0].options == ("Santa Maria Novella", "San Marco")
    errors = demo_truth()[12]
    rows = E.editor_for(errors["type"], "answers", errors["answers"], errors).controls
    assert [c.key for c in rows][:2] == ["error0", "correct0"]


def test_validation_names_the_field_and_the_problem():
    radio = demo_truth()[0]
    choices = E.editor_for(radio["type"], "choices", radio["choices"], radio)
    problems = choices.problems({"text1": "Padova  ", "id2": ""})
    assert "choices[B].text: has a leading or trailing space" in problems
    assert any(p.startswith("choices row 3: the id is empty") for p in problems)
    key = E.editor_for(radio["type"], "answers", radio["answers"], radio)
    assert key.problems({"key": None}) == ["answers: choose the correct option"]
    text = E.editor_for(radio["type"], "question_text", radio["question_text"], radio)
    assert text.problems({"text": "In quale  città"}) == ["question_text: has a doubled space after 'quale'"]
    errors = demo_truth()[12]
    ed = E.editor_for(errors["type"], "answers", errors["answers"], errors)
    assert ed.problems({"error0": "Firenze"}) == ["answers[0].error: 'Firenze' does not appear in the passage"]


def test_controls_that_differ_from_the_other_side_are_marked():
    radio = demo_truth()[0]
    other = [dict(c) for c in radio["choices"]]
    other[1]["text"] = "Padua"
    controls = E.editor_for(radio["type"], "choices", radio["choices"], radio, other).controls
    marked = [c.key for c in controls if c.marked]
    assert marked == ["text1"]
    assert not any(c.marked for c in E.editor_for(radio["type"], "answers", radio["answers"], radio).controls)
    absent = E.editor_for(radio["type"], "question_title", radio["question_title"], radio, None).controls
    assert all(c.marked for c in absent)  # the other extraction has no title at all


def test_values_are_described_in_the_items_words():
    tf = demo_truth()[4]
    assert E.describe(tf["answers"], "answers", tf["type"]).splitlines()[1] == "B: False"
    errors = demo_truth()[12]
    assert E.describe(errors["answers"], "answers", errors["type"]).splitlines()[0] == "Venezia → Milano"
    assert E.field_label("choices[B].text", demo_truth()[0]["type"]) == "Options: option B"


def test_the_editors_ask_the_formats_instead_of_naming_them():
    """What a part is called, whether a key is per blank, whether choices are a word bank: the
    format's answer (its registry entry), never a branch on a format name in the editors."""
    import re
    from pathlib import Path

    from eduart_core.extraction import editors as editors_module
    from eduart_core.formats import REGISTRY

    text = Path(editors_module.__file__).read_text(encoding="utf-8")
    assert not re.search(r"\b[A-Z_]+_TYPE\b", text)
    assert not re.search(r"(format_name|ctx\.format|\.format)\s*(==|!=|in\b|not in\b)", text)
    assert [f.name for f in REGISTRY if re.search(rf"(==|!=)\s*\"{f.name}\"", text)] == []

"""A format added from outside the package is one module and a prompt file, and every room takes it.

What a contributor relies on: with `tests/formats/plugin_format.py` (the whole format) and its prompt rules in
a folder of the test's own, `formats.register` is the only other step; the item imports into a store,
a model is asked with the format's rules and scored under both profiles, the inspector's helpers show
it in its own words, the review editors edit it, the exam-page screenshot lays it out, the
answer-quality analysis reads it, and the demo's simulated respondents answer it.
"""
from __future__ import annotations

import io
import json

import plugin_format
import pytest
from plugin_format import LABEL, NAME, RULES, OneWord, record

from eduart_core import display, formats, vocab
from eduart_core.items import ItemValidationError, validate_item
from eduart_core.scoring import score_item


@pytest.fixture
def one_word(tmp_path):
    """The format registered with its prompt file in a temp folder; removed again afterwards."""
    prompt = tmp_path / "prompts" / f"{NAME}.md"
    prompt.parent.mkdir()
    prompt.write_text(plugin_format.PROMPT, encoding="utf-8")
    fmt = formats.register(OneWord(str(prompt)), LABEL)
    yield fmt
    formats.unregister(NAME)
    assert formats.find_format(NAME) is None and NAME not in vocab.FORMATS


def test_registering_puts_the_format_in_the_vocabulary_and_the_registry(one_word):
    assert formats.find_format(NAME) is one_word and formats.all_formats()[-1] is one_word
    assert vocab.format_label(NAME) == LABEL and NAME in vocab.format_names()
    assert formats.register(one_word, LABEL) is one_word  # again: nothing changes
    with pytest.raises(ValueError, match="already registered"):
        formats.register(OneWord(), LABEL)
    with pytest.raises(ValueError, match="already registered"):
        formats.register(type("Clash", (OneWord,), {"name": vocab.format_names()[0]})(), "clash")


def test_the_item_validates_and_imports_into_a_store(one_word, tmp_path):
    from eduart_core.scoring.item_writes import upsert_items
    from eduart_core.store import Store
    from eduart_core.store.items import load_items

    assert validate_item(record()).type == NAME
    with pytest.raises(ItemValidationError, match="exactly one entry"):
        validate_item({**record(), "answers": []})
    store = Store(tmp_path / "s.duckdb")
    report = upsert_items(store, [record("w1"), record("w2", "Tempera")], "words", "test")
    assert report.added == ["w1", "w2"]
    assert load_items(store, "words")["type"].tolist() == [NAME, NAME]


def test_a_model_is_asked_with_the_formats_rules_and_scored_under_both_profiles(one_word):
    from eduart_core.runner.prompts import load_templates, render_user_text

    templates = load_templates(vocab.DEFAULT_CONDITION)
    assert templates.formats[NAME][0] == RULES
    assert RULES in render_user_text(record(), templates)
    right, sloppy = json.dumps({"Answers": [{"id": "A", "text": "Fresco"}]}), "fresco"
    assert score_item(record(), right, vocab.STRICT_PROFILE).score == 1.0
    assert score_item(record(), right, vocab.PAPER_PROFILE).score == 1.0
    scored = score_item(record(), sloppy, vocab.STRICT_PROFILE)  # a reply without JSON is the word itself
    assert scored.score == 1.0 and scored.scorer == f"{NAME}/1"
    assert score_item(record(), json.dumps({"Answers": [{"id": "A", "text": "fresco"}]}),
                      vocab.PAPER_PROFILE).score == 0.0


def test_the_inspector_shows_the_format_in_its_own_words(one_word):
    card = display.card(record())
    assert card["rows"] == [{"element": "A", "text": "Paint on wet plaster is called?", "gold": "Fresco"}]
    assert card["gold"] == "A: Fresco" and card["chance"] == 0.0
    details = score_item(record(), json.dumps({"Answers": [{"id": "A", "text": "tempera"}]}),
                         vocab.STRICT_PROFILE).details
    rows = display.answer_rows(details, record())
    assert rows[["expected", "given", "mark"]].values.tolist() == [["FRESCO", "TEMPERA", display.mark(False)]]
    assert display.answer_summary(details, record()) == "[A] TEMPERA"
    assert formats.display_item(record())["label"] == LABEL


def test_the_review_editors_edit_the_format(one_word):
    from eduart_core.extraction import editors

    editor = editors.editor_for(NAME, "answers[0].description", "Fresco", record())
    assert editor.kind == "line" and editor.label == "The word"
    assert editor.decode({c.key: "Affresco" for c in editor.controls}) == "Affresco"
    assert editors.field_label("question_text", NAME) == "Question"
    formats_offered = editors.editor_for(NAME, "type", NAME, record()).controls[0].options
    assert NAME in formats_offered


def test_the_exam_page_screenshot_lays_the_format_out(one_word):
    from PIL import Image

    from eduart_core.extraction.pages_render import render_page

    shown = Image.open(io.BytesIO(render_page(record())))
    plain = Image.open(io.BytesIO(render_page({**record(), "type": "no_such_format"})))
    assert shown.size[0] == plain.size[0] and shown.size[1] > plain.size[1]  # one more line: the answer box


def test_the_answer_quality_analysis_reads_the_format(one_word):
    from eduart_core.analysis.answer_quality import answer_status

    assert answer_status(record(), [{"id": "A", "text": "fresco"}], "fresco")[0] == "ok"
    assert answer_status(record(), None, "I cannot answer this.")[0] == "refused"


def test_the_demo_simulation_answers_the_format(one_word, tmp_path):
    from eduart_core.scoring.item_writes import upsert_items
    from eduart_core.simulate import make_models, plan_items, simulate_into_store, simulate_run
    from eduart_core.store import Store
    from eduart_core.store.scores import load_scores

    models = make_models(8, 1)
    assert all(NAME in m.format_offsets for m in models[:8])  # a production format: the archetypes' skill
    records = [record(f"w{i}", word) for i, word in enumerate(["Fresco", "Tempera", "Mosaic", "Sfumato"])]
    plans = plan_items(records, 1)
    responses = simulate_run(models[0], plans, vocab.MOTIVATION_CONDITION, 1)
    assert all(r.intended and r.intended[0]["id"] == "A" for r in responses)
    assert all(r.motivation for r in responses)
    store = Store(tmp_path / "sim.duckdb")
    upsert_items(store, records, "words", "test")
    counts = simulate_into_store(store, "words", models[:2], 1, conditions=(vocab.DEFAULT_CONDITION,))
    assert counts["responses"] == 2 * len(records)
    scores = load_scores(store, vocab.STRICT_PROFILE, dataset="words")
    assert len(scores) == 2 * len(records) and set(scores["type"]) == {NAME} and scores["score"].between(0, 1).all()

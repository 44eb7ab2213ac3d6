"""Item metadata: task, dimension, tags, image attributes, distractor types,
any ISO 639-1 language, parallel forms and dialogue turns: validated, stored, filterable and
returned by the items table. Items are made up for these tests."""
from __future__ import annotations

import json

import pytest

from eduart_core.cli import main
from eduart_core.items import ItemValidationError, check_item, normalise_record, validate_item
from eduart_core.store import Store


def _mcq(item_id: str = "q1", **extra) -> dict:
    rec = {"item_id": item_id, "type": "multiple_choice_radio",
           "question_text": "Quel matériau reçoit la peinture à fresque ?",
           "choices": [{"id": "A", "text": "l'enduit frais"}, {"id": "B", "text": "la toile", "distractor_type": "material"},
                       {"id": "C", "text": "le bois", "distractor_type": "material"}],
           "answers": [{"id": "A", "description": "l'enduit frais"}], "language": "fr",
           "has_image": False, "image": None}
    rec.update(extra)
    return rec


FULL = {"task": "technique", "dimension": "attribute", "tags": {"difficulty": "hard", "cognitive_level": 2,
                                                                 "granularity": "fine"},
        "parallel_of": "q0", "dialogue_id": "d1", "turn": 2}


def test_full_metadata_validates_and_round_trips():
    item = validate_item(_mcq(**FULL))
    assert (item.task, item.dimension, item.parallel_of, item.dialogue_id, item.turn) == \
        ("technique", "attribute", "q0", "d1", 2)
    assert item.tags == {"difficulty": "hard", "cognitive_level": 2, "granularity": "fine"}
    assert item.language == "fr"
    rec = item.to_record()
    assert rec["choices"][1]["distractor_type"] == "material"
    assert validate_item(json.loads(json.dumps(rec))).to_record() == rec


def test_unset_metadata_leaves_the_published_shape_unchanged():
    plain = normalise_record(_mcq())
    assert not {"task", "dimension", "tags", "parallel_of", "dialogue_id", "turn", "image_attributes"} & set(plain)
    # empty values count as unset, so a table with empty cells gives the same record (and hash)
    assert normalise_record(_mcq(task="", tags={}, dimension=None, turn=None)) == plain
    assert normalise_record(_mcq(turn="3", dialogue_id=7))["turn"] == 3
    assert normalise_record(_mcq(turn="3", dialogue_id=7))["dialogue_id"] == "7"


@pytest.mark.parametrize("language", ["fr", "de", "zh", "it", "en", " FR "])
def test_any_iso_639_1_language_is_accepted(language):
    assert validate_item(_mcq(language=language)).language == language.strip().lower()


METADATA_RULES = [
    ("language not ISO 639-1", {"language": "eng"}, "language", "ISO 639-1"),
    ("unknown two-letter code", {"language": "xx"}, "language", "ISO 639-1"),
    ("tags not an object", {"tags": ["hard"]}, "tags", "object"),
    ("tag value is a list", {"tags": {"difficulty": ["hard"]}}, "tags.difficulty", "short string or a number"),
    ("tag value is null", {"tags": {"difficulty": None}}, "tags.difficulty", "short string or a number"),
    ("tag value is a boolean", {"tags": {"verified": True}}, "tags.verified", "short string or a number"),
    ("tag value too long", {"tags": {"note": "x" * 201}}, "tags.note", "at most 200"),
    ("tag value not finite", {"tags": {"p": float("nan")}}, "tags.p", "finite"),
    ("tag key not a name", {"tags": {"": "x"}}, "tags.", "short name"),
    ("too many tags", {"tags": {f"k{i}": i for i in range(51)}}, "tags", "at most 50"),
    ("task empty", {"task": "   ", "dimension": "x"}, "task", None),
    ("task not text", {"task": 3}, "task", "must be a string"),
    ("dimension too long", {"dimension": "d" * 121}, "dimension", "at most 120"),
    ("own parallel form", {"parallel_of": "q1"}, "parallel_of", "its own parallel form"),
    ("parallel_of not an id", {"parallel_of": ["q0"]}, "parallel_of", "must be a string"),
    ("turn zero", {"dialogue_id": "d1", "turn": 0}, "turn", "from 1"),
    ("turn not a number", {"dialogue_id": "d1", "turn": "second"}, "turn", "whole number"),
    ("turn is a boolean", {"dialogue_id": "d1", "turn": True}, "turn", "whole number"),
    ("turn without dialogue", {"turn": 1}, "dialogue_id", "go together"),
    ("dialogue without turn", {"dialogue_id": "d1"}, "turn", "go together"),
    ("image attributes without image", {"image_attributes": {"genre": "portrait"}}, "image_attributes",
     "no image"),
    ("image attribute value is an object", {"has_image": True, "image": "a.jpg",
                                            "image_attributes": {"genre": {"x": 1}}},
     "image_attributes.genre", "short string or a number"),
]


@pytest.mark.parametrize("name,changes,field,problem", METADATA_RULES, ids=[r[0] for r in METADATA_RULES])
def test_each_metadata_rule_names_its_field(name, changes, field, problem):
    rec = _mcq(**changes)
    if "task" in changes and changes["task"] == "   ":  # blank is "not set" after trimming, so valid
        assert validate_item(rec).task is None
        return
    with pytest.raises(ItemValidationError) as info:
        validate_item(rec)
    err = info.value
    assert field in err.fields, err.problems
    if problem:
        assert any(problem in p for p in err.problems), err.problems
    assert all(p.startswith("item q1: field ") for p in err.problems)


def test_distractor_type_must_be_a_short_label():
    rec = _mcq()
    rec["choices"][2]["distractor_type"] = 5
    _, problems = check_item(rec)
    assert problems == ["item q1: field choices[C].distractor_type: must be a string, got int"]


def _write_jsonl(path, records) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def _french_dataset() -> list[dict]:
    return [
        _mcq("fr1", task="technique", dimension="attribute", tags={"difficulty": "hard", "cognitive_level": 2}),
        _mcq("fr2", task="technique", dimension="counting", tags={"difficulty": "easy", "cognitive_level": 1},
             parallel_of="fr1"),
        _mcq("fr3", dimension="counting", tags={"difficulty": "hard"}, parallel_of="missing-item"),
        _mcq("fr4", dialogue_id="d1", turn=1),
        _mcq("fr5", dialogue_id="d1", turn=1),
    ]


def test_french_dataset_with_dimensions_imports_without_data_issues(tmp_path, capsys):
    from eduart_core.item_table import ITEM_TABLE_COLUMNS, items_table
    from eduart_core.store.items import load_items

    store = Store(tmp_path / "s.duckdb")
    _write_jsonl(tmp_path / "fr.jsonl", _french_dataset())
    assert main(["import-items", str(tmp_path / "fr.jsonl"), "--db", str(store.path), "--dataset", "fr"]) == 0
    captured = capsys.readouterr()
    assert "5 item(s) added" in captured.out
    warnings = [ln for ln in captured.err.splitlines() if ln.startswith("warning:")]
    assert warnings == ["warning: item fr3: parallel_of missing-item is not an item of dataset fr (yet)",
                        "warning: dialogue d1: turn 1 is claimed by items fr4, fr5"]
    items = load_items(store, "fr")
    assert not items["data_issue"].any()
    assert set(items["language"]) == {"fr"}
    row = items.set_index("item_id").loc["fr2"]
    assert (row["task"], row["dimension"], row["parallel_of"]) == ("technique", "counting", "fr1")
    assert row["tags"] == {"difficulty": "easy", "cognitive_level": 1}
    assert items.set_index("item_id").loc["fr4", "turn"] == 1
    assert items.set_index("item_id").loc["fr4", "task"] is None

    table = items_table(store, "fr")
    assert tuple(table.columns) == ITEM_TABLE_COLUMNS and len(table) == 5
    assert json.loads(table.set_index("item_id").loc["fr1", "tags"]) == {"cognitive_level": 2, "difficulty": "hard"}
    assert list(items_table(store, "fr", dimensions=["counting"])["item_id"]) == ["fr2", "fr3"]
    assert list(items_table(store, "fr", tags={"difficulty": ["hard"]})["item_id"]) == ["fr1", "fr3"]
    assert list(items_table(store, "fr", tags={"cognitive_level": ["2"]}, tasks=["technique"])["item_id"]) == ["fr1"]
    assert items_table(store, "fr", languages=["it"]).empty

    # the same file again changes nothing and warns again (the link still does not resolve)
    assert main(["import-items", str(tmp_path / "fr.jsonl"), "--db", str(store.path), "--dataset", "fr"]) == 0
    assert "0 item(s) added, 0 updated (new version), 5 unchanged" in capsys.readouterr().out


def test_metadata_filters_select_the_items_a_run_asks(tmp_path):
    from eduart_core.store.scores import load_scores

    store = Store(tmp_path / "s.duckdb")
    _write_jsonl(tmp_path / "fr.jsonl", _french_dataset()[:3])
    assert main(["import-items", str(tmp_path / "fr.jsonl"), "--db", str(store.path), "--dataset", "fr"]) == 0
    assert main(["run", "--db", str(store.path), "--dataset", "fr", "--model", "chance", "--quiet",
                 "--items", "tag.difficulty=hard,dimension=attribute|counting"]) == 0
    scores = load_scores(store, dataset="fr")
    assert sorted(scores["item_id"]) == ["fr1", "fr3"]
    assert dict(zip(scores["item_id"], scores["dimension"])) == {"fr1": "attribute", "fr3": "counting"}
    assert set(scores["language"]) == {"fr"}
    assert main(["run", "--db", str(store.path), "--dataset", "fr", "--model", "chance", "--quiet",
                 "--items", "colour=red"]) == 2


def test_image_attributes_are_stored_with_the_item(tmp_path):
    from PIL import Image

    from eduart_core.scoring.item_writes import upsert_items
    from eduart_core.store.items import get_item

    Image.new("RGB", (8, 8), (10, 200, 10)).save(tmp_path / "p.png")
    store = Store(tmp_path / "s.duckdb")
    attributes = {"genre": "landscape", "figures": 0, "setting": "outdoor"}
    upsert_items(store, [_mcq("img1", has_image=True, image="p.png", image_attributes=attributes)], "fr", "test",
                 images_root=tmp_path)
    stored = get_item(store, "fr", "img1")
    assert stored["record"]["image_attributes"] == attributes and stored["image_hash"]
    assert not stored["validation_errors"]


def test_show_item_metadata_is_the_items_table(tmp_path, capsys):
    store = Store(tmp_path / "s.duckdb")
    _write_jsonl(tmp_path / "fr.jsonl", _french_dataset())
    assert main(["import-items", str(tmp_path / "fr.jsonl"), "--db", str(store.path), "--dataset", "fr"]) == 0
    capsys.readouterr()
    assert main(["show", "item_metadata", "--db", str(store.path), "--dataset", "fr", "--languages", "fr",
                 "--option", "dimension=counting|attribute", "--option", "tag=difficulty=hard"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["item_id"] for r in rows] == ["fr1", "fr3"]
    assert rows[0]["dimension"] == "attribute" and json.loads(rows[0]["tags"])["cognitive_level"] == 2
    assert main(["show", "item_metadata", "--db", str(store.path), "--dataset", "fr",
                 "--option", "tag=difficulty"]) == 2
    assert "is not NAME=VALUE" in capsys.readouterr().err

"""The `paper` profile is the published evaluator on both paths (formats doc section 3).

Raw path (our own runs): published step 1 parses the raw text, step 2 scores the result.
Import path (a published answer file): step 2 scores `llm_answer` exactly as stored, never
re-parsed. One table row per quirk; every row is checked on both paths, through `score_item`
and end to end through a real store. The `llm` column is what the published step 1 stores for
`raw`, written out by hand from the rules (not computed by our code). Items are made up.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from eduart_core.answers import StoredAnswer, published_parse
from eduart_core.importers.records import import_eduart
from eduart_core.scoring import score_item
from eduart_core.scoring.item_writes import upsert_items
from eduart_core.scoring.rescore import rescore
from eduart_core.scoring.responses import add_responses
from eduart_core.store.runs import create_run, ensure_model
from eduart_core.store.scores import load_scores

RADIO = {"type": "multiple_choice_radio", "question_text": "Quale pittore inventato?",
         "choices": [{"id": "A", "text": "Uno"}, {"id": "B", "text": "Due"}, {"id": "C", "text": "Tre"}],
         "answers": [{"id": "B", "description": "Due"}], "language": "it"}
CHECK = {"type": "multiple_choice_check", "question_text": "Quali tecniche inventate?",
         "choices": [{"id": c, "text": t} for c, t in zip("ABCD", ["olio", "tempera", "affresco", "pastello"])],
         "answers": [{"id": "A", "description": "olio"}, {"id": "B", "description": "tempera"}], "language": "it"}
TF = {"type": "true_false", "question_text": None,
      "choices": [{"id": c, "text": f"Made-up statement {c}."} for c in "ABCD"],
      "answers": [{"id": "A", "text": "True"}, {"id": "B", "text": "False"},
                  {"id": "C", "text": "False"}, {"id": "D", "text": "True"}], "language": "en"}
CLOSED = {"type": "completion_closed", "question_text": "Nel [A] dipinse la [B].",
          "choices": [{"id": "A", "options": ["perché", "benché"]}, {"id": "B", "options": ["Città", "Paese"]}],
          "answers": [{"id": "A", "description": "perché"}, {"id": "B", "description": "Città"}], "language": "it"}
ERRORS = {"type": "select_errors", "question_text": "La cupola fu dipinta su tela da Giotto nel Seicento.",
          "choices": None, "answers": [{"error": "tela", "correct": "muro"}, {"error": "Seicento", "correct": "Trecento"}],
          "language": "it"}

RAW = object()  # marker: step 1 leaves the raw response itself


def answers(value) -> str:
    return json.dumps({"Answers": value}, ensure_ascii=False)


# (case id, item, raw response, what published step 1 stores, published score)
QUIRKS = [
    ("plain-string-ids", RADIO, '{"Answers": ["B"]}', ["B"], 1.0),
    ("plain-string-ids-check", CHECK, '{"Answers": ["A", " b "]}', ["A", " b "], 1.0),
    ("lone-leading-double-brace", RADIO, '{{"Answers": [{"id": "B"}]}', [{"id": "B"}], 1.0),
    ("double-braces-both-ends", RADIO, '{{"Answers": [{"id": "B"}]}}', [{"id": "B"}], 1.0),
    ("double-braces-everywhere", RADIO, '{{"Answers": [{{"id": "B"}}]}}', RAW, 0.0),
    ("valid-json-ending-in-double-brace", RADIO, '{"Answers": [{"id": "B"}], "meta": {"confidence": 1}}', RAW, 0.0),
    ("fence-json", RADIO, '```json\n{"Answers": [{"id": "B"}]}\n```', [{"id": "B"}], 1.0),
    ("fence-JSON", RADIO, '```JSON\n{"Answers": [{"id": "B"}]}\n```', RAW, 0.0),
    ("fence-javascript", RADIO, '```javascript\n{"Answers": [{"id": "B"}]}\n```', RAW, 0.0),
    ("fence-after-prose", RADIO, 'Ecco:\n```json\n{"Answers": [{"id": "B"}]}\n```', RAW, 0.0),
    ("trailing-comma", RADIO, '{"Answers": [{"id": "B"},]}', RAW, 0.0),
    ("json-not-an-object", RADIO, '["B"]', RAW, 0.0),
    ("id-key-upper-case", RADIO, '{"Answers": [{"ID": "B"}]}', [{"ID": "B"}], 0.0),
    ("radio-several-ids", RADIO, answers([{"id": "A"}, {"id": "B"}]), [{"id": "A"}, {"id": "B"}], 1.0),
    ("check-marked-Vero-with-period", CHECK,
     answers([{"id": "A", "text": "Vero."}, {"id": "B", "text": "Vero."}, {"id": "C", "text": "Falso."}]),
     [{"id": "A", "text": "Vero."}, {"id": "B", "text": "Vero."}, {"id": "C", "text": "Falso."}], 0.8),
    ("check-marked-VERO", CHECK,
     answers([{"id": "A", "text": "VERO"}, {"id": "B", "text": " vero "}, {"id": "C", "text": "falso"}]),
     [{"id": "A", "text": "VERO"}, {"id": "B", "text": " vero "}, {"id": "C", "text": "falso"}], 1.0),
    ("check-marks-and-plain-string", CHECK, answers([{"id": "A", "text": "TRUE"}, "B"]),
     [{"id": "A", "text": "TRUE"}, "B"], 0.6667),
    ("check-f1-rounded", CHECK, answers([{"id": "A"}]), [{"id": "A"}], 0.6667),
    ("empty-text-falls-to-description", CLOSED,
     answers([{"id": "A", "text": "", "description": "perché"}, {"id": "B", "text": "Città"}]),
     [{"id": "A", "text": "", "description": "perché"}, {"id": "B", "text": "Città"}], 1.0),
    ("empty-text-falls-to-error", ERRORS, answers([{"text": "", "error": "tela"}, {"text": "Seicento"}]),
     [{"text": "", "error": "tela"}, {"text": "Seicento"}], 1.0),
    ("empty-text-falls-to-description-errors", ERRORS, answers([{"text": "", "description": "TELA"}]),
     [{"text": "", "description": "TELA"}], 0.6667),
    ("blank-accents-folded-missing-blank", CLOSED, answers([{"id": "A", "text": "PERCHE"}]),
     [{"id": "A", "text": "PERCHE"}], 0.5),
    ("answers-as-string-radio", RADIO, '{"Answers": "B"}', "B", 0.0),
    ("answers-as-string-errors", ERRORS, '{"Answers": "tela"}', "tela", 0.6667),
    ("answers-null-true-false", TF, '{"Answers": null}', None, 0.5),
    ("answers-null-errors", ERRORS, '{"Answers": null}', None, 0.0),
    ("lower-case-answers-key-radio", RADIO, '{"answers": [{"id": "B"}]}', RAW, 0.0),
    ("lower-case-answers-key-true-false", TF,
     '{"answers": [{"id": "A", "text": "TRUE"}, {"id": "B", "text": "FALSE"}, '
     '{"id": "C", "text": "FALSE"}, {"id": "D", "text": "TRUE"}]}', RAW, 0.5),
    ("unparsed-string-errors", ERRORS, "tela", RAW, 0.6667),
    ("unparsed-string-true-false", TF, "A vero, B falso", RAW, 0.5),
    ("true-false-description-and-letters", TF,
     answers([{"id": "A", "description": "Vero"}, {"id": "B", "text": "F"}, {"id": "C", "text": "no"},
              {"id": "D", "text": "1"}]),
     [{"id": "A", "description": "Vero"}, {"id": "B", "text": "F"}, {"id": "C", "text": "no"},
      {"id": "D", "text": "1"}], 1.0),
    ("true-false-punctuated", TF,
     answers([{"id": "A", "text": "Vero."}, {"id": "B", "text": "Falso!"}, {"id": "C", "text": ""},
              {"id": "D", "text": "TRUE"}]),
     [{"id": "A", "text": "Vero."}, {"id": "B", "text": "Falso!"}, {"id": "C", "text": ""},
      {"id": "D", "text": "TRUE"}], 1.0),
    ("empty-response", RADIO, "", RAW, 0.0),
]
IDS = [q[0] for q in QUIRKS]


def stored(raw: str, llm):
    return raw if llm is RAW else llm


@pytest.mark.parametrize("name,item,raw,llm,expected", QUIRKS, ids=IDS)
def test_step_one_stores_what_the_published_pipeline_stored(name, item, raw, llm, expected):
    assert published_parse(raw) == stored(raw, llm)


@pytest.mark.parametrize("name,item,raw,llm,expected", QUIRKS, ids=IDS)
def test_raw_path_scores_as_published(name, item, raw, llm, expected):
    assert score_item(item, raw, "paper").score == expected


@pytest.mark.parametrize("name,item,raw,llm,expected", QUIRKS, ids=IDS)
def test_import_path_scores_the_stored_llm_answer(name, item, raw, llm, expected):
    assert score_item(item, StoredAnswer(stored(raw, llm)), "paper").score == expected


def test_imported_string_is_never_reparsed():
    """A string llm_answer is what the published pipeline left unparsed: it stays unparsed."""
    for text in ('```JSON\n{"Answers": [{"id": "B"}]}\n```', '{"Answers": [{"id": "B"}]}'):
        assert score_item(RADIO, StoredAnswer(text), "paper").score == 0.0
        assert score_item(RADIO, text, "strict").score == 1.0  # strict reads the raw text leniently
    assert score_item(ERRORS, StoredAnswer('{"Answers": [{"text": "tela"}]}'), "paper").details[-1]["given"] \
        == "answers text tela"


def _records() -> list[dict]:
    return [{**item, "item_id": f"{n:04d}", "has_image": False, "image": None}
            for n, (_, item, _, _, _) in enumerate(QUIRKS, start=1)]


def test_raw_path_through_the_store(store):
    upsert_items(store, _records(), "ds", origin="test")
    ensure_model(store, "m1", "Model One", "Acme", "offline", "m1-api")
    create_run(store, "run-1", "ds", "m1", "default", "live")
    add_responses(store, "run-1", [{"item_id": f"{n:04d}", "raw_text": raw}
                                   for n, (_, _, raw, _, _) in enumerate(QUIRKS, start=1)])
    expected = {f"{n:04d}": q[4] for n, q in enumerate(QUIRKS, start=1)}
    for _ in range(2):  # as added, and after rescoring from the stored raw text
        paper = load_scores(store, "paper").set_index("item_id").score.to_dict()
        assert paper == expected
        rescore(store)


def _published_folder(root: Path, llm_of) -> Path:
    meta = root / "dataset" / "metadata"
    meta.mkdir(parents=True)
    folder = root / "answers" / "acme_made-up-model" / "default"
    folder.mkdir(parents=True)
    for record, (_, _, raw, llm, _) in zip(_records(), QUIRKS):
        item_id = record.pop("item_id")
        (meta / f"{item_id}.json").write_text(json.dumps(record), encoding="utf-8")
        body = {"question_id": item_id, "raw_response": raw, "llm_answer": llm_of(raw, llm)}
        (folder / f"{item_id}.json").write_text(json.dumps(body), encoding="utf-8")
    return root


def test_import_path_through_the_store(store, tmp_path):
    root = _published_folder(tmp_path / "pub", stored)
    import_eduart(store, root, dataset="pub")
    expected = {f"{n:04d}": q[4] for n, q in enumerate(QUIRKS, start=1)}
    for _ in range(2):  # as imported, and after rescoring (a JSON null stays a null)
        paper = load_scores(store, "paper", dataset="pub").set_index("item_id").score.to_dict()
        assert paper == expected
        rescore(store)


def test_import_scores_llm_answer_not_raw_response(store, tmp_path):
    """The stored llm_answer decides, even when the raw response says something else."""
    root = _published_folder(tmp_path / "pub", lambda raw, llm: raw)  # every llm_answer a raw string
    import_eduart(store, root, dataset="pub")
    paper = load_scores(store, "paper", dataset="pub").set_index("item_id").score
    # "{"Answers": ["B"]}" as a string gives no ids, though step 1 on it would have given 1
    assert paper["0001"] == 0.0
    assert paper["0003"] == 0.0 and paper["0007"] == 0.0

"""Store feature functions: images, items, runs, responses, scores and the long frame."""
from __future__ import annotations

import json

import pg_kit
import pytest

from eduart_core.errors import UserError
from eduart_core.scoring.item_writes import save_item_version, upsert_items
from eduart_core.scoring.rescore import rescore
from eduart_core.scoring.responses import add_responses
from eduart_core.store.items import add_image, get_item, image_path, item_history, load_items
from eduart_core.store.runs import create_run, ensure_dataset, ensure_model, finish_run, list_runs
from eduart_core.store.scores import list_datasets, list_models, load_responses, load_scores, stats
from tests.importers.test_ingest import png_bytes

backend, store = pg_kit.backend, pg_kit.store  # every test here runs on DuckDB and PostgreSQL

RADIO = {"item_id": "r1", "type": "multiple_choice_radio", "question_text": "Quale colore inventato?",
         "choices": [{"id": "A", "text": "rosso"}, {"id": "B", "text": "verde"}],
         "answers": [{"id": "B", "description": "verde"}], "language": "it", "has_image": False, "image": None}
TF = {"item_id": "t1", "type": "true_false", "question_text": None,
      "choices": [{"id": "A", "text": "Made-up statement one."}, {"id": "B", "text": "Made-up statement two."}],
      "answers": [{"id": "A", "text": "True"}, {"id": "B", "text": "False"}], "language": "en",
      "has_image": False, "image": None}


def _answer(*ids: str) -> str:
    return json.dumps({"Answers": [{"id": i} for i in ids]})


@pytest.fixture
def run(store):
    """A dataset with two items, one model and one empty default run 'run-1'."""
    upsert_items(store, [RADIO, TF], "ds", origin="test")
    ensure_model(store, "m1", "Model One", "Acme", "offline", "m1-api")
    create_run(store, "run-1", "ds", "m1", "default", "live", params={"temperature": 0})
    return "run-1"


def test_add_image_is_content_addressed(store):
    data = png_bytes("red", (30, 20))
    first = add_image(store, data, "a.png")
    assert add_image(store, data, "copy.png") == first
    path = image_path(store, first)
    assert path == store.images_dir / first[:2] / f"{first}.png" and path.read_bytes() == data
    assert len([p for p in store.images_dir.rglob("*") if p.is_file()]) == 1
    with store.connect(read_only=True) as con:
        assert con.execute("SELECT mime, size_bytes, width, height FROM images").fetchall() == [
            ("image/png", len(data), 30, 20)]
    with pytest.raises(UserError, match="not a readable image"):
        add_image(store, b"plain text")


def test_upsert_is_idempotent_and_versions_changes(store):
    first = upsert_items(store, [RADIO], "ds", origin="test")
    assert first.added == ["r1"]
    again = upsert_items(store, [dict(RADIO)], "ds", origin="test")
    assert again.unchanged == ["r1"] and item_history(store, "ds", "r1").version.tolist() == [1]
    changed = upsert_items(store, [dict(RADIO, answers=[{"id": "A", "description": "rosso"}])], "ds", origin="test")
    assert changed.updated == ["r1"]
    assert get_item(store, "ds", "r1")["record"]["answers"][0]["id"] == "A"
    assert get_item(store, "ds", "r1", version=1)["record"]["answers"][0]["id"] == "B"
    assert load_items(store, "ds").version.tolist() == [2]
    with pytest.raises(UserError, match="no item zz"):
        get_item(store, "ds", "zz")


def test_keep_invalid_stores_flagged_items(store):
    bad = dict(RADIO, item_id="bad", answers=[])
    report = upsert_items(store, [RADIO, bad], "ds", origin="test", keep_invalid=True)
    assert list(report.invalid) == ["bad"]
    items = load_items(store, "ds").set_index("item_id")
    assert items.loc["bad", "data_issue"] and items.loc["bad", "validation_errors"]
    assert not items.loc["r1", "data_issue"] and items.loc["r1", "validation_errors"] == []
    assert items.loc["r1", "text_words"] == 5  # stem (3) + two choices


def test_add_responses_scores_both_profiles(store, run):
    rows = [
        {"item_id": "r1", "raw_text": _answer("A", "B"), "request_key": "k1", "input_tokens": 10,
         "output_tokens": 3, "latency_s": 0.2, "image_sent": False},
        {"item_id": "t1", "raw_text": None, "error": "HTTP 500 from provider", "request_key": "k2"},
    ]
    assert add_responses(store, run, rows) == 2
    strict = load_scores(store, "strict").set_index("item_id")
    paper = load_scores(store, "paper").set_index("item_id")
    assert strict.loc["r1", "score"] == 0.0 and paper.loc["r1", "score"] == 1.0  # two ids on a radio item
    # a failed request is stored and scored as unparseable, but it is no answer: the score frame
    # leaves the item out, as the published means leave out missing answers
    assert "t1" not in strict.index and "t1" not in paper.index
    assert strict.loc["r1", "model"] == "Model One" and strict.loc["r1", "family"] == "Acme"
    responses = load_responses(store, "ds", "t1")
    assert responses.error.iloc[0] == "HTTP 500 from provider" and responses.parse_error.iloc[0]
    assert add_responses(store, run, rows) == 0  # same request keys: nothing added
    assert stats(store)["responses"] == 2 and stats(store)["scores"] == 4


def test_paper_profile_scores_imported_llm_answer(store, run):
    add_responses(store, run, [{"item_id": "r1", "raw_text": "prose then " + _answer("B"), "llm_answer": [{"id": "B"}]}])
    assert load_scores(store, "paper").score.tolist() == [1.0]
    assert load_scores(store, "strict").score.tolist() == [1.0]


def test_latest_response_wins_and_repetitions_are_separate(store, run):
    add_responses(store, run, [{"item_id": "r1", "raw_text": _answer("A")}])
    add_responses(store, run, [{"item_id": "r1", "raw_text": _answer("B")}])
    create_run(store, "run-rep", "ds", "m1", "default", "live", repetition=1)
    add_responses(store, "run-rep", [{"item_id": "r1", "raw_text": _answer("A")}])
    frame = load_scores(store, "strict")
    # the latest answer of each repeat counts (B right in repeat 0, A wrong in repeat 1), averaged per item
    assert frame.score.tolist() == [0.5] and frame.n_repeats.tolist() == [2]
    with_reps = load_scores(store, "strict", include_repetitions=True)
    assert sorted(with_reps.repetition.tolist()) == [0, 1]
    assert len(load_responses(store, "ds", "r1")) == 3
    assert load_responses(store, "ds", "r1").is_latest.sum() == 2


def test_unknown_item_fails_whole_batch(store, run):
    before = stats(store)
    with pytest.raises(UserError, match="not in dataset ds: nope"):
        add_responses(store, run, [{"item_id": "r1", "raw_text": _answer("B")}, {"item_id": "nope", "raw_text": "x"}])
    assert stats(store) == before


def test_save_item_version_rescores_responses(store, run):
    add_responses(store, run, [{"item_id": "r1", "raw_text": _answer("A")}])
    assert load_scores(store, "strict").score.tolist() == [0.0]
    record = dict(get_item(store, "ds", "r1")["record"], answers=[{"id": "A", "description": "rosso"}])
    assert save_item_version(store, "ds", record, origin="review", note="gold was wrong") == 2
    assert load_scores(store, "strict").score.tolist() == [1.0]
    assert item_history(store, "ds", "r1").note.tolist() == [None, "gold was wrong"]
    assert save_item_version(store, "ds", record, origin="review", note="again") == 2  # unchanged: no version


def test_rescore_rebuilds_deleted_scores(store, run):
    add_responses(store, run, [{"item_id": "r1", "raw_text": _answer("B")}, {"item_id": "t1", "raw_text": "x"}])
    with store.transaction() as con:
        con.execute("DELETE FROM scores")
    assert rescore(store, profiles=("paper",)) == 2
    assert stats(store)["scores"] == 2
    assert rescore(store) == 4 and stats(store)["scores_by_profile"] == {"paper": 2, "strict": 2}
    with pytest.raises(UserError, match="no dataset"):
        rescore(store, dataset="missing")
    with pytest.raises(UserError, match="unknown scoring profile"):
        load_scores(store, "lenient")


def test_runs_models_datasets_listings(store, run):
    add_responses(store, run, [{"item_id": "r1", "raw_text": _answer("B"), "input_tokens": 7}])
    finish_run(store, run, "completed", {"input_tokens": 7, "output_tokens": 2, "cost_usd": 0.01, "n_errors": 0})
    runs = list_runs(store).set_index("run_id")
    assert runs.loc[run, "status"] == "completed" and runs.loc[run, "n_responses"] == 1
    assert runs.loc[run, "display_name"] == "Model One" and runs.loc[run, "finished_at"] is not None
    assert list_models(store).n_responses.tolist() == [1]
    ensure_dataset(store, "ref", "Reference", "reference", aggregate_only=True)
    datasets = list_datasets(store).set_index("dataset")
    assert datasets.loc["ds", "n_items"] == 2 and bool(datasets.loc["ref", "aggregate_only"])
    with pytest.raises(UserError, match="already exists"):
        create_run(store, run, "ds", "m1", "default", "live")
    with pytest.raises(UserError, match="unknown condition"):
        create_run(store, "r2", "ds", "m1", "sideways", "live")


def test_display_names_stay_unique(store):
    ensure_model(store, "a", "Same Name", None, None, None)
    assert ensure_model(store, "b", "Same Name", None, None, None) == "Same Name (b)"
    assert ensure_model(store, "a", "Same Name", "Fam", None, None) == "Same Name"


def test_edit_keeps_the_stored_image(store, tmp_path):
    (tmp_path / "p.png").write_bytes(png_bytes("yellow"))
    record = dict(RADIO, item_id="img", has_image=True, image="p.png")
    upsert_items(store, [record], "ds", origin="test", images_root=tmp_path)
    image_hash = get_item(store, "ds", "img")["image_hash"]
    assert image_hash
    edited = dict(record, question_text="Quale colore inventato, davvero?")
    assert save_item_version(store, "ds", edited, origin="review", note="typo") == 2
    assert get_item(store, "ds", "img")["image_hash"] == image_hash
    assert upsert_items(store, [edited], "ds", origin="extraction").unchanged == ["img"]

"""Importers: the published folder layout and canonical item files, end to end on real stores.

The folder is built by the test from made-up items (no published question text) in the layout of
formats doc section 2: 5 items of several formats, one image, 2 models x 2 conditions.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import pg_kit
import pytest
from PIL import Image

from eduart_core.errors import UserError
from eduart_core.importers.records import import_eduart, import_items
from eduart_core.items import ItemValidationError
from eduart_core.store.items import get_item, image_path, item_history, load_items
from eduart_core.store.scores import list_models, load_scores, stats

backend, store = pg_kit.backend, pg_kit.store  # every test here runs on DuckDB and PostgreSQL

ITEMS = {
    "0001": {"type": "multiple_choice_radio", "question_text": "Quale pittore dipinse questo pannello immaginario?",
             "choices": [{"id": "A", "text": "Pittore Uno"}, {"id": "B", "text": "Pittore Due"},
                         {"id": "C", "text": "Pittore Tre"}],
             "answers": [{"id": "C", "description": "Pittore Tre"}], "language": "it",
             "source": "made-up/1", "has_image": True, "image": "imgs/0001.png", "bookkeeping": {"x": 1}},
    "0002": {"type": "true_false", "question_text": None,
             "choices": [{"id": "A", "text": "The invented fresco is blue."},
                         {"id": "B", "text": "The invented chapel has no roof."}],
             "answers": [{"id": "A", "text": "True"}, {"id": "B", "text": "Falso"}],
             "language": "en", "source": "made-up/2", "has_image": False, "image": None},
    "0003": {"type": "completion_closed", "question_text": "Nel [A] il maestro dipinse la [B].",
             "choices": [{"id": "A", "options": ["1400", "1500"]}, {"id": "B", "options": ["volta", "abside"]}],
             "answers": [{"id": "A", "description": "1400"}, {"id": "B", "description": "volta"}],
             "language": "it", "source": "made-up/3", "has_image": False, "image": None},
    "0004": {"type": "select_errors", "question_text": "The imaginary statue is made of cheese and stands in Narnia.",
             "choices": None, "answers": [{"error": "cheese", "correct": "marble"}],
             "language": "en", "source": "made-up/4", "has_image": False, "image": None},
    # a real-data defect: answer B has no [B] marker -> imported, flagged, still scored
    "0005": {"type": "completion_open", "question_text": "L'opera inventata fu scolpita da [A].",
             "choices": None, "answers": [{"id": "A", "description": "Scultore Finto"},
                                          {"id": "B", "description": "extra"}],
             "language": "it", "source": "made-up/5", "has_image": False, "image": None},
}

RIGHT = {"0001": [{"id": "C"}], "0002": [{"id": "A", "text": "TRUE"}, {"id": "B", "text": "FALSE"}],
         "0003": [{"id": "A", "text": "1400"}, {"id": "B", "text": "volta"}],
         "0004": [{"id": "A", "text": "cheese"}], "0005": [{"id": "A", "text": "Scultore Finto"}]}
WRONG = {"0001": [{"id": "A"}], "0002": [{"id": "A", "text": "FALSE"}, {"id": "B", "text": "TRUE"}],
         "0003": [{"id": "A", "text": "1500"}, {"id": "B", "text": "abside"}],
         "0004": [{"id": "A", "text": "Narnia"}], "0005": [{"id": "A", "text": "Nessuno"}]}

MODEL_GOOD = "openai_gpt-made-up-1"      # listed in the test's models.csv
MODEL_ODD = "acme_vision-odd-2"          # unknown: name derived from the folder


def png_bytes(colour: str = "red", size: tuple[int, int] = (12, 8)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def _answer_file(path: Path, item_id: str, model_dir: str, condition: str, raw: str, llm) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"question_id": item_id, "question_type": ITEMS[item_id]["type"], "model_name": model_dir,
            "prompt_condition": condition, "llm_answer": llm, "raw_response": raw,
            "input_tokens": 100, "output_tokens": 20, "processing_time": 1.5, "timestamp": "2026-01-01T00:00:00",
            "unknown_field": True}
    if condition == "motivation":
        data["motivation"] = "Made-up reasoning."
    path.write_text(json.dumps(data), encoding="utf-8")


def build_published_folder(root: Path, corrupt: bool = True) -> Path:
    """A small folder in the published layout; returns root. See the module docstring."""
    meta = root / "dataset" / "metadata"
    meta.mkdir(parents=True)
    (root / "dataset" / "imgs").mkdir()
    (root / "dataset" / "imgs" / "0001.png").write_bytes(png_bytes())
    (root / "dataset" / "data").mkdir()
    for item_id, record in ITEMS.items():
        (meta / f"{item_id}.json").write_text(json.dumps(record), encoding="utf-8")
        (root / "dataset" / "data" / f"{item_id}.txt").write_text("ignored", encoding="utf-8")
    answers = root / "answers"
    for item_id in ITEMS:
        for condition in ("default", "motivation"):
            body = {"Answers": RIGHT[item_id]}
            if condition == "motivation":
                body["motivation"] = "Made-up reasoning."
            raw = "```json\n" + json.dumps(body) + "\n```"
            _answer_file(answers / MODEL_GOOD / condition / f"{item_id}.json", item_id, MODEL_GOOD, condition,
                         raw, RIGHT[item_id])
        raw = json.dumps({"Answers": WRONG[item_id]})
        _answer_file(answers / MODEL_ODD / "default" / f"{item_id}.json", item_id, MODEL_ODD, "default",
                     raw, WRONG[item_id])
        if item_id == "0001":  # two ids on a radio item: paper 1, strict 0
            raw, llm = json.dumps({"Answers": [{"id": "A"}, {"id": "C"}]}), [{"id": "A"}, {"id": "C"}]
        else:  # prose around the JSON: the published parser gives up, ours recovers it
            raw = "Here is my answer: " + json.dumps({"Answers": RIGHT[item_id], "motivation": "x"})
            llm = raw
        _answer_file(answers / MODEL_ODD / "motivation" / f"{item_id}.json", item_id, MODEL_ODD, "motivation",
                     raw, llm)
    (answers / MODEL_GOOD / "default" / "_evaluation.json").write_text("{}", encoding="utf-8")
    (answers / MODEL_GOOD / "run.log").write_text("log", encoding="utf-8")
    (answers / MODEL_GOOD / "reproducibility").mkdir()
    if corrupt:
        (answers / MODEL_ODD / "default" / "0003.json").write_text('{"llm_answer": [', encoding="utf-8")
    return root


def models_csv(path: Path) -> Path:
    path.write_text("model,display_name,family,access,api_model_id,model_dir\n"
                    f"gpt-made-up,GPT Made Up,OpenAI,openai,gpt-made-up-1,{MODEL_GOOD}\n", encoding="utf-8")
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return build_published_folder(tmp_path / "eduart")


@pytest.fixture
def csv_path(tmp_path: Path) -> Path:
    return models_csv(tmp_path / "models.csv")


def _score(frame, model, condition, item_id) -> float:
    row = frame[(frame.model == model) & (frame.condition == condition) & (frame.item_id == item_id)]
    assert len(row) == 1, (model, condition, item_id)
    return float(row.score.iloc[0])


def test_import_eduart_counts_runs_and_scores(store, folder, csv_path):
    report = import_eduart(store, folder, models_csv=csv_path)
    assert [Path(p).name for p, _ in report.skipped] == ["0003.json"]
    assert "not valid JSON" in report.skipped[0][1]
    counts = stats(store)
    assert counts["items"] == 5 and counts["images"] == 1 and counts["items_with_image"] == 1
    assert counts["items_by_type"]["true_false"] == 1
    assert counts["items_by_language"] == {"en": 2, "it": 3}
    assert counts["models"] == 2 and counts["runs"] == 4
    assert counts["responses"] == 19  # 4 runs x 5 items - the corrupt file
    assert counts["scores"] == 38     # both profiles for every response
    assert counts["datasets"]["eduart"]["responses"] == 19

    models = list_models(store).set_index("model")
    assert models.loc["gpt-made-up", "display_name"] == "GPT Made Up"
    assert models.loc[MODEL_ODD, "display_name"] == "vision-odd-2"

    strict = load_scores(store, "strict", dataset="eduart")
    paper = load_scores(store, "paper", dataset="eduart")
    assert len(strict) == 19 and len(paper) == 19
    good = strict[strict.model == "GPT Made Up"]
    assert good[good.item_id != "0005"].score.tolist() == [1.0] * 8 and good.correct.all()
    # the defective item is still scored: its leaked extra blank B counts as unanswered
    assert good[good.item_id == "0005"].score.tolist() == [0.5, 0.5]
    assert _score(strict, "vision-odd-2", "default", "0001") == 0.0
    assert _score(strict, "vision-odd-2", "default", "0002") == 0.0
    # several ids on a radio item: the published rule rewards it, strict does not
    assert _score(paper, "vision-odd-2", "motivation", "0001") == 1.0
    assert _score(strict, "vision-odd-2", "motivation", "0001") == 0.0
    # prose around the JSON: recovered under strict, unparseable under paper
    assert _score(strict, "vision-odd-2", "motivation", "0003") == 1.0
    assert _score(paper, "vision-odd-2", "motivation", "0003") == 0.0
    assert set(strict.columns) >= {"model", "condition", "item_id", "type", "language", "has_image", "profile",
                                   "score", "correct", "family", "simulated", "dataset"}
    assert bool(strict[strict.item_id == "0001"].has_image.all())


def test_import_keeps_tokens_motivation_and_flags_defects(store, folder, csv_path):
    report = import_eduart(store, folder, models_csv=csv_path)
    assert list(report.invalid) == ["0005"]
    assert "answers" in report.invalid["0005"][0]
    item = get_item(store, "eduart", "0005")
    assert item["data_issue"] and item["validation_errors"]
    items = load_items(store, "eduart").set_index("item_id")
    assert not items.loc["0001", "data_issue"] and items.loc["0005", "data_issue"]
    assert items.loc["0002", "record"]["answers"][1]["text"] == "False"  # Vero/Falso normalised
    assert "bookkeeping" not in items.loc["0001", "record"]
    assert image_path(store, items.loc["0001", "image_hash"]).read_bytes() == png_bytes()
    from eduart_core.store.scores import load_responses
    responses = load_responses(store, "eduart", "0003")
    motivated = responses[(responses.model == "GPT Made Up") & (responses.condition == "motivation")].iloc[0]
    assert motivated.motivation == "Made-up reasoning."
    assert motivated.input_tokens == 100 and motivated.latency_s == 1.5
    assert motivated.strict_score == 1.0 and motivated.paper_score == 1.0
    assert motivated.parsed_answers == RIGHT["0003"]


def test_reimport_changes_nothing(store, folder, csv_path):
    import_eduart(store, folder, models_csv=csv_path)
    before_stats = stats(store)
    before_scores = load_scores(store, "strict")
    again = import_eduart(store, folder, models_csv=csv_path)
    assert again.added == [] and again.updated == [] and again.responses_added == 0
    assert len(again.unchanged) == 5
    assert stats(store) == before_stats
    assert load_scores(store, "strict").equals(before_scores)


def test_changed_gold_creates_new_version_and_rescores(store, folder, csv_path):
    import_eduart(store, folder, models_csv=csv_path)
    assert _score(load_scores(store, "strict"), "GPT Made Up", "default", "0003") == 1.0
    record = dict(ITEMS["0003"], answers=[{"id": "A", "description": "1500"}, {"id": "B", "description": "volta"}])
    (folder / "dataset" / "metadata" / "0003.json").write_text(json.dumps(record), encoding="utf-8")
    report = import_eduart(store, folder, models_csv=csv_path)
    assert report.updated == ["0003"] and report.responses_added == 0
    history = item_history(store, "eduart", "0003")
    assert history.version.tolist() == [1, 2] and history.is_current.tolist() == [False, True]
    assert history.record.iloc[0]["answers"][0]["description"] == "1400"  # old gold kept
    assert get_item(store, "eduart", "0003", version=1)["version"] == 1
    assert _score(load_scores(store, "strict"), "GPT Made Up", "default", "0003") == 0.5
    assert stats(store)["items"] == 5


def test_corrupt_metadata_skipped_rest_imported(store, folder, csv_path):
    (folder / "dataset" / "metadata" / "0004.json").write_bytes(b"\xff\xfe not json")
    report = import_eduart(store, folder, models_csv=csv_path)
    skipped = {Path(p).name: reason for p, reason in report.skipped}
    assert "0004.json" in skipped
    assert stats(store)["items"] == 4
    # answers to the skipped item are reported too, never attached to a missing item
    assert sum(1 for p, _ in report.skipped if Path(p).name == "0004.json") == 5


def test_missing_layout_is_one_clear_error(store, tmp_path):
    with pytest.raises(UserError, match="dataset/metadata"):
        import_eduart(store, tmp_path)


def test_image_path_escaping_the_folder_is_flagged_not_read(store, folder, csv_path, tmp_path):
    (folder / "secret.png").write_bytes(png_bytes("blue"))
    record = dict(ITEMS["0001"], image="../secret.png")
    (folder / "dataset" / "metadata" / "0001.json").write_text(json.dumps(record), encoding="utf-8")
    report = import_eduart(store, folder, models_csv=csv_path)
    assert "escapes" in " ".join(report.invalid["0001"])
    assert stats(store)["images"] == 0


def test_bare_image_name_found_in_imgs(store, folder, csv_path):
    record = dict(ITEMS["0001"], image="0001.png")
    (folder / "dataset" / "metadata" / "0001.json").write_text(json.dumps(record), encoding="utf-8")
    report = import_eduart(store, folder, models_csv=csv_path)
    assert "0001" not in report.invalid and stats(store)["images"] == 1


# ---------------------------------------------------------------- import-items

def _write(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


def _valid(item_id: str) -> dict:
    return dict({k: v for k, v in ITEMS["0003"].items()}, item_id=item_id)


def test_import_items_json_array_jsonl_and_folders(store, tmp_path):
    src = tmp_path / "src"
    _write(src / "one.json", dict(ITEMS["0002"]))  # single object: id from the file name
    _write(src / "many.json", [_valid("c1"), _valid("c2")])
    _write(src / "sub" / "lines.jsonl", json.dumps(_valid("l1")) + "\n\n" + json.dumps(_valid("l2")) + "\n")
    (src / "pics").mkdir()
    (src / "pics" / "p.png").write_bytes(png_bytes("green"))
    _write(src / "img.json", dict(ITEMS["0001"], item_id="i1", image="pics/p.png"))
    _write(src / "img2.json", dict(ITEMS["0001"], item_id="i2", image="pics/p.png"))
    report = import_items(store, [src], dataset="mine")
    assert sorted(report.added) == ["c1", "c2", "i1", "i2", "l1", "l2", "one"]
    counts = stats(store)
    assert counts["items"] == 7 and counts["images"] == 1  # one file shared by two items, stored once
    files = [p for p in store.images_dir.rglob("*") if p.is_file()]
    assert len(files) == 1 and files[0].parent.name == files[0].stem[:2]
    assert import_items(store, [src], dataset="mine").unchanged and stats(store) == counts


def test_import_items_with_images_dir(store, tmp_path):
    pics = tmp_path / "elsewhere"
    pics.mkdir()
    (pics / "p.png").write_bytes(png_bytes("green"))
    path = _write(tmp_path / "a.json", dict(ITEMS["0001"], item_id="x", image="p.png"))
    import_items(store, [path], images_dir=pics)
    assert load_items(store, "items").image_hash.notna().all()


def test_failed_import_leaves_store_unchanged(store, tmp_path):
    import_items(store, [_write(tmp_path / "ok.json", [_valid("ok1")])])
    before = stats(store)
    bad = dict(_valid("bad"), answers=[{"id": "A", "description": "1999"}, {"id": "B", "description": "volta"}])
    with pytest.raises(ItemValidationError) as info:
        import_items(store, [_write(tmp_path / "mixed.json", [_valid("ok2"), bad])])
    assert info.value.item_id == "bad" and "answers" in info.value.field
    assert stats(store) == before
    # a line that is not JSON is skipped and named (file:line); the good line is imported
    report = import_items(store, [_write(tmp_path / "broken.jsonl", json.dumps(_valid("z")) + "\n{oops\n")])
    assert report.added == ["z"]
    assert [(Path(p.rsplit(":", 1)[0]).name, p.rsplit(":", 1)[1]) for p, _ in report.skipped] == [("broken.jsonl", "2")]
    assert "not valid JSON" in report.skipped[0][1]
    assert stats(store)["items"] == before["items"] + 1


@pytest.mark.parametrize("image", ["../outside.png", "/etc/passwd", "pics/../../outside.png"])
def test_import_items_rejects_escaping_image_paths(store, tmp_path, image):
    (tmp_path / "outside.png").write_bytes(png_bytes())
    path = _write(tmp_path / "in" / "a.json", dict(ITEMS["0001"], item_id="x", image=image))
    with pytest.raises(ItemValidationError, match="escapes|absolute"):
        import_items(store, [path])
    assert not store.exists() or stats(store)["items"] == 0


def test_import_items_duplicate_ids_and_missing_files(store, tmp_path):
    a = _write(tmp_path / "a.json", [_valid("d")])
    b = _write(tmp_path / "b.jsonl", json.dumps(_valid("d")))
    with pytest.raises(UserError, match="appears twice"):
        import_items(store, [a, b])
    with pytest.raises(UserError, match="no such file"):
        import_items(store, [tmp_path / "nope.json"])


def test_model_names_from_folder_names():
    from eduart_core.importers.records import load_model_table, model_from_dir

    shipped = load_model_table()  # data/reference/models.csv: published models keep their names
    gpt = model_from_dir("openai_gpt-5.5-2026-04-23", shipped)
    assert (gpt.model, gpt.display_name, gpt.family) == ("gpt-5.5", "GPT-5.5", "OpenAI")
    other = model_from_dir("harvard_us.anthropic.claude-next-9", shipped)
    assert (other.model, other.display_name, other.family, other.provider) == (
        "harvard_us.anthropic.claude-next-9", "us.anthropic.claude-next-9", "Anthropic", "harvard")
    assert model_from_dir("local_my-model", {}).family == "Local"

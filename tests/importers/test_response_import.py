"""import-responses: outside model outputs validated line by line, stored and
scored under every profile like our own runs, idempotent. Real CLI, real store in tmp_path."""
from __future__ import annotations

import json

import pandas as pd
import pg_kit
import pytest
from runner_items import fill_store

from eduart_core.cli import main
from eduart_core.store import Store
from eduart_core.store.scores import load_responses, load_scores

backend, store = pg_kit.backend, pg_kit.store  # every test here runs on DuckDB and PostgreSQL

GOOD = [
    # 0001 is multiple_choice_radio with gold A; 0004 positioning (volta, cupola); 0007 select_errors (wooden)
    {"dataset": "demo", "item_id": "0001", "model": "my-vlm", "condition": "default",
     "raw_response": '{"Answers": [{"id": "A"}]}', "input_tokens": 120, "output_tokens": 9},
    {"dataset": "demo", "item_id": "0004", "model": "my-vlm", "condition": "default",
     "raw_response": 'My answer: {"Answers": [{"id": "A", "text": "volta"}, {"id": "B", "text": "colonna"}]}'},
    {"dataset": "demo", "item_id": "0007", "model": "my-vlm", "condition": "motivation", "run_id": "vendor-batch-7",
     "raw_response": '{"Answers": [{"text": "wooden", "correct": "stone"}]}', "motivation": "The tesserae are stone."},
    {"dataset": "demo", "item_id": "0001", "model": "gpt-5.5", "condition": "default",
     "raw_response": "B", "input_tokens": 100.0},
]


def _bad_lines() -> list[str]:
    good = GOOD[0]
    return [
        "this is not json",
        json.dumps({k: v for k, v in good.items() if k != "raw_response"}),
        json.dumps({**good, "condition": "strict"}),
        json.dumps({**good, "item_id": "9999"}),
        json.dumps({**good, "dataset": "nowhere"}),
        '{"dataset": "demo", "item_id": "0002", "model": "my-vlm", "condition": "default", '
        '"raw_response": "x", "input_tokens": Infinity}',
        json.dumps({**good, "item_id": "0002", "output_tokens": 1e30}),
        json.dumps({**good, "item_id": "0002", "input_tokens": -1}),
        json.dumps({**good, "item_id": "0002", "raw_response": None}),
        '{"dataset": "demo", "item_id": "0002", "model": "my-vlm", "condition": "default", "raw_response": "\\ud800"}',
        json.dumps({**good, "model": "other-vlm", "run_id": "import:demo:my-vlm:default"}),  # my-vlm's run
        json.dumps(good),  # the very same response as line 1
        json.dumps([good]),
        "[" * 100_000 + "]" * 100_000,
    ]


EXPECTED_REASONS = [
    "not valid JSON", "missing field(s) raw_response", "condition must be default or motivation",
    "no item 9999 in dataset demo", "no dataset 'nowhere' with items in the store",
    "input_tokens must be a whole number, got inf", "output_tokens must be between 0 and",
    "input_tokens must be between 0 and", "raw_response must be a string, got NoneType",
    "raw_response contains an unpaired surrogate", "run import:demo:my-vlm:default is dataset demo, model my-vlm",
    "same response as line 1", "expected a JSON object, got list", "JSON nested too deeply",
]


def _write(path, lines) -> None:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _tables(store: Store) -> dict[str, list]:
    with store.connect(read_only=True) as con:
        return {table: sorted(con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
                for table in ("responses", "scores", "runs", "models", "items")}


def _import(store: Store, path, *extra: str) -> int:
    return main(["import-responses", str(path), "--db", str(store.path), *extra])


def test_outside_responses_are_validated_stored_scored_and_idempotent(store, tmp_path, capsys):
    fill_store(store)
    path = tmp_path / "outside.jsonl"
    _write(path, [json.dumps(GOOD[0]), ""] + _bad_lines() + [json.dumps(g) for g in GOOD[1:]])
    assert _import(store, path) == 2
    captured = capsys.readouterr()
    assert "18 line(s): 4 new response(s), 0 already stored, 14 skipped; 3 run(s)" in captured.out
    assert "registered 1 new model(s) with unknown family: my-vlm; set display name and family with --models" \
        in captured.out
    err = captured.err.splitlines()
    assert err[0] == "skipped 14 line(s):"
    for offset, reason in enumerate(EXPECTED_REASONS):
        number = offset + 3  # line 1 is good, line 2 is blank
        line = next((ln for ln in err if ln.startswith(f"  outside.jsonl:{number}: ")), "")
        assert reason in line, (number, reason, line)

    strict = load_scores(store, "strict", dataset="demo").set_index(["model_key", "condition", "item_id"])
    assert strict.loc[("my-vlm", "default", "0001"), "score"] == 1.0
    assert strict.loc[("my-vlm", "default", "0004"), "score"] == 0.5  # one blank of two right
    assert strict.loc[("my-vlm", "motivation", "0007"), "score"] == 1.0
    assert strict.loc[("gpt-5.5", "default", "0001"), "score"] == 0.0  # answered B
    paper = load_scores(store, "paper", dataset="demo").set_index(["model_key", "condition", "item_id"])
    assert paper.loc[("my-vlm", "default", "0004"), "score"] == 0.0  # the published parser refuses prose around JSON
    assert len(paper) == len(strict) == 4
    assert strict.loc[("my-vlm", "default", "0001"), "model"] == "my-vlm"
    assert pd.isna(strict.loc[("my-vlm", "default", "0001"), "family"])  # unknown until a --models table
    assert strict.loc[("gpt-5.5", "default", "0001"), "family"] == "OpenAI"  # known from the model registry

    responses = load_responses(store, "demo", "0007")
    assert list(responses["run_id"]) == ["vendor-batch-7"] and list(responses["origin"]) == ["import-responses"]
    assert responses.loc[0, "motivation"] == "The tesserae are stone."
    with store.connect(read_only=True) as con:
        run = con.execute("SELECT status, input_tokens, output_tokens FROM runs "
                          "WHERE run_id = 'import:demo:my-vlm:default'").fetchone()
    assert run == ("completed", 120, 9)

    before = _tables(store)
    assert _import(store, path) == 2
    assert "0 new response(s), 4 already stored, 14 skipped" in capsys.readouterr().out
    assert _tables(store) == before


def test_models_table_sets_family_and_display_name(store, tmp_path, capsys):
    fill_store(store)
    path = tmp_path / "outside.jsonl"
    _write(path, [json.dumps(GOOD[0])])
    assert _import(store, path) == 0
    (tmp_path / "models.csv").write_text("model,display_name,family\nmy-vlm,My VLM 7B,Qwen\n", encoding="utf-8")
    assert _import(store, path, "--models", str(tmp_path / "models.csv")) == 0
    out = capsys.readouterr().out
    assert "0 new response(s), 1 already stored" in out and "models: My VLM 7B" in out
    frame = load_scores(store, dataset="demo")
    assert list(frame["model"]) == ["My VLM 7B"] and list(frame["family"]) == ["Qwen"]


def test_a_corrected_line_becomes_the_newer_response(store, tmp_path):
    fill_store(store)
    path = tmp_path / "outside.jsonl"
    _write(path, [json.dumps({**GOOD[0], "raw_response": '{"Answers": [{"id": "C"}]}'})])
    assert _import(store, path) == 0
    assert load_scores(store, dataset="demo")["score"].tolist() == [0.0]
    _write(path, [json.dumps(GOOD[0])])
    assert _import(store, path) == 0
    assert load_scores(store, dataset="demo")["score"].tolist() == [1.0]
    assert len(load_responses(store, "demo", "0001")) == 2  # the first answer stays in the history


@pytest.mark.parametrize("setup,message", [
    ("no-store", "no store at"),
    ("empty", "no lines to import"),
    ("missing", "no such file"),
])
def test_unusable_inputs_are_one_line_errors(request, backend, store, tmp_path, capsys, setup, message):
    path = tmp_path / "outside.jsonl"
    if setup == "no-store" and backend == "postgres":  # a database without the store's schema
        store = Store(request.getfixturevalue("pg_empty_url"))
    if setup != "no-store":
        fill_store(store)
    if setup == "empty":
        path.write_text("\n\n", encoding="utf-8")
    elif setup == "no-store":
        _write(path, [json.dumps(GOOD[0])])
    assert _import(store, path) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_a_vlmevalkit_table_and_outside_responses_score_per_dimension(store, tmp_path, capsys):
    import base64
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (10, 10), (90, 60, 30)).save(buffer, format="JPEG")
    image = base64.b64encode(buffer.getvalue()).decode()
    rows = [{"index": i, "image": image if i == 1 else "1", "question": f"Question {i} ?", "A": "oui", "B": "non",
             "answer": "A" if i % 2 else "B", "category": "counting" if i <= 2 else "attribute", "split": "dev"}
            for i in range(1, 5)]
    pd.DataFrame(rows).to_csv(tmp_path / "fr.tsv", sep="\t", index=False)
    assert main(["import-items", str(tmp_path / "fr.tsv"), "--db", str(store.path), "--dataset", "vqa-fr",
                 "--language", "fr"]) == 0
    path = tmp_path / "outside.jsonl"
    _write(path, [json.dumps({"dataset": "vqa-fr", "item_id": str(i), "model": "my-vlm", "condition": "default",
                              "raw_response": '{"Answers": [{"id": "A"}]}'}) for i in range(1, 5)])
    assert _import(store, path) == 0
    scores = load_scores(store, dataset="vqa-fr")
    per_dimension = scores.groupby("dimension")["score"].mean().to_dict()
    assert per_dimension == {"attribute": 0.5, "counting": 0.5}  # A is right on the odd rows only
    assert set(scores["language"]) == {"fr"} and scores["has_image"].all()

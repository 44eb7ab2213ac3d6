"""import-harness: lm-evaluation-harness and lmms-eval logged samples (fixtures written from the
documented fields, ``harness_fixtures``) become items, answers scored by our formats and the
harness's own metrics; bad lines are named and skipped; importing again adds nothing.
Real CLI, real stores (DuckDB and PostgreSQL)."""
from __future__ import annotations

import json
import subprocess
import sys

import pg_kit
import pytest
from harness_fixtures import LM_DATE, lm_eval_text, lmms_eval_multimodal

from eduart_core.cli import main
from eduart_core.store import Store
from eduart_core.store.scores import load_responses, load_scores

backend, store = pg_kit.backend, pg_kit.store  # every test here runs on DuckDB and PostgreSQL


def _import(store: Store, *args: str) -> int:
    return main(["import-harness", *args, "--db", str(store.path)])


def _counts(store: Store) -> dict[str, int]:
    with store.connect(read_only=True) as con:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("items", "responses", "scores", "runs", "models")}


def _means(store: Store, profile: str) -> dict[tuple[str, str], tuple[float, int]]:
    frame = load_scores(store, profile=profile)
    grouped = frame.groupby(["model", "dataset"])["score"].agg(["mean", "count"])
    return {key: (round(float(row["mean"]), 6), int(row["count"])) for key, row in grouped.iterrows()}


def test_text_and_multimodal_samples_import_with_expected_counts_and_scores(store, tmp_path, capsys):
    files = [*lm_eval_text(tmp_path / "lm"), lmms_eval_multimodal(tmp_path / "lmms")]
    assert _import(store, *map(str, files)) == 0
    out = capsys.readouterr().out
    assert "3 file(s), 11 sample(s): dataset(s) art_gen, art_mc, art_vqa_mc; 9 item(s) added" in out
    assert "9 new answer(s), 0 already stored" in out and "15 harness score(s)" in out
    counts = _counts(store)
    assert (counts["items"], counts["responses"], counts["runs"]) == (9, 9, 3)

    pythia, llava = "EleutherAI/pythia-160m", "llava-hf/llava-1.5-7b-hf"
    strict = _means(store, "strict")
    assert strict[(pythia, "art_mc")] == (0.75, 4)        # the likeliest option is right on docs 0, 1, 2
    assert strict[(llava, "art_vqa_mc")] == (0.666667, 3)  # "A", "(B) Marble" right; "The answer is C." wrong
    assert strict[(pythia, "art_gen")][1] == 2            # one answer per document, whatever the filters
    assert _means(store, "harness:acc") == {(pythia, "art_mc"): (0.75, 4)}
    assert _means(store, "harness:exact_match,strict-match") == {(pythia, "art_gen"): (0.5, 2)}
    assert _means(store, "harness:exact_match,flexible-extract") == {(pythia, "art_gen"): (1.0, 2)}
    assert _means(store, "harness:exact_match") == {(llava, "art_vqa_mc"): (0.666667, 3)}

    # ours and the harness's agree item by item wherever the item is multiple choice (doc 3's target
    # "2" is the index of option "6", not the option "2")
    ours = load_scores(store, profile="strict").set_index(["dataset", "item_id"])["score"]
    for profile in ("harness:acc", "harness:exact_match"):
        theirs = load_scores(store, profile=profile).set_index(["dataset", "item_id"])["score"]
        assert (ours.loc[theirs.index] == theirs).all()

    responses = load_responses(store, dataset="art_vqa_mc").set_index("item_id")
    assert json.loads(responses.loc["1", "raw_text"]) == {"answers": [{"id": "B"}], "prediction": "(B) Marble"}
    assert json.loads(responses.loc["2", "raw_text"])["answers"] == [{"id": "C"}]  # "The answer is C." names C

    assert _import(store, *map(str, files)) == 0  # again: nothing added, nothing doubled
    assert "0 new answer(s), 9 already stored" in capsys.readouterr().out
    assert _counts(store) == counts


def test_bad_lines_are_named_and_the_rest_imported(store, tmp_path, capsys):
    mc, _ = lm_eval_text(tmp_path)
    lines = mc.read_text().splitlines()
    no_doc = json.loads(lines[1])
    del no_doc["doc"]
    lines[1] = json.dumps(no_doc)
    lines.insert(2, '{"doc_id": 9, "doc": {"question": "cut')
    mc.write_text("\n".join(lines) + "\n")
    assert _import(store, str(mc)) == 2
    err = capsys.readouterr().err
    assert f"samples_art_mc_{LM_DATE}.jsonl:2: no doc" in err
    assert f"samples_art_mc_{LM_DATE}.jsonl:3: not valid JSON" in err
    assert len([line for line in err.splitlines() if line.startswith("  ")]) == 2
    assert _means(store, "harness:acc") == {("EleutherAI/pythia-160m", "art_mc"): (0.666667, 3)}


def test_the_model_comes_from_the_results_file_or_the_option(store, tmp_path, capsys):
    mc, gen = lm_eval_text(tmp_path)
    next(mc.parent.glob("results_*.json")).unlink()
    assert _import(store, str(mc)) == 2
    err = capsys.readouterr().err
    assert mc.name in err and "pass --model NAME" in err
    assert _import(store, str(mc), "--model", "my-pythia", "--dataset", "art") == 0
    frame = load_scores(store, profile="harness:acc")
    assert set(frame["model"]) == {"my-pythia"} and set(frame["dataset"]) == {"art"}
    assert sorted(frame["item_id"]) == ["art_mc/0", "art_mc/1", "art_mc/2", "art_mc/3"]


def test_a_metric_that_is_no_proportion_is_said_and_left_out(store, tmp_path, capsys):
    _, gen = lm_eval_text(tmp_path)
    rows = [json.loads(line) for line in gen.read_text().splitlines()]
    for row in rows:
        row["metrics"].append("bleu")
        row["bleu"] = 35.2
    gen.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _import(store, str(gen)) == 0
    assert "harness:bleu,strict-match has a value outside [0, 1] (35.2)" in capsys.readouterr().err
    assert load_scores(store, profile="harness:bleu,strict-match").empty


@pytest.mark.slow
def test_the_import_needs_neither_torch_nor_a_harness(tmp_path):
    files = [*lm_eval_text(tmp_path / "lm"), lmms_eval_multimodal(tmp_path / "lmms")]
    code = ("import sys; from eduart_core.cli import main; "
            f"code = main(['import-harness', *{[str(f) for f in files]!r}, '--db', {str(tmp_path / 'x.duckdb')!r}]); "
            "bad = [m for m in ('torch', 'lm_eval', 'lmms_eval') if m in sys.modules]; "
            "print(code, bad)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stderr


@pytest.mark.parametrize("backend", [pg_kit.DUCKDB])
def test_nothing_importable_is_one_line(backend, store, tmp_path, capsys):
    path = tmp_path / "notes.jsonl"
    path.write_text('{"a": 1}\n')
    assert _import(store, str(path)) == 2
    err = capsys.readouterr().err
    assert "notes.jsonl: not named like a samples file" in err and "nothing imported" in err


def test_recorded_profiles_are_offered_and_survive_rescoring(store, tmp_path, capsys):
    from eduart_core import profiles

    mc, gen = lm_eval_text(tmp_path)
    assert _import(store, str(mc), str(gen)) == 0
    offered = {p.name: p.kind for p in profiles.available(store, "art_gen")}
    assert offered == {"strict": "rules", "paper": "rules", "harness:exact_match,flexible-extract": "recorded",
                       "harness:exact_match,strict-match": "recorded"}
    assert main(["score", "--db", str(store.path)]) == 0  # rescores the built-in profiles only
    capsys.readouterr()
    assert main(["show", "scores", "--dataset", "art_mc", "--profile", "harness:acc", "--db", str(store.path)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert sorted((row["item_id"], row["score"]) for row in shown) == [("0", 1.0), ("1", 1.0), ("2", 1.0), ("3", 0.0)]


def test_chunks_of_a_file_make_the_same_store(store, tmp_path, monkeypatch, capsys):
    from eduart_core.importers import harness

    monkeypatch.setattr(harness, "CHUNK_SAMPLES", 3)  # art_gen's two filters of doc 1 fall in two chunks
    mc, gen = lm_eval_text(tmp_path)
    assert _import(store, str(mc), str(gen)) == 0
    assert "6 new answer(s)" in capsys.readouterr().out  # doc 1 of art_gen counts once more as already stored
    assert _means(store, "harness:exact_match,strict-match") == {("EleutherAI/pythia-160m", "art_gen"): (0.5, 2)}
    assert _means(store, "harness:exact_match,flexible-extract") == {("EleutherAI/pythia-160m", "art_gen"): (1.0, 2)}
    assert _means(store, "harness:acc") == {("EleutherAI/pythia-160m", "art_mc"): (0.75, 4)}
    assert _counts(store)["responses"] == 6

"""import-predictions: VLMEvalKit prediction tables (.xlsx, .tsv) as answers to the items of the
benchmark TSV imported before, scored by our formats; bad rows and tables named; idempotent.
Real CLI, real stores (DuckDB and PostgreSQL)."""
from __future__ import annotations

import json

import pandas as pd
import pg_kit

from eduart_core.cli import main
from eduart_core.store import Store
from eduart_core.store.scores import load_responses, load_scores

backend, store = pg_kit.backend, pg_kit.store  # every test here runs on DuckDB and PostgreSQL

QUESTIONS = {1: ("Who painted the Night Watch?", "Rembrandt", "Vermeer", "A"),
             2: ("Where is the Prado?", "Lisbon", "Madrid", "B"),
             3: ("Which material is the Pietà?", "Marble", "Bronze", "A"),
             4: ("Which century is Las Meninas from?", "15th", "17th", "B")}


def _benchmark(store: Store, tmp_path) -> None:
    rows = [{"index": i, "question": q, "A": a, "B": b, "answer": gold, "category": "art"}
            for i, (q, a, b, gold) in QUESTIONS.items()]
    pd.DataFrame(rows).to_csv(tmp_path / "ArtBench_DEV.tsv", sep="\t", index=False)
    assert main(["import-items", str(tmp_path / "ArtBench_DEV.tsv"), "--dataset", "artbench", "--language", "en",
                 "--db", str(store.path)]) == 0


def _predictions(predictions: dict[int, str], **changed) -> pd.DataFrame:
    rows = [{"index": i, "question": q, "A": a, "B": b, "answer": gold, "category": "art",
             "prediction": predictions.get(i, "")} for i, (q, a, b, gold) in QUESTIONS.items()]
    frame = pd.DataFrame(rows)
    for column, value in changed.items():
        frame[column] = value
    return frame


def _import(store: Store, *args: str) -> int:
    return main(["import-predictions", *args, "--dataset", "artbench", "--db", str(store.path)])


def _counts(store: Store) -> dict[str, int]:
    with store.connect(read_only=True) as con:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("responses", "scores", "runs")}


def test_an_xlsx_table_answers_the_items_and_is_scored_once(store, tmp_path, capsys):
    _benchmark(store, tmp_path)
    table = tmp_path / "MyVLM_ArtBench_DEV.xlsx"
    extra = pd.DataFrame([{"index": 99, "question": "Not in the benchmark?", "A": "x", "B": "y", "answer": "A",
                           "category": "art", "prediction": "A"}])
    # 1 right ("A"), 2 right ("B. Madrid"), 3 wrong ("Bronze"), 4 empty (skipped), 99 no item (skipped)
    pd.concat([_predictions({1: "A", 2: "B. Madrid", 3: "Bronze"}), extra]).to_excel(table, index=False)
    assert _import(store, str(table)) == 2
    captured = capsys.readouterr()
    assert "1 table(s), 5 row(s): 3 new answer(s), 0 already stored" in captured.out
    assert "models: MyVLM" in captured.out
    assert f"{table.name} row 4: no prediction" in captured.err
    assert f"{table.name} row 5: no item 99 in dataset artbench" in captured.err
    scores = load_scores(store, profile="strict", dataset="artbench").set_index("item_id")
    assert set(scores["model"]) == {"MyVLM"}
    assert scores["score"].to_dict() == {"1": 1.0, "2": 1.0, "3": 0.0}
    raw = load_responses(store, dataset="artbench").set_index("item_id")["raw_text"]
    assert json.loads(raw["2"]) == {"answers": [{"id": "B"}], "prediction": "B. Madrid"}

    counts = _counts(store)
    assert _import(store, str(table)) == 2  # the same two rows are still skipped
    assert "0 new answer(s), 3 already stored" in capsys.readouterr().out
    assert _counts(store) == counts


def test_a_tsv_table_with_the_model_named(store, tmp_path, capsys):
    _benchmark(store, tmp_path)
    table = tmp_path / "predictions.tsv"
    _predictions({1: "B", 2: "B", 3: "A", 4: "The answer is B"}).to_csv(table, sep="\t", index=False)
    assert _import(store, str(table)) == 2
    assert "predictions.tsv: the model is not in the file name" in capsys.readouterr().err
    assert _import(store, str(table), "--model", "other-vlm") == 0
    scores = load_scores(store, profile="strict", dataset="artbench")
    assert scores["score"].mean() == 0.75 and set(scores["model"]) == {"other-vlm"}


def test_bad_tables_and_rows_are_one_line_each(store, tmp_path, capsys):
    _benchmark(store, tmp_path)
    no_prediction = tmp_path / "MyVLM_ArtBench_DEV.tsv"
    _predictions({1: "A"}).drop(columns=["prediction"]).to_csv(no_prediction, sep="\t", index=False)
    other = tmp_path / "Other_ArtBench_DEV.xlsx"
    frame = _predictions({1: "A", 2: "B", 3: "A", 4: "B"})
    frame.loc[1, "question"] = "Where is the Louvre?"
    frame.to_excel(other, index=False)
    assert _import(store, str(no_prediction), str(other)) == 2
    err = capsys.readouterr().err
    assert f"  {no_prediction.name}: no prediction column" in err
    assert f"  {other.name} row 2: question differs from item 2's" in err
    assert len([line for line in err.splitlines() if line.startswith("  ")]) == 2
    scores = load_scores(store, profile="strict", dataset="artbench")
    assert sorted(scores["item_id"]) == ["1", "3", "4"] and scores["score"].mean() == 1.0

"""Item tables: VLMEvalKit-style TSV with base64 images or image paths, and
Parquet files, imported through the real CLI into a real store. Rows are made up for these tests."""
from __future__ import annotations

import base64
import hashlib
import io
import json

import pandas as pd
import pytest
from PIL import Image

from eduart_core.cli import main
from eduart_core.store import Store
from eduart_core.store.items import get_item, load_items


def _png(colour: tuple[int, int, int], size=(12, 9)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


RED, BLUE = _png((200, 20, 20)), _png((20, 20, 200))


def _rows() -> list[dict]:
    """Five questions in the VLMEvalKit layout; row 3 reuses row 1's image by its index."""
    return [
        {"index": 101, "image": base64.b64encode(RED).decode(), "question": "What colour dominates the plate?",
         "hint": "Look at the whole surface.", "A": "red", "B": "blue", "C": "green", "D": None,
         "answer": "A", "category": "attribute", "l2-category": "colour", "split": "dev"},
        {"index": 102, "image": base64.b64encode(BLUE).decode(), "question": "Which colour is shown?",
         "hint": None, "A": "yellow", "B": "blue", "C": None, "D": None,
         "answer": "B", "category": "attribute", "l2-category": "colour", "split": "dev"},
        {"index": 103, "image": "101", "question": "How many figures are painted?", "hint": None,
         "A": "none", "B": "one", "C": "two", "D": "three", "answer": "A", "category": "counting",
         "l2-category": "figures", "split": "test"},
        {"index": 104, "image": base64.b64encode(RED).decode(), "question": "Is there any blue?", "hint": None,
         "A": "yes", "B": "no", "C": None, "D": None, "answer": None, "category": "attribute",
         "l2-category": "colour", "split": "test"},
        {"index": 105, "image": "!!not base64 at all, but long enough to be no row reference: " + "x" * 40,
         "question": "Broken image row", "hint": None, "A": "a", "B": "b", "C": None, "D": None,
         "answer": "B", "category": "attribute", "l2-category": "colour", "split": "test"},
    ]


def _tsv(path, rows) -> None:
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)


def _import(store: Store, *args: str) -> int:
    return main(["import-items", "--db", str(store.path), "--dataset", "vqa", *args])


def test_vlmevalkit_tsv_with_base64_images_imports_and_names_bad_rows(tmp_path, capsys):
    store = Store(tmp_path / "s.duckdb")
    _tsv(tmp_path / "bench.tsv", _rows())
    assert _import(store, str(tmp_path / "bench.tsv"), "--language", "en") == 2
    captured = capsys.readouterr()
    assert "3 item(s) added" in captured.out and "2 new image(s)" in captured.out
    assert "skipped 2 file(s), line(s) or row(s)" in captured.err
    assert "bench.tsv row 4: no answer" in captured.err
    assert "bench.tsv row 5: image is not valid base64" in captured.err

    items = load_items(store, "vqa").set_index("item_id")
    assert list(items.index) == ["101", "102", "103"]
    assert not items["data_issue"].any()
    assert set(items["type"]) == {"multiple_choice_radio"} and set(items["language"]) == {"en"}
    assert dict(items["dimension"]) == {"101": "attribute", "102": "attribute", "103": "counting"}
    assert items.loc["101", "tags"] == {"l2-category": "colour", "split": "dev"}
    # row 103 holds the index of row 101 instead of an image: both show the same stored image
    assert items.loc["103", "image_hash"] == items.loc["101", "image_hash"] == hashlib.sha256(RED).hexdigest()
    assert items.loc["102", "image_hash"] == hashlib.sha256(BLUE).hexdigest()
    record = items.loc["101", "record"]
    assert record["instructions"] == "Look at the whole surface."
    assert record["choices"] == [{"id": "A", "text": "red"}, {"id": "B", "text": "blue"}, {"id": "C", "text": "green"}]
    assert record["answers"] == [{"id": "A", "description": "red"}]
    assert record["has_image"] and record["image"] == items.loc["103", "record"]["image"]
    stored = store.images_dir / next(store.images_dir.rglob(f"{hashlib.sha256(RED).hexdigest()}.*"))
    assert stored.read_bytes() == RED

    # importing the same table again changes nothing (and names the same bad rows again)
    assert _import(store, str(tmp_path / "bench.tsv"), "--language", "en") == 2
    assert "0 item(s) added, 0 updated (new version), 3 unchanged; 0 new image(s)" in capsys.readouterr().out


def test_tsv_with_image_paths_and_answers_by_text(tmp_path, capsys):
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "a.png").write_bytes(RED)
    (tmp_path / "imgs" / "broken.png").write_bytes(RED[:40])  # a truncated PNG: header only
    rows = [
        {"index": "p1", "image_path": "imgs/a.png", "question": "Colour?", "A": "red", "B": "blue",
         "answer": "Red", "category": "attribute", "language": "fr", "difficulty": 2},
        {"index": "p2", "image_path": "imgs/missing.png", "question": "Colour?", "A": "red", "B": "blue",
         "answer": "A", "category": "attribute", "language": "fr", "difficulty": 1},
        {"index": "p3", "image_path": "imgs/broken.png", "question": "Colour?", "A": "red", "B": "blue",
         "answer": "A", "category": "attribute", "language": "fr", "difficulty": 1},
        {"index": "p4", "image_path": "../outside.png", "question": "Colour?", "A": "red", "B": "blue",
         "answer": "A", "category": "attribute", "language": "fr", "difficulty": 1},
        {"index": "p5", "image_path": None, "question": "Quale?", "A": "rosso", "B": "blu",
         "answer": "AB", "category": "attribute", "language": "it", "difficulty": 1},
        {"index": "p6", "image_path": None, "question": "Quale?", "A": "rosso", "B": "blu",
         "answer": "E", "category": "attribute", "language": "xx", "difficulty": 1},
        {"index": "p1", "image_path": None, "question": "Again?", "A": "x", "B": "y",
         "answer": "A", "category": "attribute", "language": "fr", "difficulty": 1},
    ]
    _tsv(tmp_path / "paths.tsv", rows)
    store = Store(tmp_path / "s.duckdb")
    assert _import(store, str(tmp_path / "paths.tsv")) == 2
    err = capsys.readouterr().err
    assert "paths.tsv row 2: image file imgs/missing.png not found" in err
    assert "paths.tsv row 3: image does not decode" in err
    assert "paths.tsv row 4: image path '../outside.png' escapes the images folder" in err
    assert "paths.tsv row 5: answer 'AB' names several options" in err
    assert "paths.tsv row 6: answer 'E' is not one of the options A, B" in err
    assert "paths.tsv row 7: item p1 appears twice (paths.tsv row 1 and paths.tsv row 7)" in err
    item = get_item(store, "vqa", "p1")
    assert item["record"]["answers"] == [{"id": "A", "description": "red"}]  # "Red" matched the option text
    assert item["record"]["image"] == "imgs/a.png" and item["image_hash"] == hashlib.sha256(RED).hexdigest()
    assert item["language"] == "fr" and item["record"]["tags"] == {"difficulty": "2"}


def test_table_without_language_asks_for_one_and_imports_nothing(tmp_path, capsys):
    store = Store(tmp_path / "s.duckdb")
    _tsv(tmp_path / "bench.tsv", _rows()[:2])
    assert _import(store, str(tmp_path / "bench.tsv")) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("no language column; pass --language CODE (ISO 639-1, e.g. en)")
    assert len(err.splitlines()) == 1 and not store.exists()
    assert _import(store, str(tmp_path / "bench.tsv"), "--language", "english") == 2
    assert "not an ISO 639-1 code" in capsys.readouterr().err


def test_parquet_in_the_vlmevalkit_layout(tmp_path, capsys):
    raw = _rows()[:2]
    raw[0]["image"], raw[1]["image"] = RED, BLUE  # Parquet holds the bytes directly ...
    for row in raw:
        row["score_weight"] = 1.5
    pd.DataFrame(raw).to_parquet(tmp_path / "bytes.parquet")
    hf = _rows()[:2]
    hf[0].update(index=201, image={"bytes": BLUE, "path": "blue.png"})  # ... or a Hugging Face image struct
    hf[1].update(index=202, image={"bytes": None, "path": None})  # a text-only question
    pd.DataFrame(hf).to_parquet(tmp_path / "hf.parquet")
    store = Store(tmp_path / "s.duckdb")
    assert _import(store, str(tmp_path / "bytes.parquet"), str(tmp_path / "hf.parquet"), "--language", "de") == 0
    items = load_items(store, "vqa").set_index("item_id")
    assert list(items.index) == ["101", "102", "201", "202"] and set(items["language"]) == {"de"}
    assert items.loc["101", "image_hash"] == hashlib.sha256(RED).hexdigest()
    assert items.loc["102", "image_hash"] == items.loc["201", "image_hash"] == hashlib.sha256(BLUE).hexdigest()
    assert not items.loc["202", "has_image"] and items.loc["202", "image_hash"] is None
    assert items.loc["101", "tags"] == {"l2-category": "colour", "split": "dev", "score_weight": 1.5}
    assert "2 new image(s)" in capsys.readouterr().out


def test_parquet_of_item_records(tmp_path, capsys):
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "b.png").write_bytes(BLUE)
    records = [
        {"item_id": "c1", "type": "completion_closed", "question_text": "Il [A] regge la trabeazione.",
         "choices": [{"id": "A", "options": ["capitello", "plinto"]}],
         "answers": [{"id": "A", "description": "capitello"}], "language": "it", "image": None,
         "tags": {"difficulty": "easy", "level": None}, "dimension": "architecture"},
        {"item_id": "c2", "type": "multiple_choice_radio", "question_text": "Which colour?",
         "choices": [{"id": "A", "options": None, "text": "blue"}, {"id": "B", "options": None, "text": "red"}],
         "answers": [{"id": "A", "description": "blue"}], "language": "en", "image": "imgs/b.png",
         "tags": {"difficulty": None, "level": 3}, "dimension": "attribute"},
    ]
    pd.DataFrame(records).to_parquet(tmp_path / "records.parquet")  # nested lists of structs
    as_text = [{**r, "choices": json.dumps(r["choices"]), "answers": json.dumps(r["answers"]),
                "tags": json.dumps(r["tags"]), "item_id": r["item_id"] + "t"} for r in records]
    pd.DataFrame(as_text).to_parquet(tmp_path / "records_text.parquet")  # nested values as JSON text
    store = Store(tmp_path / "s.duckdb")
    assert _import(store, str(tmp_path / "records.parquet"), str(tmp_path / "records_text.parquet")) == 0
    items = load_items(store, "vqa").set_index("item_id")
    assert sorted(items.index) == ["c1", "c1t", "c2", "c2t"] and not items["data_issue"].any()
    for suffix in ("", "t"):
        c1, c2 = items.loc["c1" + suffix, "record"], items.loc["c2" + suffix, "record"]
        assert c1["choices"] == [{"id": "A", "options": ["capitello", "plinto"]}]
        assert c1["tags"] == {"difficulty": "easy"} and c2["tags"] == {"level": 3}
        assert c2["choices"][0] == {"id": "A", "text": "blue"}
        assert items.loc["c2" + suffix, "image_hash"] == hashlib.sha256(BLUE).hexdigest()


@pytest.mark.parametrize("content,message", [
    (b"index\tfoo\n1\tbar\n", "missing column(s) question, answer"),
    (b"", "not a readable TSV file"),
])
def test_unusable_tables_are_one_line_errors(tmp_path, capsys, content, message):
    (tmp_path / "bad.tsv").write_bytes(content)
    store = Store(tmp_path / "s.duckdb")
    assert _import(store, str(tmp_path / "bad.tsv"), "--language", "en") == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1

"""Every CSV the product writes keeps text inert in a spreadsheet: a text cell starting with `=`,
`+`, `-`, `@`, a tab or a carriage return gets a leading apostrophe, while numbers (negative ones
included) stay numbers. Checked on each writer: `export-scores` (file and stdout), `show --format
csv` and the table downloads of the pages (`exports.table_csv`)."""
from __future__ import annotations

import csv
import io

import pandas as pd
import pytest

from eduart_core import csvsafe, exports
from eduart_core.cli import main
from eduart_core.scoring.item_writes import upsert_items
from eduart_core.scoring.responses import add_responses
from eduart_core.store import Store
from eduart_core.store.runs import create_run, ensure_model

HOSTILE = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)"]  # item ids (stripped on import)
CONTROL = ["\tlead", "\rlead"]  # text cells starting with a tab or a carriage return


def _record(item_id: str) -> dict:
    return {"item_id": item_id, "type": "multiple_choice_radio", "question_text": "Quale pittore inventato?",
            "choices": [{"id": "A", "text": "Uno"}, {"id": "B", "text": "Due"}],
            "answers": [{"id": "B", "description": "Due"}], "language": "it"}


@pytest.fixture
def hostile_store(store: Store) -> Store:
    """Items whose ids look like formulas, answered by a model whose name looks like one too."""
    upsert_items(store, [_record(i) for i in HOSTILE], "ds", origin="test")
    ensure_model(store, "m1", "=cmd|' /C calc'!A0", "Acme", "offline", "m1-api")
    create_run(store, "run-1", "ds", "m1", "default", "live")
    add_responses(store, "run-1", [{"item_id": i, "raw_text": '{"Answers": [{"id": "B"}]}'} for i in HOSTILE])
    return store


def _inert(cells: list[str]) -> None:
    for cell in cells:
        assert not cell.startswith(csvsafe.FORMULA_START), repr(cell)


def test_the_cell_rule():
    for text in HOSTILE + CONTROL:
        assert csvsafe.inert_cell(text) == "'" + text
    for kept in ("-0.5", "+3", "-1e-3", "12", "plain", "", " =not first"):
        assert csvsafe.inert_cell(kept) == kept
    assert csvsafe.inert_cell(-0.5) == -0.5 and csvsafe.inert_cell(None) is None
    frame = pd.DataFrame({"=x": ["-cmd", "ok"], "delta": [-0.25, 0.5], "n": [-3, 4]})
    rows = list(csv.reader(io.StringIO(csvsafe.to_csv(frame))))
    assert rows == [["'=x", "delta", "n"], ["'-cmd", "-0.25", "-3"], ["ok", "0.5", "4"]]


def test_export_scores_file_and_stdout(hostile_store, tmp_path, capsys):
    out = tmp_path / "scores.csv"
    assert main(["export-scores", "--db", str(hostile_store.path), "--dataset", "ds", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["export-scores", "--db", str(hostile_store.path), "--dataset", "ds"]) == 0
    printed = capsys.readouterr().out
    for text in (out.read_text(encoding="utf-8"), printed):
        rows = list(csv.DictReader(io.StringIO(text)))
        assert len(rows) == len(HOSTILE)
        _inert([r["item_id"] for r in rows] + [r["model"] for r in rows])
        assert {r["item_id"] for r in rows} == {"'" + i for i in HOSTILE}
        assert {r["score"] for r in rows} == {"1.0"}


def test_show_csv(hostile_store, capsys):
    assert main(["show", "responses", "--db", str(hostile_store.path), "--dataset", "ds", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == len(HOSTILE)
    _inert([value for row in rows for value in row.values() if value])


def test_table_downloads():
    frame = pd.DataFrame({"item_id": HOSTILE + CONTROL, "delta": [-0.1] * len(HOSTILE + CONTROL)})
    text = exports.table_csv(frame).decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [r["item_id"] for r in rows] == ["'" + i for i in HOSTILE + CONTROL]
    assert {r["delta"] for r in rows} == {"-0.1"}

"""The canary: every export of a store's items carries one GUID unique to the store."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from eduart_core.cli import main
from eduart_core.vocab import DEFAULT_DATASET
from tests.importers.test_ingest import ITEMS

CANARY = re.compile(r"EDUART-CANARY [0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}")


def _store_with_items(folder: Path, dataset: str = "mine") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "items.jsonl"
    source.write_text("\n".join(json.dumps(dict(ITEMS[i], item_id=i)) for i in ("0002", "0003", "0004")),
                      encoding="utf-8")
    db = folder / "s.duckdb"
    assert main(["import-items", str(source), "--dataset", dataset, "--db", str(db)]) == 0
    return db


def _export(db: Path, out: Path, dataset: str = "mine") -> list[dict]:
    assert main(["export-items", "--dataset", dataset, "--db", str(db), "--out", str(out)]) == 0
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_exports_of_one_store_share_its_canary_and_two_stores_differ(tmp_path, capsys):
    first_db = _store_with_items(tmp_path / "a")
    capsys.readouterr()
    assert main(["show", "canary", "--dataset", "mine", "--db", str(first_db), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [  # no export yet: no canary made
        {"made": False, "canary_line": "", "guid": "", "created_by": "", "created_at": ""}]
    one = _export(first_db, tmp_path / "one.jsonl")
    two = _export(first_db, tmp_path / "two.jsonl")
    assert CANARY.fullmatch(one[0]["_canary"]) and "must not be used to train" in one[0]["_note"]
    assert one[0]["_canary"] == two[0]["_canary"]
    assert [r["item_id"] for r in one[1:]] == ["0002", "0003", "0004"]

    capsys.readouterr()
    assert main(["export-items", "--dataset", "mine", "--db", str(first_db)]) == 0  # to stdout
    assert capsys.readouterr().out.splitlines()[0] == json.dumps(one[0], ensure_ascii=False)

    assert main(["show", "canary", "--dataset", "mine", "--db", str(first_db), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown[0]["made"] and shown[0]["canary_line"] == one[0]["_canary"] and shown[0]["created_by"]

    other = _export(_store_with_items(tmp_path / "b"), tmp_path / "other.jsonl")
    assert CANARY.fullmatch(other[0]["_canary"]) and other[0]["_canary"] != one[0]["_canary"]


def test_an_export_imports_back_without_its_canary(tmp_path, capsys):
    from eduart_core.store import Store
    from eduart_core.store.items import current_item_records

    db = _store_with_items(tmp_path / "a")
    exported = tmp_path / "export.jsonl"
    records = _export(db, exported)
    capsys.readouterr()
    assert main(["import-items", str(exported), "--dataset", "mine", "--db", str(db)]) == 0
    assert "0 item(s) added, 0 updated (new version), 3 unchanged" in capsys.readouterr().out

    fresh = tmp_path / "fresh" / "s.duckdb"
    assert main(["import-items", str(exported), "--dataset", "copy", "--db", str(fresh)]) == 0
    assert "3 item(s) added" in capsys.readouterr().out
    stored = current_item_records(Store(fresh), "copy")
    assert stored == records[1:]
    assert not any("_canary" in json.dumps(r) for r in stored)

    as_array = tmp_path / "export.json"  # a JSON array holding the header is read the same way
    as_array.write_text(json.dumps(records), encoding="utf-8")
    assert main(["import-items", str(as_array), "--dataset", "copy", "--db", str(fresh)]) == 0
    assert "3 unchanged" in capsys.readouterr().out


def test_export_of_an_unknown_dataset_is_one_line(tmp_path, capsys):
    db = _store_with_items(tmp_path / "a")
    assert main(["export-items", "--dataset", "nope", "--db", str(db)]) == 2
    assert capsys.readouterr().err.strip() == "error: no items in dataset 'nope'"


@pytest.mark.slow  # builds the demo store's report
def test_the_report_carries_the_store_canary_beside_its_items(demo_copy, tmp_path):
    from eduart_core.report.document import write_report

    write_report(str(demo_copy), str(tmp_path / "report.html"))
    text = (tmp_path / "report.html").read_text(encoding="utf-8")
    lines = set(CANARY.findall(text))
    assert len(lines) == 1
    exported = _export(demo_copy, tmp_path / "items.jsonl", dataset=DEFAULT_DATASET)
    assert exported[0]["_canary"] in lines  # the same canary as the store's item exports
    assert f"<!-- {exported[0]['_canary']} -->" in text


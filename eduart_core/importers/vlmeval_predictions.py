"""VLMEvalKit prediction tables in: each row's ``prediction`` as a model's answer to an item of the
dataset its benchmark TSV was imported into, scored by our formats.

Why: VLMEvalKit writes one table per model and benchmark (``<model>_<benchmark>.xlsx`` or ``.tsv``:
the benchmark's columns ``index``, ``question``, ``A``, ``B``, ..., ``answer``, plus the model's
``prediction``). The items are already importable from the benchmark's TSV (``importers.tables``,
item id = ``index``); this reads the answers beside them. The model is ``model`` when given, else
the file name without the benchmark's name (``GPT4o_MMBench_DEV_EN.xlsx`` -> ``GPT4o`` when the
items came from ``MMBench_DEV_EN.tsv``).

A row whose ``index`` is no item of the dataset, whose ``question`` differs from that item's (a
prediction table of another benchmark), or whose prediction is empty is skipped and named
(``file row N``); a table without a ``prediction`` or ``index`` column is skipped whole. The
prediction is read like any outside answer (``option_reading``), stored and scored under every
built-in profile; importing the table again adds nothing (``answer_writer``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..store import Store
from ..store.runs import current_items_con
from ..team import operator
from ..text import norm_strict
from .answer_writer import OutsideAnswer, OutsideModel, write_answers_con
from .option_reading import response_of

ORIGIN = "import-predictions"
SUFFIXES = (".xlsx", ".tsv")


@dataclass
class PredictionsReport:
    """What an import of prediction tables did."""

    files: int = 0
    rows: int = 0
    added: int = 0
    unchanged: int = 0
    models: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # ("file row N" or file, reason)


def read_table(path: Path) -> list[dict]:
    """The rows of a prediction table, every cell as text (None when empty)."""
    import pandas as pd

    try:
        if path.suffix.lower() == ".xlsx":
            frame = pd.read_excel(path, dtype=str, keep_default_na=False)
        else:
            frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except ImportError:
        raise UserError(f"{path.name}: reading .xlsx needs openpyxl (pip install openpyxl)") from None
    except Exception as exc:  # pandas and openpyxl raise many kinds on a damaged file
        raise UserError(f"{path.name}: not a readable table ({type(exc).__name__}: {str(exc)[:200]})") from None
    return [{str(k): (v.strip() if isinstance(v, str) and v.strip() else None) for k, v in row.items()}
            for row in frame.to_dict("records")]


def model_of(path: Path, items: dict[str, tuple[int, dict]], model: str | None) -> str:
    """``model``, else the file name without the benchmark name the items' sources carry."""
    if model:
        return model
    benchmarks = {str(rec.get("source") or "").rsplit("/", 1)[0] for _, rec in items.values()}
    for benchmark in sorted(b for b in benchmarks if b):
        if path.stem.endswith("_" + benchmark) and len(path.stem) > len(benchmark) + 1:
            return path.stem[:-len(benchmark) - 1]
    raise UserError(f"{path.name}: the model is not in the file name (<model>_<benchmark>); pass --model NAME")


def _answer(row: dict, items: dict[str, tuple[int, dict]], dataset: str) -> OutsideAnswer:
    item_id = row.get("index")
    if not item_id:
        raise ValueError("no index")
    if item_id.endswith(".0") and item_id[:-2].isdigit():
        item_id = item_id[:-2]
    if item_id not in items:
        raise ValueError(f"no item {item_id} in dataset {dataset}")
    record = items[item_id][1]
    question = row.get("question")
    if question is not None and norm_strict(question) != norm_strict(record.get("question_text") or ""):
        raise ValueError(f"question differs from item {item_id}'s (a table of another benchmark?)")
    prediction = row.get("prediction")
    if prediction is None:
        raise ValueError("no prediction")
    raw_text, answer = response_of(prediction, record.get("choices"))
    return OutsideAnswer(item_id, raw_text, answer)


def import_predictions(store: Store, paths: list[Path | str], dataset: str, model: str | None = None,
                       actor: Any = None) -> PredictionsReport:
    """Import prediction tables as answers to the items of ``dataset`` (module doc)."""
    if not store.exists():
        raise UserError(f"no store at {store.path}; import the benchmark's TSV first (import-items)")
    with store.connect(read_only=True) as con:
        items = current_items_con(con, dataset)
    if not items:
        raise UserError(f"no dataset {dataset!r} with items in the store; import the benchmark's TSV first")
    who = (actor or operator()).columns()
    report = PredictionsReport()
    for path in (Path(p) for p in paths):
        report.files += 1
        try:
            if path.suffix.lower() not in SUFFIXES:
                raise UserError(f"not a prediction table (expected {' or '.join(SUFFIXES)})")
            rows = read_table(path)
            missing = [c for c in ("index", "prediction") if rows and c not in rows[0]]
            if not rows or missing:
                raise UserError(f"no {' and no '.join(missing)} column" if missing else "no rows")
            key = model_of(path, items, model)
        except UserError as exc:
            report.skipped.append((path.name, str(exc).removeprefix(f"{path.name}: ")))
            continue
        answers = []
        for number, row in enumerate(rows, start=1):
            report.rows += 1
            try:
                answers.append(_answer(row, items, dataset))
            except ValueError as exc:
                report.skipped.append((f"{path.name} row {number}", str(exc)))
        if not answers:
            continue
        with store.transaction() as con:
            written = write_answers_con(con, dataset, OutsideModel(key), ORIGIN, answers, who, str(path))
        report.added += written.added
        report.unchanged += written.unchanged
        report.models = sorted({*report.models, key})
    return report

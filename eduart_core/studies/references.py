"""The published VQArt-Bench (2025) and MUSE (2026) tables as aggregate-only reference datasets.

Why a reader per paper: the two papers print their tables in different shapes (VQArt-Bench one
fraction per model x reasoning dimension plus an "Overall Acc." column, with item counts in a second
table; MUSE one percentage per model x task, tasks grouped into dimensions, rows in a stated order).
Each reader turns its shipped CSVs (`data/reference/`, copied as printed) into the same four frames
(models, columns, cells, statements) and `STUDY_REFERENCES` lists them explicitly, so a third paper
is one more reader and one more entry.
"""
from __future__ import annotations

import csv
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pandas as pd

from ..errors import UserError
from ..store import Store
from ..store.core import PROJECT_ROOT
from ..vocab import (
    DIMENSION_COLUMN,
    MUSE_REFERENCE_DATASET,
    OVERALL_COLUMN,
    TASK_COLUMN,
    VQART_REFERENCE_DATASET,
)

REFERENCE_DIR = PROJECT_ROOT / "data" / "reference"
STUDY_MODELS_FILE = "study_models.csv"
STATEMENTS_FILE = "study_statements.csv"

_FRACTION = re.compile(r"(\d+)\s*/\s*(\d+)")


@dataclass
class StudyTables:
    """One published table, normalised: what `store.studies.write_study_reference` stores."""

    models: list[dict]
    columns: pd.DataFrame
    cells: pd.DataFrame
    statements: pd.DataFrame


def _rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        raise UserError(f"reference file {path} is missing")
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def model_key(display_name: str) -> str:
    """'GPT-4o mini' -> 'gpt-4o-mini': one key per printed name, shared by every table that prints it."""
    return re.sub(r"[^a-z0-9.]+", "-", display_name.lower()).strip("-")


def item_chance(text: str | None) -> float | None:
    """The chance level of a whole item from a printed or derived chance note ('1/5' -> 0.2).

    A note may give several levels ('1/3 per part; 1/27 if all three parts must be correct'); a
    table of item accuracies needs the whole-item level, which is the smallest one given.
    """
    values = [Fraction(int(a), int(b)) for a, b in _FRACTION.findall(text or "") if int(b) > 0]
    return float(min(values)) if values else None


def _score(printed: str, unit: str) -> float | None:
    printed = (printed or "").strip()
    if not printed:
        return None
    value = float(printed)
    return value / 100.0 if unit == "percent" else value


def _statements(folder: Path, dataset: str) -> pd.DataFrame:
    rows = [r for r in _rows(folder / STATEMENTS_FILE) if r["dataset"] == dataset]
    return pd.DataFrame(rows, columns=["dataset", "statement", "subject", "value", "source"]).drop(columns="dataset")


def _families(folder: Path, dataset: str) -> dict[str, tuple[str, str]]:
    """Printed model name -> (family, where the family comes from) for models whose paper names none."""
    return {r["model"]: (r["family"], r["family_source"]) for r in _rows(folder / STUDY_MODELS_FILE)
            if r["dataset"] == dataset}


def read_vqart(folder: Path) -> StudyTables:
    """VQArt-Bench Table 2 (accuracy per model x dimension, 'Overall Acc.') with Table 1's item counts."""
    scores = _rows(folder / "vqart2025_dimension_scores.csv")
    dims = _rows(folder / "vqart2025_dimensions.csv")
    statements = _statements(folder, VQART_REFERENCE_DATASET)
    chance_rows = statements[statements["statement"] == "chance"]
    chance = item_chance(chance_rows["value"].iloc[0]) if len(chance_rows) else None
    basis = chance_rows["source"].iloc[0] if len(chance_rows) else None
    columns = pd.DataFrame([{
        "column_name": d["dimension"], "kind": OVERALL_COLUMN if d["dimension"] == OVERALL_COLUMN else DIMENSION_COLUMN,
        "dimension": None if d["dimension"] == OVERALL_COLUMN else d["dimension"],
        "position": int(d["table2_column"]), "n_items": int(d["n_items"]), "name_in_table": d["name_in_table2"],
        "name_in_text": d["dimension"], "chance": chance, "chance_basis": basis,
        "answer_format": "four-option multiple choice", "scorer": "accuracy"} for d in dims])
    families = _families(folder, VQART_REFERENCE_DATASET)
    order: dict[str, int] = {}
    models: dict[str, dict] = {}
    cells = []
    for row in scores:
        name = row["model"]
        order.setdefault(name, len(order) + 1)
        family, _source = families.get(name, ("", ""))
        models.setdefault(name, {"model": model_key(name), "display_name": name, "family": family or None,
                                 "access": row["access"], "api_model_id": None})
        cells.append({"model": model_key(name), "column_name": row["dimension"],
                      "score": _score(row["accuracy"], row["unit"]), "printed": row["accuracy"],
                      "unit": row["unit"], "table_order": order[name]})
    return StudyTables(list(models.values()), columns, pd.DataFrame(cells), statements)


def read_muse(folder: Path) -> StudyTables:
    """MUSE Table 2 (percent per model x task, rows in the printed order) with Table 1's task dimensions."""
    scores = _rows(folder / "muse2026_task_scores.csv")
    tasks = _rows(folder / "muse2026_tasks.csv")
    order = {task: i for i, task in enumerate(dict.fromkeys(r["task"] for r in scores), start=1)}
    columns = pd.DataFrame([{
        "column_name": t["task"], "kind": TASK_COLUMN, "dimension": t["dimension"],
        "position": order.get(t["task"]), "n_items": None, "name_in_table": t["table2_header"],
        "name_in_text": t["task"], "chance": item_chance(t["chance_level"]),
        "chance_basis": t["chance_basis"] or None, "answer_format": t["answer_format"] or None,
        "scorer": t["scorer"] or None} for t in tasks])
    families = _families(folder, MUSE_REFERENCE_DATASET)
    models: dict[str, dict] = {}
    cells = []
    for row in scores:
        name = row["model"]
        family = row["family"] or families.get(name, ("", ""))[0]
        models.setdefault(name, {"model": model_key(name), "display_name": name, "family": family or None,
                                 "access": row["access"], "api_model_id": row["model_id_table3"] or None})
        cells.append({"model": model_key(name), "column_name": row["task"], "score": _score(row["score"], row["unit"]),
                      "printed": row["score"], "unit": row["unit"], "table_order": int(row["table_order"])})
    return StudyTables(list(models.values()), columns, pd.DataFrame(cells), _statements(folder, MUSE_REFERENCE_DATASET))


@dataclass(frozen=True)
class StudyReference:
    """One published study table: its dataset name, title and reader."""

    dataset: str
    title: str
    description: str
    read: Callable[[Path], StudyTables]


#: Every shipped study reference (explicit: a new paper is one entry).
STUDY_REFERENCES: tuple[StudyReference, ...] = (
    StudyReference(VQART_REFERENCE_DATASET, "VQArt-Bench 2025 published results (aggregates only)",
                   "Table 2 accuracy per model and reasoning dimension with Table 1's item counts, as printed; "
                   "no item-level answers.", read_vqart),
    StudyReference(MUSE_REFERENCE_DATASET, "MUSE 2026 published results (aggregates only)",
                   "Table 2 scores per model and task (percent), tasks grouped into Table 1's dimensions, rows in "
                   "the printed order; no item-level answers.", read_muse),
)


def load_study_references(store: Store, folder: Path | None = None) -> dict[str, int]:
    """Load every study reference into the store (idempotent); returns cells written per dataset."""
    from ..store.studies import write_study_reference

    folder = Path(folder) if folder else REFERENCE_DIR
    out = {}
    for ref in STUDY_REFERENCES:
        tables = ref.read(folder)
        counts = write_study_reference(store, ref.dataset, ref.title, ref.description, tables.models,
                                       tables.columns, tables.cells, tables.statements)
        out[ref.dataset] = counts["cells"]
    return out

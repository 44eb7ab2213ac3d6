"""Readers that bring items and published model answers into the store.

Two entry points:
- ``import_items``: canonical item records from .json (object or array) / .jsonl files or
  folders of them. Strict: a defective record or unreadable file fails the whole import and
  nothing is written (the user fixes the file and runs again). It also reads item tables
  (VLMEvalKit-style .tsv, .parquet; see ``eduart_core.tables``), which skip and name bad rows.
- ``import_eduart``: the published folder layout (formats doc section 2). Lenient, because real
  published data has defects: unreadable files are skipped and reported, records that fail
  validation are imported flagged with their problems, and each model_dir x condition is a run.

Both are one transaction: if anything unexpected fails, the store is left exactly as it was.
Re-importing the same files changes nothing.
"""
from __future__ import annotations

import csv
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import UserError
from .store import Store
from .store.core import PROJECT_ROOT
from .store.items import ImportReport, PreparedItem, prepare_items, store_prepared
from .store.runs import add_responses_con, create_run_con, current_items_con, ensure_dataset_con, ensure_model_con
from .tables import TABLE_SUFFIXES, TableItems, read_table_items
from .vocab import BENCHMARK_KIND, CONDITIONS

MODELS_CSV = PROJECT_ROOT / "data" / "reference" / "models.csv"
ITEM_SUFFIXES = (".json", ".jsonl")


# ---------------------------------------------------------------- canonical item files

def _item_files(paths: list[Path]) -> list[Path]:
    suffixes = ITEM_SUFFIXES + TABLE_SUFFIXES
    names = ", ".join(suffixes)
    files: list[Path] = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in suffixes)
            if not found:
                raise UserError(f"no {names} files in folder {path}")
            files.extend(found)
        elif path.is_file():
            if path.suffix.lower() not in suffixes:
                raise UserError(f"{path}: expected a {names} file")
            files.append(path)
        else:
            raise UserError(f"{path}: no such file or folder")
    return files


def read_item_file(path: Path) -> list[dict]:
    """The records of one .json (object or array) or .jsonl file; UserError naming the spot."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc.__class__.__name__}: {exc})") from None
    if path.suffix.lower() == ".jsonl":
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
            if not isinstance(value, dict):
                raise UserError(f"{path}:{number}: expected a JSON object per line")
            records.append(value)
        return records
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if isinstance(value, dict):
        value = dict(value)
        value.setdefault("item_id", path.stem)  # a single-record file is named after its item
        return [value]
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        return value
    raise UserError(f"{path}: expected a JSON object or an array of objects")


def import_items(store: Store, paths: list[Path | str], images_dir: Path | str | None = None,
                 dataset: str = "items", origin: str = "import-items",
                 language: str | None = None) -> ImportReport:
    """Import item records and item tables (see the module docstring).

    JSON files are all or nothing. Tables (``eduart_core.tables``: VLMEvalKit TSV, Parquet) skip
    the rows that cannot become items and name them in ``report.skipped``; ``language`` is the
    ISO 639-1 code of table rows that have none.
    """
    if not str(dataset).strip():
        raise UserError("dataset name must not be empty")
    if images_dir is not None and not Path(images_dir).is_dir():
        raise UserError(f"images folder {images_dir} does not exist")
    files = _item_files([Path(p) for p in paths])
    batches: list[tuple[Path, list[dict]]] = []
    where: dict[str, str] = {}
    report = ImportReport(dataset=dataset)
    tables: list[TableItems] = []
    for file in files:
        if file.suffix.lower() in TABLE_SUFFIXES:
            tables.append(read_table_items(store, file, images_dir, language))
            continue
        records = read_item_file(file)
        for index, record in enumerate(records, start=1):
            item_id = str(record.get("item_id") or "").strip()
            spot = f"{file}" + (f" record {index}" if len(records) > 1 else "")
            if not item_id:
                raise UserError(f"{spot}: record has no item_id")
            if item_id in where:
                raise UserError(f"item {item_id} appears twice ({where[item_id]} and {spot})")
            where[item_id] = spot
        root = Path(images_dir) if images_dir else file.parent
        batches.append((root, records))
    table_records: list[tuple[list[dict], dict[str, str]]] = []
    for table in tables:
        kept = []
        for record in table.records:
            spot = table.where[record["item_id"]]
            if record["item_id"] in where:
                report.skipped.append((spot, f"item {record['item_id']} appears twice ({where[record['item_id']]} "
                                             f"and {spot})"))
                continue
            where[record["item_id"]] = spot
            kept.append(record)
        table_records.append((kept, table.image_hashes))
        report.skipped.extend(table.skipped)
        report.warnings.extend(table.warnings)
        report.images_added += table.images_added
    if not batches and not any(kept for kept, _ in table_records):
        if report.skipped:
            return report  # every row was skipped: say which and why, create no empty dataset
        raise UserError("no items found in " + ", ".join(str(f) for f in files))
    with store.transaction() as con:
        prepared: list[PreparedItem] = []
        for root, records in batches:
            prepared.extend(prepare_items(con, store, records, root, report))
        for kept, image_hashes in table_records:
            prepared.extend(prepare_items(con, store, kept, None, report, image_hashes=image_hashes))
        store_prepared(con, prepared, dataset, origin, report, keep_invalid=False)
    return report


# ---------------------------------------------------------------- the published layout

@dataclass
class ModelInfo:
    """How a published answers/<model_dir> folder is registered as a model."""

    model: str
    display_name: str
    family: str | None
    provider: str | None
    api_model_id: str | None


_FAMILY_HINTS = (("gpt", "OpenAI"), ("o1", "OpenAI"), ("o3", "OpenAI"), ("o4", "OpenAI"), ("gemini", "Google"),
                 ("gemma", "Google"), ("claude", "Anthropic"), ("llama", "Meta"), ("mistral", "Mistral"),
                 ("pixtral", "Mistral"), ("qwen", "Qwen"), ("grok", "xAI"), ("deepseek", "DeepSeek"))


def load_model_table(path: Path | None = None) -> dict[str, ModelInfo]:
    """model_dir -> ModelInfo from data/reference/models.csv when it exists (published models)."""
    path = Path(path) if path else MODELS_CSV
    if not path.is_file():
        return {}
    table: dict[str, ModelInfo] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            model_dir = (row.get("model_dir") or "").strip()
            if not model_dir:
                continue
            key = (row.get("model") or row.get("key") or model_dir).strip()
            table[model_dir] = ModelInfo(key, (row.get("display_name") or key).strip(),
                                         (row.get("family") or "").strip() or None,
                                         (row.get("access") or row.get("provider") or "").strip() or None,
                                         (row.get("api_model_id") or "").strip() or None)
    return table


def model_from_dir(model_dir: str, table: dict[str, ModelInfo]) -> ModelInfo:
    """The model for a folder name `<provider>_<model id>`: the shipped table, else derived."""
    if model_dir in table:
        return table[model_dir]
    provider, _, model_id = model_dir.partition("_")
    if not model_id:
        provider, model_id = "", model_dir
    lowered = model_id.lower()
    family = next((name for hint, name in _FAMILY_HINTS if re.search(rf"(^|[^a-z]){hint}", lowered)), None)
    return ModelInfo(model_dir, model_id, family or (provider.capitalize() or None), provider or None, model_id)


def _read_json_object(path: Path, skipped: list[tuple[str, str]]) -> tuple[dict, bytes] | None:
    """The JSON object in ``path`` and its bytes, or None with the reason appended to ``skipped``."""
    try:
        data = path.read_bytes()
        value = json.loads(data.decode("utf-8-sig"))
        if isinstance(value, dict):
            return value, data
        skipped.append((str(path), "not a JSON object"))
    except OSError as exc:
        skipped.append((str(path), f"cannot read: {exc.strerror or exc}"))
    except UnicodeDecodeError:
        skipped.append((str(path), "not UTF-8 text"))
    except json.JSONDecodeError as exc:
        skipped.append((str(path), f"not valid JSON ({exc.msg} at line {exc.lineno})"))
    return None


def _int_or_none(value: Any) -> int | None:
    try:
        return None if value is None or isinstance(value, bool) else int(value)
    except (TypeError, ValueError):
        return None


def _float_or_none(value: Any) -> float | None:
    try:
        return None if value is None or isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        return None


def answer_row(item_id: str, data: dict, file_bytes: bytes) -> dict:
    """One published answer file as an add_responses row.

    The request key carries a hash of the file, so re-importing the same file is a no-op and a
    changed file becomes a newer response (the long frame always uses the latest).
    """
    raw = data.get("raw_response")
    has_llm = "llm_answer" in data
    llm = data.get("llm_answer")
    if raw is not None and not isinstance(raw, str):
        raw = json.dumps(raw, ensure_ascii=False)
    if raw is None and has_llm and llm is not None:  # no raw text kept: rebuild what the model said
        raw = llm if isinstance(llm, str) else json.dumps({"Answers": llm}, ensure_ascii=False)
    motivation = data.get("motivation")
    return {
        "item_id": item_id, "raw_text": raw, "llm_answer": llm if has_llm else None,
        "motivation": motivation if isinstance(motivation, str) and motivation.strip() else None,
        "input_tokens": _int_or_none(data.get("input_tokens")),
        "output_tokens": _int_or_none(data.get("output_tokens")),
        "latency_s": _float_or_none(data.get("processing_time")),
        "error": None, "image_sent": None, "repetition": 0,
        "request_key": f"{item_id}:{hashlib.sha256(file_bytes).hexdigest()[:16]}",
    }


def import_eduart(store: Store, root: Path | str, dataset: str = "eduart",
                  models_csv: Path | None = None) -> ImportReport:
    """Import a folder in the published layout (items, images, answers) in one transaction."""
    root = Path(root)
    metadata = root / "dataset" / "metadata"
    if not metadata.is_dir():
        raise UserError(f"{root} is not in the published layout: missing folder dataset/metadata")
    if not str(dataset).strip():
        raise UserError("dataset name must not be empty")
    report = ImportReport(dataset=dataset)

    records = []
    for path in sorted(metadata.glob("*.json")):
        loaded = _read_json_object(path, report.skipped)
        if loaded is None:
            continue
        value = dict(loaded[0])
        value["item_id"] = path.stem  # the file name is the id, whatever the record says
        records.append(value)
    if not records and not report.skipped:
        raise UserError(f"no item files in {metadata}")
    item_ids = {r["item_id"] for r in records}

    table = load_model_table(models_csv)
    answers: list[tuple[str, str, list[dict]]] = []  # (model_dir, condition, rows)
    answers_root = root / "answers"
    if answers_root.is_dir():
        for model_folder in sorted(p for p in answers_root.iterdir() if p.is_dir()):
            for condition in CONDITIONS:
                folder = model_folder / condition
                if not folder.is_dir():
                    continue
                rows = []
                for path in sorted(folder.glob("*.json")):
                    if path.stem.startswith("_"):  # _evaluation.json and similar bookkeeping
                        continue
                    if path.stem not in item_ids:
                        if path.stem.isdigit():
                            report.skipped.append((str(path), f"no item {path.stem} in dataset/metadata"))
                        continue
                    loaded = _read_json_object(path, report.skipped)
                    if loaded is None:
                        continue
                    value, data = loaded
                    rows.append(answer_row(path.stem, value, data))
                if rows:
                    answers.append((model_folder.name, condition, rows))

    with store.transaction() as con:
        prepared = prepare_items(con, store, records, root / "dataset", report,
                                 fallback_dir=root / "dataset" / "imgs")
        store_prepared(con, prepared, dataset, "import-eduart", report, keep_invalid=True,
                       title=f"EduArt folder {root.name}")
        items = current_items_con(con, dataset)
        models: dict[str, str] = {}
        for model_dir, condition, rows in answers:
            info = model_from_dir(model_dir, table)
            if info.model not in models:
                models[info.model] = ensure_model_con(con, info.model, info.display_name, info.family,
                                                      info.provider, info.api_model_id)
            run_id = f"{dataset}:{model_dir}:{condition}"
            create_run_con(con, run_id, dataset, info.model, condition, "import-eduart", status="completed",
                           launch_id=f"import-eduart:{dataset}", exist_ok=True)
            report.responses_added += add_responses_con(con, run_id, rows, items)
            con.execute(
                """UPDATE runs SET finished_at = current_timestamp, status = 'completed',
                       input_tokens = (SELECT coalesce(sum(input_tokens), 0) FROM responses WHERE run_id = ?),
                       output_tokens = (SELECT coalesce(sum(output_tokens), 0) FROM responses WHERE run_id = ?),
                       n_errors = (SELECT count(error) FROM responses WHERE run_id = ?)
                   WHERE run_id = ?""",
                [run_id] * 4,
            )
            report.runs += 1
        report.models = sorted(models.values())
        ensure_dataset_con(con, dataset, title=f"EduArt folder {root.name}", kind=BENCHMARK_KIND)
    return report

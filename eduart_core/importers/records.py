"""Readers that bring items and published model answers into the store.

Two entry points:
- ``import_items``: canonical item records from .json (object or array) / .jsonl files or
  folders of them. Strict about content: a record without an item_id, an id seen twice or a record
  that fails validation refuses the import and nothing is written; ``RecordsRefused`` names every
  such record with the lines skipped beside them, so that the user fixes the gold once. It also reads item tables
  (VLMEvalKit-style .tsv, .parquet; see ``eduart_core.importers.tables``), which skip and name bad rows.
- ``import_eduart``: the published folder layout (formats doc section 2). Lenient, because real
  published data has defects: records that fail validation are imported flagged with their
  problems, and each model_dir x condition is a run.

Both skip and name what cannot be read at all: a file or line that is not UTF-8 or not JSON,
numbers out of range (``Infinity``, ``1e30`` or ``2^70`` tokens), JSON nested too deeply, lone
surrogates, files and text fields over the limits of ``eduart_core.limits``, image files that are
not images, truncated or too large (``eduart_core.imagecheck``), and answer files not named
``<item id>.json``. Each lands in ``ImportReport.skipped`` as (path, reason), one line each, and
the rest is imported. An input with nothing to import is an error.

``import_items`` is one transaction: if anything unexpected fails, the store is left exactly as it
was. ``import_eduart`` writes the items in one transaction and the answers in batches (bounded
memory at any size): a failure or a kill keeps the batches committed, and running it again adds
only what is missing. Re-importing the same files changes nothing.
"""
from __future__ import annotations

import csv
import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import jsonsafe
from ..canary import is_header as is_canary_header
from ..errors import UserError
from ..gcpause import batch_done, collector_paused
from ..items import ItemValidationError, check_item
from ..jsonsafe import BadInput
from ..limits import int_limit
from ..scoring.item_writes import store_prepared, validation_error
from ..scoring.responses import add_responses_con
from ..store import Store
from ..store.core import PROJECT_ROOT
from ..store.items import ImportReport, PreparedItem, prepare_items
from ..store.runs import (
    complete_runs_con,
    create_run_con,
    current_items_con,
    ensure_dataset_con,
    ensure_model_con,
    refresh_run_totals_con,
)
from ..store.team import add_event_con
from ..team import Identity, operator
from ..vocab import BENCHMARK_KIND, CONDITIONS
from . import unfinished
from .tables import TABLE_SUFFIXES, TableItems, read_table_items

logger = logging.getLogger(__name__)

MODELS_CSV = PROJECT_ROOT / "data" / "reference" / "models.csv"
ITEM_SUFFIXES = (".json", ".jsonl")
#: Files that may sit in the published answer folders and are not answers (formats doc section 2):
#: skipped without a word. Anything else that is not ``<item id>.json`` is listed as skipped.
BOOKKEEPING_SUFFIXES = (".log",)
BOOKKEEPING_FOLDERS = ("reproducibility",)


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


def read_item_file(path: Path, skipped: list[tuple[str, str]]) -> list[tuple[str, dict]]:
    """(spot, record) for every usable record of one .json (object or array) or .jsonl file.

    A file, line or array element that cannot be used is appended to ``skipped`` as
    (spot, reason) and the rest is returned: one bad line never costs the good ones.
    """
    if path.suffix.lower() == ".jsonl":
        try:
            data = jsonsafe.read_bytes(path)
        except BadInput as exc:
            skipped.append((str(path), str(exc)))
            return []
        records = []
        for number, line in enumerate(data.split(b"\n"), start=1):
            if not line.strip():
                continue
            spot = f"{path}:{number}"
            try:
                value = jsonsafe.loads(line)
            except BadInput as exc:
                skipped.append((spot, str(exc)))
                continue
            if not isinstance(value, dict):
                skipped.append((spot, "expected a JSON object per line"))
                continue
            if is_canary_header(value):  # an export's canary line: a mark, not an item
                continue
            records.append((spot, value))
        return records
    try:
        value, _ = jsonsafe.read_json(path)
    except BadInput as exc:
        skipped.append((str(path), str(exc)))
        return []
    if isinstance(value, dict):
        value = dict(value)
        value.setdefault("item_id", path.stem)  # a single-record file is named after its item
        return [(str(path), value)]
    if isinstance(value, list):
        records = []
        for index, entry in enumerate(value, start=1):
            spot = f"{path} record {index}"
            if is_canary_header(entry):
                continue
            if isinstance(entry, dict):
                records.append((spot, entry))
            else:
                skipped.append((spot, f"expected a JSON object, got {type(entry).__name__}"))
        return records
    skipped.append((str(path), "expected a JSON object or an array of objects"))
    return []


def import_items(store: Store, paths: list[Path | str], images_dir: Path | str | None = None,
                 dataset: str = "items", origin: str = "import-items",
                 language: str | None = None) -> ImportReport:
    """Import item records and item tables (see the module docstring for what is skipped and named).

    Tables (``eduart_core.importers.tables``: VLMEvalKit TSV, Parquet) skip the rows that cannot become
    items and name them in ``report.skipped``; ``language`` is the ISO 639-1 code of table rows
    that have none.
    """
    if not str(dataset).strip():
        raise UserError("dataset name must not be empty")
    if images_dir is not None and not Path(images_dir).is_dir():
        raise UserError(f"images folder {images_dir} does not exist")
    files = _item_files([Path(p) for p in paths])
    report = ImportReport(dataset=dataset)
    batches: list[tuple[Path, list[dict]]] = []
    where: dict[str, str] = {}
    tables: list[TableItems] = []
    refused: list[tuple[str, str]] = []  # (spot, reason) of records that refuse the whole import
    for file in files:
        if file.suffix.lower() in TABLE_SUFFIXES:
            tables.append(read_table_items(store, file, images_dir, language))
            continue
        records = []
        for spot, record in read_item_file(file, report.skipped):
            item_id = str(record.get("item_id") or "").strip()
            if not item_id:
                refused.append((spot, "record has no item_id"))
                continue
            if item_id in where:
                refused.append((spot, f"item {item_id} appears twice ({where[item_id]} and {spot})"))
                continue
            where[item_id] = spot
            records.append(record)
        root = Path(images_dir) if images_dir else file.parent
        if records:
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
        if refused:
            raise RecordsRefused(refused, report.skipped)
        if report.skipped:
            return report  # every file, line or row was skipped: nothing to write, the caller lists why
        raise UserError(f"no item records in {', '.join(str(p) for p in paths)}: nothing imported")
    with store.transaction() as con:
        prepared: list[PreparedItem] = []
        for root, records in batches:
            prepared.extend(prepare_items(con, store, records, root, report, check=check_item))
        for kept, image_hashes in table_records:
            prepared.extend(prepare_items(con, store, kept, None, report, image_hashes=image_hashes, check=check_item))
        kept_items = []
        for item in prepared:
            if item.image_refused:  # the image file is named in skipped already; name the record too
                report.skipped.append((where[item.item_id], f"item {item.item_id} not imported: {item.image_refused}"))
            else:
                kept_items.append(item)
        invalid = [item for item in kept_items if item.problems]
        if refused or invalid:  # every refusing record named at once; the transaction writes nothing
            errors = [validation_error(item) for item in invalid]
            refused.extend((where[error.item_id], problem) for error in errors for problem in error.problems)
            raise RecordsRefused(sorted(refused, key=lambda pair: spot_order(pair[0])), report.skipped,
                                 errors[0] if errors else None)
        store_prepared(con, kept_items, dataset, origin, report, keep_invalid=False)
    return report


def spot_order(spot: str) -> tuple:
    """``file:12`` and ``file record 3`` in file order, then by number."""
    match = re.match(r"(.*?)(?::| record )(\d+)$", spot)
    return (match.group(1), int(match.group(2))) if match else (spot, 0)


class RecordsRefused(ItemValidationError, UserError):
    """Canonical records that refuse an ``import_items`` (no item_id, an id twice, a record that fails
    validation), every one of them, with the lines skipped beside them: nothing was written.

    Why all at once: the user fixes the file once instead of once per problem. ``refused`` and
    ``skipped`` are (spot, reason) pairs; ``item_id`` and ``field`` name the first invalid record's
    first problem (as ``ItemValidationError`` does), when one failed validation.
    """

    def __init__(self, refused: list[tuple[str, str]], skipped: list[tuple[str, str]],
                 first: ItemValidationError | None = None):
        self.refused, self.skipped = list(refused), list(skipped)
        self.item_id = first.item_id if first else ""
        self.fields = first.fields if first else []
        self.field = first.field if first else ""
        self.problems = [f"{spot}: {reason}" for spot, reason in self.refused]
        more = f" (and {len(self.refused) - 1} more record(s))" if len(self.refused) > 1 else ""
        Exception.__init__(self, self.problems[0] + more)


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


def _read_json_object(path: Path | str, skipped: list[tuple[str, str]], max_bytes: int | None = None,
                      max_text: int | None = None) -> tuple[dict, bytes] | None:
    """The checked JSON object in ``path`` and its bytes, or None with the reason in ``skipped``."""
    try:
        value, data = jsonsafe.read_json(path, max_bytes=max_bytes, max_text=max_text)
    except BadInput as exc:
        skipped.append((str(path), str(exc)))
        return None
    if not isinstance(value, dict):
        skipped.append((str(path), "not a JSON object"))
        return None
    return value, data


def _float_or_none(value: Any) -> float | None:
    try:
        return None if value is None or isinstance(value, bool) else float(value)
    except (TypeError, ValueError, OverflowError):
        return None


def answer_row(item_id: str, data: dict, file_bytes: bytes) -> dict:
    """One published answer file as an add_responses row.

    The request key carries a hash of the file, so re-importing the same file is a no-op and a
    changed file becomes a newer response (the long frame always uses the latest). A token
    count that cannot be one (``1e30``, ``2^70``, negative) raises ``BadInput``: the caller skips
    the file and names it.
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
        "item_id": item_id, "raw_text": raw, "llm_answer": llm if has_llm else None, "has_llm_answer": has_llm,
        "motivation": motivation if isinstance(motivation, str) and motivation.strip() else None,
        "input_tokens": jsonsafe.count_value(data.get("input_tokens"), "input_tokens"),
        "output_tokens": jsonsafe.count_value(data.get("output_tokens"), "output_tokens"),
        "latency_s": _float_or_none(data.get("processing_time")),
        "error": None, "image_sent": None, "repetition": 0,
        "request_key": f"{item_id}:{hashlib.sha256(file_bytes).hexdigest()[:16]}",
    }


def _is_bookkeeping(name: str, is_dir: bool) -> bool:
    """Files and folders the published layout keeps next to the answers (not answers)."""
    if name.startswith(("_", ".")):
        return True
    if is_dir:
        return name in BOOKKEEPING_FOLDERS
    return name.lower().endswith(BOOKKEEPING_SUFFIXES)


def _entries(folder: Path) -> list[os.DirEntry]:
    """The entries of a folder, sorted by name (one ``scandir``: no ``stat`` per file)."""
    with os.scandir(folder) as found:
        return sorted(found, key=lambda entry: entry.name)


def _answer_folders(answers_root: Path, skipped: list[tuple[str, str]]) -> list[tuple[str, str, Path]]:
    """(model_dir, condition, folder) of every answer folder; unknown condition folders are named."""
    folders: list[tuple[str, str, Path]] = []
    if not answers_root.is_dir():
        return folders
    for model_entry in _entries(answers_root):
        if not model_entry.is_dir():
            continue
        found = {}
        for entry in _entries(Path(model_entry.path)):
            if not entry.is_dir():
                continue
            if entry.name in CONDITIONS:
                found[entry.name] = Path(entry.path)
            elif not _is_bookkeeping(entry.name, True):
                skipped.append((entry.path, f"unknown condition folder (expected {' or '.join(CONDITIONS)})"))
        folders += [(model_entry.name, condition, found[condition]) for condition in CONDITIONS if condition in found]
    return folders


def _folder_rows(folder: Path, item_ids: set[str], skipped: list[tuple[str, str]], max_bytes: int,
                 max_text: int) -> Iterator[dict]:
    """The answer rows of one model_dir/condition folder, file by file; what is not an answer is
    named. Each file is opened and read once (its size checked on the open file)."""
    for entry in _entries(folder):
        name = entry.name
        is_dir = entry.is_dir()
        if _is_bookkeeping(name, is_dir):
            continue
        if is_dir:
            skipped.append((entry.path, "a folder inside an answer folder (not read)"))
            continue
        stem, dot, suffix = name.rpartition(".")
        if not dot or suffix != "json":
            skipped.append((entry.path, "not an answer file (<item id>.json)"))
            continue
        if stem not in item_ids:
            if stem.isdigit():
                skipped.append((entry.path, f"no item {stem} in dataset/metadata"))
            else:
                skipped.append((entry.path, "file name is not <item id>.json for an item in dataset/metadata"))
            continue
        loaded = _read_json_object(entry.path, skipped, max_bytes, max_text)
        if loaded is None:
            continue
        value, data = loaded
        try:
            yield answer_row(stem, value, data)
        except BadInput as exc:
            skipped.append((entry.path, str(exc)))


#: Answers written per transaction: large enough to amortise a transaction, small enough to keep
#: an import of any size in bounded memory (a batch is a few tens of MB).
BATCH_RESPONSES = 50_000


class _AnswerWriter:
    """Writes answer rows in batches, one transaction each; a kill keeps the committed batches
    and the next import skips them (their request keys are stored)."""

    def __init__(self, store: Store, dataset: str, table: dict[str, ModelInfo], report: ImportReport,
                 batch_size: int, progress: Callable[[ImportReport], None] | None = None):
        self.store, self.dataset, self.table, self.report = store, dataset, table, report
        self.progress = progress
        self.batch_size = max(1, batch_size)
        self.pending: dict[tuple[str, str], list[dict]] = {}
        self.size = 0
        self.models: dict[str, str] = {}
        self.runs: set[str] = set()
        self.items: dict[str, tuple[int, dict]] | None = None
        self.memo: dict = {}  # answers scored once for every model that gave them

    def add(self, model_dir: str, condition: str, row: dict) -> None:
        self.pending.setdefault((model_dir, condition), []).append(row)
        self.size += 1
        if self.size >= self.batch_size:
            self.flush()
            if self.progress is not None:
                self.progress(self.report)

    def flush(self) -> None:
        if not self.pending:
            return
        with self.store.transaction() as con:
            if self.items is None:
                self.items = current_items_con(con, self.dataset)
            for (model_dir, condition), rows in self.pending.items():
                info = model_from_dir(model_dir, self.table)
                if info.model not in self.models:
                    self.models[info.model] = ensure_model_con(con, info.model, info.display_name, info.family,
                                                               info.provider, info.api_model_id)
                run_id = f"{self.dataset}:{model_dir}:{condition}"
                # running until the import's last batch is in (`unfinished`): a kill leaves it marked so
                create_run_con(con, run_id, self.dataset, info.model, condition, unfinished.ORIGIN,
                               status="running", launch_id=unfinished.launch_id(self.dataset), exist_ok=True)
                self.report.responses_added += add_responses_con(con, run_id, rows, self.items, self.memo)
                refresh_run_totals_con(con, run_id, status="running")
                self.runs.add(run_id)
        self.pending.clear()
        self.size = 0
        batch_done()


def import_eduart(store: Store, root: Path | str, dataset: str = "eduart",
                  models_csv: Path | None = None, batch_size: int = BATCH_RESPONSES,
                  progress: Callable[[ImportReport], None] | None = None,
                  actor: Identity | None = None) -> ImportReport:
    """Import a folder in the published layout: items (and images) in one transaction, then the
    answers streamed folder by folder, parsed, scored and committed in batches of ``batch_size``
    (``progress(report)`` after each batch but the last).

    Memory stays bounded whatever the size of the folder; an import stopped half-way keeps the
    items and the batches already committed, its runs stay marked running (``unfinished`` names
    it at the next command and on every page), and running it again adds only what is missing.
    ``actor`` (default: the machine's operator) is recorded with the import's start.
    """
    root = Path(root)
    metadata = root / "dataset" / "metadata"
    if not metadata.is_dir():
        raise UserError(f"{root} is not in the published layout: missing folder dataset/metadata")
    if not str(dataset).strip():
        raise UserError("dataset name must not be empty")
    with collector_paused():  # one collection per batch instead (see eduart_core.gcpause)
        return _import_published(store, root, dataset, models_csv, batch_size, progress, actor)


def _import_published(store: Store, root: Path, dataset: str, models_csv: Path | None, batch_size: int,
                      progress: Callable[[ImportReport], None] | None, actor: Identity | None) -> ImportReport:
    """``import_eduart`` once its arguments are checked, with the cycle collector paused."""
    metadata = root / "dataset" / "metadata"
    report = ImportReport(dataset=dataset)
    max_bytes, max_text = int_limit("max_file_bytes"), int_limit("max_text_chars")  # read once, not per file

    records = []
    for entry in _entries(metadata):
        if not entry.name.endswith(".json") or entry.is_dir():
            continue
        loaded = _read_json_object(entry.path, report.skipped, max_bytes, max_text)
        if loaded is None:
            continue
        value = dict(loaded[0])
        value["item_id"] = entry.name[:-len(".json")]  # the file name is the id, whatever the record says
        records.append(value)
    if not records:
        if report.skipped:
            return report  # every item file was skipped: nothing to write, the caller lists why
        raise UserError(f"no item files in {metadata}: nothing imported")
    item_ids = {r["item_id"] for r in records}
    table = load_model_table(models_csv)
    folders = _answer_folders(root / "answers", report.skipped)

    with store.transaction() as con:
        add_event_con(con, unfinished.IMPORT_ACTION, unfinished.launch_id(dataset), unfinished.started(root, dataset),
                      (actor or operator()).columns())
        prepared = prepare_items(con, store, records, root / "dataset", report,
                                 fallback_dir=root / "dataset" / "imgs", check=check_item)
        store_prepared(con, prepared, dataset, "import-eduart", report, keep_invalid=True,
                       title=f"EduArt folder {root.name}")
        ensure_dataset_con(con, dataset, title=f"EduArt folder {root.name}", kind=BENCHMARK_KIND)
    del records, prepared
    batch_done()
    writer = _AnswerWriter(store, dataset, table, report, batch_size, progress)
    for model_dir, condition, folder in folders:
        for row in _folder_rows(folder, item_ids, report.skipped, max_bytes, max_text):
            writer.add(model_dir, condition, row)
    writer.flush()
    with store.transaction() as con:  # the last batch is in: the import's runs are complete
        complete_runs_con(con, unfinished.launch_id(dataset))
    report.runs = len(writer.runs)
    report.models = sorted(writer.models.values())
    return report

"""Item tables: VLMEvalKit-style TSV files and Parquet files turned into items.

Why a reader of its own: benchmarks outside EduArt ship as tables, not as one JSON record per
item. VLMEvalKit's convention (one row per question: ``index``, ``image`` as base64 or the index
of another row holding the same image, or ``image_path``, ``question``, ``hint``, option columns
``A``, ``B``, ..., ``answer``, ``category``, ``l2-category``, ``split``) is the common one; Parquet
files hold either that table or our own item records, one per row.

Rows become ``multiple_choice_radio`` items: ``category`` is the item's ``dimension``, ``hint``
its ``instructions`` (the context shown before the question), ``task`` and ``language`` columns
are used when present, and every other column becomes a tag. Tables are read in chunks and their
images stored chunk by chunk, so only hashes stay in memory however large the file.

Unlike canonical JSON files (all or nothing), a table is lenient: a row that cannot become a valid
item (no answer, an answer that is no option, an image that does not decode) is skipped and named
with its row number, and the other rows are imported.
"""
from __future__ import annotations

import ast
import base64
import binascii
import hashlib
import json
import logging
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..imagecheck import ImageRejected
from ..imagecheck import verify_image as verify
from ..items import MAX_TAG_VALUE_CHARS, check_item, is_tag_key
from ..store import Store
from ..store.items import add_images, read_image_file, resolve_image
from ..text import norm_strict
from ..vocab import MCQ_TYPE, is_language_code

logger = logging.getLogger(__name__)

#: Rows read and images stored per step.
CHUNK_ROWS = 500
#: VLMEvalKit stores an image once; a later row with the same image holds the first row's index,
#: recognisable as a short cell (a base64 image is far longer).
REFERENCE_MAX_CHARS = 64
_OPTION = re.compile(r"^[A-Z]$")
#: Columns with a meaning of their own; every other column becomes a tag.
_VLMEVAL_COLUMNS = frozenset({"index", "image", "image_path", "question", "hint", "answer", "category",
                              "task", "language"})


class RowProblem(ValueError):
    """A row that cannot become an item; the message says why in a few words."""


@dataclass
class TableItems:
    """What a table gave: valid records (images already stored) and the rows it skipped."""

    path: Path
    records: list[dict] = field(default_factory=list)
    image_hashes: dict[str, str] = field(default_factory=dict)   # item_id -> stored image
    where: dict[str, str] = field(default_factory=dict)          # item_id -> "file row N"
    skipped: list[tuple[str, str]] = field(default_factory=list)  # ("file row N", reason)
    warnings: list[str] = field(default_factory=list)
    images_added: int = 0


# ---------------------------------------------------------------- reading rows, by file kind

def _tsv_chunks(path: Path) -> Iterator[list[dict]]:
    import pandas as pd

    try:
        reader = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, chunksize=CHUNK_ROWS,
                             encoding="utf-8-sig")
        for chunk in reader:
            yield [{str(k): (v if v != "" else None) for k, v in row.items()} for row in chunk.to_dict("records")]
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError) as exc:
        raise UserError(f"{path}: not a readable TSV file ({type(exc).__name__}: {str(exc)[:200]})") from None


def _parquet_chunks(path: Path) -> Iterator[list[dict]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
        for batch in parquet.iter_batches(batch_size=CHUNK_ROWS):
            yield batch.to_pylist()
    except (OSError, pa.ArrowException) as exc:
        raise UserError(f"{path}: not a readable Parquet file ({type(exc).__name__}: {str(exc)[:200]})") from None


#: File suffix -> reader of row chunks (dicts of column -> value, None when empty).
TABLE_READERS: dict[str, Callable[[Path], Iterator[list[dict]]]] = {
    ".tsv": _tsv_chunks,
    ".parquet": _parquet_chunks,
}
TABLE_SUFFIXES: tuple[str, ...] = tuple(TABLE_READERS)


# ---------------------------------------------------------------- cells

def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or \
        (isinstance(value, str) and not value.strip())


def _text(value: Any) -> str | None:
    if _missing(value):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def _one(value: Any, what: str) -> Any:
    """A cell that may hold a list (VLMEvalKit writes several images as a list literal): one value."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            raise RowProblem(f"{what} is neither one value nor a list") from None
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise RowProblem(f"{what} holds {len(value)} images; an item has one image")
        value = value[0]
    return value


def verify_image(data: bytes) -> str:
    """Decode the whole image within the byte and pixel limits (``imagecheck``); its file
    extension, or RowProblem. Checked per row, so one bad image never aborts the table."""
    try:
        return verify(data).ext
    except ImageRejected as exc:
        raise RowProblem(f"image does not decode or is too large: {exc}") from None


def _decode_base64(text: str) -> bytes:
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        raise RowProblem("image is not valid base64") from None


# ---------------------------------------------------------------- rows -> records

@dataclass
class _Image:
    """Where a row's image comes from: bytes in the row, a file, or another row's image."""

    data: bytes | None = None
    name: str | None = None
    reference: str | None = None

    def bytes_in_row(self) -> bytes:
        """The bytes of an image that names no other row (an image is one or the other)."""
        if self.data is None:
            raise RowProblem("the image cell holds neither bytes nor a reference")
        return self.data


def _image_of(cell: Any, root: Path, *, references: bool) -> _Image | None:
    """The image of a cell: bytes (Hugging Face struct or raw), base64 text, a path, or a reference.

    ``references``: VLMEvalKit's rule, a short text cell names the row whose image this is;
    otherwise (our own records) a text cell is a path relative to ``root``.
    """
    if _missing(cell):
        return None
    cell = _one(cell, "image")
    if isinstance(cell, dict):  # Hugging Face image struct {"bytes", "path"}
        if cell.get("bytes"):
            cell = cell["bytes"]
        elif not _missing(cell.get("path")):
            return _file_image(str(cell["path"]).strip(), root)
        else:
            return None
    if isinstance(cell, (bytes, bytearray)):
        return _Image(data=bytes(cell))
    if not isinstance(cell, str):
        raise RowProblem(f"image cell holds {type(cell).__name__}, not an image")
    text = cell.strip()
    if references:
        if len(text) <= REFERENCE_MAX_CHARS:
            return _Image(reference=text)
        return _Image(data=_decode_base64(text))
    if len(text) > 1024:  # far too long for a path: an embedded image
        return _Image(data=_decode_base64(text))
    return _file_image(text, root)


def _file_image(relative: str, root: Path) -> _Image:
    try:
        path = resolve_image(root, relative)
    except UserError as exc:
        raise RowProblem(str(exc)) from None
    if not path.is_file():
        raise RowProblem(f"image file {relative} not found under {root}")
    try:
        return _Image(data=read_image_file(path), name=relative)  # size checked before reading
    except ImageRejected as exc:
        raise RowProblem(f"image file {relative}: {exc}") from None


def _tag_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return value.strip() if isinstance(value, str) else value
    return json.dumps(value, ensure_ascii=False, default=str)


class _TagColumns:
    """Which extra columns become tags; values too long to be a tag are left out and counted."""

    def __init__(self, columns: list[str], known: frozenset[str]):
        self.columns = [c for c in columns if c not in known and not _OPTION.match(c)
                        and not c.startswith("Unnamed:")]
        self.unusable = [c for c in self.columns if not is_tag_key(c)]
        self.columns = [c for c in self.columns if is_tag_key(c)]
        self.too_long: dict[str, int] = {}

    def tags(self, row: dict) -> dict:
        tags = {}
        for column in self.columns:
            value = row.get(column)
            if _missing(value):
                continue
            value = _tag_value(value)
            if isinstance(value, str) and len(value) > MAX_TAG_VALUE_CHARS:
                self.too_long[column] = self.too_long.get(column, 0) + 1
                continue
            tags[column] = value
        return tags

    def warnings(self, path: Path) -> list[str]:
        out = [f"{path.name}: column {c!r} is not a usable tag name and was not imported" for c in self.unusable]
        out += [f"{path.name}: column {c!r}: {n} value(s) longer than {MAX_TAG_VALUE_CHARS} characters "
                "were not kept as tags" for c, n in self.too_long.items()]
        return out


def _answer_id(answer: str, choices: list[dict]) -> str:
    ids = [c["id"] for c in choices]
    letter = answer.strip().upper()
    if letter in ids:
        return letter
    by_text = [c["id"] for c in choices if norm_strict(c["text"]) == norm_strict(answer)]
    if len(by_text) == 1:
        return by_text[0]
    if len(letter) > 1 and all(ch in ids for ch in letter):
        raise RowProblem(f"answer {answer!r} names several options; a multiple_choice_radio item has one")
    raise RowProblem(f"answer {answer!r} is not one of the options {', '.join(ids) or '(none)'}")


def vlmeval_record(row: dict, options: list[str], language: str | None, tags: _TagColumns,
                   source: str) -> dict:
    """One VLMEvalKit row as an item record (image fields are filled by the caller)."""
    item_id = _text(row.get("index"))
    if not item_id:
        raise RowProblem("no index")
    choices = [{"id": c, "text": _text(row.get(c))} for c in options if not _missing(row.get(c))]
    if not choices:
        raise RowProblem("no options (columns A, B, ... are empty)")
    answer = _text(row.get("answer"))
    if not answer:
        raise RowProblem("no answer")
    answer_id = _answer_id(answer, choices)
    record = {
        "item_id": item_id, "type": MCQ_TYPE, "question_text": _text(row.get("question")),
        "instructions": _text(row.get("hint")), "choices": choices,
        "answers": [{"id": answer_id, "description": next(c["text"] for c in choices if c["id"] == answer_id)}],
        "language": (_text(row.get("language")) or language or "").lower(),
        "source": f"{source}/{item_id}", "has_image": False, "image": None,
        "dimension": _text(row.get("category")), "task": _text(row.get("task")), "tags": tags.tags(row),
    }
    return record


_RECORD_JSON_FIELDS = ("choices", "answers", "tags", "image_attributes")


def _without_nulls(value: Any) -> Any:
    """Parquet structs carry every field, null when unused: drop those (a list of them too)."""
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) if isinstance(v, dict) else v for v in value]
    return value


def canonical_record(row: dict) -> tuple[dict, Any]:
    """A Parquet row holding our own item record (nested values may be JSON text); (record, image cell)."""
    record = {k: v for k, v in row.items() if not _missing(v)}
    for name in _RECORD_JSON_FIELDS:
        value = record.get(name)
        if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
            try:
                value = json.loads(value)
            except ValueError:
                raise RowProblem(f"field {name} is not valid JSON") from None
        if name in record:
            record[name] = _without_nulls(value)
    item_id = _text(record.get("item_id", record.get("index")))
    if not item_id:
        raise RowProblem("no item_id")
    record["item_id"] = item_id
    image = record.pop("image", None)
    record["image"] = None
    record["has_image"] = False
    return record, image


# ---------------------------------------------------------------- a whole table

def _columns_and_chunks(path: Path) -> tuple[list[str], Iterator[list[dict]]]:
    reader = TABLE_READERS[path.suffix.lower()]
    chunks = reader(path)
    first = next(chunks, None)
    if first is None:
        if path.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            columns = list(pq.ParquetFile(path).schema_arrow.names)
        else:
            columns = []
        raise UserError(f"{path}: no rows" + (f" (columns: {', '.join(columns)})" if columns else ""))
    columns = list(first[0].keys())

    def all_chunks() -> Iterator[list[dict]]:
        yield first
        yield from chunks

    return columns, all_chunks()


def read_table_items(store: Store, path: Path | str, images_root: Path | str | None = None,
                     language: str | None = None) -> TableItems:
    """Rows of a TSV/Parquet file as validated item records, their images stored; see module doc.

    ``images_root``: folder of ``image_path`` values (default: the table's folder). ``language``:
    the ISO 639-1 code of rows without a ``language`` column value.
    """
    path = Path(path)
    root = Path(images_root) if images_root else path.parent
    if language is not None and not is_language_code(language):
        raise UserError(f"--language {language!r} is not an ISO 639-1 code (e.g. en, it, fr)")
    columns, chunks = _columns_and_chunks(path)
    canonical = {"type", "answers"} <= set(columns)
    if not canonical:
        missing = [c for c in ("index", "question", "answer") if c not in columns]
        if missing:
            raise UserError(f"{path}: neither item records (type, answers, ...) nor a VLMEvalKit table: "
                            f"missing column(s) {', '.join(missing)}")
        if "language" not in columns and language is None:
            raise UserError(f"{path}: no language column; pass --language CODE (ISO 639-1, e.g. en)")
    options = sorted(c for c in columns if _OPTION.match(c))
    tags = _TagColumns(columns, _VLMEVAL_COLUMNS)
    out = TableItems(path)
    row_images: dict[str, tuple[str, str]] = {}  # row index -> (image hash, record image name)
    waiting: dict[str, tuple[dict, str, str]] = {}  # item_id -> (record, referenced index, where)
    number = 0
    for chunk in chunks:
        batch: list[tuple[dict, bytes, str, str]] = []
        for row in chunk:
            number += 1
            where = f"{path.name} row {number}"
            try:
                record, image = _row_item(row, canonical, options, language, tags, path, root)
                item_id = record["item_id"]
                first = out.where.get(item_id) or (waiting[item_id][2] if item_id in waiting else None) \
                    or next((w for r, _, _, w in batch if r["item_id"] == item_id), None)
                if first:
                    raise RowProblem(f"item {item_id} appears twice ({first} and {where})")
                if image is not None:
                    record["has_image"] = True
                    if image.reference is not None:
                        record["image"] = f"{path.stem}/{image.reference}"  # replaced once resolved
                    else:
                        data = image.bytes_in_row()
                        ext = verify_image(data)
                        record["image"] = image.name or f"embedded/{hashlib.sha256(data).hexdigest()[:16]}.{ext}"
                _accept(record)
            except RowProblem as exc:
                out.skipped.append((where, str(exc)))
                continue
            if image is None:
                out.records.append(record)
                out.where[item_id] = where
            elif image.reference is not None:
                waiting[item_id] = (record, image.reference, where)
            else:
                batch.append((record, image.bytes_in_row(), image.name or f"{path.name}#{item_id}", where))
        if batch:
            stored = add_images(store, [(data, name) for _, data, name, _ in batch])
            for (record, _, _, where), (image_hash, added) in zip(batch, stored):
                out.images_added += int(added)
                out.records.append(record)
                out.where[record["item_id"]] = where
                out.image_hashes[record["item_id"]] = image_hash
                row_images[record["item_id"]] = (image_hash, record["image"])
    for item_id, (record, reference, where) in waiting.items():
        if reference not in row_images:
            out.skipped.append((where, f"image refers to row index {reference}, which has no image of its own"))
            continue
        image_hash, record["image"] = row_images[reference]
        out.records.append(record)
        out.where[item_id] = where
        out.image_hashes[item_id] = image_hash
    out.warnings.extend(tags.warnings(path))
    logger.info("%s: %d item(s), %d row(s) skipped", path, len(out.records), len(out.skipped))
    return out


def _row_item(row: dict, canonical: bool, options: list[str], language: str | None, tags: _TagColumns,
              path: Path, root: Path) -> tuple[dict, _Image | None]:
    """(record, image source) of one row, or RowProblem."""
    if canonical:
        record, cell = canonical_record(row)
        if record.get("language") is None and language:
            record["language"] = language
        return record, _image_of(cell, root, references=False)
    record = vlmeval_record(row, options, language, tags, path.stem)
    image = _image_of(row.get("image"), root, references=True)
    if image is None and not _missing(row.get("image_path")):
        image = _file_image(str(_one(row["image_path"], "image_path")).strip(), root)
    return record, image


def _accept(record: dict) -> None:
    """The record is a valid item, else RowProblem with its problems (item and field named)."""
    _, problems = check_item(record)
    if problems:
        raise RowProblem("; ".join(problems))

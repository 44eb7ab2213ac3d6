"""Gold items and their images in the store: versioned, content-addressed, idempotent.

Why versions: gold answers get corrected (review decisions, re-imports of a fixed dataset), and
every stored score must stay explainable. So an item is never updated in place: a changed record
becomes a new version, ``is_current`` moves to it, the old one stays, and the responses of that
item are re-scored against the new gold in the same transaction. Importing the same record again
changes nothing (same ``content_hash``).

Images are stored once per content (sha256) as ``<hash[:2]>/<hash>.<ext>`` in the store's image
location (``store.images``: the folder next to a DuckDB file, a shared folder or S3 storage).
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import UserError
from ..fileio import os_cause
from ..imagecheck import ImageRejected, check_image_size, verify_image
from ..limits import LimitConfigError
from ..vocab import BENCHMARK_KIND
from .connection import Connection
from .core import Store

if TYPE_CHECKING:
    from ..items import ItemValidationError


@dataclass
class ImportReport:
    """What an import did, so the CLI can tell the user and tests can check it."""

    dataset: str
    added: list[str] = field(default_factory=list)        # item ids stored as version 1
    updated: list[str] = field(default_factory=list)      # item ids that got a new version
    unchanged: list[str] = field(default_factory=list)    # same content already current
    invalid: dict[str, list[str]] = field(default_factory=dict)  # item id -> problems (kept, flagged)
    images_added: int = 0
    rescored: int = 0
    # filled by the folder importers
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    runs: int = 0
    responses_added: int = 0
    models: list[str] = field(default_factory=list)
    # links between items that do not resolve (parallel_of, dialogue turns): imported, but said
    warnings: list[str] = field(default_factory=list)

    @property
    def items_seen(self) -> int:
        return len(self.added) + len(self.updated) + len(self.unchanged)


@dataclass
class PreparedItem:
    """A record checked and resolved (image hashed) but not yet written."""

    item_id: str
    record: dict
    problems: list[str]
    image_hash: str | None
    content_hash: str
    image_refused: str | None = None  # why the record's image file was refused (bomb, truncated, ...)
    #: option id -> stored image hash, for options that are images
    option_images: dict[str, str] = field(default_factory=dict)


def canonical_json(value: Any) -> str:
    """Stable JSON text (sorted keys) so equal records always hash equally."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _content_hash(record: dict, image_hash: str | None, option_images: dict[str, str] | None = None) -> str:
    content: dict[str, Any] = {"record": record, "image": image_hash}
    if option_images:  # only then: items without image options keep their hash
        content["option_images"] = option_images
    return hashlib.sha256(canonical_json(content).encode()).hexdigest()


# ---------------------------------------------------------------- images

def _image_info(data: bytes) -> tuple[str, str, int, int]:
    """(mime, extension, width, height) of fully verified image bytes; ``ImageRejected`` otherwise
    (decoded completely, within the byte and pixel limits: see ``eduart_core.imagecheck``)."""
    info = verify_image(data)
    return info.mime, info.ext, info.width, info.height


def read_image_file(path: Path) -> bytes:
    """The bytes of an image file, refusing an oversize file before reading it."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ImageRejected(f"cannot read: {os_cause(exc)}") from None
    check_image_size(size)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ImageRejected(f"cannot read: {os_cause(exc)}") from None


def _write_image_file(store: Store, data: bytes, image_hash: str, ext: str) -> str:
    """Write the bytes once to the store's image location; returns the relative path."""
    rel = f"{image_hash[:2]}/{image_hash}.{ext}"
    store.images.put(rel, data)
    return rel


def _store_image(con: Connection, store: Store, data: bytes, original_name: str | None) -> tuple[str, bool]:
    """Store image bytes (file + row) inside the caller's transaction; (hash, newly added)."""
    image_hash = hashlib.sha256(data).hexdigest()
    row = con.execute("SELECT rel_path FROM images WHERE image_hash = ?", [image_hash]).fetchone()
    if row:
        rel = row[0]
        if not store.images.has(rel):  # file lost: write it back
            _write_image_file(store, data, image_hash, rel.rsplit(".", 1)[-1])
        return image_hash, False
    mime, ext, width, height = _image_info(data)
    rel = _write_image_file(store, data, image_hash, ext)
    # Another writer may store the same bytes at the same moment: the row is the same, keep one.
    con.execute(
        "INSERT INTO images (image_hash, rel_path, mime, size_bytes, width, height, original_name) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (image_hash) DO NOTHING",
        [image_hash, rel, mime, len(data), width, height, original_name],
    )
    return image_hash, True


def add_image(store: Store, data: bytes, original_name: str | None = None) -> str:
    """Store image bytes once (content-addressed) and return their sha256 hash."""
    with store.transaction() as con:
        image_hash, _ = _store_image(con, store, data, original_name)
    return image_hash


def add_images(store: Store, images: Iterable[tuple[bytes, str | None]]) -> list[tuple[str, bool]]:
    """Store many images (bytes, original name) in one transaction; (hash, newly added), in order.

    For importers that stream a large table: images go in chunk by chunk and only the hashes stay
    in memory. An image stored for an item that is later refused stays (content-addressed, used
    by nothing): harmless, and the same bytes are never stored twice.
    """
    with store.transaction() as con:
        return [_store_image(con, store, data, name) for data, name in images]


def image_path(store: Store, image_hash: str) -> Path:
    """The file of a stored image; StoreError-free: UserError when the hash is unknown."""
    with store.connect(read_only=True) as con:
        row = con.execute("SELECT rel_path FROM images WHERE image_hash = ?", [image_hash]).fetchone()
    if not row:
        raise UserError(f"no image {image_hash[:12]}… in store {store.path}")
    return store.images.path(row[0])


def resolve_image(root: Path, relative: str) -> Path:
    """The image file for a record's ``image`` path, which must stay inside ``root``.

    Why strict: item files come from other people; an absolute path or a ``..`` must never make
    the importer read arbitrary files from the machine.
    """
    text = str(relative).strip().replace("\\", "/")
    if not text:
        raise UserError("empty image path")
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text) or Path(text).is_absolute():
        raise UserError(f"image path {relative!r} is absolute; it must be relative to {root}")
    if ".." in Path(text).parts:
        raise UserError(f"image path {relative!r} escapes the images folder {root}")
    base = root.resolve()
    path = (base / text).resolve()
    if path != base and base not in path.parents:  # a symlink pointing outside
        raise UserError(f"image path {relative!r} escapes the images folder {root}")
    return path


# ---------------------------------------------------------------- items

def _stored_image(con: Connection, store: Store, root: Path, ref: str, fallback_dir: Path | None,
                  cache: dict[Path, str], refused: dict[Path, str], report: ImportReport,
                  found: dict[tuple, Path]) -> str:
    """Hash of the image file `ref` (relative to `root`), verified and stored once; ``found`` keeps
    where each reference was found (items that share an image look it up once).

    Raises UserError when the file is missing, ImageRejected when it fails verification (the
    path and reason go to ``report.skipped`` once per file).
    """
    spot = (root, str(ref), fallback_dir)
    path = found.get(spot)
    if path is None:
        path = resolve_image(root, ref)
        if not path.is_file() and fallback_dir is not None:
            alternative = resolve_image(Path(fallback_dir), Path(str(ref)).name)
            path = alternative if alternative.is_file() else path
        found[spot] = path
    if path in refused:
        raise ImageRejected(refused[path])
    if path not in cache:
        if not path.is_file():
            raise UserError(f"image file {ref} not found under {root}")
        try:
            image_hash, added = _store_image(con, store, read_image_file(path), path.name)
        except ImageRejected as exc:
            refused[path] = str(exc)
            report.skipped.append((str(path), str(exc)))
            raise
        report.images_added += int(added)
        cache[path] = image_hash
    return cache[path]


def prepare_items(con: Connection, store: Store, records: Iterable[dict],
                  images_root: Path | None, report: ImportReport,
                  fallback_dir: Path | None = None,
                  image_hashes: dict[str, str] | None = None) -> list[PreparedItem]:
    """Check and normalise records, store their images; nothing about items is written yet.

    Without ``images_root`` image paths are kept in the record but no file is read (callers
    that manage images themselves, e.g. review promotions).

    An image file that fails verification (too large, too many pixels, truncated, not an image)
    is never stored: its path and reason go to ``report.skipped`` (once per file), the item gets
    the problem, and ``PreparedItem.image_refused`` says why, so a strict importer can skip the
    record while a lenient one keeps it flagged.

    ``fallback_dir``: where to look for a bare file name that is not under ``images_root``
    (published records sometimes say ``0071.jpg`` instead of ``imgs/0071.jpg``).

    ``image_hashes``: item id -> hash of an image the caller already stored (table importers
    decode and verify embedded images themselves); such an item's image file is not looked up.
    """
    from ..items import check_item

    prepared: dict[str, PreparedItem] = {}
    image_cache: dict[Path, str] = {}
    image_refused: dict[Path, str] = {}
    found: dict[tuple, Path] = {}
    for index, raw in enumerate(records):
        if not isinstance(raw, dict):
            raise UserError(f"record #{index + 1} is not a JSON object")
        item_id = str(raw.get("item_id") or "").strip()
        if not item_id:
            raise UserError(f"record #{index + 1} has no item_id")
        record, problems = check_item(raw)
        record = dict(record)
        record["item_id"] = item_id
        problems = list(problems)
        image_hash = (image_hashes or {}).get(item_id)
        refused = None
        image_ref = record.get("image")
        if image_ref and images_root is not None and image_hash is None:
            try:
                image_hash = _stored_image(con, store, Path(images_root), image_ref, fallback_dir, image_cache,
                                           image_refused, report, found)
            except LimitConfigError:
                raise  # a bad EDUART_* value concerns the whole import, not this item
            except ImageRejected as exc:
                refused = f"image {image_ref}: {exc}"
                problems.append(f"item {item_id}: field image: {refused}")
            except UserError as exc:
                problems.append(f"item {item_id}: field image: {exc}")
        option_images: dict[str, str] = {}
        for choice in record.get("choices") or []:
            if not (isinstance(choice, dict) and isinstance(choice.get("image"), str) and choice["image"].strip()
                    and images_root is not None):
                continue
            where = f"choices[{choice.get('id')}].image"
            try:
                option_images[str(choice.get("id"))] = _stored_image(
                    con, store, Path(images_root), choice["image"], fallback_dir, image_cache, image_refused, report,
                    found)
            except LimitConfigError:
                raise
            except ImageRejected as exc:
                refused = refused or f"image {choice['image']}: {exc}"
                problems.append(f"item {item_id}: field {where}: image {choice['image']}: {exc}")
            except UserError as exc:
                problems.append(f"item {item_id}: field {where}: {exc}")
        prepared[item_id] = PreparedItem(item_id, record, problems, image_hash,
                                         _content_hash(record, image_hash, option_images), refused, option_images)
    return list(prepared.values())


def write_items(con: Connection, items: list[PreparedItem], dataset: str, origin: str,
                note: str | None, report: ImportReport) -> list[str]:
    """Insert new items / new versions inside the caller's transaction; returns changed item ids."""
    if not items:
        return []
    con.lock(f"items:{dataset}")  # two imports into one dataset take turns: versions never collide
    current = {
        row[0]: (row[1], row[2], row[3], row[4], json.loads(row[5]) if row[5] else {})
        for row in con.execute(
            "SELECT item_id, content_hash, version, image_hash, CAST(validation_errors AS TEXT), "
            "CAST(option_images AS TEXT) FROM items WHERE dataset = ? AND is_current",
            [dataset],
        ).fetchall()
    }
    rows = []
    changed: list[str] = []
    for item in items:
        if item.problems:
            report.invalid[item.item_id] = item.problems
        if item.item_id in current:
            old_hash, max_version, old_image, old_problems, old_options = current[item.item_id]
            if item.image_hash is None and old_image and item.record.get("image"):
                # an edit that still names an image keeps the stored one (no file was given)
                item.image_hash = old_image
                item.content_hash = _content_hash(item.record, old_image, item.option_images)
            named = {str(c.get("id")) for c in item.record.get("choices") or [] if isinstance(c, dict) and c.get("image")}
            kept = {k: v for k, v in old_options.items() if k in named and k not in item.option_images}
            if kept:  # likewise for option images
                item.option_images = {**kept, **item.option_images}
                item.content_hash = _content_hash(item.record, item.image_hash, item.option_images)
            if old_hash == item.content_hash:
                report.unchanged.append(item.item_id)
                if (json.loads(old_problems) if old_problems else []) != item.problems:
                    # same gold, different findings (validator improved, image file now found):
                    # the findings are derived data, refreshed in place without a new version
                    con.execute(
                        "UPDATE items SET validation_errors = CAST(? AS JSON), data_issue = ?, "
                        "updated_at = current_timestamp WHERE dataset = ? AND item_id = ? AND is_current",
                        [json.dumps(item.problems, ensure_ascii=False) if item.problems else None,
                         bool(item.problems), dataset, item.item_id])
                continue
            version = int(max_version) + 1
            report.updated.append(item.item_id)
            changed.append(item.item_id)
        else:
            version = 1
            report.added.append(item.item_id)
        rec = item.record
        rows.append({
            "dataset": dataset, "item_id": item.item_id, "version": version, "is_current": True,
            "type": str(rec.get("type") or "unknown"), "language": rec.get("language"),
            "has_image": bool(rec.get("has_image")), "image_hash": item.image_hash,
            "record": canonical_json(rec), "content_hash": item.content_hash,
            "option_images": canonical_json(item.option_images) if item.option_images else None,
            "validation_errors": json.dumps(item.problems, ensure_ascii=False) if item.problems else None,
            "data_issue": bool(item.problems), "origin": origin, "note": note,
        })
    if changed:
        con.execute(
            "UPDATE items SET is_current = FALSE, updated_at = current_timestamp "
            "WHERE dataset = ? AND is_current AND item_id = ANY(?)",
            [dataset, changed],
        )
    if rows:
        frame = pd.DataFrame(rows).astype({"language": object, "image_hash": object,
                                           "validation_errors": object, "note": object, "option_images": object})
        con.insert_frame("items", frame, json_columns=("record", "validation_errors", "option_images"))
    return changed


def validation_error(item: PreparedItem) -> ItemValidationError:
    """The ItemValidationError for a defective prepared item (message names item and field)."""
    from ..items import ItemValidationError

    pairs = []
    for problem in item.problems:
        match = re.match(r"item .*?: field ([^:]+): (.*)$", problem, re.S)
        pairs.append((match.group(1), match.group(2)) if match else ("record", problem))
    return ItemValidationError(item.item_id, pairs)


def link_warnings(con: Connection, dataset: str, item_ids: Iterable[str]) -> list[str]:
    """Links of the given items that do not resolve among the dataset's current items.

    Why warnings and not validation problems: a link names *another* item, which may arrive in a
    later import (the English file after the Italian one), so the record itself is not defective.
    ``parallel_of`` must name an item of the same dataset; two items must not claim the same turn
    of one dialogue (the runner would not know which to ask first).
    """
    rows = con.execute(
        "SELECT item_id, record->>'parallel_of', record->>'dialogue_id', record->>'turn' "
        "FROM items WHERE dataset = ? AND is_current", [dataset]).fetchall()
    present = {r[0] for r in rows}
    wanted = set(item_ids)
    warnings = []
    turns: dict[tuple[str, str], list[str]] = {}
    for item_id, parallel, dialogue, turn in rows:
        if dialogue is not None and turn is not None:
            turns.setdefault((dialogue, turn), []).append(item_id)
        if item_id in wanted and parallel is not None and parallel not in present:
            warnings.append(f"item {item_id}: parallel_of {parallel} is not an item of dataset {dataset} (yet)")
    for (dialogue, turn), ids in sorted(turns.items()):
        if len(ids) > 1 and wanted & set(ids):
            warnings.append(f"dialogue {dialogue}: turn {turn} is claimed by items {', '.join(sorted(ids))}")
    return warnings


def store_prepared(con: Connection, items: list[PreparedItem], dataset: str, origin: str,
                   report: ImportReport, keep_invalid: bool, note: str | None = None,
                   title: str | None = None) -> None:
    """Write prepared items inside the caller's transaction, refusing defects unless keep_invalid."""
    from .runs import ensure_dataset_con
    from .scores import rescore_con

    if not keep_invalid:
        for item in items:
            if item.problems:
                raise validation_error(item)
    ensure_dataset_con(con, dataset, title=title or dataset, kind=BENCHMARK_KIND)
    changed = write_items(con, items, dataset, origin, note, report)
    if changed:
        report.rescored += rescore_con(con, dataset=dataset, item_ids=changed)
    report.warnings.extend(link_warnings(con, dataset, [item.item_id for item in items]))


def upsert_items(store: Store, records: Iterable[dict], dataset: str, origin: str,
                 images_root: Path | str | None = None, keep_invalid: bool = False,
                 note: str | None = None) -> ImportReport:
    """Store item records in ``dataset`` in one transaction (all or nothing).

    Records with validation problems are stored flagged (``data_issue``) when ``keep_invalid``;
    otherwise the first defective item aborts the import with ``ItemValidationError`` and
    nothing is written. Items whose record changed get a new version and are re-scored.
    """
    report = ImportReport(dataset=dataset)
    records = list(records)
    with store.transaction() as con:
        items = prepare_items(con, store, records, Path(images_root) if images_root else None, report)
        store_prepared(con, items, dataset, origin, report, keep_invalid, note)
    return report


def _decode(value: Any) -> Any:
    if value is None or isinstance(value, (dict, list)):
        return value
    if isinstance(value, float) or value is pd.NA:  # a missing value read back as NaN/NA
        return None
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return value


def _text_words(record: dict) -> int:
    """Words of the model-ready text (stem plus rendered choices): a proxy for item length."""
    parts = [str(record.get("question_text") or "")]
    for choice in record.get("choices") or []:
        if isinstance(choice, dict):
            parts.append(str(choice.get("text") or ""))
            parts.extend(str(o) for o in choice.get("options") or [])
        else:
            parts.append(str(choice))
    return len(re.findall(r"\w+", " ".join(parts)))


_ITEM_COLUMNS = ("item_id, version, is_current, type, language, has_image, image_hash, CAST(record AS TEXT) AS record, "
                 "content_hash, CAST(validation_errors AS TEXT) AS validation_errors, data_issue, origin, note, "
                 "created_at, updated_at, CAST(option_images AS TEXT) AS option_images")


def _frame(con: Connection, sql: str, params: list) -> pd.DataFrame:
    frame = con.frame(sql, params)
    for column in ("language", "image_hash", "origin", "note"):  # missing text is None, not NaN
        if column in frame:
            frame[column] = pd.Series([None if pd.isna(v) else v for v in frame[column]], dtype=object,
                                      index=frame.index)
    if "record" in frame:
        frame["record"] = [_decode(v) for v in frame["record"]]
    if "validation_errors" in frame:
        frame["validation_errors"] = [_decode(v) or [] for v in frame["validation_errors"]]
    if "option_images" in frame:
        frame["option_images"] = [_decode(v) or {} for v in frame["option_images"]]
    return frame


#: Metadata columns of ``load_items``, read from the record (None when the item has none).
METADATA_COLUMNS = ("task", "dimension", "tags", "parallel_of", "dialogue_id", "turn", "variant_of")


def _metadata_columns(frame: pd.DataFrame) -> None:
    """Add the record's metadata as columns (objects, so None stays None and turn stays int)."""
    records = [r if isinstance(r, dict) else {} for r in frame["record"]]
    for column in METADATA_COLUMNS:
        frame[column] = pd.Series([r.get(column) for r in records], dtype=object, index=frame.index)
    # the variant's kind (rotate, no_image, translate, ...) as a plain column, for filters (`variant=rotate`)
    frame["variant"] = pd.Series([(r.get("variant") or {}).get("kind") if isinstance(r.get("variant"), dict)
                                  else (r.get("variant") or None) for r in records], dtype=object, index=frame.index)


def load_items(store: Store, dataset: str, sources_only: bool = False) -> pd.DataFrame:
    """Current version of every item of ``dataset``, one row per item, sorted by item_id.

    Besides the stored columns: ``text_words``, the metadata of ``METADATA_COLUMNS`` (``tags`` is the
    record's dict of tags or None) and ``variant`` (the kind of a variant item). ``sources_only``
    leaves variant items out in the query (making variants reads the sources only, however many
    variants a dataset already has).
    """
    sources = " AND record->>'variant_of' IS NULL" if sources_only else ""
    with store.connect(read_only=True) as con:
        frame = _frame(con, f"SELECT {_ITEM_COLUMNS} FROM items WHERE dataset = ? AND is_current{sources} "
                            "ORDER BY item_id", [dataset])
    frame["text_words"] = [_text_words(r) if isinstance(r, dict) else 0 for r in frame["record"]]
    _metadata_columns(frame)
    frame["has_image"] = frame["has_image"].astype(bool)
    frame["data_issue"] = frame["data_issue"].astype(bool)
    return frame


def current_item_ids(store: Store, dataset: str) -> set[str]:
    """Ids of the current items of ``dataset`` (empty when the dataset has none)."""
    with store.connect(read_only=True) as con:
        return {r[0] for r in con.execute(
            "SELECT item_id FROM items WHERE dataset = ? AND is_current", [dataset]).fetchall()}


def current_item_records(store: Store, dataset: str) -> list[dict]:
    """The stored record of every current item of ``dataset``, by item id (what `export-items` writes)."""
    with store.connect(read_only=True) as con:
        rows = con.execute("SELECT item_id, CAST(record AS TEXT) FROM items WHERE dataset = ? AND is_current "
                           "ORDER BY item_id", [dataset]).fetchall()
    return [{"item_id": item_id, **json.loads(record)} for item_id, record in rows]


def get_item(store: Store, dataset: str, item_id: str, version: int | None = None) -> dict:
    """One item version (current by default) as a dict: metadata plus ``record`` and problems."""
    condition = "version = ?" if version is not None else "is_current"
    params = [dataset, str(item_id)] + ([int(version)] if version is not None else [])
    with store.connect(read_only=True) as con:
        frame = _frame(con, f"SELECT {_ITEM_COLUMNS} FROM items WHERE dataset = ? AND item_id = ? AND {condition}",
                       params)
    if frame.empty:
        which = f" version {version}" if version is not None else ""
        raise UserError(f"no item {item_id}{which} in dataset {dataset}")
    row = frame.iloc[0].to_dict()
    row["dataset"] = dataset
    row["version"] = int(row["version"])
    return row


def item_history(store: Store, dataset: str, item_id: str) -> pd.DataFrame:
    """Every stored version of an item, oldest first (who changed the gold, when, why)."""
    with store.connect(read_only=True) as con:
        return _frame(con, f"SELECT {_ITEM_COLUMNS} FROM items WHERE dataset = ? AND item_id = ? ORDER BY version",
                      [dataset, str(item_id)])


def save_item_version(store: Store, dataset: str, record: dict, origin: str, note: str | None) -> int:
    """Save an edited record as the item's new current version and re-score its responses.

    Problems found by ``check_item`` are kept with the version (flagged as a data issue) rather
    than refused, so a reviewer can store a partial fix. Saving an unchanged record returns the
    current version number and writes nothing.
    """
    from .scores import rescore_con

    item_id = str(record.get("item_id") or "").strip()
    if not item_id:
        raise UserError("record has no item_id")
    report = ImportReport(dataset=dataset)
    with store.transaction() as con:
        row = con.execute("SELECT 1 FROM items WHERE dataset = ? AND item_id = ? AND is_current",
                          [dataset, item_id]).fetchone()
        if row is None:
            raise UserError(f"no item {item_id} in dataset {dataset}")
        items = prepare_items(con, store, [record], None, report)
        write_items(con, items, dataset, origin, note, report)  # keeps the stored image
        if report.updated:
            rescore_con(con, dataset=dataset, item_ids=[item_id])
        version = con.execute("SELECT version FROM items WHERE dataset = ? AND item_id = ? AND is_current",
                              [dataset, item_id]).fetchone()[0]
    return int(version)

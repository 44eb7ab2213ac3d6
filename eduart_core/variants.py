"""Variants of an item: the same question with its options rotated or relabelled, its image perturbed
or taken away, stored as linked items of the same dataset.

Why variants are items: a model that knows the painting answers a rotation of the options the same
way; one that knows the position of the right letter does not, and one that never looked at the
image scores the same without it. Asking that needs the variant to be an ordinary item (asked by an
ordinary run, cached and journalled as its own item, scored by the ordinary scorer), linked to its
source by ``variant_of`` with what was done to it in ``variant`` (kind and parameter), its key
transformed with it. Their scores stay out of the dataset's leaderboard and item statistics
(`store.scores.VARIANT_FREE`) and are read by the invariance views (`analysis.invariance`).

Ids are ``<item_id>~<kind>``, ``<item_id>~<kind>-<k>`` for the k-th of several (rotation by k
places). Image variants are made with Pillow and stored content-addressed like every image; the
record's ``image`` names the stored file. ``translate`` and ``paraphrase`` are not made here: they
are imported items that carry ``variant_of`` (and a ``variant`` such as ``{"kind": "translate"}``).
Making the variants twice writes nothing the second time (same content, same hash).
"""
from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import UserError
from .vocab import OPTION_FORMATS

#: The kinds the studio makes, in the order `variants` lists them.
KINDS: tuple[str, ...] = ("rotate", "relabel", "grayscale", "crop", "downscale", "mirror", "no_image")
#: Kinds that change the image (Pillow), and all kinds that concern the image.
PIXEL_KINDS: tuple[str, ...] = ("grayscale", "crop", "downscale", "mirror")
IMAGE_KINDS: tuple[str, ...] = (*PIXEL_KINDS, "no_image")
#: Kinds of the options (every circular rotation; labels 1..n instead of A..).
OPTION_KINDS: tuple[str, ...] = ("rotate", "relabel")
#: Kinds that come in as imported items carrying ``variant_of`` (counted like the others).
IMPORTED_KINDS: tuple[str, ...] = ("translate", "paraphrase")
#: The central detail a crop keeps (fraction of width and height) and the long side of a downscale.
CROP_FRACTION = 0.5
DOWNSCALE_LONG_SIDE = 256
#: Source items per transaction: bounded memory (one image decoded at a time) on any dataset size.
CHUNK_ITEMS = 1000
SEP = "~"


class VariantRefused(ValueError):
    """A kind does not apply to an item; the message is the reason (the item is named by the caller)."""


def variant_id(item_id: str, kind: str, k: int | None = None) -> str:
    """``<item_id>~<kind>`` or, for the k-th of several, ``<item_id>~<kind>-<k>``."""
    return f"{item_id}{SEP}{kind}" if k is None else f"{item_id}{SEP}{kind}-{k}"


def _linked(record: dict, vid: str, variant: dict) -> dict:
    """A shallow copy linked to its source: the fields a kind changes are replaced, never edited in place
    (the store's normalisation copies the record again before it is written)."""
    out = dict(record)
    out["item_id"] = vid
    out["variant_of"] = record["item_id"]
    out["variant"] = variant
    out.pop("parallel_of", None)  # the variant's link is to its source; the source keeps its own links
    return out


def _option_choices(record: dict, kind: str) -> list[dict]:
    if record.get("type") not in OPTION_FORMATS:
        raise VariantRefused(f"{kind} applies to option items ({', '.join(OPTION_FORMATS)}), "
                             f"not {record.get('type')}")
    choices = record.get("choices")
    if not isinstance(choices, list) or len(choices) < 2 or not all(isinstance(c, dict) for c in choices):
        raise VariantRefused(f"{kind} needs at least two options")
    if any(c.get("image") for c in choices):
        raise VariantRefused(f"{kind} does not move options that are images")
    return choices


def rotations(record: dict) -> list[dict]:
    """Every circular rotation of the options: variant k shows at position p the option that was at
    position p + k (mod n), under the same labels; the key follows its option's text (CircularEval,
    VLMEvalKit, rotates the same way). n variants for n options, k = 0 (the source order) included."""
    choices = _option_choices(record, "rotate")
    n = len(choices)
    ids = [str(c.get("id")) for c in choices]
    out = []
    for k in range(n):
        new_of_old = {ids[j]: ids[(j - k) % n] for j in range(n)}
        rec = _linked(record, variant_id(record["item_id"], "rotate", k), {"kind": "rotate", "shift": k})
        rec["choices"] = [{**choices[(p + k) % n], "id": ids[p]} for p in range(n)]
        rec["answers"] = [{**a, "id": new_of_old.get(str(a.get("id")), a.get("id"))} if isinstance(a, dict) else a
                          for a in record.get("answers") or []]
        out.append(rec)
    return out


def relabelled(record: dict) -> list[dict]:
    """The option labels A, B, ... replaced by 1, 2, ... in the same order (the key follows)."""
    choices = _option_choices(record, "relabel")
    new = {str(c.get("id")): str(p + 1) for p, c in enumerate(choices)}
    rec = _linked(record, variant_id(record["item_id"], "relabel"), {"kind": "relabel", "labels": "1-n"})
    rec["choices"] = [{**c, "id": new[str(c.get("id"))]} for c in choices]
    rec["answers"] = [{**a, "id": new.get(str(a.get("id")), a.get("id"))} if isinstance(a, dict) else a
                      for a in record.get("answers") or []]
    return [rec]


def _needs_image(record: dict, kind: str) -> None:
    if not record.get("has_image") or not record.get("image"):
        raise VariantRefused(f"{kind} applies to items with an image; this item has none")
    if record.get("regions") and kind != "grayscale":
        raise VariantRefused(f"{kind} would move the regions marked on the image")


def without_image(record: dict) -> list[dict]:
    """The question without its image (image, its attributes and regions left out)."""
    _needs_image(record, "no_image")
    rec = _linked(record, variant_id(record["item_id"], "no_image"), {"kind": "no_image"})
    rec["has_image"], rec["image"] = False, None
    rec.pop("image_attributes", None)
    return [rec]


def perturb(data: bytes, kind: str, *, fraction: float = CROP_FRACTION,
            long_side: int = DOWNSCALE_LONG_SIDE) -> tuple[bytes, str, int, int]:
    """(image bytes, extension, width, height) of ``kind`` applied to ``data`` with Pillow, saved in the
    source's format (PNG for others). VariantRefused when the kind would not change the picture."""
    from PIL import Image, ImageOps

    with Image.open(io.BytesIO(data)) as img:
        fmt = img.format if img.format in ("PNG", "JPEG", "WEBP") else "PNG"
        if kind == "downscale" and max(img.size) <= long_side:
            raise VariantRefused(f"the image is already {max(img.size)} px on its long side "
                                 f"(asked {long_side})")
        if kind == "downscale" and fmt == "JPEG":
            img.draft("RGB", (long_side, long_side))  # decode at a reduced scale: less memory, faster
        img.load()
        if kind == "grayscale":
            out = ImageOps.grayscale(img)
        elif kind == "mirror":
            out = ImageOps.mirror(img)
        elif kind == "crop":
            w, h = img.size
            cw, ch = max(1, round(w * fraction)), max(1, round(h * fraction))
            left, top = (w - cw) // 2, (h - ch) // 2
            out = img.crop((left, top, left + cw, top + ch))
        elif kind == "downscale":
            scale = long_side / max(img.size)
            size = (max(1, round(img.size[0] * scale)), max(1, round(img.size[1] * scale)))
            if max(size) != long_side:  # rounding: the long side is exactly as asked
                size = (long_side, size[1]) if img.size[0] >= img.size[1] else (size[0], long_side)
            out = img.resize(size, Image.Resampling.LANCZOS)
        else:  # pragma: no cover - callers pass PIXEL_KINDS only
            raise VariantRefused(f"{kind} is not an image kind")
        if fmt == "JPEG" and out.mode not in ("RGB", "L"):
            out = out.convert("RGB")
        buffer = io.BytesIO()
        out.save(buffer, format=fmt)
        width, height = out.size
    if hashlib.sha256(buffer.getvalue()).digest() == hashlib.sha256(data).digest():
        raise VariantRefused(f"{kind} leaves this image unchanged")
    return buffer.getvalue(), {"PNG": "png", "JPEG": "jpg", "WEBP": "webp"}[fmt], width, height


def _pixel_variant(record: dict, kind: str, fraction: float, long_side: int) -> dict:
    _needs_image(record, kind)
    variant: dict = {"kind": kind}
    if kind == "crop":
        variant["fraction"] = fraction
    if kind == "downscale":
        variant["long_side"] = long_side
    return _linked(record, variant_id(record["item_id"], kind), variant)


@dataclass
class VariantReport:
    """What `make_variants` did, for the CLI's lines and the tests."""

    dataset: str
    kind: str
    made: list[str] = field(default_factory=list)         # variant ids written now
    unchanged: list[str] = field(default_factory=list)    # already there with the same content
    refused: list[tuple[str, str]] = field(default_factory=list)  # (source item id, reason)
    images_added: int = 0

    def lines(self) -> list[str]:
        """One line per refused item, then the summary."""
        out = [f"item {item}: {self.kind} not made: {reason}" for item, reason in self.refused]
        out.append(f"{self.dataset}: {len(self.made)} {self.kind} variant(s) made, {len(self.unchanged)} already there, "
                   f"{len(self.refused)} item(s) refused")
        return out


def check_kind(kind: str) -> str:
    """The kind, or UserError naming the kinds (imported kinds say how they come in)."""
    if kind in IMPORTED_KINDS:
        raise UserError(f"{kind} variants are not made by the studio: import them as items carrying variant_of "
                        f"(and \"variant\": {{\"kind\": \"{kind}\"}})")
    if kind not in KINDS:
        raise UserError(f"unknown variant kind {kind!r} (kinds: {', '.join(KINDS)})")
    return kind


def _source_rows(store, dataset: str, items_filter: str | None):
    from .runner.selection import apply_filter
    from .store.items import load_items

    frame = load_items(store, dataset, sources_only=True)  # variants of variants are not made
    if frame.empty:
        raise UserError(f"dataset {dataset} has no items")
    if items_filter:
        frame = apply_filter(frame, items_filter)
    if frame.empty:
        raise UserError(f"no items of dataset {dataset} match --items {items_filter}")
    return frame


def _records_of(record: dict, kind: str, fraction: float, long_side: int) -> list[dict]:
    if record.get("dialogue_id"):
        raise VariantRefused("a dialogue turn is asked within its dialogue; its variants are not made")
    if kind == "rotate":
        return rotations(record)
    if kind == "relabel":
        return relabelled(record)
    if kind == "no_image":
        return without_image(record)
    return [_pixel_variant(record, kind, fraction, long_side)]


def make_variants(store, dataset: str, kind: str, items_filter: str | None = None, *,
                  fraction: float = CROP_FRACTION, long_side: int = DOWNSCALE_LONG_SIDE,
                  origin: str = "variants", note: str | None = None,
                  say: Callable[[str], None] | None = None,
                  build: Callable[[dict, str], list[dict]] | None = None) -> VariantReport:
    """Write the ``kind`` variants of the (source) items of ``dataset`` that ``items_filter`` selects.

    An item the kind does not apply to (rotate on an open item, crop without an image, a data issue)
    is named with the reason in ``report.refused``; the rest is made. Items go in chunks of
    `CHUNK_ITEMS` per transaction, images one at a time, so memory stays bounded. ``build``: the
    records of another family of linked items (the contamination probes of `eduart_core.probes`),
    made and written the same way.
    """
    if build is None:
        check_kind(kind)
    if not 0 < fraction < 1:
        raise UserError(f"crop fraction must be between 0 and 1, got {fraction}")
    if long_side < 8:
        raise UserError(f"downscale long side must be at least 8 px, got {long_side}")
    frame = _source_rows(store, dataset, items_filter)
    report = VariantReport(dataset, kind)
    rows = list(zip(frame["item_id"], frame["record"], frame["image_hash"], frame["data_issue"]))
    made: dict = {}  # source image hash -> (variant image hash, extension) or why not: items share plates
    for start in range(0, len(rows), CHUNK_ITEMS):
        _write_chunk(store, dataset, kind, rows[start:start + CHUNK_ITEMS], report, fraction, long_side,
                     origin, note, made, build)
        if say:
            say(f"variants: {min(start + CHUNK_ITEMS, len(rows))}/{len(rows)} items")
    return report


def _perturbed_images(con, store, kind: str, wanted: list[str], fraction: float, long_side: int,
                      made_images: dict[str, tuple[str, str] | str], report: VariantReport) -> None:
    """Make the ``kind`` image of each source image hash in ``wanted`` (once per distinct image) and store
    the new ones with one query and one insert; ``made_images[hash]`` is then (new hash, extension), or
    the reason the image was refused.

    The new images are Pillow's own encoding of a source the store verified on import, so they are
    not decoded a second time here (their size is checked against the store's byte limit).
    Why in bulk: a chunk's images are checked against the store in one query and written in one
    INSERT (a row at a time cost more than the pictures themselves). Files are content-addressed, so
    writing one that another writer also wrote is harmless.
    """
    import pandas as pd

    from .imagecheck import ImageRejected, check_image_size
    from .store.items import _write_image_file

    todo = sorted({h for h in wanted if h not in made_images})
    if not todo:
        return
    paths = dict(con.execute("SELECT image_hash, rel_path FROM images WHERE image_hash = ANY(?)", [todo]).fetchall())
    fresh: dict[str, tuple[bytes, str, int, int]] = {}
    for source_hash in todo:
        if source_hash not in paths:
            made_images[source_hash] = "the item's image is not in the store"
            continue
        try:
            data, ext, width, height = perturb(store.images.read(paths[source_hash]), kind, fraction=fraction,
                                               long_side=long_side)
            check_image_size(len(data))  # never larger in pixels than its verified source; bytes may grow
        except VariantRefused as exc:
            made_images[source_hash] = str(exc)
            continue
        except (OSError, ValueError, ImageRejected) as exc:  # unreadable, undecodable, or an oversize result
            made_images[source_hash] = f"the image cannot be made ({exc})"
            continue
        new_hash = hashlib.sha256(data).hexdigest()
        made_images[source_hash] = (new_hash, ext)
        fresh.setdefault(new_hash, (data, ext, width, height))
    if not fresh:
        return
    stored = {r[0] for r in con.execute("SELECT image_hash FROM images WHERE image_hash = ANY(?)",
                                        [sorted(fresh)]).fetchall()}
    rows = []
    for new_hash, (data, ext, width, height) in fresh.items():
        if new_hash in stored:
            continue
        mime = {"png": "image/png", "jpg": "image/jpeg", "webp": "image/webp"}[ext]
        rel = _write_image_file(store, data, new_hash, ext)
        rows.append({"image_hash": new_hash, "rel_path": rel, "mime": mime, "size_bytes": len(data),
                     "width": width, "height": height, "original_name": f"{kind}.{ext}"})
    if rows:
        con.insert_frame("images", pd.DataFrame(rows))
        report.images_added += len(rows)


def _write_chunk(store, dataset: str, kind: str, rows: list[tuple], report: VariantReport, fraction: float,
                 long_side: int, origin: str, note: str | None, made_images: dict,
                 build: Callable[[dict, str], list[dict]] | None = None) -> None:
    from .items import check_item
    from .scoring.rescore import rescore_con
    from .store.items import ImportReport, prepare_items, write_items

    written = ImportReport(dataset=dataset)
    with store.transaction() as con:
        con.lock(f"items:{dataset}")  # two makers of one dataset's variants take turns (images and items)
        if kind in PIXEL_KINDS:
            _perturbed_images(con, store, kind, [h for _i, _r, h, issue in rows if h and not issue], fraction,
                              long_side, made_images, report)
        records: list[dict] = []
        hashes: dict[str, str] = {}
        for item_id, record, image_hash, data_issue in rows:
            if data_issue:
                report.refused.append((item_id, "the item has a data issue (fix it first)"))
                continue
            try:
                made = (build({**record, "item_id": item_id}, kind) if build is not None
                        else _records_of({**record, "item_id": item_id}, kind, fraction, long_side))
                if kind in PIXEL_KINDS:
                    result = made_images.get(image_hash) if image_hash else "the item's image is not in the store"
                    if not isinstance(result, tuple):
                        raise VariantRefused(str(result))
                    new_hash, ext = result
                    made[0]["image"] = f"{new_hash[:2]}/{new_hash}.{ext}"
                    hashes[made[0]["item_id"]] = new_hash
                elif image_hash and kind != "no_image" and build is None:
                    hashes.update({r["item_id"]: image_hash for r in made})
            except VariantRefused as exc:
                report.refused.append((item_id, str(exc)))
                continue
            records.extend(made)
        if not records:
            return
        prepared = prepare_items(con, store, records, None, written, image_hashes=hashes, check=check_item)
        for p in prepared:
            if p.problems:
                report.refused.append((str(p.record.get("variant_of")), p.problems[0]))
        # write_items, not store_prepared: a variant carries no parallel form or dialogue turn, so the link
        # check (a scan of every item of the dataset per chunk) has nothing to find
        changed = write_items(con, [p for p in prepared if not p.problems], dataset, origin, note, written)
        if changed:  # a variant whose source changed since: its responses are re-scored against the new key
            rescore_con(con, dataset=dataset, item_ids=changed)
    report.made.extend(written.added + written.updated)
    report.unchanged.extend(written.unchanged)


__all__ = ["CROP_FRACTION", "DOWNSCALE_LONG_SIDE", "IMAGE_KINDS", "IMPORTED_KINDS", "KINDS", "OPTION_KINDS",
           "PIXEL_KINDS", "VariantRefused", "VariantReport", "check_kind", "make_variants", "perturb", "relabelled",
           "rotations", "variant_id", "without_image"]

"""The built-in demo store: original items, generated plates, simulated runs, published figures.

Why: a fresh clone must open on a dashboard full of meaningful data without API keys or the
copyrighted EduArt bundle. ``build_demo`` assembles it from what ships in the repository; other
rooms add their own demo content through ``register_demo_builder`` (for example the extraction
review demo), so this module never imports them.

A new store is always built into a temporary file next to the target and moved into place only
when complete, so an interrupted or failed build never leaves half a store behind.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable

from .errors import UserError
from .store import Store
from .store.core import PROJECT_ROOT

DEMO_DIR = PROJECT_ROOT / "data" / "demo"
DEMO_DATASET = "demo"
DEMO_TITLE = "EduArt Studio demo (original items, simulated respondents)"
DEMO_SEED = 2026
DEMO_MODELS = 8

Progress = Callable[[str], None]
EXTRA_BUILDERS: list[Callable[[Store], None]] = []


def register_demo_builder(fn: Callable[[Store], None]) -> Callable[[Store], None]:
    """Add a builder called at the end of ``build_demo`` (once per function); usable as a decorator."""
    if fn not in EXTRA_BUILDERS:
        EXTRA_BUILDERS.append(fn)
    return fn


def _quiet(_: str) -> None:
    return None


def load_demo_records(demo_dir: Path | None = None) -> list[dict]:
    """The shipped demo items: ``items.jsonl`` and/or ``items/*.json`` (object or list)."""
    demo_dir = Path(demo_dir) if demo_dir else DEMO_DIR
    records: list[dict] = []
    jsonl = demo_dir / "items.jsonl"
    if jsonl.exists():
        for number, line in enumerate(jsonl.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise UserError(f"{jsonl}:{number}: not valid JSON ({exc.msg})") from None
    for path in sorted((demo_dir / "items").glob("*.json")) if (demo_dir / "items").is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}: not valid JSON ({exc.msg})") from None
        records.extend(data if isinstance(data, list) else [data])
    if not records:
        raise UserError(f"no demo items found in {demo_dir} (items.jsonl or items/*.json)")
    return records


def _import_demo_items(store: Store, records: list[dict]) -> None:
    """Write the plates to a scratch folder and import the items with their images."""
    from .plates import write_plates
    from .store.items import upsert_items

    with tempfile.TemporaryDirectory(prefix="eduart-plates-") as tmp:
        root = Path(tmp)
        write_plates(root / "imgs")
        images = [str(r.get("image") or "") for r in records if r.get("image")]
        images_root = root if all(i.startswith("imgs/") for i in images) else root / "imgs"
        upsert_items(store, records, DEMO_DATASET, "demo", images_root=images_root)


def _populate(store: Store, say: Progress) -> dict:
    """Every step of the demo on an open (possibly fresh) store; idempotent."""
    from .simulate import make_models, simulate_into_store
    from .store.reference import load_reference
    from .store.runs import ensure_dataset

    started = time.perf_counter()
    say("demo: importing demo items and study plates")
    ensure_dataset(store, DEMO_DATASET, DEMO_TITLE, "demo", simulated=True,
                   description="Original items written for EduArt Studio, answered by simulated models.")
    records = load_demo_records()
    _import_demo_items(store, records)
    say(f"demo: {len(records)} items imported; simulating {DEMO_MODELS} models x 2 conditions")
    sim = simulate_into_store(store, DEMO_DATASET, make_models(DEMO_MODELS, DEMO_SEED), DEMO_SEED, progress=say)
    say("demo: loading the published EduArt 2026 results (reference, aggregates only)")
    ref = load_reference(store)
    for builder in EXTRA_BUILDERS:
        say(f"demo: extra builder {getattr(builder, '__name__', 'builder')}")
        builder(store)
    seconds = round(time.perf_counter() - started, 1)
    say(f"demo: done in {seconds} s")
    return {"items": len(records), "runs": sim["runs_created"] + sim["runs_skipped"],
            "responses": sim["responses"], "reference_models": ref["models"], "seconds": seconds}


def _side_paths(store: Store) -> list[Path]:
    """The store file, its DuckDB WAL and the folders named after it."""
    return [store.path, store.path.with_name(store.path.name + ".wal"),
            store.images_dir, store.runs_dir, store.cache_dir]


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def _build_fresh(target: Store, say: Progress) -> dict:
    """Build into a temporary store next to the target, then move it (and its folders) in place."""
    target.path.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = target.path.with_name(f".{target.path.stem}.building-{os.getpid()}{target.path.suffix}")
    tmp = Store(tmp_path)
    for path in _side_paths(tmp):
        _remove(path)
    try:
        summary = _populate(tmp, say)
    except BaseException:
        for path in _side_paths(tmp):
            _remove(path)
        raise
    for path in _side_paths(target):
        _remove(path)
    for src, dst in zip(_side_paths(tmp), _side_paths(target)):
        if src.exists():
            os.replace(src, dst)
    return summary


def build_demo(store: Store, force: bool = False, progress: Progress | None = None) -> dict:
    """Build the demo into ``store``: items, plates, 8 simulated models x 2 conditions, reference.

    On a missing store (or with ``force``, which discards the existing store and its folders) the
    build goes to a temporary file moved in place at the end. On an existing store without
    ``force`` the demo content is added idempotently (nothing is duplicated).
    """
    say = progress or _quiet
    if force or not store.path.exists():
        if force and store.path.exists():
            say(f"demo: rebuilding {store.path} from scratch (--force)")
        return _build_fresh(store, say)
    say(f"demo: adding demo content to the existing store {store.path}")
    return _populate(store, say)


def ensure_demo(store_path: str | os.PathLike | None = None, progress: Progress | None = None) -> bool:
    """Build the demo store when the file does not exist (first start); True when it built."""
    store = Store(store_path)
    if store.path.exists():
        return False
    build_demo(store, progress=progress)
    return True

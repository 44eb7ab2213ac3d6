"""Shared helpers for the review studio tests: a copy of the extraction demo store per test."""
from __future__ import annotations

import shutil
from pathlib import Path


def build_template(folder: Path) -> Path:
    """The extraction demo (14 pages, two simulated rounds) in ``folder``; returns the store path."""
    from eduart_core.extraction.simulated import build_extraction_demo
    from eduart_core.store import Store

    path = folder / "eduart.duckdb"
    store = Store(path)
    with store.held():  # a fixture's build: one open of the file, not one per write
        build_extraction_demo(store)
    return path


def copy_store(template: Path, target_dir: Path) -> Path:
    """A private copy of a store and the folders next to it."""
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / template.name
    shutil.copy(template, target)
    for suffix in ("_images", "_runs", "_cache"):
        folder = template.parent / f"{template.stem}{suffix}"
        if folder.is_dir():
            shutil.copytree(folder, target_dir / f"{template.stem}{suffix}")
    return target

"""The demo store for tests: built by the demo builder once per test process, then copied.

Why a copy: a full demo build (the benchmark, simulated runs, the published references, the
studies) takes most of a minute, and a dozen test modules and browser servers each need a store
that looks exactly like a fresh `python -m eduart_core demo`. The first call builds a master in a
temporary folder with the real builder (a broken builder still fails every test that uses it);
every call returns a private copy (store file, images, run journals, cache), so a test may write
to its copy without touching anyone else's.

One module, imported under one name (``demo_kit``) by the conftest and by the kits, so the
master is shared in the process whichever way the helpers are imported.
"""
from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from pathlib import Path

_LOCK = threading.Lock()
_MASTER: Path | None = None


def _master() -> Path:
    """The process's demo store, built on first use and removed when the process ends."""
    global _MASTER
    with _LOCK:
        if _MASTER is None:
            from eduart_core.demo import build_demo
            from eduart_core.store import Store

            folder = Path(tempfile.mkdtemp(prefix="eduart-demo-master-"))
            atexit.register(shutil.rmtree, folder, True)
            path = folder / "eduart.duckdb"
            build_demo(Store(path), force=True)
            _MASTER = path
        return _MASTER


def copy_store(source: Path, target: Path) -> Path:
    """A copy of the store ``source`` at ``target``: the file (and its WAL) and the folders next
    to it (images, run journals, cache), renamed after the target. Returns ``target``."""
    from eduart_core.store import Store

    source, target = Path(source), Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    wal = source.with_name(source.name + ".wal")
    if wal.exists():
        shutil.copyfile(wal, target.with_name(target.name + ".wal"))
    old, new = Store(source), Store(target)
    for folder in ("images_dir", "runs_dir", "cache_dir"):
        src = getattr(old, folder)
        if src.is_dir():
            shutil.copytree(src, getattr(new, folder), dirs_exist_ok=True)
    return target


def build_dashboard_store(path: Path) -> Path:
    """A fresh demo store at ``path`` (a copy of the process's master, built by the demo builder)."""
    return copy_store(_master(), Path(path))

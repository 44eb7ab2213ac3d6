"""A response cache kept next to the store: an identical request is never paid for twice.

Why content-addressed files: concurrent threads and processes can write it without a lock (each
entry is written to a temp file and renamed into place), and a corrupt or partial entry is just a
miss. The key covers everything that can change the answer: provider, base URL, model id,
condition, template hash, the rendered prompt, the image hash and the generation parameters
(including the repetition index, so reproducibility repeats are real new requests).
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path


def cache_key(**parts) -> str:
    """sha256 over the canonical JSON of the parts (None, numbers and strings alike)."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """``get(key)``/``put(key, value)`` over ``<dir>/<2 hex>/<key>.json``."""

    def __init__(self, directory: Path, enabled: bool = True):
        self.directory = Path(directory)
        self.enabled = enabled

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        if not self.enabled:
            return None
        try:
            with open(self._path(key), encoding="utf-8") as handle:
                value = json.load(handle)
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict) -> None:
        if not self.enabled:
            return
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(value, handle, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

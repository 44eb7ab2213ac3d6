"""Preparing batch input files: grouping, sizing by bytes and count, writing JSONL fast.

Why sizes are known before anything is written: every line is encoded as two halves around the
image's base64 text (``providers.batch_base.LineParts``), and the base64 length of an image follows
from its file size, so a group of requests is split into files of about equal size that respect
the provider's request and byte limits (and Bedrock's minimum) without building any line twice.
Each image is read and base64-encoded once and written straight from that buffer into every line
that uses it; a full EduArt sweep (20,904 requests, half with an image of about 200 KB) writes
several gigabytes but never holds more than the encoded images and the small line halves.
"""
from __future__ import annotations

import base64
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ...providers.base import ProviderRequest
from ...providers.batch_base import BatchBackend, LineParts
from ...providers.batch_config import BatchLimits
from ..pool import Job

logger = logging.getLogger(__name__)


@dataclass
class Pending:
    """One request of a batch member: its custom id and the plan's job (request, image, meta)."""

    custom_id: str
    job: Job
    turn: int = 0

    @property
    def image_path(self) -> str | None:
        path = self.job.payload.get("image_path")
        return str(path) if path is not None and self.job.meta.get("image_sent") else None


class ImageCache:
    """Base64 text of each image file, read and encoded once (one image serves many requests)."""

    def __init__(self, limit_bytes: int = 768 * 1024 * 1024):
        self.limit_bytes = limit_bytes
        self._data: dict[str, bytes] = {}
        self._sizes: dict[str, int] = {}
        self._held = 0

    def b64_length(self, path: str) -> int:
        size = self._sizes.get(path)
        if size is None:
            size = self._sizes[path] = os.path.getsize(path)
        return 4 * ((size + 2) // 3)

    def get(self, path: str) -> bytes:
        data = self._data.get(path)
        if data is None:
            with open(path, "rb") as handle:
                data = base64.b64encode(handle.read())
            if self._held + len(data) > self.limit_bytes:
                self._data.clear()  # a very large image set: keep memory bounded, re-encode later
                self._held = 0
            self._data[path] = data
            self._held += len(data)
        return data


@dataclass
class Encoded:
    """A group's requests encoded for one backend: line halves and exact line sizes."""

    pendings: list[Pending]
    parts: list[LineParts]
    sizes: list[int]


def encode(backend: BatchBackend, pendings: list[Pending], images: ImageCache,
           request_of: Callable[[Pending], ProviderRequest] | None = None) -> Encoded:
    """Line halves and sizes; ``request_of`` gives the request to send (a later turn of a dialogue
    carries the earlier questions and answers), by default the plan's request."""
    parts, sizes = [], []
    for pending in pendings:
        path = pending.image_path
        request = request_of(pending) if request_of is not None else pending.job.payload["request"]
        line = backend.encode(pending.custom_id, request, path is not None)
        parts.append(line)
        sizes.append(line.size(images.b64_length(path) if path else 0))
    return Encoded(pendings, parts, sizes)


def split(sizes: list[int], limits: BatchLimits) -> tuple[list[tuple[int, int]], str | None]:
    """Contiguous ranges ``[start, end)`` of about equal count that respect the limits.

    Returns ``([], reason)`` when the group cannot be batched (fewer requests than the provider's
    minimum per job, or a single line larger than a whole file may be).
    """
    n = len(sizes)
    if n == 0:
        return [], None
    if n < limits.min_requests:
        return [], f"{n} requests, fewer than the provider's minimum of {limits.min_requests} per job"
    biggest = max(sizes)
    if biggest > limits.max_bytes:
        return [], f"one request is {biggest:,} bytes, more than {limits.max_bytes:,} bytes per file"
    total = sum(sizes)
    k = max(1, -(-n // limits.max_requests), -(-total // limits.max_bytes))
    while k <= n:
        base, extra = divmod(n, k)
        if base < limits.min_requests:
            return [], (f"{n} requests ({total:,} bytes) cannot be split into jobs of at least "
                        f"{limits.min_requests} requests under {limits.max_bytes:,} bytes each")
        ranges, start = [], 0
        for i in range(k):
            end = start + base + (1 if i < extra else 0)
            ranges.append((start, end))
            start = end
        if all(sum(sizes[a:b]) <= limits.max_bytes for a, b in ranges):
            return ranges, None
        k += 1
    return [], f"{n} requests cannot be split under {limits.max_bytes:,} bytes per file"


def write_file(path: Path, encoded: Encoded, indices: Iterable[int], images: ImageCache) -> int:
    """Write the lines ``indices`` of ``encoded`` to ``path`` (atomically); returns the bytes written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".part")
    written = 0
    with open(tmp, "wb", buffering=1024 * 1024) as handle:
        for i in indices:
            line = encoded.parts[i]
            handle.write(line.head)
            written += len(line.head)
            if line.has_image:
                data = images.get(encoded.pendings[i].image_path)
                handle.write(data)
                handle.write(line.tail)
                written += len(data) + len(line.tail)
            handle.write(b"\n")
            written += 1
    os.replace(tmp, path)
    return written

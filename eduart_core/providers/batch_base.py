"""The batch interface: one small backend per provider batch API behind ``BatchBackend``.

Why a second interface next to ``base.Provider``: a batch job is not one request and one reply
but a file of requests, a job id to poll for hours, and a file of results to join on the custom
id. Each backend only translates: it encodes one request as one JSONL line in its provider's
format, submits a prepared file, reports the job's state in the shared vocabulary, and yields
results keyed by custom id. Sizing, the ledger, resubmission and the journal live in
``eduart_core.runner.batch`` and behave identically for every provider.

Lines are encoded in two halves around the image's base64 text (``LineParts``): the runner writes
``head + base64 + tail`` straight to the file, so a 200 KB image is encoded once per image, never
copied into a JSON string per request, and the exact size of every line is known before writing.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..vocab import BATCH_IN_PROGRESS
from .base import ProviderRequest, redact
from .batch_config import BatchLimits

logger = logging.getLogger(__name__)

#: Stands where the image's base64 text goes in a line; split out before writing.
IMAGE_MARK = "@@EDUART_IMAGE_BASE64@@"
#: How many of the most recent jobs ``find`` looks through for a tag.
FIND_LIMIT = 1000


@dataclass
class LineParts:
    """One request as JSONL: ``head + image base64 + tail + newline`` (``tail`` is empty without image)."""

    head: bytes
    tail: bytes = b""
    has_image: bool = False

    def size(self, image_b64_len: int = 0) -> int:
        return len(self.head) + len(self.tail) + (image_b64_len if self.has_image else 0) + 1


def split_line(obj: dict, has_image: bool) -> LineParts:
    """Serialise ``obj`` (with ``IMAGE_MARK`` where the base64 goes) into ``LineParts``."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    if not has_image:
        return LineParts(text.encode("utf-8"))
    head, mark, tail = text.partition(IMAGE_MARK)
    if not mark or IMAGE_MARK in tail:
        raise ValueError("request text contains the image placeholder; cannot encode it for a batch file")
    return LineParts(head.encode("utf-8"), tail.encode("utf-8"), True)


@dataclass
class JobInput:
    """A prepared input file, ready to hand to a provider."""

    job_key: str
    tag: str                  # short unique name: metadata / display name / job name and idempotency token
    model_id: str             # the provider's model id
    path: Path                # the JSONL file written by the runner
    custom_ids: list[str]
    n_bytes: int


@dataclass
class Submitted:
    """What the provider gave back for a submission."""

    job_id: str
    input_location: str | None = None
    output_location: str | None = None


@dataclass
class JobStatus:
    """A job's state in the shared vocabulary, the provider's own word for it, and its counts."""

    state: str
    provider_state: str
    total: int | None = None
    completed: int | None = None
    failed: int | None = None
    output_location: str | None = None
    error_location: str | None = None
    message: str | None = None


@dataclass
class BatchResult:
    """One line of a job's results, joined to its request by ``custom_id``."""

    custom_id: str
    text: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.text is not None


class BatchError(Exception):
    """A batch call failed (upload, create, poll, download). The message never carries a key.

    ``unsupported``: the server has no batch API at all (an OpenAI-compatible server without the
    files/batches endpoints answers 404), so its requests are asked online instead.
    """

    def __init__(self, message: str, *, retryable: bool = True, unsupported: bool = False):
        super().__init__(redact(str(message))[:500])
        self.retryable = retryable and not unsupported
        self.unsupported = unsupported


class BatchBackend(Protocol):
    """What the runner needs from one provider's batch API."""

    provider: str

    def encode(self, custom_id: str, request: ProviderRequest, has_image: bool) -> LineParts:
        """One JSONL line for ``request``; with ``has_image`` the image (``request.image_mime``) goes at
        ``IMAGE_MARK``."""

    def submit(self, job: JobInput) -> Submitted:
        """Upload ``job.path`` and create the job; raises ``BatchError``."""

    def find(self, tag: str) -> Submitted | None:
        """A job created earlier with this tag (a crash between create and the ledger write), or None."""

    def poll(self, job_id: str) -> JobStatus: ...

    def results(self, job_id: str, status: JobStatus, custom_ids: list[str]) -> Iterator[BatchResult]:
        """Every result line of a finished job (answers and per-request errors), in the provider's order."""

    def cancel(self, job_id: str) -> None: ...


class BackendBase:
    """What every backend does the same way, whatever its provider: read a job's state through the
    provider's table of state words, read result files line by line, look a job up by its tag.
    A backend subclasses it and sets ``provider`` and ``STATES``; everything provider-specific
    (encoding, the SDK calls, result records) stays in the backend."""

    provider: str
    #: The provider's own word for a job's state -> the shared vocabulary (``vocab.BATCH_*``).
    STATES: dict[str, str] = {}

    def __init__(self, model_id: str, limits: BatchLimits) -> None:
        self.model_id = model_id
        self.limits = limits

    def status(self, raw: str, **details) -> JobStatus:
        """The job's state in the shared vocabulary; a word we do not know reads as in progress, so the
        runner polls again rather than closing a job on a state it cannot interpret."""
        return JobStatus(state=self.STATES.get(raw, BATCH_IN_PROGRESS), provider_state=raw, **details)

    def records(self, lines: Iterable[bytes | str], source: str) -> Iterator[dict]:
        """The JSON objects of a result file; blank lines are skipped, a line that is not a JSON object
        is logged (file named) and skipped, so one bad line never loses the job's other results."""
        for line in lines:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                logger.warning("%s result file %s: a line is not JSON, skipped", self.provider, source)
                continue
            if isinstance(record, dict):
                yield record
            else:
                logger.warning("%s result file %s: a line is not a JSON object, skipped", self.provider, source)

    def parsed(self, lines: Iterable[bytes | str], source: str,
               parse: Callable[[dict], BatchResult | None]) -> Iterator[BatchResult]:
        """``parse`` applied to every record of a result file; records it cannot place (None) are dropped."""
        for record in self.records(lines, source):
            result = parse(record)
            if result is not None:
                yield result

    @staticmethod
    def first_listed(listing: Iterable, ours: Callable[[Any], bool], limit: int = FIND_LIMIT) -> Any | None:
        """The first job of a provider's listing (newest first) for which ``ours`` holds, looking at no more
        than ``limit`` jobs (a job created under our tag before a crash is recent), or None."""
        for seen, job in enumerate(listing, start=1):
            if ours(job):
                return job
            if seen >= limit:
                break
        return None


@dataclass
class BackendEntry:
    """How to build the backend of one provider (registry entry)."""

    provider: str
    factory: Callable[..., BatchBackend]
    notes: str = ""
    extra: dict = field(default_factory=dict)


def text_of(value) -> str:
    """A provider's error object as one readable, redacted line."""
    if value is None:
        return "error"
    if isinstance(value, dict):
        for key in ("message", "errorMessage", "error"):
            if value.get(key):
                inner = value[key]
                return redact(inner if isinstance(inner, str) else json.dumps(inner))[:500]
        return redact(json.dumps(value, ensure_ascii=False))[:500]
    return redact(str(value))[:500]

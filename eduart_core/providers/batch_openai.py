"""OpenAI Batch API (and OpenAI-compatible servers that speak it) through the openai SDK.

Protocol (checked against openai 3.57's ``resources/batches.py`` and ``resources/files.py``):
upload the JSONL with ``files.create(purpose="batch")``; ``batches.create(input_file_id,
endpoint="/v1/chat/completions", completion_window="24h", metadata=...)``; ``batches.retrieve``
reports ``status`` (validating, in_progress, finalizing, completed, failed, expired, cancelling,
cancelled) and ``request_counts`` (total, completed, failed); results come back as an output file
and an error file whose lines carry ``custom_id``, ``response`` (``status_code``, ``body``) and
``error``. Each input line is ``{"custom_id", "method": "POST", "url", "body"}`` where ``body`` is
exactly the online adapter's chat request, so a batch asks the same question as an online run.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace

import openai

from ..vocab import (
    BATCH_CANCELLED,
    BATCH_CANCELLING,
    BATCH_COMPLETED,
    BATCH_EXPIRED,
    BATCH_FAILED,
    BATCH_FINALIZING,
    BATCH_IN_PROGRESS,
    BATCH_VALIDATING,
)
from .base import ProviderRequest, classify_status
from .batch_base import (
    IMAGE_MARK,
    BackendBase,
    BatchError,
    BatchResult,
    JobInput,
    JobStatus,
    LineParts,
    Submitted,
    split_line,
    text_of,
)
from .batch_config import BatchLimits
from .openai_chat import OpenAIChatProvider

logger = logging.getLogger(__name__)

ENDPOINT = "/v1/chat/completions"
TAG_KEY = "eduart_tag"
_STATES = {"validating": BATCH_VALIDATING, "in_progress": BATCH_IN_PROGRESS, "finalizing": BATCH_FINALIZING,
           "completed": BATCH_COMPLETED, "failed": BATCH_FAILED, "expired": BATCH_EXPIRED,
           "cancelling": BATCH_CANCELLING, "cancelled": BATCH_CANCELLED}


class OpenAIBatch(BackendBase):
    """Batch jobs for one model of the OpenAI API or of an OpenAI-compatible server."""

    STATES = _STATES

    def __init__(self, provider: str, model_id: str, limits: BatchLimits, *, api_key: str,
                 base_url: str | None = None, timeout_s: float = 120.0):
        super().__init__(model_id, limits)
        self.provider = provider
        # The online adapter builds the request body, so batch and online ask the same question.
        self.chat = OpenAIChatProvider(model_id, api_key=api_key, base_url=base_url, timeout_s=timeout_s,
                                       compatible=provider != "openai")
        # Reads (poll, list, download) may retry a little. Uploads and creates never retry inside the
        # SDK: a create that timed out may still have created the job, and only the runner (which looks
        # the job up by its tag first) may decide to try again. Both share the online adapter's
        # connection pool (one TLS context per model).
        self.client = self.chat.client.with_options(max_retries=2, timeout=timeout_s)
        self.creator = self.chat.client.with_options(max_retries=0, timeout=timeout_s)

    # ------------------------------------------------------------ encoding
    def encode(self, custom_id: str, request: ProviderRequest, has_image: bool) -> LineParts:
        body = self.chat.build_kwargs(replace(request, image=None))
        if has_image:  # right after the question's text, before any labelled option images (as online)
            uri = f"data:{request.image_mime or 'image/jpeg'};base64,{IMAGE_MARK}"
            body["messages"][-1]["content"].insert(1, {"type": "image_url", "image_url": {"url": uri}})
        return split_line({"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}, has_image)

    # ------------------------------------------------------------ control
    def _call(self, what: str, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except openai.APIStatusError as exc:
            missing = exc.status_code in (404, 405, 501) and what in ("upload", "create batch")
            raise BatchError(f"{what}: HTTP {exc.status_code} from {self.provider}: {exc.message}",
                             retryable=classify_status(exc.status_code), unsupported=missing) from None
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise BatchError(f"{what}: cannot reach {self.provider}: {type(exc).__name__}") from None
        except (openai.APIError, ValueError) as exc:
            raise BatchError(f"{what}: malformed reply from {self.provider}: {type(exc).__name__}: {exc}") from None

    def submit(self, job: JobInput) -> Submitted:
        with open(job.path, "rb") as handle:
            uploaded = self._call("upload", self.creator.files.create, file=(job.path.name, handle), purpose="batch")
        batch = self._call("create batch", self.creator.batches.create, input_file_id=uploaded.id, endpoint=ENDPOINT,
                           completion_window=self.limits.completion_window, metadata={TAG_KEY: job.tag})
        logger.info("%s batch %s created for %s (%d requests, file %s)", self.provider, batch.id, job.job_key,
                    len(job.custom_ids), uploaded.id)
        return Submitted(batch.id, input_location=uploaded.id)

    def find(self, tag: str) -> Submitted | None:
        listing = self._call("list batches", self.client.batches.list, limit=100)
        batch = self.first_listed(listing, lambda b: (b.metadata or {}).get(TAG_KEY) == tag)
        return Submitted(batch.id, input_location=batch.input_file_id) if batch is not None else None

    def poll(self, job_id: str) -> JobStatus:
        batch = self._call("poll", self.client.batches.retrieve, job_id)
        counts = batch.request_counts
        errors = [e.message for e in ((batch.errors.data if batch.errors else None) or []) if e.message]
        return self.status(batch.status, total=counts.total if counts else None,
                           completed=counts.completed if counts else None, failed=counts.failed if counts else None,
                           output_location=batch.output_file_id, error_location=batch.error_file_id,
                           message="; ".join(errors)[:500] or None)

    def _lines(self, file_id: str) -> Iterator[dict]:
        try:
            with self.client.files.with_streaming_response.content(file_id) as response:
                yield from self.records(response.iter_lines(), file_id)
        except openai.APIStatusError as exc:
            raise BatchError(f"download {file_id}: HTTP {exc.status_code}: {exc.message}",
                             retryable=classify_status(exc.status_code)) from None
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise BatchError(f"download {file_id}: {type(exc).__name__}") from None

    def results(self, job_id: str, status: JobStatus, custom_ids: list[str]) -> Iterator[BatchResult]:
        for file_id in (status.output_location, status.error_location):
            if not file_id:
                continue
            for record in self._lines(file_id):
                result = parse_result(record)
                if result is not None:
                    yield result

    def cancel(self, job_id: str) -> None:
        self._call("cancel", self.client.batches.cancel, job_id)


def parse_result(record: dict) -> BatchResult | None:
    """One output/error-file line -> ``BatchResult`` (None without a custom id)."""
    custom_id = record.get("custom_id")
    if not custom_id:
        return None
    response = record.get("response") or {}
    body = response.get("body") if isinstance(response, dict) else None
    status = response.get("status_code") if isinstance(response, dict) else None
    if record.get("error") or status != 200 or not isinstance(body, dict):
        detail = record.get("error") or (body.get("error") if isinstance(body, dict) else None)
        prefix = f"HTTP {status}: " if status and status != 200 else ""
        return BatchResult(str(custom_id), error=prefix + text_of(detail))
    try:
        choice = body["choices"][0]
        text = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        return BatchResult(str(custom_id), error="malformed result: no choices[0].message")
    usage = body.get("usage") or {}
    return BatchResult(str(custom_id), text=text, input_tokens=usage.get("prompt_tokens"),
                       output_tokens=usage.get("completion_tokens"), finish_reason=choice.get("finish_reason"))

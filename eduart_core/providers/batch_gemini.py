"""Gemini Batch Mode through google-genai.

Protocol (checked against google-genai 3.6's ``batches.py``, ``files.py`` and ``_transformers.py``):
``batches.create(model, src, config={"display_name"})`` posts ``models/<m>:batchGenerateContent``;
``src`` is either a list of inlined requests (the whole job inline, kept under 20 MB) or the name
``files/...`` of a JSONL file uploaded through the File API (``files.upload``, resumable; files
are kept 48 h), each line ``{"key", "request": GenerateContentRequest}``. Only the job has a state
(``BATCH_STATE_*`` on the wire, ``JOB_STATE_*`` in the SDK: pending, running, succeeded, failed,
cancelled, expired); there are no per-request counts. Results come back inline
(``dest.inlined_responses``, each with our ``metadata.key``) or as a result file
(``dest.file_name``, lines ``{"key", "response"|"error"}``), joined on the key, never on order.
"""
from __future__ import annotations

import base64
import json
import logging
import tempfile
from collections.abc import Iterator
from typing import Any

from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from ..vocab import (
    BATCH_CANCELLED,
    BATCH_CANCELLING,
    BATCH_COMPLETED,
    BATCH_EXPIRED,
    BATCH_FAILED,
    BATCH_IN_PROGRESS,
    BATCH_PARTIAL,
    BATCH_VALIDATING,
)
from .base import USER_ROLE, ProviderRequest, classify_status
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

logger = logging.getLogger(__name__)

_STATES = {"JOB_STATE_QUEUED": BATCH_VALIDATING, "JOB_STATE_PENDING": BATCH_VALIDATING,
           "JOB_STATE_RUNNING": BATCH_IN_PROGRESS, "JOB_STATE_UPDATING": BATCH_IN_PROGRESS,
           "JOB_STATE_PAUSED": BATCH_IN_PROGRESS, "JOB_STATE_SUCCEEDED": BATCH_COMPLETED,
           "JOB_STATE_PARTIALLY_SUCCEEDED": BATCH_PARTIAL, "JOB_STATE_FAILED": BATCH_FAILED,
           "JOB_STATE_CANCELLING": BATCH_CANCELLING, "JOB_STATE_CANCELLED": BATCH_CANCELLED,
           "JOB_STATE_EXPIRED": BATCH_EXPIRED}


def _state_name(state) -> str:
    return str(getattr(state, "value", state) or "JOB_STATE_UNSPECIFIED")


class GeminiBatch(BackendBase):
    """Batch jobs for one Gemini model."""

    provider = "gemini"
    STATES = _STATES

    def __init__(self, model_id: str, limits: BatchLimits, *, api_key: str, base_url: str | None = None,
                 timeout_s: float = 120.0):
        super().__init__(model_id, limits)
        # No retry_options: the SDK never retries by itself (a create that timed out may have created
        # the job; the runner looks it up by its display name before trying again).
        where: dict[str, Any] = {"base_url": base_url} if base_url else {}  # absent: the SDK's own address
        options = types.HttpOptions(api_version="v1beta", timeout=int(timeout_s * 1000), **where)
        self.client = genai.Client(api_key=api_key, http_options=options)

    # ------------------------------------------------------------ encoding
    def encode(self, custom_id: str, request: ProviderRequest, has_image: bool) -> LineParts:
        """A ``GenerateContentRequest`` in the REST form (camelCase): the online adapter's request,
        earlier turns of a dialogue first (Gemini calls the assistant "model")."""
        contents: list[dict] = []
        for message in request.prior:
            prior_parts: list[dict] = [{"text": message.text}]
            if message.image is not None:
                prior_parts.append({"inlineData": {"mimeType": message.image_mime or "image/jpeg",
                                                   "data": base64.b64encode(message.image).decode("ascii")}})
            contents.append({"role": "user" if message.role == USER_ROLE else "model", "parts": prior_parts})
        parts: list[dict] = [{"text": request.user_text}]
        if has_image:
            parts.append({"inlineData": {"mimeType": request.image_mime or "image/jpeg", "data": IMAGE_MARK}})
        for extra in request.images:  # options that are images: label, then image, in order
            parts.append({"text": extra.label})
            parts.append({"inlineData": {"mimeType": extra.mime, "data": base64.b64encode(extra.data).decode("ascii")}})
        contents.append({"role": "user", "parts": parts})
        config: dict = {}
        if request.temperature is not None:
            config["temperature"] = request.temperature
        if request.max_output_tokens:
            config["maxOutputTokens"] = request.max_output_tokens
        if request.seed is not None:
            config["seed"] = request.seed
        if request.json_schema is not None:
            config["responseMimeType"] = "application/json"
            config["responseJsonSchema"] = request.json_schema
        body: dict = {"contents": contents}
        if request.system:
            body["systemInstruction"] = {"parts": [{"text": request.system}]}
        if config:
            body["generationConfig"] = config
        return split_line({"key": custom_id, "request": body}, has_image)

    # ------------------------------------------------------------ control
    def _call(self, what: str, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except genai_errors.APIError as exc:
            status = exc.code if isinstance(exc.code, int) else None
            raise BatchError(f"{what}: HTTP {status} from gemini: {exc.message or exc.status}",
                             retryable=classify_status(status)) from None
        except (KeyError, ValueError) as exc:
            raise BatchError(f"{what}: malformed reply from gemini: {type(exc).__name__}: {exc}") from None
        except OSError as exc:
            raise BatchError(f"{what}: cannot reach gemini: {type(exc).__name__}") from None
        except Exception as exc:  # transport errors of the SDK's HTTP client (httpx2) have no common base here
            name = type(exc).__name__
            if any(w in name for w in ("Timeout", "Connect", "Network", "Protocol", "Read", "Remote")):
                raise BatchError(f"{what}: cannot reach gemini: {name}") from None
            raise

    def _inline_requests(self, job: JobInput) -> list[types.InlinedRequest]:
        """The prepared lines as SDK inlined requests (the whole job is small enough to send inline)."""
        requests = []
        with open(job.path, "rb") as handle:
            for line in handle:
                record = json.loads(line)
                body = record["request"]
                config = dict(body.get("generationConfig") or {})
                if body.get("systemInstruction"):
                    config["systemInstruction"] = body["systemInstruction"]
                payload = {"contents": body["contents"], "metadata": {"key": record["key"]}}
                if config:
                    payload["config"] = config
                # JSON validation decodes the base64 image into bytes (the SDK re-encodes it on send).
                requests.append(types.InlinedRequest.model_validate_json(json.dumps(payload)))
        return requests

    def submit(self, job: JobInput) -> Submitted:
        config = {"display_name": job.tag}
        if job.n_bytes <= self.limits.inline_max_bytes:
            src = self._inline_requests(job)
            location = "inline"
        else:
            uploaded = self._call("upload", self.client.files.upload, file=str(job.path),
                                  config=types.UploadFileConfig(display_name=job.tag, mime_type="jsonl"))
            src = uploaded.name
            location = uploaded.name
        batch = self._call("create batch", self.client.batches.create, model=self.model_id, src=src, config=config)
        logger.info("gemini batch %s created for %s (%d requests, %s)", batch.name, job.job_key,
                    len(job.custom_ids), location)
        return Submitted(batch.name, input_location=location)

    def find(self, tag: str) -> Submitted | None:
        listing = self._call("list batches", self.client.batches.list, config={"page_size": 100})
        batch = self.first_listed(listing, lambda b: b.display_name == tag)
        return Submitted(batch.name) if batch is not None else None

    def poll(self, job_id: str) -> JobStatus:
        batch = self._call("poll", self.client.batches.get, name=job_id)
        raw = _state_name(batch.state)
        dest = batch.dest
        output = "inline" if dest is not None and dest.inlined_responses else (dest.file_name if dest else None)
        error = getattr(batch, "error", None)
        message = text_of(error.message) if error is not None and error.message else None
        return self.status(raw, output_location=output, message=message)

    def results(self, job_id: str, status: JobStatus, custom_ids: list[str]) -> Iterator[BatchResult]:
        batch = self._call("read results", self.client.batches.get, name=job_id)
        dest = batch.dest
        if dest is None:
            return
        if dest.inlined_responses:
            for entry in dest.inlined_responses:
                key = (entry.metadata or {}).get("key")
                if not key:
                    logger.warning("gemini batch %s: an inline response without our key, skipped", job_id)
                    continue
                if entry.error is not None:
                    yield BatchResult(key, error=text_of(entry.error.message or str(entry.error)))
                    continue
                yield _from_sdk_response(key, entry.response)
        elif dest.file_name:
            with tempfile.TemporaryFile() as buffer:
                self._call("download results", self.client.files.download, file=dest.file_name, destination=buffer)
                buffer.seek(0)
                yield from self.parsed(buffer, dest.file_name, parse_result)

    def cancel(self, job_id: str) -> None:
        self._call("cancel", self.client.batches.cancel, name=job_id)


def _from_sdk_response(key: str, response) -> BatchResult:
    if response is None or not response.candidates:
        feedback = getattr(response, "prompt_feedback", None)
        reason = getattr(feedback, "block_reason", None) if feedback else None
        return BatchResult(key, error=f"refused: {getattr(reason, 'value', reason)}" if reason else "empty response")
    usage = response.usage_metadata
    reason = response.candidates[0].finish_reason
    return BatchResult(key, text=response.text or "", input_tokens=getattr(usage, "prompt_token_count", None),
                       output_tokens=getattr(usage, "candidates_token_count", None),
                       finish_reason=str(getattr(reason, "value", reason)) if reason else None)


def parse_result(record: dict) -> BatchResult | None:
    """One result-file line (REST form) -> ``BatchResult``; None without our key."""
    key = record.get("key")
    if not key:
        return None
    if record.get("error"):
        return BatchResult(str(key), error=text_of(record["error"]))
    response = record.get("response") or {}
    candidates = response.get("candidates") or []
    if not candidates:
        reason = (response.get("promptFeedback") or {}).get("blockReason")
        return BatchResult(str(key), error=f"refused: {reason}" if reason else "empty response")
    first = candidates[0] or {}
    parts = (first.get("content") or {}).get("parts") or []
    text = "".join(p.get("text", "") for p in parts if isinstance(p, dict) and not p.get("thought"))
    usage = response.get("usageMetadata") or {}
    return BatchResult(str(key), text=text, input_tokens=usage.get("promptTokenCount"),
                       output_tokens=usage.get("candidatesTokenCount"), finish_reason=first.get("finishReason"))

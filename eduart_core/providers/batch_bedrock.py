"""Amazon Bedrock batch inference (model invocation jobs) through boto3, with the input in S3.

Protocol (checked against botocore 1.44's ``bedrock/2023-04-20/service-2.json``):
``CreateModelInvocationJob(jobName, roleArn, clientRequestToken, modelId, inputDataConfig.
s3InputDataConfig{s3Uri, s3InputFormat=JSONL}, outputDataConfig.s3OutputDataConfig{s3Uri},
timeoutDurationInHours (24..168), modelInvocationType (InvokeModel | Converse))`` returns
``jobArn``; ``GetModelInvocationJob`` reports ``status`` (Submitted, Validating, Scheduled,
InProgress, Completed, PartiallyCompleted, Failed, Stopping, Stopped, Expired) and record counts.
Input lines are ``{"recordId", "modelInput"}``; we use the Converse invocation type, so
``modelInput`` is the online adapter's Converse request (without ``modelId``) and ``modelOutput``
a Converse response. Bedrock writes one ``<input name>.out`` per input file under
``<output uri>/<job id>/``, records not in input order; a failed record carries ``error`` instead
of ``modelOutput``. Batch has no structured-output parameter: the answer parser does that work.
The record id is documented as an 11-character alphanumeric string, so a record id is the first
11 characters of our custom id, mapped back per job.
"""
from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from functools import lru_cache
from urllib.parse import urlparse

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from ..errors import UserError
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

RECORD_ID_LENGTH = 11
_FORMATS = {"image/jpeg": "jpeg", "image/jpg": "jpeg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"}
_STATES = {"Submitted": BATCH_VALIDATING, "Validating": BATCH_VALIDATING, "Scheduled": BATCH_VALIDATING,
           "InProgress": BATCH_IN_PROGRESS, "Completed": BATCH_COMPLETED, "PartiallyCompleted": BATCH_PARTIAL,
           "Failed": BATCH_FAILED, "Stopping": BATCH_CANCELLING, "Stopped": BATCH_CANCELLED,
           "Expired": BATCH_EXPIRED}


@lru_cache(maxsize=8)
def _clients(credentials: tuple, bedrock_endpoint: str | None, s3_endpoint: str | None, timeout_s: float):
    """One control-plane and one S3 client per account and endpoint, shared by every model's backend
    (boto3 clients are thread-safe, and building one costs more than a whole batch file's encoding).
    botocore may retry a create: it carries our tag as ``clientRequestToken``, so a retry is idempotent."""
    creds = dict(credentials)
    profile = creds.pop("profile_name", None)
    session = boto3.session.Session(profile_name=profile) if profile else boto3.session.Session()
    config = Config(retries={"total_max_attempts": 3, "mode": "standard"}, read_timeout=timeout_s, connect_timeout=10)
    return (session.client("bedrock", endpoint_url=bedrock_endpoint, config=config, **creds),
            session.client("s3", endpoint_url=s3_endpoint, config=config, **creds))


def _content(text: str, image_b64: str | None, mime: str | None) -> list[dict]:
    """A Converse content list: the image first, then the text (as the online adapter sends it)."""
    content: list[dict] = []
    if image_b64 is not None:
        fmt = _FORMATS.get((mime or "image/jpeg").lower(), "jpeg")
        content.append({"image": {"format": fmt, "source": {"bytes": image_b64}}})
    content.append({"text": text})
    return content


def record_id(custom_id: str) -> str:
    """The Bedrock record id of a custom id (custom ids are upper-case alphanumeric)."""
    return custom_id[:RECORD_ID_LENGTH]


def parse_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/some/prefix`` -> (bucket, 'some/prefix')."""
    parsed = urlparse(uri or "")
    if parsed.scheme != "s3" or not parsed.netloc:
        raise UserError(f"Bedrock batch needs an S3 location like s3://bucket/prefix, got {uri!r}")
    return parsed.netloc, parsed.path.strip("/")


class BedrockBatch(BackendBase):
    """Model invocation jobs for one Bedrock model; input and output in one S3 prefix."""

    provider = "bedrock"
    STATES = _STATES

    def __init__(self, model_id: str, limits: BatchLimits, *, credentials: dict, role_arn: str, s3_uri: str,
                 bedrock_endpoint: str | None = None, s3_endpoint: str | None = None, timeout_s: float = 120.0):
        super().__init__(model_id, limits)
        self.role_arn = role_arn
        self.bucket, self.prefix = parse_s3_uri(s3_uri)
        self.bedrock, self.s3 = _clients(tuple(sorted(credentials.items())), bedrock_endpoint, s3_endpoint,
                                         timeout_s)

    # ------------------------------------------------------------ encoding
    def encode(self, custom_id: str, request: ProviderRequest, has_image: bool) -> LineParts:
        """The Converse request of the online adapter (earlier turns of a dialogue first), images as
        base64 text, no ``outputConfig``."""
        messages = [{"role": "user" if m.role == USER_ROLE else "assistant",
                     "content": _content(m.text, base64.b64encode(m.image).decode("ascii") if m.image else None,
                                         m.image_mime)} for m in request.prior]
        content = _content(request.user_text, IMAGE_MARK if has_image else None, request.image_mime)
        for extra in request.images:  # options that are images: label, then image, in order
            content.append({"text": extra.label})
            content.append({"image": {"format": _FORMATS.get(extra.mime.lower(), "jpeg"),
                                      "source": {"bytes": base64.b64encode(extra.data).decode("ascii")}}})
        messages.append({"role": "user", "content": content})
        model_input: dict = {"messages": messages}
        if request.system:
            model_input["system"] = [{"text": request.system}]
        inference: dict = {}
        if request.temperature is not None:
            inference["temperature"] = request.temperature
        if request.max_output_tokens:
            inference["maxTokens"] = request.max_output_tokens
        if inference:
            model_input["inferenceConfig"] = inference
        return split_line({"recordId": record_id(custom_id), "modelInput": model_input}, has_image)

    # ------------------------------------------------------------ control
    def _call(self, what: str, fn, **kwargs):
        try:
            return fn(**kwargs)
        except ClientError as exc:
            meta = exc.response.get("ResponseMetadata", {})
            status = meta.get("HTTPStatusCode")
            error = exc.response.get("Error", {})
            raise BatchError(f"{what}: HTTP {status} {error.get('Code', '')} from bedrock: {error.get('Message', '')}",
                             retryable=classify_status(status)) from None
        except BotoCoreError as exc:
            raise BatchError(f"{what}: {type(exc).__name__} talking to bedrock: {exc}") from None

    def _key(self, tag: str, name: str) -> str:
        return "/".join(p for p in (self.prefix, tag, name) if p)

    def submit(self, job: JobInput) -> Submitted:
        key = self._key(job.tag, f"{job.tag}.jsonl")
        self._call("upload to S3", self.s3.upload_file, Filename=str(job.path), Bucket=self.bucket, Key=key)
        input_uri = f"s3://{self.bucket}/{key}"
        output_uri = f"s3://{self.bucket}/{self._key(job.tag, 'output')}/"
        response = self._call(
            "create job", self.bedrock.create_model_invocation_job, jobName=job.tag, roleArn=self.role_arn,
            clientRequestToken=job.tag, modelId=self.model_id, modelInvocationType="Converse",
            timeoutDurationInHours=int(self.limits.timeout_hours),
            inputDataConfig={"s3InputDataConfig": {"s3Uri": input_uri, "s3InputFormat": "JSONL"}},
            outputDataConfig={"s3OutputDataConfig": {"s3Uri": output_uri}})
        logger.info("bedrock job %s created for %s (%d records)", response["jobArn"], job.job_key, len(job.custom_ids))
        return Submitted(response["jobArn"], input_location=input_uri, output_location=output_uri)

    def find(self, tag: str) -> Submitted | None:
        token = None
        for _ in range(20):
            kwargs = {"nameContains": tag, "maxResults": 100, **({"nextToken": token} if token else {})}
            page = self._call("list jobs", self.bedrock.list_model_invocation_jobs, **kwargs)
            for summary in page.get("invocationJobSummaries") or []:
                if summary.get("jobName") == tag:
                    return Submitted(summary["jobArn"])
            token = page.get("nextToken")
            if not token:
                break
        return None

    def poll(self, job_id: str) -> JobStatus:
        job = self._call("poll", self.bedrock.get_model_invocation_job, jobIdentifier=job_id)
        raw = job.get("status") or "Submitted"
        output = ((job.get("outputDataConfig") or {}).get("s3OutputDataConfig") or {}).get("s3Uri")
        return self.status(raw, total=job.get("totalRecordCount"), completed=job.get("successRecordCount"),
                           failed=job.get("errorRecordCount"), output_location=output,
                           message=text_of(job["message"]) if job.get("message") else None)

    def results(self, job_id: str, status: JobStatus, custom_ids: list[str]) -> Iterator[BatchResult]:
        by_record = {record_id(c): c for c in custom_ids}
        output = status.output_location or ""
        bucket, prefix = parse_s3_uri(output) if output else (self.bucket, self._key("", "output"))
        folder = f"{prefix.rstrip('/')}/{job_id.rsplit('/', 1)[-1]}/"
        token = None
        keys: list[str] = []
        while True:
            kwargs = {"Bucket": bucket, "Prefix": folder, **({"ContinuationToken": token} if token else {})}
            page = self._call("list results", self.s3.list_objects_v2, **kwargs)
            keys += [o["Key"] for o in page.get("Contents") or [] if o["Key"].endswith(".jsonl.out")]
            token = page.get("NextContinuationToken")
            if not token:
                break
        for key in sorted(keys):
            body = self._call("download results", self.s3.get_object, Bucket=bucket, Key=key)["Body"]
            yield from self.parsed(body.iter_lines(), key, lambda record: parse_result(record, by_record))

    def cancel(self, job_id: str) -> None:
        self._call("stop job", self.bedrock.stop_model_invocation_job, jobIdentifier=job_id)


def parse_result(record: dict, by_record: dict[str, str]) -> BatchResult | None:
    """One ``.jsonl.out`` line -> ``BatchResult`` (custom id looked up from the record id)."""
    rid = record.get("recordId")
    custom_id = by_record.get(str(rid)) if rid is not None else None
    if custom_id is None:
        logger.warning("bedrock result with unknown record id %r, skipped", rid)
        return None
    if record.get("error") is not None or "modelOutput" not in record:
        error = record.get("error") or {}
        code = error.get("errorCode") if isinstance(error, dict) else None
        return BatchResult(custom_id, error=(f"error {code}: " if code else "") + text_of(error))
    output = record.get("modelOutput") or {}
    blocks = ((output.get("output") or {}).get("message") or {}).get("content") or []
    text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict))
    usage = output.get("usage") or {}
    return BatchResult(custom_id, text=text, input_tokens=usage.get("inputTokens"),
                       output_tokens=usage.get("outputTokens"), finish_reason=output.get("stopReason"))

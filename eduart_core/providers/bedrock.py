"""Amazon Bedrock ``converse`` through boto3 (Claude, Mistral, Qwen, ...).

Structured output goes as ``outputConfig.textFormat`` (JSON schema); an image as raw bytes in an
``image`` block. boto3 makes exactly one attempt (``total_max_attempts=1``): the runner retries.
"""
from __future__ import annotations

import json

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from .adapters import ADAPTERS
from .base import USER_ROLE, ProviderError, ProviderReply, ProviderRequest, classify_status, parse_retry_after

_FORMATS = {"image/jpeg": "jpeg", "image/jpg": "jpeg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"}


class BedrockProvider:
    def __init__(self, model_id: str, *, credentials: dict, endpoint_url: str | None = None, timeout_s: float = 120.0):
        self.model_id = model_id
        creds = dict(credentials)
        profile = creds.pop("profile_name", None)
        session = boto3.session.Session(profile_name=profile) if profile else boto3.session.Session()
        config = Config(retries={"total_max_attempts": 1}, read_timeout=timeout_s, connect_timeout=min(timeout_s, 10),
                        max_pool_connections=128)
        self.client = session.client("bedrock-runtime", endpoint_url=endpoint_url, config=config, **creds)

    @staticmethod
    def _content(text: str, image: bytes | None, mime: str | None, extras=()) -> list[dict]:
        content: list[dict] = []
        if image is not None:
            fmt = _FORMATS.get((mime or "image/jpeg").lower(), "jpeg")
            content.append({"image": {"format": fmt, "source": {"bytes": image}}})
        content.append({"text": text})
        for extra in extras:  # labelled option images, in order
            content.append({"text": extra.label})
            fmt = _FORMATS.get(extra.mime.lower(), "jpeg")
            content.append({"image": {"format": fmt, "source": {"bytes": extra.data}}})
        return content

    def build_kwargs(self, request: ProviderRequest) -> dict:
        # earlier turns of a dialogue first (Converse wants user and assistant to alternate)
        messages = [{"role": "user" if m.role == USER_ROLE else "assistant",
                     "content": self._content(m.text, m.image, m.image_mime)} for m in request.prior]
        messages.append({"role": "user", "content": self._content(request.user_text, request.image,
                                                                  request.image_mime, request.images)})
        kwargs: dict = {"modelId": self.model_id, "messages": messages, "system": [{"text": request.system}]}
        inference: dict = {}
        if request.temperature is not None:
            inference["temperature"] = request.temperature
        if request.max_output_tokens:
            inference["maxTokens"] = request.max_output_tokens
        if inference:
            kwargs["inferenceConfig"] = inference
        if request.json_schema is not None:
            kwargs["outputConfig"] = {"textFormat": {"type": "json_schema", "structure": {
                "jsonSchema": {"schema": json.dumps(request.json_schema), "name": "answer"}}}}
        return kwargs

    def complete(self, request: ProviderRequest) -> ProviderReply:
        try:
            response = self.client.converse(**self.build_kwargs(request))
        except ClientError as exc:
            meta = exc.response.get("ResponseMetadata", {})
            status = meta.get("HTTPStatusCode")
            code = exc.response.get("Error", {}).get("Code", "")
            retryable = (classify_status(status) if status else
                         code in ("ThrottlingException", "ServiceUnavailableException", "ModelNotReadyException",
                                  "InternalServerException"))
            retry_after = parse_retry_after((meta.get("HTTPHeaders") or {}).get("retry-after"))
            message = exc.response.get("Error", {}).get("Message", "")
            raise ProviderError(f"HTTP {status} {code} from {self.model_id}: {message}", status=status,
                                retryable=retryable, retry_after=retry_after) from None
        except (ReadTimeoutError, ConnectTimeoutError):
            raise ProviderError(f"timeout waiting for {self.model_id}", retryable=True) from None
        except EndpointConnectionError as exc:
            raise ProviderError(f"connection error to {self.model_id}: {exc}", retryable=True) from None
        except (BotoCoreError, ValueError) as exc:  # unparseable bodies and other transport trouble
            raise ProviderError(f"{type(exc).__name__} calling {self.model_id}: {exc}", retryable=True) from None
        if "output" not in response:
            raise ProviderError(f"malformed or empty response from {self.model_id}", retryable=True)
        blocks = (response.get("output", {}).get("message", {}) or {}).get("content") or []
        text = "".join(block.get("text", "") for block in blocks if isinstance(block, dict))
        usage = response.get("usage") or {}
        return ProviderReply(text=text, input_tokens=usage.get("inputTokens"),
                             output_tokens=usage.get("outputTokens"), finish_reason=response.get("stopReason"))


def build(spec, credentials: dict, source, timeout_s: float) -> BedrockProvider:
    """The provider table's builder (``credentials``: boto3 client arguments)."""
    return BedrockProvider(spec.api_model_id, credentials=credentials,
                           endpoint_url=ADAPTERS[spec.provider].base_url(spec, source),
                           timeout_s=timeout_s)

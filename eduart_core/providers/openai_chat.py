"""OpenAI chat completions, for OpenAI itself and every OpenAI-compatible server (Ollama, vLLM).

Structured output goes as ``response_format`` with a JSON schema; an image as a base64 ``data:``
URI part. The SDK's own retries are off (``max_retries=0``): the runner owns retries. The call
goes through the client's documented low-level ``post`` with the plain request body and the raw
JSON reply: the SDK's parameter transformation and typed response objects cost about 1 ms of CPU
per request, which under the GIL is what limits throughput at 64 requests in flight. Auth, base
URL, timeouts and the SDK's error classes are unchanged.
"""
from __future__ import annotations

import base64
import json

import openai

try:  # the HTTP client the openai SDK is built on (httpx2 in current releases, httpx before)
    import httpx2 as _http
except ImportError:  # pragma: no cover
    import httpx as _http  # type: ignore[no-redef]

from .adapters import ADAPTERS
from .base import USER_ROLE, ProviderError, ProviderReply, ProviderRequest, classify_status, parse_retry_after


class OpenAIChatProvider:
    def __init__(self, model_id: str, *, api_key: str, base_url: str | None = None, timeout_s: float = 120.0,
                 compatible: bool | None = None):
        self.model_id = model_id
        self.compatible = bool(base_url) if compatible is None else compatible
        self.client = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s)

    @staticmethod
    def _user_content(text: str, image: bytes | None, mime: str | None, extras=()) -> list[dict]:
        content: list[dict] = [{"type": "text", "text": text}]
        if image is not None:
            uri = f"data:{mime or 'image/jpeg'};base64,{base64.b64encode(image).decode()}"
            content.append({"type": "image_url", "image_url": {"url": uri}})
        for extra in extras:  # labelled option images, in order
            uri = f"data:{extra.mime};base64,{base64.b64encode(extra.data).decode()}"
            content.append({"type": "text", "text": extra.label})
            content.append({"type": "image_url", "image_url": {"url": uri}})
        return content

    def build_kwargs(self, request: ProviderRequest) -> dict:
        messages: list[dict] = [{"role": "system", "content": request.system}]
        for message in request.prior:  # earlier turns of a dialogue
            if message.role == USER_ROLE:
                messages.append({"role": "user",
                                 "content": self._user_content(message.text, message.image, message.image_mime)})
            else:
                messages.append({"role": "assistant", "content": message.text})
        messages.append({"role": "user", "content": self._user_content(request.user_text, request.image,
                                                                       request.image_mime, request.images)})
        kwargs: dict = {"model": self.model_id, "messages": messages}
        if request.json_schema is not None:
            kwargs["response_format"] = {"type": "json_schema",
                                         "json_schema": {"name": "answer", "schema": request.json_schema}}
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if request.max_output_tokens:
            kwargs["max_tokens" if self.compatible else "max_completion_tokens"] = request.max_output_tokens
        return kwargs

    def complete(self, request: ProviderRequest) -> ProviderReply:
        try:
            raw = self.client.post("/chat/completions", body=self.build_kwargs(request), cast_to=_http.Response)
            data = json.loads(raw.content)
        except openai.APIStatusError as exc:
            status = exc.status_code
            raise ProviderError(f"HTTP {status} from {self.model_id}: {exc.message}", status=status,
                                retryable=classify_status(status),
                                retry_after=parse_retry_after(exc.response.headers.get("retry-after"))) from None
        except openai.APITimeoutError:
            raise ProviderError(f"timeout waiting for {self.model_id}", retryable=True) from None
        except openai.APIConnectionError as exc:
            raise ProviderError(f"connection error to {self.model_id}: {exc}", retryable=True) from None
        except (openai.APIError, ValueError) as exc:  # a body that is not JSON
            raise ProviderError(f"malformed response from {self.model_id}: {type(exc).__name__}: {exc}",
                                retryable=True) from None
        try:
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            raise ProviderError(f"malformed or empty response from {self.model_id}", retryable=True) from None
        usage = data.get("usage") or {}
        return ProviderReply(text=text, input_tokens=usage.get("prompt_tokens"),
                             output_tokens=usage.get("completion_tokens"), finish_reason=choice.get("finish_reason"))


def build(spec, credentials: str | None, source, timeout_s: float) -> OpenAIChatProvider:
    """The provider table's builder: OpenAI itself (key required) or a compatible server (key optional)."""
    return OpenAIChatProvider(spec.api_model_id, api_key=credentials or "not-needed",
                              base_url=ADAPTERS[spec.provider].base_url(spec, source), timeout_s=timeout_s)

"""Google Gemini ``generateContent`` through google-genai.

Structured output goes as ``response_json_schema`` with ``application/json``; an image as inline
bytes. The client is kept on the instance (a throw-away client is closed under its requests).
"""
from __future__ import annotations

from typing import Any

from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from .adapters import ADAPTERS
from .base import USER_ROLE, ProviderError, ProviderReply, ProviderRequest, classify_status, parse_retry_after


class GeminiProvider:
    def __init__(self, model_id: str, *, api_key: str, base_url: str | None = None, timeout_s: float = 120.0):
        self.model_id = model_id
        where: dict[str, Any] = {"base_url": base_url} if base_url else {}  # absent: the SDK's own address
        options = types.HttpOptions(api_version="v1beta", timeout=int(timeout_s * 1000), **where)
        self.client = genai.Client(api_key=api_key, http_options=options)

    @staticmethod
    def _content(role: str, text: str, image: bytes | None, mime: str | None, extras=()) -> types.Content:
        parts = [types.Part.from_text(text=text)]
        if image is not None:
            parts.append(types.Part.from_bytes(data=image, mime_type=mime or "image/jpeg"))
        for extra in extras:  # labelled option images, in order
            parts.append(types.Part.from_text(text=extra.label))
            parts.append(types.Part.from_bytes(data=extra.data, mime_type=extra.mime))
        return types.Content(role=role, parts=parts)

    def build_kwargs(self, request: ProviderRequest) -> dict:
        # earlier turns of a dialogue first; Gemini names the assistant role "model"
        contents = [self._content("user" if m.role == USER_ROLE else "model", m.text, m.image, m.image_mime)
                    for m in request.prior]
        contents.append(self._content("user", request.user_text, request.image, request.image_mime, request.images))
        config: dict = {"system_instruction": request.system}
        if request.temperature is not None:
            config["temperature"] = request.temperature
        if request.max_output_tokens:
            config["max_output_tokens"] = request.max_output_tokens
        if request.seed is not None:
            config["seed"] = request.seed
        if request.json_schema is not None:
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = request.json_schema
        return {"model": self.model_id, "contents": contents, "config": types.GenerateContentConfig(**config)}

    def complete(self, request: ProviderRequest) -> ProviderReply:
        try:
            response = self.client.models.generate_content(**self.build_kwargs(request))
        except genai_errors.APIError as exc:
            status = exc.code if isinstance(exc.code, int) else None
            headers = getattr(getattr(exc, "response", None), "headers", None) or {}
            retry_after = parse_retry_after(headers.get("retry-after")) if hasattr(headers, "get") else None
            raise ProviderError(f"HTTP {status} from {self.model_id}: {exc.message or exc.status}", status=status,
                                retryable=classify_status(status), retry_after=retry_after) from None
        except Exception as exc:  # transport errors of the SDK's HTTP client, bad bodies
            name = type(exc).__name__
            retryable = any(w in name for w in ("Timeout", "Connect", "Network", "Protocol", "Read", "JSON", "Decode"))
            raise ProviderError(f"{name} calling {self.model_id}: {exc}", retryable=retryable or isinstance(exc, ValueError)) from None
        if not response.candidates:
            feedback = getattr(response, "prompt_feedback", None)
            reason = getattr(feedback, "block_reason", None) if feedback else None
            if reason:
                raise ProviderError(f"{self.model_id} refused the prompt: {getattr(reason, 'value', reason)}")
            raise ProviderError(f"malformed or empty response from {self.model_id}", retryable=True)
        text = response.text or ""
        usage = response.usage_metadata
        reason = response.candidates[0].finish_reason
        finish = str(getattr(reason, "value", reason)) if reason else None
        return ProviderReply(text=text,
                             input_tokens=getattr(usage, "prompt_token_count", None),
                             output_tokens=getattr(usage, "candidates_token_count", None),
                             finish_reason=finish)


def build(spec, credentials: str, source, timeout_s: float) -> GeminiProvider:
    """The provider table's builder (``credentials``: the API key)."""
    return GeminiProvider(spec.api_model_id, api_key=credentials,
                          base_url=ADAPTERS[spec.provider].base_url(spec, source), timeout_s=timeout_s)

"""Provider sentence embeddings (optional): OpenAI `embeddings` and Gemini `batchEmbedContents`.

Why through the provider layer: the same keys, base-URL overrides, secret redaction and error
classes as the chat adapters, so a paper's numbers (MUSE used OpenAI `text-embedding-3-large`)
can be reproduced without a second configuration. The offline default lives in
`eduart_core.embeddings.local`; these are only used when a store is switched to them. Vectors
are L2-normalised here, whatever the API returns.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UserError
from .base import ProviderError, classify_status, register_secret
from .secrets import SecretSource, missing_message

#: Texts per request (both APIs accept more; smaller batches keep one failure cheap).
BATCH = 128


def _normalised(rows: list[list[float]]) -> np.ndarray:
    vectors = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


class OpenAIEmbedder:
    """`openai:<model>` (e.g. `openai:text-embedding-3-large`) via the openai SDK."""

    def __init__(self, model: str, *, secrets: SecretSource | None = None, base_url: str | None = None,
                 timeout_s: float = 60.0):
        import openai

        source = secrets if secrets is not None else SecretSource()
        key = source.get("OPENAI_API_KEY")
        if not key:
            raise UserError(missing_message("openai"))
        register_secret(key)
        self.api_model = model
        self.model_id = f"openai:{model}"
        self._openai = openai
        self.client = openai.OpenAI(api_key=key, base_url=base_url or source.get("OPENAI_BASE_URL"),
                                    max_retries=2, timeout=timeout_s)

    def embed(self, texts: list[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            chunk = list(texts[start:start + BATCH])
            try:
                reply = self.client.embeddings.create(model=self.api_model, input=chunk, encoding_format="float")
            except self._openai.APIStatusError as exc:
                raise ProviderError(f"HTTP {exc.status_code} from {self.model_id}: {exc.message}",
                                    status=exc.status_code, retryable=classify_status(exc.status_code)) from None
            except self._openai.APIError as exc:
                raise ProviderError(f"{type(exc).__name__} calling {self.model_id}: {exc}", retryable=True) from None
            ordered = sorted(reply.data, key=lambda d: d.index)
            if len(ordered) != len(chunk):
                raise ProviderError(f"{self.model_id} returned {len(ordered)} vectors for {len(chunk)} texts")
            rows.extend(d.embedding for d in ordered)
        return _normalised(rows) if rows else np.zeros((0, 0), dtype=np.float32)


class GeminiEmbedder:
    """`gemini:<model>` (e.g. `gemini:gemini-embedding-001`) via google-genai."""

    def __init__(self, model: str, *, secrets: SecretSource | None = None, base_url: str | None = None,
                 timeout_s: float = 60.0):
        from google import genai
        from google.genai import types

        source = secrets if secrets is not None else SecretSource()
        key = source.get("GEMINI_API_KEY") or source.get("GOOGLE_API_KEY")
        if not key:
            raise UserError(missing_message("gemini"))
        register_secret(key)
        self.api_model = model
        self.model_id = f"gemini:{model}"
        base = base_url or source.get("GOOGLE_GEMINI_BASE_URL")
        where: dict[str, Any] = {"base_url": base} if base else {}  # absent: the SDK's own address
        options = types.HttpOptions(api_version="v1beta", timeout=int(timeout_s * 1000), **where)
        self.client = genai.Client(api_key=key, http_options=options)

    def embed(self, texts: list[str]) -> np.ndarray:
        from google.genai import errors as genai_errors

        rows: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            chunk: list[Any] = list(texts[start:start + BATCH])  # the SDK's contents type is a wide union
            try:
                reply = self.client.models.embed_content(model=self.api_model, contents=chunk)
            except genai_errors.APIError as exc:
                status = exc.code if isinstance(exc.code, int) else None
                raise ProviderError(f"HTTP {status} from {self.model_id}: {exc.message or exc.status}",
                                    status=status, retryable=classify_status(status)) from None
            except (OSError, ValueError) as exc:  # transport trouble and unreadable bodies, one line
                raise ProviderError(f"{type(exc).__name__} calling {self.model_id}: {exc}", retryable=True) from None
            vectors = [e.values for e in reply.embeddings or []]
            if len(vectors) != len(chunk) or any(v is None for v in vectors):
                raise ProviderError(f"{self.model_id} returned {len(vectors)} vectors for {len(chunk)} texts")
            rows.extend(v for v in vectors if v is not None)
        return _normalised(rows) if rows else np.zeros((0, 0), dtype=np.float32)

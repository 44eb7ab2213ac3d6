"""The embedding cache and the store's embedding model setting (SQL only).

Why in the store: open-text scores are recomputed whenever gold or rules change; caching the
vectors by (model, text hash) makes a rescore cost nothing for texts already seen, across
sessions. Which model scores open text is a store setting (meta key `embedding_model`), so every
open-text score in one store comes from one model; the scoring stage
(`scoring.rescore.set_embedding_model`) changes it and rescores.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..vocab import DEFAULT_EMBEDDING_MODEL
from .connection import Connection
from .core import Store

META_KEY = "embedding_model"


def embedding_model_con(con: Connection) -> str:
    """The embedding model this store scores open text with (the offline default when unset)."""
    rows = con.execute("SELECT value FROM meta WHERE key = ?", [META_KEY]).fetchall()  # all: no pending result
    return rows[0][0] if rows and rows[0][0] else DEFAULT_EMBEDDING_MODEL


def embedding_model(store: Store) -> str:
    with store.connect(read_only=True) as con:
        return embedding_model_con(con)


def set_embedding_model_con(con: Connection, model: str) -> None:
    """Score open text with ``model`` from now on (the caller rescores in the same transaction)."""
    con.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [META_KEY, model])


class StoreVectorCache:
    """(model, text hash) -> vector, read and written through the caller's open connection."""

    def __init__(self, con: Connection):
        self.con = con

    def get(self, model: str, hashes: list[str]) -> dict[str, np.ndarray]:
        if not hashes:
            return {}
        with self.con.keys(list(dict.fromkeys(hashes)), "TEXT") as wanted:
            rows = self.con.execute(
                f"SELECT e.text_hash, e.vector FROM embeddings e JOIN {wanted} w ON w.key = e.text_hash "
                "WHERE e.model = ?", [model]).fetchall()
        return {h: np.frombuffer(bytes(v), dtype="<f4") for h, v in rows}

    def put(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        if not vectors:
            return
        self.con.lock(f"embeddings:{model}")  # two scorers caching the same text take turns
        stored = self.get(model, list(vectors))
        fresh = {h: v for h, v in vectors.items() if h not in stored}
        if not fresh:
            return
        frame = pd.DataFrame({
            "model": model, "text_hash": list(fresh),
            "dim": [int(np.asarray(v).shape[-1]) for v in fresh.values()],
            "vector": [np.asarray(v, dtype="<f4").tobytes() for v in fresh.values()],
        })
        self.con.insert_frame("embeddings", frame)


def embedding_cache_stats(store: Store) -> pd.DataFrame:
    """Cached vectors per embedding model (model, n, dim)."""
    with store.connect(read_only=True) as con:
        return con.frame("SELECT model, count(*) AS n, max(dim) AS dim FROM embeddings GROUP BY 1 ORDER BY 1")

"""The embedding cache and the store's embedding model setting (SQL only).

Why in the store: open-text scores are recomputed whenever gold or rules change; caching the
vectors by (model, text hash) makes a rescore cost nothing for texts already seen, across
sessions. Which model scores open text is a store setting (meta key `embedding_model`), so every
open-text score in one store comes from one model; `scores.set_embedding_model` changes it and
rescores.
"""
from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd

from ..vocab import DEFAULT_EMBEDDING_MODEL
from .core import Store

META_KEY = "embedding_model"


def embedding_model_con(con: duckdb.DuckDBPyConnection) -> str:
    """The embedding model this store scores open text with (the offline default when unset)."""
    rows = con.execute("SELECT value FROM meta WHERE key = ?", [META_KEY]).fetchall()  # all: no pending result
    return rows[0][0] if rows and rows[0][0] else DEFAULT_EMBEDDING_MODEL


def embedding_model(store: Store) -> str:
    with store.connect(read_only=True) as con:
        return embedding_model_con(con)


def set_embedding_model_con(con: duckdb.DuckDBPyConnection, model: str) -> None:
    # fetch the (row count) result: DuckDB refuses `register` on a connection with one pending
    con.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [META_KEY, model]).fetchall()


class StoreVectorCache:
    """(model, text hash) -> vector, read and written through the caller's open connection."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    def get(self, model: str, hashes: list[str]) -> dict[str, np.ndarray]:
        if not hashes:
            return {}
        wanted = pd.DataFrame({"text_hash": list(dict.fromkeys(hashes))})
        self.con.register("_wanted_vectors", wanted)
        try:
            rows = self.con.execute(
                "SELECT e.text_hash, e.vector FROM embeddings e JOIN _wanted_vectors w USING (text_hash) "
                "WHERE e.model = ?", [model]).fetchall()
        finally:
            self.con.unregister("_wanted_vectors")
        return {h: np.frombuffer(bytes(v), dtype="<f4") for h, v in rows}

    def put(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        if not vectors:
            return
        frame = pd.DataFrame({
            "model": model, "text_hash": list(vectors),
            "dim": [int(np.asarray(v).shape[-1]) for v in vectors.values()],
            "vector": [np.asarray(v, dtype="<f4").tobytes() for v in vectors.values()],
        })
        self.con.register("_new_vectors", frame)
        try:
            self.con.execute("INSERT INTO embeddings (model, text_hash, dim, vector) "
                             "SELECT model, text_hash, dim, vector FROM _new_vectors ON CONFLICT DO NOTHING").fetchall()
        finally:
            self.con.unregister("_new_vectors")


def embedding_cache_stats(store: Store) -> pd.DataFrame:
    """Cached vectors per embedding model (model, n, dim)."""
    with store.connect(read_only=True) as con:
        return con.execute("SELECT model, count(*) AS n, max(dim) AS dim FROM embeddings GROUP BY 1 ORDER BY 1").df()

"""Embeddings fetched before a write transaction opens.

Why: an open-text score needs a sentence vector per text; the offline model takes a moment and a
provider model is a network request. Embedding inside the write transaction would hold the store's
write lock (the whole DuckDB file) for that long. These functions find the texts a write will score,
read the store's vector cache and write the new vectors in short transactions of their own, and run
the embedder with no transaction open; the write that follows finds every vector cached.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..embeddings import Similarity, make_embedder
from ..formats import find_format
from ..store.core import Store
from ..store.embeddings import StoreVectorCache, embedding_model_con
from ..store.runs import current_items_con, current_types_con, run_dataset_con
from ..vocab import PAPER_PROFILE, STRICT_PROFILE
from . import prefetch_embeddings
from .context import has_llm_answer, paper_input, parse_for

#: What the open-text scorer reads: (item record, [(profile, answer), ...]).
Pairs = list[tuple[Mapping[str, Any], list[tuple[str, Any]]]]


class _ShortCache:
    """The store's vector cache through one short transaction per call (none is open while embedding)."""

    def __init__(self, store: Store):
        self.store = store

    def get(self, model: str, hashes: list[str]) -> dict[str, np.ndarray]:
        with self.store.transaction(bump=False) as con:
            return StoreVectorCache(con).get(model, hashes)

    def put(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self.store.transaction(bump=False) as con:
            StoreVectorCache(con).put(model, vectors)


def uses_embeddings(record: Mapping[str, Any]) -> bool:
    """Whether this item's format scores by embedding similarity (open text)."""
    fmt = find_format(record.get("type"))
    return fmt is not None and fmt.uses_embeddings


def embed_pairs(store: Store, pairs: Pairs, model: str | None = None) -> int:
    """Cache a vector for every text these pairs need under ``model`` (default: the store's embedding
    model) with no write transaction open while the embedder runs; returns the texts embedded."""
    wanted = [(record, answers) for record, answers in pairs if uses_embeddings(record)]
    if not wanted:
        return 0
    if model is None:
        with store.transaction(bump=False) as con:
            model = embedding_model_con(con)
    similarity = Similarity(make_embedder(model), _ShortCache(store))
    prefetch_embeddings(wanted, similarity)
    return similarity.embedded


def response_pairs(rows: Iterable[dict], items: Mapping[str, tuple[int, dict]]) -> Pairs:
    """The pairs of new response rows (as ``add_responses`` takes them) on open-text items."""
    pairs: Pairs = []
    for row in rows:
        known = items.get(str(row.get("item_id")))
        if known is None or not uses_embeddings(known[1]):
            continue
        record, raw = known[1], row.get("raw_text")
        raw = raw if isinstance(raw, str) else ""
        pairs.append((record, [(STRICT_PROFILE, parse_for(record, raw)),
                               (PAPER_PROFILE, paper_input(raw, row.get("llm_answer"), has_llm_answer(row)))]))
    return pairs


def embed_for_responses(store: Store, batches: Iterable[tuple[str, list[dict]]]) -> int:
    """Before storing new responses of some runs ((run_id, rows) each): cache the vectors their open-text
    scores need, reading in one short transaction (a dataset without open-text items costs one small
    query); returns the texts embedded."""
    batches = [(run_id, rows) for run_id, rows in batches if rows]
    if not batches:
        return 0
    pairs: Pairs = []
    with store.transaction(bump=False) as con:  # reads only; a transaction like the write that follows
        items_of: dict[str, dict[str, tuple[int, dict]]] = {}
        for run_id, rows in batches:
            dataset = run_dataset_con(con, run_id)
            if dataset is None:
                continue
            if dataset not in items_of:
                open_text = [t for t in current_types_con(con, dataset) if uses_embeddings({"type": t})]
                items_of[dataset] = current_items_con(con, dataset, open_text) if open_text else {}
            if items_of[dataset]:
                pairs += response_pairs(rows, items_of[dataset])
    return embed_pairs(store, pairs) if pairs else 0

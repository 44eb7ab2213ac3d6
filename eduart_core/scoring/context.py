"""One response parsed and scored under both profiles, and what the scorers need from the store.

Why a stage of its own above the store: scoring reads the item's format, the parser and (for open
text) an embedding model; the store only keeps the rows this stage computes. ``ScoringContext``
lends the scorers the store's embedding model setting and vector cache through the caller's
connection.
"""
from __future__ import annotations

import logging
from typing import Any

from ..answers import StoredAnswer, parse_answer
from ..embeddings import Similarity, make_embedder
from ..errors import UserError
from ..formats import find_format
from ..providers.base import ProviderError
from ..store.connection import Connection
from ..store.embeddings import StoreVectorCache, embedding_model_con
from . import prefetch_embeddings, score_item

logger = logging.getLogger(__name__)


def safe_score(record: dict, answer: Any, profile: str, similarity: Any = None):
    """score_item, or None when the (defective) item cannot be scored under the rules.

    Why: imported items with data issues are kept and scored wherever the rules allow; an item
    whose gold is unusable gets no score row rather than a fake zero or a failed import.
    """
    try:
        return score_item(record, answer, profile, similarity=similarity)
    except (UserError, ProviderError):  # the embedding model failed: that is not a defective item
        raise
    except Exception:  # noqa: BLE001 - a defective gold record must not abort an import
        logger.debug("item %s cannot be scored under %s", record.get("item_id"), profile, exc_info=True)
        return None


class ScoringContext:
    """What the scorers need from the store inside one transaction.

    Open-text items are scored by sentence-embedding similarity under the store's embedding
    model, with vectors cached in the store (`embeddings` table) through the same connection.
    The embedder is only created when an open-text item is scored.
    """

    def __init__(self, con: Connection):
        self.con = con
        self._similarity = None

    @property
    def similarity(self):
        if self._similarity is None:
            self._similarity = Similarity(make_embedder(embedding_model_con(self.con)), StoreVectorCache(self.con))
        return self._similarity

    def similarity_for(self, record: dict):
        """The similarity service when this record's format needs one, else None."""
        fmt = find_format(record.get("type"))
        return self.similarity if fmt is not None and fmt.uses_embeddings else None

    def prefetch(self, pairs: list[tuple[dict, list[tuple[str, Any]]]]) -> None:
        """Embed every text these (record, [(profile, answer)]) will need, in one batch (open text only)."""
        wanted = [(r, a) for r, a in pairs
                  if (f := find_format(r.get("type"))) is not None and f.uses_embeddings]
        if wanted:
            prefetch_embeddings(wanted, self.similarity)


def paper_input(raw_text: str | None, llm_answer: Any, has_llm_answer: bool) -> Any:
    """What the paper profile scores: the imported llm_answer exactly as stored, else the raw text.

    An imported `llm_answer` (even a string, even null) is wrapped in `StoredAnswer` so the
    published step 2 scores it without parsing it again; our own runs have none, so published
    step 1 parses their raw text first.
    """
    if has_llm_answer:
        return StoredAnswer(llm_answer)
    return raw_text if isinstance(raw_text, str) else ""


def parse_for(record: dict, raw: str):
    """The lenient parse stored with a response, as the item's format reads it."""
    fmt = find_format(record.get("type"))
    return fmt.parse(raw) if fmt is not None else parse_answer(raw)


def has_llm_answer(row: dict) -> bool:
    """Whether a response row carries an imported `llm_answer` (a JSON null counts).

    Rows say so with ``has_llm_answer``; without it, a non-null ``llm_answer`` counts.
    """
    if "has_llm_answer" in row:
        return bool(row["has_llm_answer"])
    return row.get("llm_answer") is not None

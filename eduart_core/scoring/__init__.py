"""Score one model answer against one item's gold, under the `strict` or the `paper` profile.

Why two profiles: `paper` reproduces the published numbers bit for bit, flaws included (several
ids on a radio item still earn 1, an unparseable true/false answer earns the share of false
statements, open completion is exact match); `strict` is the corrected default. Keeping both
lets the product show how much the choice of rules moves each model.

The rules live with each format in `eduart_core.formats` (one module per format, one registry);
`score_item` is the thin public entry point every room calls. Only `type`, `answers` and, where
the format uses them, `choices` of the item are needed, so defective imported records are still
scored wherever the rules allow.

The package is the scoring stage, above the store: `context` (the rules shared by ingestion and
rescoring), `responses` (responses scored on their way into the store), `rescore` (stored responses
scored again), `item_writes` (item writes that rescore), `prefetch` (embeddings fetched before a
write transaction opens). The store keeps the score rows this stage computes and never scores.
This module imports nothing of the store, so the formats' callers can score without one.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eduart_core.formats import ScoringOptions, find_format
from eduart_core.items import Item
from eduart_core.vocab import DEFAULT_PROFILE, PROFILES

__all__ = ["ItemScore", "ScoringOptions", "prefetch_embeddings", "score_item"]


@dataclass(frozen=True)
class ItemScore:
    """`score` in [0, 1]; `correct` is the binary outcome (score >= 0.5) used by the statistics.

    `details` has one dict per scored element: `element` (id or error), `expected`, `given`,
    `right` (+ format extras: `similarity`, `predicted`/`abs_error`, `similarities`). `parse_error`
    is set when the answer could not be read. `scorer` names the rule set (`<format>/<version>`,
    plus the embedding model for open text).
    """

    score: float
    correct: bool
    details: list[dict] = field(default_factory=list)
    parse_error: str | None = None
    profile: str = DEFAULT_PROFILE
    scorer: str | None = None


_DEFAULT_OPTIONS = ScoringOptions()


def _record(item: Item | Mapping[str, Any]) -> Mapping[str, Any]:
    return vars(item) if isinstance(item, Item) else item


def score_item(item: Item | Mapping[str, Any], answer: Any, profile: str = DEFAULT_PROFILE, *,
               fuzzy_threshold: float = 90, similarity: Any = None) -> ItemScore:
    """Score `answer` (raw response string, dict with `Answers`, the Answers list, a
    `ParsedAnswer`, or a `StoredAnswer`) against `item` (an `Item` or a record dict) under `profile`.

    Under `paper`, a string is a raw response (published step 1 parses it, then step 2
    scores); an imported `llm_answer` is passed as `StoredAnswer(value)` and scored exactly as
    stored, never re-parsed (a bare list is taken as an `llm_answer` too). `similarity` is the
    embedding similarity service for open-text items (default: the local offline model).
    Raises ValueError only for an unknown profile or item type (a programming or data error,
    never a model's).
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown scoring profile {profile!r}; use one of {', '.join(PROFILES)}")
    record = _record(item)
    fmt = find_format(record.get("type"))
    if fmt is None:
        raise ValueError(f"cannot score an item of unknown type {record.get('type')!r}")
    if similarity is None and fmt.uses_embeddings:  # the offline default model, shared by the process
        from ..embeddings import default_similarity

        similarity = default_similarity()
    options = _DEFAULT_OPTIONS if fuzzy_threshold == 90 and similarity is None else \
        ScoringOptions(fuzzy_threshold=fuzzy_threshold, similarity=similarity)
    result = fmt.score(record, answer, profile, options)
    return ItemScore(score=result.score, correct=result.score >= 0.5, details=result.details,
                     parse_error=result.parse_error, profile=profile, scorer=result.scorer)


def prefetch_embeddings(pairs: Iterable[tuple[Mapping[str, Any], list[tuple[str, Any]]]], similarity: Any) -> int:
    """Embed, in one batch, every text the open-text scorer will need for these
    (record, [(profile, answer), ...]).

    Why: scoring thousands of free-text answers one by one would call the embedding model once
    per answer; one batch (and the store's cache) makes it one call for the texts never seen.
    Returns the number of texts asked for.
    """
    texts: list[str] = []
    for record, answers in pairs:
        fmt = find_format(record.get("type"))
        if fmt is not None:
            texts.extend(fmt.embedding_texts(record, answers))
    if texts and similarity is not None:
        similarity.prefetch(texts)
    return len(texts)

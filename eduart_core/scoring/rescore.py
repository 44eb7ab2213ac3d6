"""Rescoring: stored responses scored again against their items' current (or given) versions.

Why scores can always be recomputed: they are derived from stored responses and the gold item.
Whoever changes an item, a key or the embedding model calls ``rescore_con`` in its own transaction
(item edits, imports, errata, variants, review promotions); ``rescore`` rebuilds any subset on
request. The store reads the responses (``scores.rescore_rows_con``) and replaces the score rows
this stage computes (``scores.replace_scores_con``).
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pandas as pd

from ..embeddings import make_embedder
from ..errors import UserError
from ..formats import find_format
from ..store.connection import Connection
from ..store.core import Store
from ..store.embeddings import set_embedding_model_con
from ..store.scores import SCORE_ROW_COLUMNS, replace_scores_con, require_dataset, rescore_rows_con, version_rows_con
from ..vocab import FORMATS, PAPER_PROFILE, PROFILES, STRICT_PROFILE
from .context import ScoringContext, paper_input, parse_for, safe_score
from .prefetch import embed_pairs


def _check_profiles(profiles: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(profiles)
    bad = [p for p in chosen if p not in PROFILES]
    if bad or not chosen:
        raise UserError(f"unknown scoring profile {', '.join(bad) or '(none)'}; use {' or '.join(PROFILES)}")
    return chosen


def rescore_con(con: Connection, profiles: Iterable[str] = PROFILES, dataset: str | None = None,
                item_ids: Iterable[str] | None = None, types: Iterable[str] | None = None) -> int:
    """Recompute scores inside the caller's transaction; returns the number of score rows written."""
    profiles = _check_profiles(profiles)
    rows = rescore_rows_con(con, dataset, item_ids, types)
    if not rows:
        return 0
    # every response looked at loses its old rows, also when its item can no longer be scored
    return replace_scores_con(con, [int(r[0]) for r in rows], profiles, score_stored(con, rows, profiles))


def score_against_versions_con(con: Connection, dataset: str, versions: dict[str, int],
                               profiles: Iterable[str] = PROFILES) -> pd.DataFrame:
    """What the stored responses of some items would score against given item versions (item_id ->
    version), computed by the same path as ``rescore_con`` and written nowhere: response_id, profile,
    item_version, score, correct. An errata release uses it for the scores before its corrections."""
    profiles = _check_profiles(profiles)
    rows = version_rows_con(con, dataset, versions)
    if not rows:
        return pd.DataFrame(columns=["response_id", "profile", "item_version", "score", "correct"])
    return score_stored(con, rows, profiles)[["response_id", "profile", "item_version", "score", "correct"]]


def score_stored(con: Connection, rows: list, profiles: tuple[str, ...]) -> pd.DataFrame:
    """Parse and score (response_id, raw_text, llm_answer text, version, record text) rows under each
    profile: the score rows (``scores.SCORE_ROW_COLUMNS``) the store replaces."""
    records: dict[str, dict] = {}
    prepared = []
    for response_id, raw, llm_text, version, record_text in rows:
        record = records.get(record_text)
        if record is None:
            record = records[record_text] = json.loads(record_text)
        raw = raw if isinstance(raw, str) else ""
        llm = json.loads(llm_text) if llm_text is not None else None
        prepared.append((int(response_id), parse_for(record, raw), paper_input(raw, llm, llm_text is not None),
                         int(version), record))
    context = ScoringContext(con)
    context.prefetch([(record, [(STRICT_PROFILE, parsed), (PAPER_PROFILE, paper)])
                      for _, parsed, paper, _, record in prepared])
    out = []
    for response_id, parsed, paper, version, record in prepared:
        similarity = context.similarity_for(record)
        for profile in profiles:
            answer: Any = paper if profile == PAPER_PROFILE else parsed
            result = safe_score(record, answer, profile, similarity)
            if result is None:
                continue
            out.append({"response_id": response_id, "profile": profile, "item_version": version,
                        "score": float(result.score), "correct": bool(result.correct),
                        "details": json.dumps(list(result.details or []), ensure_ascii=False),
                        "scorer": result.scorer})
    frame = pd.DataFrame(out, columns=SCORE_ROW_COLUMNS)
    return frame.astype({"details": object, "scorer": object})


def rescore(store: Store, profiles: Iterable[str] = PROFILES, dataset: str | None = None,
            item_ids: Iterable[str] | None = None, types: Iterable[str] | None = None) -> int:
    """(Re)score stored responses against current gold, all or nothing; returns score rows written."""
    profiles = _check_profiles(profiles)
    if dataset is not None:
        require_dataset(store, dataset)
    item_ids = None if item_ids is None else list(item_ids)
    types = None if types is None else list(types)
    _embed_first(store, dataset, item_ids, types)
    with store.transaction() as con:
        return rescore_con(con, profiles, dataset, item_ids, types)


def set_embedding_model(store: Store, model: str) -> int:
    """Score open text with `model` from now on, and rescore every open-text response with it.

    One transaction: the setting and all open-text scores change together, so a store never
    holds open-text scores of two embedding models. The model is checked (and, for provider
    models, its key looked up) before anything is written. Returns the score rows written.
    """
    make_embedder(model)
    open_text = _open_text_formats()
    _embed_first(store, None, None, open_text, model)
    with store.transaction() as con:
        set_embedding_model_con(con, model)
        return rescore_con(con, PROFILES, types=open_text)


def _open_text_formats() -> list[str]:
    """The formats scored by embedding similarity."""
    return [name for name in FORMATS if (fmt := find_format(name)) is not None and fmt.uses_embeddings]


def _embed_first(store: Store, dataset: str | None, item_ids: list[str] | None, types: list[str] | None,
                 model: str | None = None) -> int:
    """Before a rescore's transaction: cache the vectors its open-text scores need (under ``model``,
    default the store's), embedding with no transaction open; returns the texts embedded."""
    open_text = _open_text_formats()
    wanted = open_text if types is None else [t for t in types if t in open_text]
    if not wanted:
        return 0
    with store.transaction(bump=False) as con:  # reads only; a transaction like the rescore that follows
        rows = rescore_rows_con(con, dataset, item_ids, wanted)
    records: dict[str, dict] = {}
    pairs = []
    for _, raw, llm_text, _, record_text in rows:
        record = records.get(record_text)
        if record is None:
            record = records[record_text] = json.loads(record_text)
        raw = raw if isinstance(raw, str) else ""
        llm = json.loads(llm_text) if llm_text is not None else None
        pairs.append((record, [(STRICT_PROFILE, parse_for(record, raw)),
                               (PAPER_PROFILE, paper_input(raw, llm, llm_text is not None))]))
    return embed_pairs(store, pairs, model)

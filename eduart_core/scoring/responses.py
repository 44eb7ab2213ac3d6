"""Responses scored on their way into the store: parse each under its item's format, score it under
both profiles, and hand the store the rows to insert.

Why here and not in the store: the store keeps rows; this stage knows formats, the parser and the
embedding model. ``add_responses_con`` asks the store which rows are new (``runs.new_responses_con``),
scores only those and gives the store the score rows (``runs.insert_responses_con``), all inside the
caller's transaction, so a response and its scores are written together.
"""
from __future__ import annotations

import itertools
import json
from typing import Any

import orjson

from ..answers import ParsedAnswer
from ..store.connection import Connection
from ..store.core import Store
from ..store.runs import ScoredResponse, ScoreRow, insert_responses_con, new_responses_con
from ..vocab import PAPER_PROFILE, STRICT_PROFILE
from .context import ScoringContext, has_llm_answer, paper_input, parse_for, safe_score
from .prefetch import embed_for_responses

#: ``json.dumps(value, ensure_ascii=False)`` without building an encoder per call.
_encode = json.JSONEncoder(ensure_ascii=False).encode

#: Most entries each scoring memo keeps; beyond, the older half is dropped (bounded memory: about
#: 200 MB at most for an import of any size).
MEMO_ENTRIES = 150_000


def _json_or_none(value: Any) -> str | None:
    return None if value is None else _encode(value)


def _score_tuple(score) -> ScoreRow | None:
    """A score as stored: (score, correct, details as JSON, scorer); None when the item cannot be scored."""
    if score is None:
        return None
    return float(score.score), bool(score.correct), _json_or_none(list(score.details or [])), score.scorer


def _trim(memo: dict, cap: int) -> None:
    """Drop the older half of ``memo`` once it holds more than ``cap`` entries (dicts keep insertion order)."""
    if len(memo) > cap:
        for key in list(itertools.islice(memo, len(memo) // 2)):
            del memo[key]


def score_responses(con: Connection, rows: list[dict], items: dict[str, tuple[int, dict]],
                    memo: dict | None = None) -> list[ScoredResponse]:
    """Parse and score ``rows`` under both profiles, doing each distinct piece of work once.

    Strict scores the lenient parse of the raw text, paper the imported ``llm_answer`` when there
    is one, else the raw text. Each is a pure function of fewer things than a whole response, so
    each is memoised on exactly what it reads: the parse on (format, raw text); the strict score on
    (item, parsed answers, parse error, free form); the paper score on (item, imported answer) or
    (item, raw text); the imported answer's JSON text on its compact orjson form. Many models give
    the same answer to the same item, and far more the same ``llm_answer`` (often one of four
    options), so an import scores a fraction of its responses. ``memo`` (a dict the caller keeps
    across the runs of one import, for the same item versions) carries the work from one call to
    the next.

    Returns per row what the store inserts (``runs.ScoredResponse``).
    """
    memo = {} if memo is None else memo
    for name in ("parse", "strict", "paper", "encoding"):
        _trim(memo.setdefault(name, {}), MEMO_ENTRIES)
    parses, stricts, papers, encodings = memo["parse"], memo["strict"], memo["paper"], memo["encoding"]
    keys: list[tuple] = []
    todo_strict: dict[tuple, tuple[dict, Any]] = {}
    todo_paper: dict[tuple, tuple[dict, Any]] = {}
    fresh: dict[tuple, Any] = {}  # this call's parses, as objects (a memo hit keeps only their JSON)
    for row in rows:
        item_id = str(row["item_id"])
        record = items[item_id][1]
        raw = row.get("raw_text")
        parse_key = (record.get("type"), raw)
        done = parses.get(parse_key)
        if done is None:
            parsed = parse_for(record, raw if isinstance(raw, str) else "")
            done = parses[parse_key] = (_json_or_none(parsed.answers), parsed.motivation, parsed.parse_error,
                                        parsed.repairs)
            fresh[parse_key] = parsed
        parsed_json, motivation, parse_error, repairs = done
        strict_key = (item_id, parsed_json, parse_error if parsed_json is None else None, "free_form" in repairs)
        if strict_key not in stricts and strict_key not in todo_strict:
            parsed = fresh.get(parse_key)
            if parsed is None:  # parsed for another item earlier: the same answers, read back from the JSON
                parsed = ParsedAnswer(None if parsed_json is None else json.loads(parsed_json), motivation,
                                      parse_error, repairs)
            todo_strict[strict_key] = (record, parsed)
        has_llm = has_llm_answer(row)
        llm = row.get("llm_answer")
        llm_json = None
        if has_llm:  # most imported answers are one of a few values: encoded once each
            try:  # orjson's text is one per JSON value (types and order kept) and far quicker to make,
                shown = orjson.dumps(llm)  # except that NaN and infinity become null: those are not memoised
            except (orjson.JSONEncodeError, TypeError):
                shown = b"null"
            if b"null" in shown:
                llm_json = _encode(llm)
            else:
                llm_json = encodings.get(shown)
                if llm_json is None:
                    llm_json = encodings[shown] = _encode(llm)
        paper_key = (item_id, True, llm_json) if has_llm else (item_id, False, raw)
        if paper_key not in papers and paper_key not in todo_paper:
            todo_paper[paper_key] = (record, paper_input(raw if isinstance(raw, str) else "", llm, has_llm))
        keys.append((llm_json, parsed_json, motivation, parse_error, strict_key, paper_key))
    context = ScoringContext(con)
    context.prefetch([(record, [(STRICT_PROFILE, parsed)]) for record, parsed in todo_strict.values()]
                     + [(record, [(PAPER_PROFILE, answer)]) for record, answer in todo_paper.values()])
    for key, (record, parsed) in todo_strict.items():
        stricts[key] = _score_tuple(safe_score(record, parsed, STRICT_PROFILE, context.similarity_for(record)))
    for key, (record, answer) in todo_paper.items():
        papers[key] = _score_tuple(safe_score(record, answer, PAPER_PROFILE, context.similarity_for(record)))
    return [(llm_json, parsed_json, motivation, error, stricts[strict_key], papers[paper_key])
            for llm_json, parsed_json, motivation, error, strict_key, paper_key in keys]


def add_responses_con(con: Connection, run_id: str, rows: list[dict],
                      items: dict[str, tuple[int, dict]] | None = None, memo: dict | None = None) -> int:
    """Parse, score and insert responses of one run inside the caller's transaction.

    Rows whose ``request_key`` is already stored for this run are skipped (resume and re-import
    never duplicate) and never scored. Returns the number of responses inserted. An importer that
    adds many runs against the same ``items`` passes one ``memo`` dict to all of them: an answer
    already scored for another run is not scored again.
    """
    fresh, items = new_responses_con(con, run_id, rows, items)
    if not fresh:
        return 0
    return insert_responses_con(con, run_id, fresh, items, score_responses(con, fresh, items, memo))


def add_responses(store: Store, run_id: str, rows: list[dict]) -> int:
    """Store responses of a run, each parsed and scored under both profiles, in one transaction.

    Each row: item_id, raw_text, optional llm_answer (+ has_llm_answer, so that an imported
    JSON null is kept as such), motivation, input_tokens, output_tokens,
    latency_s, error, image_sent, request_key, repetition, cost_usd, batch_job_id. Returns how many
    were inserted.
    """
    rows = list(rows)
    embed_for_responses(store, [(run_id, rows)])  # no write transaction is open while the embedder runs
    with store.transaction() as con:
        return add_responses_con(con, run_id, rows)

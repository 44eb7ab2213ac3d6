"""Datasets, models, runs and responses: the record of what each model answered.

Why responses and scores are written together: a response without scores would silently vanish
from every chart (the long frame joins scores). ``add_responses`` parses and scores each response
under both profiles and inserts responses and scores in one transaction, in bulk (column lists,
one insert per table) so that tens of thousands of simulated responses load in
seconds.
"""
from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

import orjson
import pandas as pd

from ..errors import UserError
from ..vocab import CONDITIONS, MODEL_KIND, MODEL_KINDS, PAPER_PROFILE, SIMULATED_KIND, STRICT_PROFILE
from .connection import Connection
from .core import Store

logger = logging.getLogger(__name__)

RUN_STATUSES = ("running", "completed", "failed", "cancelled", "interrupted")


# ---------------------------------------------------------------- datasets and models

def ensure_dataset_con(con: Connection, dataset: str, title: str, kind: str,
                       simulated: bool = False, aggregate_only: bool = False,
                       description: str | None = None) -> None:
    """Create the dataset row when missing (inside the caller's transaction); keep existing ones."""
    con.execute(
        "INSERT INTO datasets (dataset, title, kind, simulated, aggregate_only, description) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [dataset, title, kind, simulated, aggregate_only, description],
    )


def ensure_dataset(store: Store, dataset: str, title: str, kind: str, simulated: bool = False,
                   aggregate_only: bool = False, description: str | None = None) -> None:
    """Register a dataset once; calling again with the same name changes nothing."""
    if not dataset or not str(dataset).strip():
        raise UserError("dataset name must not be empty")
    with store.transaction() as con:
        ensure_dataset_con(con, dataset, title, kind, simulated, aggregate_only, description)


def ensure_model_con(con: Connection, model: str, display_name: str, family: str | None,
                     provider: str | None, api_model_id: str | None, simulated: bool = False,
                     kind: str | None = None) -> str:
    """Insert or refresh a model row; returns the display name actually stored.

    Display names are unique: when another model already uses the wanted name, the key is
    appended in parentheses rather than failing the import. ``kind`` is one of
    ``vocab.MODEL_KINDS`` (default: simulated for a simulated model, else a real model); a
    ``baseline`` is a reference such as the chance model, never an examinee.
    """
    kind = kind or (SIMULATED_KIND if simulated else MODEL_KIND)
    if kind not in MODEL_KINDS:
        raise UserError(f"model {model}: unknown kind {kind!r}; use one of {', '.join(MODEL_KINDS)}")
    con.lock("models")  # display names are unique across models: writers of models take turns
    name = display_name or model
    taken = con.execute("SELECT model FROM models WHERE display_name = ? AND model <> ?", [name, model]).fetchone()
    if taken:
        name = f"{name} ({model})"
    exists = con.execute("SELECT 1 FROM models WHERE model = ?", [model]).fetchone()
    if exists:
        con.execute(
            "UPDATE models SET display_name = ?, family = ?, provider = ?, api_model_id = ?, simulated = ?, "
            "kind = ? WHERE model = ?",
            [name, family, provider, api_model_id, simulated, kind, model],
        )
    else:
        con.execute(
            "INSERT INTO models (model, display_name, family, provider, api_model_id, simulated, kind) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [model, name, family, provider, api_model_id, simulated, kind],
        )
    return name


def ensure_model(store: Store, model: str, display_name: str, family: str | None, provider: str | None,
                 api_model_id: str | None, simulated: bool = False, kind: str | None = None) -> str:
    """Register (or refresh) a model; returns its stored display name."""
    if not model or not str(model).strip():
        raise UserError("model key must not be empty")
    with store.transaction() as con:
        return ensure_model_con(con, model, display_name, family, provider, api_model_id, simulated, kind)


# ---------------------------------------------------------------- runs

def create_run_con(con: Connection, run_id: str, dataset: str, model: str, condition: str,
                   origin: str, *, launch_id: str | None = None, repetition: int = 0,
                   prompt_hash: str | None = None, params: dict | None = None, status: str = "running",
                   journal_path: str | None = None, exist_ok: bool = False) -> bool:
    """Insert a run row inside the caller's transaction; False when it existed and exist_ok."""
    if condition not in CONDITIONS:
        raise UserError(f"run {run_id}: unknown condition {condition!r} (expected default or motivation)")
    if status not in RUN_STATUSES:
        raise UserError(f"run {run_id}: unknown status {status!r}")
    con.lock(f"run:{run_id}")
    if con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchone():
        if exist_ok:
            return False
        raise UserError(f"run {run_id} already exists")
    if not con.execute("SELECT 1 FROM models WHERE model = ?", [model]).fetchone():
        raise UserError(f"run {run_id}: unknown model {model!r}; register it first")
    if not con.execute("SELECT 1 FROM datasets WHERE dataset = ?", [dataset]).fetchone():
        raise UserError(f"run {run_id}: unknown dataset {dataset!r}")
    con.execute(
        "INSERT INTO runs (run_id, launch_id, dataset, model, condition, repetition, origin, prompt_hash, "
        "params, status, started_at, journal_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS JSON), ?, "
        "current_timestamp, ?)",
        [run_id, launch_id, dataset, model, condition, int(repetition), origin, prompt_hash,
         json.dumps(params) if params is not None else None, status, journal_path],
    )
    return True


def create_run(store: Store, run_id: str, dataset: str, model: str, condition: str, origin: str, *,
               launch_id: str | None = None, repetition: int = 0, prompt_hash: str | None = None,
               params: dict | None = None, status: str = "running", journal_path: str | None = None,
               exist_ok: bool = False) -> bool:
    """Create a run (one model x condition x repetition over a dataset). ``params`` hold no secrets."""
    with store.transaction() as con:
        return create_run_con(con, run_id, dataset, model, condition, origin, launch_id=launch_id,
                              repetition=repetition, prompt_hash=prompt_hash, params=params, status=status,
                              journal_path=journal_path, exist_ok=exist_ok)


def finish_run(store: Store, run_id: str, status: str, totals: dict | None = None) -> None:
    """Close a run: status, finish time and token/cost/error totals (keys as in the runs table)."""
    if status not in RUN_STATUSES:
        raise UserError(f"run {run_id}: unknown status {status!r}")
    totals = totals or {}
    allowed = ("input_tokens", "output_tokens", "cost_usd", "n_errors", "wall_seconds")
    unknown = set(totals) - set(allowed)
    if unknown:
        raise UserError(f"run {run_id}: unknown totals {sorted(unknown)}")
    sets = ["status = ?", "finished_at = current_timestamp"] + [f"{k} = ?" for k in totals]
    with store.transaction() as con:
        if not con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchone():
            raise UserError(f"no run {run_id}")
        con.execute(f"UPDATE runs SET {', '.join(sets)} WHERE run_id = ?", [status, *totals.values(), run_id])


def refresh_run_totals_con(con: Connection, run_id: str, status: str | None = None) -> None:
    """Recount a run's tokens and errors from its stored responses and mark it finished now
    (with ``status`` when given).

    For runs whose responses arrive from files rather than from the runner (which keeps its own
    totals, cache hits included).
    """
    if status is not None and status not in RUN_STATUSES:
        raise UserError(f"run {run_id}: unknown status {status!r}")
    con.execute(
        """UPDATE runs SET finished_at = current_timestamp, status = coalesce(?, status),
               input_tokens = (SELECT coalesce(sum(input_tokens), 0) FROM responses WHERE run_id = ?),
               output_tokens = (SELECT coalesce(sum(output_tokens), 0) FROM responses WHERE run_id = ?),
               n_errors = (SELECT count(error) FROM responses WHERE run_id = ?)
           WHERE run_id = ?""",
        [status] + [run_id] * 4,
    )


def set_run_tokens_con(con: Connection, run_id: str, input_tokens: int, output_tokens: int) -> None:
    """Mark a run finished now with the given token totals (simulated runs count their own)."""
    con.execute("UPDATE runs SET finished_at = current_timestamp, input_tokens = ?, output_tokens = ? "
                "WHERE run_id = ?", [int(input_tokens), int(output_tokens), run_id])


def open_runs(store: Store, origin: str) -> list[tuple[str, str, int, int]]:
    """(launch id, dataset, runs, responses) of the runs of ``origin`` still marked running."""
    with store.connect(read_only=True) as con:
        rows = con.execute(
            """SELECT u.launch_id, u.dataset, count(DISTINCT u.run_id), count(r.response_id)
               FROM runs u LEFT JOIN responses r ON r.run_id = u.run_id
               WHERE u.origin = ? AND u.status = 'running'
               GROUP BY u.launch_id, u.dataset ORDER BY u.dataset""", [origin]).fetchall()
    return [(str(launch), str(dataset), int(runs), int(responses)) for launch, dataset, runs, responses in rows]


def complete_runs_con(con: Connection, launch_id: str) -> int:
    """Mark the runs of a launch still running completed (its last batch is in); returns how many."""
    before = con.execute("SELECT count(*) FROM runs WHERE launch_id = ? AND status = 'running'",
                         [launch_id]).fetchone()[0]
    con.execute("UPDATE runs SET status = 'completed', finished_at = current_timestamp "
                "WHERE launch_id = ? AND status = 'running'", [launch_id])
    return int(before)


def complete_if_running_con(con: Connection, run_id: str) -> bool:
    """Mark one run completed, its totals recounted, if it is still running (an import's last batch is
    in); a run already completed is left as it is, so an import that adds nothing changes nothing."""
    row = con.execute("SELECT status FROM runs WHERE run_id = ?", [run_id]).fetchone()
    if not row or row[0] != "running":
        return False
    refresh_run_totals_con(con, run_id, status="completed")
    return True


def list_runs(store: Store, dataset: str | None = None) -> pd.DataFrame:
    """Every run with its model's display name and response/error counts, newest first."""
    with store.connect(read_only=True) as con:
        return con.frame(
            """SELECT u.run_id, u.launch_id, u.dataset, u.model, m.display_name, m.family, m.simulated,
                      u.condition, u.repetition, u.origin, u.status, u.started_at, u.finished_at,
                      u.input_tokens, u.output_tokens, u.cost_usd, u.n_errors, u.wall_seconds,
                      u.prompt_hash, CAST(u.params AS TEXT) AS params, u.journal_path,
                      count(r.response_id) AS n_responses,
                      count(r.error) AS n_error_responses
               FROM runs u LEFT JOIN models m USING (model) LEFT JOIN responses r USING (run_id)
               WHERE ? IS NULL OR u.dataset = ?
               GROUP BY u.run_id, u.launch_id, u.dataset, u.model, m.display_name, m.family, m.simulated,
                        u.condition, u.repetition, u.origin, u.status, u.started_at, u.finished_at,
                        u.input_tokens, u.output_tokens, u.cost_usd, u.n_errors, u.wall_seconds,
                        u.prompt_hash, CAST(u.params AS TEXT), u.journal_path
               ORDER BY u.started_at DESC NULLS LAST, u.run_id""",
            [dataset, dataset],
        )


# ---------------------------------------------------------------- responses

def _json_or_none(value: Any) -> str | None:
    return None if value is None else _encode(value)


_LAZY: SimpleNamespace | None = None


def _scoring() -> SimpleNamespace:
    """The parser and scorers, imported on first use and kept (the store does not import them at
    load time; an import statement in a function run a million times costs seconds)."""
    global _LAZY
    if _LAZY is None:
        from ..answers import ParsedAnswer, StoredAnswer, parse_answer
        from ..formats import find_format
        from ..providers.base import ProviderError
        from ..scoring import prefetch_embeddings, score_item

        _LAZY = SimpleNamespace(StoredAnswer=StoredAnswer, ParsedAnswer=ParsedAnswer, parse_answer=parse_answer,
                                find_format=find_format,
                                ProviderError=ProviderError, prefetch_embeddings=prefetch_embeddings,
                                score_item=score_item)
    return _LAZY


#: ``json.dumps(value, ensure_ascii=False)`` without building an encoder per call.
_encode = json.JSONEncoder(ensure_ascii=False).encode


def safe_score(record: dict, answer: Any, profile: str, similarity: Any = None):
    """score_item, or None when the (defective) item cannot be scored under the rules.

    Why: imported items with data issues are kept and scored wherever the rules allow; an item
    whose gold is unusable gets no score row rather than a fake zero or a failed import.
    """
    lazy = _scoring()
    try:
        return lazy.score_item(record, answer, profile, similarity=similarity)
    except (UserError, lazy.ProviderError):  # the embedding model failed: that is not a defective item
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
            from ..embeddings import Similarity, make_embedder
            from .embeddings import StoreVectorCache, embedding_model_con

            self._similarity = Similarity(make_embedder(embedding_model_con(self.con)), StoreVectorCache(self.con))
        return self._similarity

    def similarity_for(self, record: dict):
        """The similarity service when this record's format needs one, else None."""
        fmt = _scoring().find_format(record.get("type"))
        return self.similarity if fmt is not None and fmt.uses_embeddings else None

    def prefetch(self, pairs: list[tuple[dict, list[tuple[str, Any]]]]) -> None:
        """Embed every text these (record, [(profile, answer)]) will need, in one batch (open text only)."""
        lazy = _scoring()
        wanted = [(r, a) for r, a in pairs
                  if (f := lazy.find_format(r.get("type"))) is not None and f.uses_embeddings]
        if wanted:
            lazy.prefetch_embeddings(wanted, self.similarity)


def paper_input(raw_text: str | None, llm_answer: Any, has_llm_answer: bool) -> Any:
    """What the paper profile scores: the imported llm_answer exactly as stored, else the raw text.

    An imported `llm_answer` (even a string, even null) is wrapped in `StoredAnswer` so the
    published step 2 scores it without parsing it again; our own runs have none, so published
    step 1 parses their raw text first.
    """
    if has_llm_answer:
        return _scoring().StoredAnswer(llm_answer)
    return raw_text if isinstance(raw_text, str) else ""


def parse_for(record: dict, raw: str):
    """The lenient parse stored with a response, as the item's format reads it."""
    lazy = _scoring()
    fmt = lazy.find_format(record.get("type"))
    return fmt.parse(raw) if fmt is not None else lazy.parse_answer(raw)


def score_pair(record: dict, raw_text: str | None, llm_answer: Any, has_llm_answer: bool,
               context: ScoringContext | None = None, parsed: Any = None) -> dict:
    """Parse one response and score it under both profiles (the rule shared with rescoring).

    strict scores the raw text; paper scores the imported ``llm_answer`` when the answer file
    had one, else the raw text with the published parsing rule. No raw text (an error response)
    scores as unparseable under both.
    """
    raw = raw_text if isinstance(raw_text, str) else ""
    if parsed is None:
        parsed = parse_for(record, raw)  # parsed once: strict scores the same lenient parse we store
    similarity = context.similarity_for(record) if context is not None else None
    return {"parsed": parsed, STRICT_PROFILE: safe_score(record, parsed, STRICT_PROFILE, similarity),
            PAPER_PROFILE: safe_score(record, paper_input(raw, llm_answer, has_llm_answer), PAPER_PROFILE,
                                      similarity)}


def has_llm_answer(row: dict) -> bool:
    """Whether a response row carries an imported `llm_answer` (a JSON null counts).

    Rows say so with ``has_llm_answer``; without it, a non-null ``llm_answer`` counts.
    """
    if "has_llm_answer" in row:
        return bool(row["has_llm_answer"])
    return row.get("llm_answer") is not None


def current_items_con(con: Connection, dataset: str) -> dict[str, tuple[int, dict]]:
    """item_id -> (current version, record) of a dataset."""
    return {
        row[0]: (int(row[1]), json.loads(row[2]))
        for row in con.execute(
            "SELECT item_id, version, CAST(record AS TEXT) FROM items WHERE dataset = ? AND is_current", [dataset]
        ).fetchall()
    }


def insert_frame(con: Connection, table: str, frame: pd.DataFrame, json_columns: Iterable[str] = ()) -> None:
    """INSERT a DataFrame in one bulk operation (``Connection.insert_frame``)."""
    con.insert_frame(table, frame, json_columns)


_RESPONSE_COLUMNS = ("response_id", "run_id", "item_id", "repetition", "request_key", "raw_text", "llm_answer",
                     "parsed_answers", "motivation", "parse_error", "input_tokens", "output_tokens", "latency_s",
                     "error", "image_sent", "cost_usd", "batch_job_id")
_SCORE_COLUMNS = ("response_id", "profile", "item_version", "score", "correct", "details", "scorer")
#: SQL types of the bulk inserts' columns that are not TEXT.
_RESPONSE_TYPES = {"response_id": "BIGINT", "repetition": "BIGINT", "input_tokens": "BIGINT",
                   "output_tokens": "BIGINT", "latency_s": "DOUBLE", "image_sent": "BOOLEAN", "cost_usd": "DOUBLE"}
_SCORE_TYPES = {"response_id": "BIGINT", "item_version": "BIGINT", "score": "DOUBLE", "correct": "BOOLEAN"}


#: Most entries each scoring memo keeps; beyond, the older half is dropped (bounded memory: about
#: 200 MB at most for an import of any size).
MEMO_ENTRIES = 150_000


def _score_tuple(score) -> tuple | None:
    """A score as stored: (score, correct, details as JSON, scorer); None when the item cannot be scored."""
    if score is None:
        return None
    return float(score.score), bool(score.correct), _json_or_none(list(score.details or [])), score.scorer


def _trim(memo: dict, cap: int) -> None:
    """Drop the older half of ``memo`` once it holds more than ``cap`` entries (dicts keep insertion order)."""
    if len(memo) > cap:
        for key in list(itertools.islice(memo, len(memo) // 2)):
            del memo[key]


def _score_rows(con: Connection, rows: list[dict], items: dict[str, tuple[int, dict]],
                memo: dict | None = None) -> list[tuple]:
    """Parse and score ``rows`` under both profiles, doing each distinct piece of work once.

    The rule is ``score_pair``'s: strict scores the lenient parse of the raw text, paper the
    imported ``llm_answer`` when there is one, else the raw text. Each is a pure function of
    fewer things than a whole response, so each is memoised on exactly what it reads: the parse
    on (format, raw text); the strict score on (item, parsed answers, parse error, free form); the
    paper score on (item, imported answer) or (item, raw text); the imported answer's JSON text
    on its compact orjson form. Many models give the same answer to the same item, and far more
    the same ``llm_answer`` (often one of four options), so an import scores a fraction of its
    responses. ``memo`` (a dict the caller keeps across the runs
    of one import, for the same item versions) carries the work from one call to the next.

    Returns per row: (llm_answer JSON, parsed answers JSON, motivation, parse error, strict, paper),
    the scores as ``_score_tuple``.
    """
    memo = {} if memo is None else memo
    for name in ("parse", "strict", "paper", "encoding"):
        _trim(memo.setdefault(name, {}), MEMO_ENTRIES)
    parses, stricts, papers, encodings = memo["parse"], memo["strict"], memo["paper"], memo["encoding"]
    lazy = _scoring()
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
                parsed = lazy.ParsedAnswer(None if parsed_json is None else json.loads(parsed_json), motivation,
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
    never duplicate). Returns the number of responses inserted. An importer that adds many runs
    against the same ``items`` passes one ``memo`` dict to all of them: an answer already scored
    for another run is not scored again.
    """
    run = con.execute("SELECT dataset FROM runs WHERE run_id = ?", [run_id]).fetchone()
    if not run:
        raise UserError(f"no run {run_id}")
    if not rows:
        return 0
    con.lock(f"run:{run_id}")  # two ingests of one run (a resume beside a recovery) take turns
    if items is None:
        items = current_items_con(con, run[0])
    unknown = sorted({str(r.get("item_id")) for r in rows if str(r.get("item_id")) not in items})
    if unknown:
        shown = ", ".join(unknown[:5]) + (" …" if len(unknown) > 5 else "")
        raise UserError(f"run {run_id}: {len(unknown)} responses for items not in dataset {run[0]}: {shown}")
    seen = {k for (k,) in con.execute(
        "SELECT request_key FROM responses WHERE run_id = ? AND request_key IS NOT NULL", [run_id]).fetchall()}
    fresh = []
    for row in rows:
        key = row.get("request_key")
        if key is not None:
            if key in seen:
                continue
            seen.add(key)
        fresh.append(row)
    if not fresh:
        return 0
    ids = con.next_ids("response_seq", len(fresh))
    scored = _score_rows(con, fresh, items, memo)
    n = len(fresh)
    item_ids = [str(row["item_id"]) for row in fresh]
    given = [row.get("motivation") for row in fresh]
    responses: dict[str, list] = {  # column by column: one comprehension each, no per-row dict
        "response_id": ids, "run_id": [run_id] * n, "item_id": item_ids,
        "repetition": [int(row.get("repetition") or 0) for row in fresh],
        "request_key": [row.get("request_key") for row in fresh], "raw_text": [row.get("raw_text") for row in fresh],
        "llm_answer": [s[0] for s in scored], "parsed_answers": [s[1] for s in scored],
        "motivation": [m if m is not None else s[2] for m, s in zip(given, scored)],
        "parse_error": [s[3] for s in scored],
        **{name: [row.get(name) for row in fresh] for name in ("input_tokens", "output_tokens", "latency_s", "error",
                                                               "image_sent", "cost_usd", "batch_job_id")},
    }
    versions = [items[item_id][0] for item_id in item_ids]
    scores: dict[str, list] = {name: [] for name in _SCORE_COLUMNS}
    for profile, column in ((STRICT_PROFILE, 4), (PAPER_PROFILE, 5)):
        kept = [i for i, s in enumerate(scored) if s[column] is not None]
        scores["response_id"] += [ids[i] for i in kept]
        scores["profile"] += [profile] * len(kept)
        scores["item_version"] += [versions[i] for i in kept]
        for position, name in enumerate(("score", "correct", "details", "scorer")):
            scores[name] += [scored[i][column][position] for i in kept]
    con.insert_columns("responses", {name: responses[name] for name in _RESPONSE_COLUMNS}, _RESPONSE_TYPES,
                       json_columns=("llm_answer", "parsed_answers"))
    con.insert_columns("scores", scores, _SCORE_TYPES, json_columns=("details",))
    mark_latest_con(con, run_id)
    return len(fresh)


#: The answer a model gave last to an item (per dataset, model, condition and repetition), among
#: the requests that got an answer: the one the long score frame uses.
_EFFECTIVE_REPETITION = "CASE WHEN u.repetition <> 0 THEN u.repetition ELSE r.repetition END"


def latest_clause(con: Connection, alias: str = "r") -> str:
    """SQL condition on the responses table aliased ``alias`` that keeps the latest answers.

    A store written before migration 8 (latest marker) and opened read-only (reading never migrates) has no
    ``is_latest`` column: the same rows are then found with the window this column replaces.
    """
    if con.has_column("responses", "is_latest"):
        return f"{alias}.is_latest"
    return f"""{alias}.response_id IN (
        SELECT response_id FROM (
            SELECT r.response_id, row_number() OVER (
                PARTITION BY u.dataset, u.model, u.condition, r.item_id, {_EFFECTIVE_REPETITION}
                ORDER BY r.response_id DESC) AS latest_order
            FROM responses r JOIN runs u USING (run_id) WHERE r.error IS NULL) ranked
        WHERE latest_order = 1)"""


def mark_latest_con(con: Connection, run_id: str) -> None:
    """Recompute ``responses.is_latest`` for the model x condition of one run (inside the caller's
    transaction).

    Why at write time: finding the latest answer with a window over every response cost about
    half a second per read at 50 models x 5,000 items; marking it here costs one small update
    over the responses of one model and condition, once per batch written. Writers of one model
    and condition take turns (``lock``), so each sees the other's answers.
    """
    run = con.execute("SELECT dataset, model, condition FROM runs WHERE run_id = ?", [run_id]).fetchone()
    if run is None:
        return
    con.lock(f"latest:{run[0]}:{run[1]}:{run[2]}")
    con.execute(f"""
        UPDATE responses SET is_latest = w.latest
        FROM (SELECT r.response_id,
                     r.error IS NULL AND row_number() OVER (
                         PARTITION BY r.item_id, {_EFFECTIVE_REPETITION}
                         ORDER BY (r.error IS NULL) DESC, r.response_id DESC) = 1 AS latest
              FROM responses r JOIN runs u USING (run_id)
              JOIN runs me ON me.run_id = ? AND me.dataset = u.dataset AND me.model = u.model
                          AND me.condition = u.condition) w
        WHERE responses.response_id = w.response_id AND responses.is_latest IS DISTINCT FROM w.latest""",
                [run_id])


def add_responses(store: Store, run_id: str, rows: list[dict]) -> int:
    """Store responses of a run, each parsed and scored under both profiles, in one transaction.

    Each row: item_id, raw_text, optional llm_answer (+ has_llm_answer, so that an imported
    JSON null is kept as such), motivation, input_tokens, output_tokens,
    latency_s, error, image_sent, request_key, repetition, cost_usd, batch_job_id. Returns how many
    were inserted.
    """
    with store.transaction() as con:
        return add_responses_con(con, run_id, list(rows))

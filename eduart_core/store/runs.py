"""Datasets, models, runs and responses: the record of what each model answered.

Why responses and scores are written together: a response without scores would silently vanish
from every chart (the long frame joins scores). The scoring stage (``eduart_core.scoring.responses``)
parses and scores each response under both profiles; ``insert_responses_con`` inserts responses and
those scores in one transaction, in bulk (column lists, one insert per table) so that tens of
thousands of simulated responses load in seconds. The store never parses or scores.
"""
from __future__ import annotations

import json
from collections.abc import Iterable

import pandas as pd

from ..errors import UserError
from ..vocab import CONDITIONS, MODEL_KIND, MODEL_KINDS, PAPER_PROFILE, SIMULATED_KIND, STRICT_PROFILE
from .connection import Connection
from .core import Store

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

def current_items_con(con: Connection, dataset: str, types: list[str] | None = None) -> dict[str, tuple[int, dict]]:
    """item_id -> (current version, record) of a dataset (only of the formats ``types`` when given)."""
    kinds = "" if types is None else " AND type = ANY(?)"
    return {
        row[0]: (int(row[1]), json.loads(row[2]))
        for row in con.execute(
            f"SELECT item_id, version, CAST(record AS TEXT) FROM items WHERE dataset = ? AND is_current{kinds}",
            [dataset] + ([list(types)] if types is not None else [])
        ).fetchall()
    }


def current_types_con(con: Connection, dataset: str) -> list[str]:
    """The formats of a dataset's current items."""
    return [str(r[0]) for r in con.execute(
        "SELECT DISTINCT type FROM items WHERE dataset = ? AND is_current ORDER BY 1", [dataset]).fetchall()]


def run_dataset_con(con: Connection, run_id: str) -> str | None:
    """The dataset of a run, None when there is no such run."""
    row = con.execute("SELECT dataset FROM runs WHERE run_id = ?", [run_id]).fetchone()
    return None if row is None else str(row[0])


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


#: One score as the store keeps it: (score, correct, details as JSON text, scorer).
ScoreRow = tuple[float, bool, "str | None", "str | None"]
#: One response as the scoring stage hands it over: (llm_answer JSON, parsed answers JSON, motivation
#: parsed from the text, parse error, strict score, paper score); a score is None when the item
#: cannot be scored under that profile.
ScoredResponse = tuple["str | None", "str | None", "str | None", "str | None", "ScoreRow | None",
                       "ScoreRow | None"]


def new_responses_con(con: Connection, run_id: str, rows: list[dict],
                      items: dict[str, tuple[int, dict]] | None = None
                      ) -> tuple[list[dict], dict[str, tuple[int, dict]]]:
    """The rows of ``rows`` not stored yet for this run, and the dataset's current items (``items``
    when given), inside the caller's transaction, before anything is scored.

    Rows whose ``request_key`` is already stored for this run are left out (resume and re-import never
    duplicate). Refused (UserError) for an unknown run or a row whose item is not in the run's dataset.
    Takes the run's lock: two ingests of one run (a resume beside a recovery) take turns.
    """
    run = con.execute("SELECT dataset FROM runs WHERE run_id = ?", [run_id]).fetchone()
    if not run:
        raise UserError(f"no run {run_id}")
    if not rows:
        return [], items or {}
    con.lock(f"run:{run_id}")
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
    return fresh, items


def insert_responses_con(con: Connection, run_id: str, fresh: list[dict], items: dict[str, tuple[int, dict]],
                         scored: list[ScoredResponse]) -> int:
    """Insert new responses of one run with the scores the scoring stage computed for them (``scored``,
    one per row of ``fresh``, from ``new_responses_con``) inside the caller's transaction, and mark
    the latest answers; returns how many responses were inserted.

    Why together: a response without scores would silently vanish from every chart (the long frame
    joins scores). Column by column, one bulk insert per table.
    """
    if not fresh:
        return 0
    ids = con.next_ids("response_seq", len(fresh))
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
    for profile, rows_of in ((STRICT_PROFILE, [s[4] for s in scored]), (PAPER_PROFILE, [s[5] for s in scored])):
        kept = [(i, row) for i, row in enumerate(rows_of) if row is not None]
        scores["response_id"] += [ids[i] for i, _ in kept]
        scores["profile"] += [profile] * len(kept)
        scores["item_version"] += [versions[i] for i, _ in kept]
        for position, name in enumerate(("score", "correct", "details", "scorer")):
            scores[name] += [row[position] for _, row in kept]
    con.insert_columns("responses", {name: responses[name] for name in _RESPONSE_COLUMNS}, _RESPONSE_TYPES,
                       json_columns=("llm_answer", "parsed_answers"))
    con.insert_columns("scores", scores, _SCORE_TYPES, json_columns=("details",))
    mark_latest_con(con, run_id)
    return n


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

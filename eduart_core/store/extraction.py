"""Tables and SQL of the extraction and review room.

Why here: every SQL statement of the room lives in one module, so the pipeline, the review logic
and the page stay free of SQL. A reviewer's decision on a field is one row of ``review_decisions``
(per role): a change of mind replaces it under a new id, and every version is appended to
``review_decision_log``, the audit log, which nothing updates or deletes.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from . import review_gold
from .connection import Variants
from .core import Store, pending_migrations
from .errors import StoreConflictError


class ReviewConflict(Exception):
    """Someone decided the field after the version this decision was based on."""

    def __init__(self, path: str, latest: dict | None):
        self.path = path
        latest = latest or {}
        self.latest = latest
        who = latest.get("reviewer") or "someone"
        super().__init__(
            f"field {path} was decided by {who} at {latest.get('decided_at')} "
            f"({latest.get('action')}) after you loaded it; reload and decide again"
        )


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _load(value: Any) -> Any:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _upsert(table: str, columns: tuple[str, ...], keys: tuple[str, ...], reset: tuple[str, ...] = ()) -> str:
    """INSERT of one row that replaces the row with the same key (``reset`` columns go back to NULL)."""
    sets = [f"{c} = excluded.{c}" for c in columns if c not in keys] + [f"{c} = NULL" for c in reset]
    return (f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)}) "
            f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {', '.join(sets)}")


_PAGE_UPSERT = _upsert("extraction_pages", ("page_id", "dataset", "item_id", "exercise", "question", "image_hash",
                                            "page_text", "text_source", "simulated"), ("page_id",))
_EXTRACTION_UPSERT = _upsert("extractions", ("page_id", "round", "extractor", "model", "prompt_hash", "raw_response",
                                             "record", "validation_errors", "error", "input_tokens", "output_tokens"),
                             ("page_id", "round", "extractor"))
_OUTCOME_UPSERT = _upsert("extraction_outcomes", ("page_id", "round", "merge_status", "format", "base_record",
                                                  "merged_record"), ("page_id", "round"),
                          reset=("promoted_version", "promotion_error", "promoted_at"))


def _frame(con, sql: str, params: list | None = None) -> pd.DataFrame:
    cur = con.execute(sql, params or [])
    columns = [d[0] for d in cur.description]
    # object dtype keeps SQL NULL as None (not NaN), so records read back exactly as written
    return pd.DataFrame(cur.fetchall(), columns=columns, dtype=object)


def ensure_schema(store: Store) -> None:
    """Bring an existing store up to the current schema before the review page or CLI reads it.

    Read-only connections never migrate, and the review tables came in later migrations (2 and
    3), so a store written by an older version would fail on the first review query. This opens
    a read-write connection only when migrations are actually pending; it changes the schema,
    never the data.
    """
    if not store.exists() or str(store.path) in _CURRENT_SCHEMA:
        return
    with store.connect(read_only=True) as con:
        pending = pending_migrations(con)  # recorded numbers decide (a store may lack an earlier one), as in `migrate`
    if pending:
        with store.connect():
            pass
    _CURRENT_SCHEMA.add(str(store.path))


_CURRENT_SCHEMA: set[str] = set()  # stores this process already checked (a redraw needs no check)


# --- pages and extractions -------------------------------------------------------------------

def save_pages(store: Store, pages: Iterable[dict]) -> int:
    """Insert or refresh pages (page_id, dataset, item_id, exercise, question, image_hash,
    page_text, text_source, simulated)."""
    rows = [[p["page_id"], p["dataset"], p["item_id"], str(p.get("exercise") or ""),
             str(p.get("question") or ""), p.get("image_hash"), p.get("page_text"),
             p.get("text_source"), bool(p.get("simulated", False))] for p in pages]
    with store.transaction() as con:
        con.executemany(_PAGE_UPSERT, rows)
    return len(rows)


def get_page(store: Store, page_id: str) -> dict:
    with store.connect(read_only=True) as con:
        frame = _frame(con, "SELECT * FROM extraction_pages WHERE page_id = ?", [page_id])
    if frame.empty:
        raise KeyError(f"no extraction page {page_id}")
    return frame.iloc[0].to_dict()


def load_pages(store: Store) -> pd.DataFrame:
    with store.connect(read_only=True) as con:
        return _frame(con, "SELECT * FROM extraction_pages ORDER BY page_id")


def save_extractions(store: Store, rows: Iterable[dict]) -> int:
    """Store extractions (page_id, round, extractor, model, prompt_hash, raw_response, record,
    validation_errors, error, tokens); re-ingesting the same page/round/extractor replaces it."""
    rows = list(rows)
    if not rows:
        return 0
    values = [[r["page_id"], int(r["round"]), r["extractor"], r.get("model"), r.get("prompt_hash"),
               r.get("raw_response"), _dump(r.get("record")), _dump(r.get("validation_errors") or None),
               r.get("error"), r.get("input_tokens"), r.get("output_tokens")] for r in rows]
    with store.transaction() as con:
        con.executemany(_EXTRACTION_UPSERT, values)
    return len(values)


def _page_round_filter(page_id: str | None, round: int | None) -> tuple[str, list]:
    """A WHERE clause (or nothing) selecting one page and/or one round, with its parameters."""
    where: list[str] = []
    params: list[object] = []
    if page_id is not None:
        where.append("page_id = ?")
        params.append(page_id)
    if round is not None:
        where.append("round = ?")
        params.append(int(round))
    return (" WHERE " + " AND ".join(where) if where else ""), params


def load_extractions(store: Store, page_id: str | None = None, round: int | None = None) -> pd.DataFrame:
    """Extractions with ``record`` and ``validation_errors`` decoded."""
    clause, params = _page_round_filter(page_id, round)
    sql = "SELECT * FROM extractions" + clause
    with store.connect(read_only=True) as con:
        frame = _frame(con, sql + " ORDER BY page_id, round, extractor", params)
    for column in ("record", "validation_errors"):
        frame[column] = frame[column].map(_load) if not frame.empty else frame[column]
    return frame


# --- outcomes and discrepancies --------------------------------------------------------------

def save_outcomes(store: Store, outcomes: list[dict]) -> list[str]:
    """Store the comparisons of several pages (keys: page_id, round, merge_status, format,
    base_record, merged_record, diffs) in one transaction; returns the page ids written.

    A page and round on which someone already decided is left as it is: its discrepancies are
    what the decisions refer to.
    """
    written: list[str] = []
    with store.transaction() as con:
        for o in outcomes:
            page_id, rnd = o["page_id"], int(o["round"])
            con.lock(f"decisions:{page_id}:{rnd}")  # never replace a comparison someone is deciding on
            decided = con.execute("SELECT count(*) FROM review_decisions WHERE page_id = ? AND round = ?",
                                  [page_id, rnd]).fetchone()[0]
            if decided:
                continue
            con.execute("DELETE FROM discrepancies WHERE page_id = ? AND round = ?", [page_id, rnd])
            con.execute(
                _OUTCOME_UPSERT,
                [page_id, rnd, o["merge_status"], o.get("format"), _dump(o.get("base_record")),
                 _dump(o.get("merged_record"))])
            if o.get("diffs"):
                con.executemany(
                    "INSERT INTO discrepancies (page_id, round, path, field, category, value_a, value_b, queued) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [[page_id, rnd, d["path"], d["field"], d["category"], _dump(d["a"]), _dump(d["b"]),
                      bool(d["queued"])] for d in o["diffs"]])
            written.append(page_id)
    return written


def save_outcome(store: Store, page_id: str, round: int, merge_status: str, fmt: str | None,
                 base_record: dict | None, merged_record: dict | None, diffs: list[dict]) -> bool:
    """One page's comparison (see ``save_outcomes``); False when decisions kept it unchanged."""
    return bool(save_outcomes(store, [{"page_id": page_id, "round": round, "merge_status": merge_status,
                                       "format": fmt, "base_record": base_record,
                                       "merged_record": merged_record, "diffs": diffs}]))


def set_promotions(store: Store, rows: list[tuple[str, int, int | None, str | None]]) -> None:
    """Remember which item version each (page, round) became, or why it could not be promoted."""
    if not rows:
        return
    with store.transaction() as con:
        set_promotions_con(con, rows)


def set_promotions_con(con, rows: list[tuple[str, int, int | None, str | None]]) -> None:
    """``set_promotions`` inside the caller's transaction (promotion writes items and this at once)."""
    if rows:
        con.executemany("UPDATE extraction_outcomes SET promoted_version = ?, promotion_error = ?, "
                        "promoted_at = current_timestamp WHERE page_id = ? AND round = ?",
                        [[version, error, page_id, int(rnd)] for page_id, rnd, version, error in rows])


def set_promotion(store: Store, page_id: str, round: int, version: int | None, error: str | None) -> None:
    set_promotions(store, [(page_id, round, version, error)])


def load_outcomes(store: Store, round: int | None = None) -> pd.DataFrame:
    sql = ("SELECT o.*, p.exercise, p.question, p.item_id, p.dataset FROM extraction_outcomes o "
           "JOIN extraction_pages p USING (page_id)")
    params: list = []
    if round is not None:
        sql += " WHERE o.round = ?"
        params.append(int(round))
    with store.connect(read_only=True) as con:
        frame = _frame(con, sql + " ORDER BY o.round, o.page_id", params)
    for column in ("base_record", "merged_record"):
        if not frame.empty:
            frame[column] = frame[column].map(_load)
    return frame


def get_outcome(store: Store, page_id: str, round: int) -> dict:
    frame = load_outcomes(store, round)
    frame = frame[frame["page_id"] == page_id]
    if frame.empty:
        raise KeyError(f"page {page_id} has no comparison in round {round}")
    return frame.iloc[0].to_dict()


def load_discrepancies(store: Store, round: int | None = None, page_id: str | None = None,
                       queued_only: bool = False) -> pd.DataFrame:
    """Discrepancies with the page's format and exercise, values decoded."""
    where: list[str] = []
    params: list[object] = []
    if round is not None:
        where.append("d.round = ?")
        params.append(int(round))
    if page_id is not None:
        where.append("d.page_id = ?")
        params.append(page_id)
    if queued_only:
        where.append("d.queued")
    sql = ("SELECT d.*, o.format, p.exercise FROM discrepancies d "
           "JOIN extraction_outcomes o USING (page_id, round) JOIN extraction_pages p USING (page_id)"
           + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY d.round, d.page_id, d.path")
    with store.connect(read_only=True) as con:
        frame = _frame(con, sql, params)
    for column in ("value_a", "value_b"):
        if not frame.empty:
            frame[column] = frame[column].map(_load)
    return frame


# --- decisions (append-only) ------------------------------------------------------------------

_LATEST_SQL = (
    "SELECT * FROM review_decisions WHERE decision_id IN (SELECT decision_id FROM ("
    "SELECT decision_id, row_number() OVER (PARTITION BY path ORDER BY decision_id DESC) AS latest_order "
    "FROM review_decisions WHERE page_id = ? AND round = ? {path}) ranked WHERE latest_order = 1) "
    "ORDER BY decision_id"
)
DECISION_COLUMNS = ("page_id", "round", "path", "action", "reviewer", "previous_value", "new_value", "note",
                    "based_on", "role", "shown_order", "source", "conflict", "decision_key", "decided_at",
                    "actor_subject", "actor_provider", "actor_name")


def latest_decisions(store: Store, page_id: str, round: int) -> dict[str, dict]:
    """The latest decision per field path of a page in a round (any reviewer, any role)."""
    with store.connect(read_only=True) as con:
        frame = _frame(con, _LATEST_SQL.format(path=""), [page_id, int(round)])
    out = {}
    for row in frame.to_dict("records"):
        row["previous_value"] = _load(row["previous_value"])
        row["new_value"] = _load(row["new_value"])
        out[row["path"]] = row
    return out


def _records(con, sql: str, params: list) -> list[dict]:
    """Rows as dicts straight from the cursor (the decision write path: no DataFrame round trip)."""
    cur = con.execute(sql, params)
    columns = [d[0] for d in cur.description]
    return [dict(zip(columns, row)) for row in cur.fetchall()]


def _decoded(frame: pd.DataFrame | list[dict]) -> list[dict]:
    rows = frame if isinstance(frame, list) else frame.to_dict("records")
    for row in rows:
        row["previous_value"] = _load(row.get("previous_value"))
        row["new_value"] = _load(row.get("new_value"))
    return rows


_DECISION_KEY = ("page_id", "round", "path", "reviewer", "role")
_DECISION_UPSERT = (
    f"INSERT INTO review_decisions (decision_id, {', '.join(DECISION_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in range(len(DECISION_COLUMNS) + 1))}) "
    f"ON CONFLICT ({', '.join(_DECISION_KEY)}) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in ("decision_id", *DECISION_COLUMNS) if c not in _DECISION_KEY))
_LOG_INSERT = (f"INSERT INTO review_decision_log (decision_id, {', '.join(DECISION_COLUMNS)}) "
               f"VALUES ({', '.join('?' for _ in range(len(DECISION_COLUMNS) + 1))})")


def _insert_decision(con, row: dict) -> int:
    """Write one decision: it replaces the same reviewer's decision on the field in the same role (the
    unique key holds across servers), under a new id, and the version is appended to the audit log."""
    values: dict[str, Any] = {name: row.get(name) for name in DECISION_COLUMNS}
    values["round"] = int(values["round"])
    values["previous_value"] = _dump(values["previous_value"])
    values["new_value"] = _dump(values["new_value"])
    values["role"] = values["role"] or "review"
    values["source"] = values["source"] or "page"
    values["conflict"] = bool(values["conflict"])
    if values["decided_at"] is None:
        values["decided_at"] = datetime.now(UTC).replace(tzinfo=None)
    decision_id = con.next_ids("review_decision_seq", 1)[0]
    params = [decision_id, *(values[n] for n in DECISION_COLUMNS)]
    con.execute(_DECISION_UPSERT, params)
    con.execute(_LOG_INSERT, params)
    return int(decision_id)


def _same_decision(current: dict | None, row: dict) -> bool:
    """Whether ``row`` repeats the reviewer's current decision (a second click): nothing to write."""
    if not current:
        return False
    return (current.get("action") == row.get("action") and _dump(current.get("new_value")) == _dump(row.get("new_value"))
            and (current.get("note") or None) == (row.get("note") or None))


def append_decision(store: Store, page_id: str, round: int, path: str, action: str, reviewer: str,
                    previous_value: Any, new_value: Any, note: str | None,
                    based_on: int | None, *, check: Callable[[list[dict]], dict] | None = None,
                    page_decisions: list | None = None, then: Callable[[Any, list[dict]], None] | None = None,
                    **extra: Any) -> int:
    """Write one decision; ``check`` sees the field's decisions inside the same transaction.

    A reviewer has one decision per field and role: a new one replaces theirs (the audit log keeps
    every version), and the same decision again writes nothing and returns the stored id.

    ``check(decisions) -> dict`` may raise (``ReviewConflict``: someone decided after what this
    reviewer saw) or return columns to set (``conflict``, ...). Without ``check`` the old rule
    applies: the field's latest decision must be ``based_on``. When two sessions write at the
    same moment they take turns: on PostgreSQL the transaction holds the field's lock, and a DuckDB file
    aborts one of the two transactions, which is retried; either way the second sees the first's
    decision (after three tries the one-line ``StoreConflictError`` reaches the caller).
    ``extra`` sets the other columns (role, shown_order, source, conflict, decision_key).
    ``page_decisions``: a list that receives every decision of the page and round as stored
    after this one, read in the same transaction (the caller sees whether the page is done
    without another connection). ``then(con, page_decisions)`` runs in the same transaction after
    the write (the promotion a decision completes commits with it, or neither does).
    """
    row = dict(page_id=page_id, round=int(round), path=path, action=action, reviewer=reviewer,
               previous_value=previous_value, new_value=new_value, note=note, based_on=based_on, **extra)
    for attempt in range(3):
        try:
            with store.transaction() as con:
                con.lock(f"decisions:{page_id}:{int(round)}:{path}")
                decisions = _decoded(_records(con, "SELECT * FROM review_decisions WHERE page_id = ? AND round = ? "
                                            "AND path = ? ORDER BY decision_id", [page_id, int(round), path]))
                if check is None:
                    latest = decisions[-1] if decisions else None
                    latest_id = int(latest["decision_id"]) if latest else None
                    if latest_id != (int(based_on) if based_on is not None else None):
                        raise ReviewConflict(path, latest)
                    return _insert_decision(con, row)
                row = {**row, **(check(decisions) or {})}
                own = [d for d in decisions if d["reviewer"] == reviewer and (d.get("role") or "review")
                       == (row.get("role") or "review")]
                if own and _same_decision(own[-1], row):  # the same decision again: it stays one row
                    decision_id = int(own[-1]["decision_id"])
                else:
                    decision_id = _insert_decision(con, row)
                if page_decisions is not None or then is not None:
                    fresh = _decoded(_records(con, "SELECT * FROM review_decisions WHERE page_id = ? "
                                                   "AND round = ? ORDER BY decision_id", [page_id, int(round)]))
                    if page_decisions is not None:
                        page_decisions[:] = fresh
                    if then is not None:
                        then(con, fresh)
                return decision_id
        except StoreConflictError:
            if attempt == 2:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def append_decisions(store: Store, rows: list[dict]) -> list[int]:
    """Write several prepared decisions in one transaction (imports), in order; returns their ids.

    Each replaces the same reviewer's decision on the field in the same role (the audit log keeps
    every version). A row whose ``decision_key`` is already in the audit log is skipped (two imports of one file at the same
    moment store it once)."""
    if not rows:
        return []
    with store.transaction() as con:
        con.lock("decision_keys")
        keys = [row["decision_key"] for row in rows if row.get("decision_key")]
        stored: set[str] = set()
        if keys:
            with con.keys(keys, "TEXT") as wanted:
                stored = {r[0] for r in con.execute(
                    f"SELECT decision_key FROM review_decision_log WHERE decision_key IN (SELECT key FROM {wanted})"
                ).fetchall()}
        return [_insert_decision(con, row) for row in rows if row.get("decision_key") not in stored]


def decision_keys(store: Store) -> set[str]:
    """Content keys of every stored decision (an import skips lines already stored)."""
    with store.connect(read_only=True) as con:
        return {r[0] for r in con.execute("SELECT decision_key FROM review_decision_log "
                                          "WHERE decision_key IS NOT NULL").fetchall()}


def load_decisions(store: Store, page_id: str | None = None, round: int | None = None) -> pd.DataFrame:
    """The audit log: every version of every decision, oldest first (a change of mind is a new row
    here; the current decisions are ``current_decisions``)."""
    return _decision_frame(store, "review_decision_log", page_id, round)


def current_decisions(store: Store, page_id: str | None = None, round: int | None = None) -> pd.DataFrame:
    """Each reviewer's current decision per field and role, oldest first."""
    return _decision_frame(store, "review_decisions", page_id, round)


def _decision_frame(store: Store, table: str, page_id: str | None, round: int | None) -> pd.DataFrame:
    clause, params = _page_round_filter(page_id, round)
    with store.connect(read_only=True) as con:
        frame = _frame(con, f"SELECT * FROM {table}{clause} ORDER BY decision_id", params)
    for column in ("previous_value", "new_value"):
        if not frame.empty:
            frame[column] = frame[column].map(_load)
    return frame


def set_round_reviewers(store: Store, dataset: str, round: int, reviewers: int, set_by: str | None,
                        actor: dict | None = None, blind_adjudication: bool = False) -> None:
    """How many independent reviewers each page of a round needs, and whether adjudicators see
    reviewer names (appended; the latest counts). ``actor``: the identity columns of who set it."""
    actor = actor or {}
    with store.transaction() as con:
        con.execute("INSERT INTO review_rounds (dataset, round, reviewers, set_by, blind_adjudication, actor_subject, "
                    "actor_provider, actor_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [dataset, int(round), int(reviewers), set_by, bool(blind_adjudication),
                     actor.get("actor_subject"), actor.get("actor_provider"), actor.get("actor_name")])


def load_round_changes(store: Store) -> pd.DataFrame:
    """Every change of a round's settings, oldest first (the audit log)."""
    with store.connect(read_only=True) as con:
        return _frame(con, "SELECT dataset, round, reviewers, blind_adjudication, set_by, actor_subject, "
                           "actor_provider, actor_name, set_at FROM review_rounds ORDER BY set_at")


# The latest setting per dataset and round; settings made in one transaction share set_at, and then
# the one inserted last wins (the engines name the insertion order differently).
_ROUNDS_SQL = Variants(*(
    "SELECT dataset, round, reviewers, blind_adjudication, set_by, set_at FROM (SELECT dataset, round, reviewers, "
    f"blind_adjudication, set_by, set_at, row_number() OVER (PARTITION BY dataset, round ORDER BY set_at DESC, "
    f"{order} DESC) AS latest_order FROM review_rounds) ranked WHERE latest_order = 1" for order in ("rowid", "ctid")))


def load_review_data(store: Store, round: int | None = None) -> dict[str, pd.DataFrame]:
    """Everything the review logic needs, read through ONE connection (a page redraw opens one).

    Keys: ``pages``, ``outcomes`` (with dataset, item_id, exercise), ``queued`` (queued
    discrepancies with format, dataset, exercise), ``decisions`` (values decoded), ``rounds``
    (reviewer requirement per dataset and round) and ``seeds`` (seeded gold pages, ``review_gold``).
    """
    where_round = " WHERE o.round = ?" if round is not None else ""
    params = [int(round)] if round is not None else []
    with store.connect(read_only=True) as con:
        pages = _frame(con, "SELECT * FROM extraction_pages ORDER BY page_id")
        outcomes = _frame(con, "SELECT o.*, p.exercise, p.question, p.item_id, p.dataset FROM extraction_outcomes o "
                               "JOIN extraction_pages p USING (page_id)" + where_round + " ORDER BY o.round, o.page_id",
                          params)
        queued = _frame(con, "SELECT d.*, o.format, p.exercise, p.dataset FROM discrepancies d "
                             "JOIN extraction_outcomes o USING (page_id, round) JOIN extraction_pages p USING (page_id) "
                             "WHERE d.queued" + (" AND d.round = ?" if round is not None else "")
                             + " ORDER BY d.round, d.page_id, d.path", params)
        decisions = _frame(con, "SELECT * FROM review_decisions"
                                + (" WHERE round = ?" if round is not None else "") + " ORDER BY decision_id", params)
        rounds = _frame(con, con.sql(_ROUNDS_SQL) + " ORDER BY dataset, round")
        seeds = review_gold.seeds_con(con)
    for frame, columns in ((outcomes, ("base_record", "merged_record")), (queued, ("value_a", "value_b")),
                           (decisions, ("previous_value", "new_value"))):
        for column in columns:
            if not frame.empty:
                frame[column] = frame[column].map(_load)
    return {"pages": pages, "outcomes": outcomes, "queued": queued, "decisions": decisions, "rounds": rounds,
            "seeds": seeds}

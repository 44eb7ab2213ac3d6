"""Tables of people who sit the exam: respondents (pseudonym -> name), exam sessions, forms, attempts.

Why a table of its own for names: a person is an examinee stored as a model of kind ``human`` under
a pseudonym, so every score frame, chart, `show` output and export carries the pseudonym only; the
name (typed, signed in, or the identifier an imported results file used) lives here and nowhere
else, and only the guarded functions of ``eduart_core.humans`` hand it out.

The statements are portable SQL (``?`` placeholders, standard types, JSON kept as TEXT).
"""
from __future__ import annotations

import json
from typing import Any

import pandas as pd

from .core import Store

RESPONDENT_COLUMNS = ["respondent", "human_group", "name", "name_key", "external_id", "subject", "provider",
                      "session_id", "origin", "created_at"]
#: What a view may show about a respondent (never the name, the subject or an import's identifier).
PUBLIC_COLUMNS = ["respondent", "human_group", "session_id", "origin", "created_at"]
SESSION_COLUMNS = ["session_id", "dataset", "title", "human_group", "per_cell", "formats", "languages",
                   "time_limit_s", "seed", "status", "actor_subject", "actor_provider", "actor_name", "created_at",
                   "closed_at"]
FORM_COLUMNS = ["session_id", "respondent", "position", "item_id", "elapsed_s", "clock_from", "answered",
                "timed_out", "response_id"]


def _has_table(con, table: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                            [table]).fetchone()[0])


def _frame(cur, columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(cur.fetchall(), columns=columns, dtype=object)
    for column in columns:
        if column.endswith("_at"):  # timestamps as pandas timestamps (JSON and CSV write them)
            frame[column] = pd.to_datetime(frame[column])
    return frame


def _read(store: Store, table: str, columns: list[str], where: str = "", params: list | None = None,
          order: str = "") -> pd.DataFrame:
    if not store.exists():
        return pd.DataFrame(columns=columns)
    with store.connect(read_only=True) as con:
        if not _has_table(con, table):  # a store from before people sat the exam (reading never migrates)
            return pd.DataFrame(columns=columns)
        sql = f"SELECT {', '.join(columns)} FROM {table}" + (f" WHERE {where}" if where else "") + (
            f" ORDER BY {order}" if order else "")
        return _frame(con.execute(sql, params or []), columns)


# ---------------------------------------------------------------- respondents

def add_respondent_con(con, respondent: str, group: str, *, origin: str, name: str | None = None,
                       name_key: str | None = None, external_id: str | None = None, subject: str | None = None,
                       provider: str | None = None, session_id: str | None = None) -> None:
    """Insert one respondent (inside the caller's transaction); an existing pseudonym keeps its row
    but takes the new group."""
    con.execute(
        "INSERT INTO respondents (respondent, human_group, name, name_key, external_id, subject, provider, "
        "session_id, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (respondent) DO UPDATE SET human_group = excluded.human_group",
        [respondent, group, name, name_key, external_id, subject, provider, session_id, origin])


def load_respondents(store: Store) -> pd.DataFrame:
    """Every respondent with name and identifiers (callers check who may see names)."""
    return _read(store, "respondents", RESPONDENT_COLUMNS, order="respondent")


def respondent_groups(store: Store) -> pd.DataFrame:
    """Every respondent's pseudonym, group, session and origin: no name, no subject, no identifier."""
    return _read(store, "respondents", PUBLIC_COLUMNS, order="respondent")


def find_respondent(store: Store, session_id: str, *, subject: str | None = None,
                    name_key: str | None = None) -> str | None:
    """The pseudonym of the person who sits ``session_id`` (by signed-in subject, else by folded name)."""
    if subject:
        where, params = "session_id = ? AND subject = ?", [session_id, subject]
    elif name_key:
        where, params = "session_id = ? AND subject IS NULL AND name_key = ?", [session_id, name_key]
    else:
        return None
    found = _read(store, "respondents", ["respondent"], where, params, order="created_at")
    return str(found["respondent"].iloc[0]) if len(found) else None


def respondent_of(store: Store, respondent: str) -> dict | None:
    """One respondent's row (name included: callers check who may see it), or None."""
    found = _read(store, "respondents", RESPONDENT_COLUMNS, "respondent = ?", [respondent])
    return found.iloc[0].to_dict() if len(found) else None


def imported_pseudonyms(store: Store, external_ids) -> dict[str, str]:
    """Import identifier -> pseudonym of the respondents an earlier import registered."""
    ids = [str(i) for i in external_ids]
    if not ids:
        return {}
    found = _read(store, "respondents", ["external_id", "respondent"],
                  f"external_id IN ({', '.join('?' for _ in ids)})", ids)
    return dict(zip(found["external_id"].astype(str), found["respondent"].astype(str)))


def count_runs(store: Store, dataset: str, prefix: str) -> int:
    """How many runs of ``dataset`` have an id starting with ``prefix`` (a builder's own runs)."""
    with store.connect(read_only=True) as con:
        return int(con.execute("SELECT count(*) FROM runs WHERE dataset = ? AND run_id LIKE ?",
                               [dataset, prefix + "%"]).fetchone()[0])


def taken_pseudonyms(store: Store) -> set[str]:
    """Every model key in the store (a new pseudonym must be none of them)."""
    if not store.exists():
        return set()
    with store.connect(read_only=True) as con:
        return {str(r[0]) for r in con.execute("SELECT model FROM models").fetchall()}


# ---------------------------------------------------------------- sessions

def add_session(store: Store, row: dict[str, Any]) -> None:
    """Insert one exam session (``row`` holds the SESSION_COLUMNS it sets; lists as JSON text)."""
    values = dict(row)
    for key in ("formats", "languages"):
        values[key] = json.dumps(list(values.get(key) or []))
    columns = [c for c in SESSION_COLUMNS if c in values]
    with store.transaction() as con:
        con.execute(f"INSERT INTO exam_sessions ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})",
                    [values[c] for c in columns])


def _decoded_sessions(frame: pd.DataFrame) -> pd.DataFrame:
    for key in ("formats", "languages"):
        frame[key] = pd.Series([json.loads(v) if isinstance(v, str) else [] for v in frame[key]], dtype=object,
                               index=frame.index)
    return frame


def load_sessions(store: Store, dataset: str | None = None) -> pd.DataFrame:
    """Exam sessions, newest first (every dataset unless one is named)."""
    where, params = ("dataset = ?", [dataset]) if dataset else ("", [])
    return _decoded_sessions(_read(store, "exam_sessions", SESSION_COLUMNS, where, params,
                                   order="created_at DESC, session_id"))


def get_session(store: Store, session_id: str) -> dict | None:
    found = _decoded_sessions(_read(store, "exam_sessions", SESSION_COLUMNS, "session_id = ?", [session_id]))
    return found.iloc[0].to_dict() if len(found) else None


def close_session(store: Store, session_id: str, closed_at) -> None:
    with store.transaction() as con:
        con.execute("UPDATE exam_sessions SET status = 'closed', closed_at = ? WHERE session_id = ?",
                    [closed_at, session_id])


# ---------------------------------------------------------------- forms and attempts

def add_form_con(con, session_id: str, respondent: str, item_ids: list[str], clock_from: float | None) -> None:
    """The form of one respondent (positions 1..n) and the attempt, with the first item's clock running."""
    for position, item_id in enumerate(item_ids, start=1):
        con.execute("INSERT INTO exam_forms (session_id, respondent, position, item_id, clock_from) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [session_id, respondent, position, str(item_id), clock_from if position == 1 else None])
    con.execute("INSERT INTO exam_attempts (session_id, respondent, status) VALUES (?, ?, 'sitting')",
                [session_id, respondent])


def load_form(store: Store, session_id: str, respondent: str) -> pd.DataFrame:
    """One respondent's form in order, with each item's clock and whether it was answered."""
    return _read(store, "exam_forms", FORM_COLUMNS, "session_id = ? AND respondent = ?", [session_id, respondent],
                 order="position")


def attempt_status(store: Store, session_id: str, respondent: str) -> str | None:
    found = _read(store, "exam_attempts", ["status"], "session_id = ? AND respondent = ?", [session_id, respondent])
    return str(found["status"].iloc[0]) if len(found) else None


def set_clock_con(con, session_id: str, respondent: str, position: int, elapsed_s: float,
                  clock_from: float | None) -> None:
    """Store the time spent on one item so far and whether its clock runs (``clock_from``)."""
    con.execute("UPDATE exam_forms SET elapsed_s = ?, clock_from = ? WHERE session_id = ? AND respondent = ? "
                "AND position = ?", [float(elapsed_s), clock_from, session_id, respondent, int(position)])


def set_attempt_con(con, session_id: str, respondent: str, status: str) -> None:
    con.execute("UPDATE exam_attempts SET status = ?, updated_at = current_timestamp WHERE session_id = ? "
                "AND respondent = ?", [status, session_id, respondent])


def mark_answered_con(con, session_id: str, respondent: str, position: int, elapsed_s: float, timed_out: bool,
                      response_id: int | None) -> None:
    con.execute("UPDATE exam_forms SET answered = TRUE, elapsed_s = ?, clock_from = NULL, timed_out = ?, "
                "response_id = ? WHERE session_id = ? AND respondent = ? AND position = ?",
                [float(elapsed_s), bool(timed_out), response_id, session_id, respondent, int(position)])


def response_id_con(con, run_id: str, request_key: str) -> int | None:
    row = con.execute("SELECT max(response_id) FROM responses WHERE run_id = ? AND request_key = ?",
                      [run_id, request_key]).fetchone()
    return int(row[0]) if row and row[0] is not None else None


_PROGRESS_SQL = """
    SELECT a.session_id, a.respondent, r.human_group, a.status, count(f.position) AS n_items,
           sum(CASE WHEN f.answered THEN 1 ELSE 0 END) AS n_answered,
           sum(CASE WHEN f.timed_out THEN 1 ELSE 0 END) AS n_timed_out,
           sum(CASE WHEN f.answered THEN f.elapsed_s ELSE 0 END) AS answered_seconds,
           a.started_at, a.updated_at
    FROM exam_attempts a
    JOIN respondents r ON r.respondent = a.respondent
    LEFT JOIN exam_forms f ON f.session_id = a.session_id AND f.respondent = a.respondent
    {where}
    GROUP BY a.session_id, a.respondent, r.human_group, a.status, a.started_at, a.updated_at
    ORDER BY a.session_id, a.started_at, a.respondent"""
PROGRESS_COLUMNS = ["session_id", "respondent", "human_group", "status", "n_items", "n_answered", "n_timed_out",
                    "answered_seconds", "started_at", "updated_at"]


def session_progress(store: Store, session_id: str | None = None) -> pd.DataFrame:
    """Per respondent of a session (or of every session): status, items answered, time: pseudonyms only."""
    if not store.exists():
        return pd.DataFrame(columns=PROGRESS_COLUMNS)
    with store.connect(read_only=True) as con:
        if not _has_table(con, "exam_attempts"):
            return pd.DataFrame(columns=PROGRESS_COLUMNS)
        where, params = ("WHERE a.session_id = ?", [session_id]) if session_id else ("", [])
        return _frame(con.execute(_PROGRESS_SQL.format(where=where), params), PROGRESS_COLUMNS)


__all__ = ["FORM_COLUMNS", "PROGRESS_COLUMNS", "PUBLIC_COLUMNS", "RESPONDENT_COLUMNS", "SESSION_COLUMNS",
           "add_form_con", "add_respondent_con", "add_session", "attempt_status", "close_session", "count_runs",
           "find_respondent",
           "get_session", "imported_pseudonyms", "load_form", "load_respondents", "load_sessions",
           "mark_answered_con", "respondent_groups", "respondent_of", "response_id_con", "session_progress",
           "set_attempt_con", "set_clock_con", "taken_pseudonyms"]

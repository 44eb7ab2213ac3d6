"""Human grades of model answers, grading rounds and the answers a round serves: the SQL of grading.

Why append-only: a grade, like a review decision, is evidence. A grader who changes their mind adds
a row (the latest per answer, grader, criterion and role counts); nothing is overwritten, so who
graded what, when, is always known. ``grade_key`` is a hash of what a row says, so importing the
same file twice adds nothing.
"""
from __future__ import annotations

import pandas as pd

from ..vocab import GOLD_CHECK_ROLE
from .connection import Connection
from .core import Store
from .judges import has_table
from .runs import insert_frame

GRADE_COLUMNS = ("grade_key", "dataset", "item_id", "model", "condition", "rubric", "rubric_hash", "criterion",
                 "grader", "role", "points", "response_id", "round", "source", "simulated", "note", "recorded_by",
                 "actor_subject", "actor_provider", "actor_name")
GRADE_READ_COLUMNS = ("grade_id", *GRADE_COLUMNS, "graded_at")
ROUND_ANSWER_COLUMNS = ("token", "dataset", "rubric", "round", "item_id", "model", "condition", "response_id",
                        "position")


def add_grades_con(con: Connection, rows: list[dict]) -> int:
    """Insert grades whose ``grade_key`` is new; returns how many were added. ``graded_at`` may be given."""
    if not rows:
        return 0
    keys = list(dict.fromkeys(str(r["grade_key"]) for r in rows))
    known: set[str] = set()
    for start in range(0, len(keys), 1000):
        chunk = keys[start:start + 1000]
        known |= {r[0] for r in con.execute(
            f"SELECT grade_key FROM grades WHERE grade_key IN ({', '.join('?' for _ in chunk)})", chunk).fetchall()}
    fresh, seen = [], set()
    for r in rows:
        key = str(r["grade_key"])
        if key in known or key in seen:
            continue
        seen.add(key)
        fresh.append(r)
    if not fresh:
        return 0
    columns = list(GRADE_COLUMNS) + (["graded_at"] if any(r.get("graded_at") is not None for r in fresh) else [])
    frame = pd.DataFrame([{c: r.get(c) for c in columns} for r in fresh], columns=columns)
    for column in ("grade_key", "dataset", "item_id", "model", "condition", "rubric", "rubric_hash", "criterion",
                   "grader", "role", "source", "note", "recorded_by", "actor_subject", "actor_provider", "actor_name"):
        frame[column] = pd.Series([None if v is None else str(v) for v in frame[column]], dtype=object)
    frame["points"] = frame["points"].astype(float)
    frame["response_id"] = pd.to_numeric(frame["response_id"], errors="coerce").astype("Int64")
    frame["round"] = pd.to_numeric(frame["round"], errors="coerce").astype("Int64")
    frame["simulated"] = frame["simulated"].fillna(False).astype(bool)
    if "graded_at" in frame:
        now = pd.Timestamp.now(tz="UTC").tz_localize(None)
        frame["graded_at"] = pd.to_datetime(frame["graded_at"], utc=True).dt.tz_localize(None).fillna(now)
    insert_frame(con, "grades", frame)
    return len(frame)


def load_grades(store: Store, dataset: str | None = None, rubric: str | None = None,
                gold_checks: bool = False) -> pd.DataFrame:
    """Every grade row (append-only history), oldest first. Marks on seeded gold answers (role
    ``gold_check``) only with ``gold_checks``: nothing that settles, scores or calibrates reads them."""
    with store.connect(read_only=True) as con:
        return load_grades_con(con, dataset, rubric, gold_checks)


def load_grades_con(con: Connection, dataset: str | None = None,
                    rubric: str | None = None, gold_checks: bool = False) -> pd.DataFrame:
    if not has_table(con, "grades"):
        return pd.DataFrame(columns=list(GRADE_READ_COLUMNS))
    frame = con.frame(
        f"SELECT {', '.join(GRADE_READ_COLUMNS)} FROM grades WHERE (? IS NULL OR dataset = ?) "
        "AND (? IS NULL OR rubric = ?) AND (? OR role <> ?) ORDER BY grade_id",
        [dataset, dataset, rubric, rubric, bool(gold_checks), GOLD_CHECK_ROLE])
    frame["simulated"] = frame["simulated"].astype(bool)
    return frame


# ---------------------------------------------------------------- rounds

def latest_round_con(con: Connection, dataset: str, rubric: str) -> tuple[int, int] | None:
    """(round, graders per answer) of the newest grading round of a dataset and rubric, or None."""
    if not has_table(con, "grading_rounds"):
        return None
    row = con.execute("SELECT round, graders FROM grading_rounds WHERE dataset = ? AND rubric = ? "
                      "ORDER BY round DESC LIMIT 1", [dataset, rubric]).fetchone()
    return (int(row[0]), int(row[1])) if row else None


def create_round_con(con: Connection, dataset: str, rubric: str, graders: int, actor: dict,
                     answers: list[dict]) -> int:
    """A new round (number = last + 1) serving ``answers`` (token, item_id, model, condition,
    response_id, position); returns its number. ``actor`` holds the identity columns of who set it
    (``actor_subject``, ``actor_provider``, ``actor_name``)."""
    last = latest_round_con(con, dataset, rubric)
    number = (last[0] if last else 0) + 1
    con.execute("INSERT INTO grading_rounds (dataset, rubric, round, graders, set_by, actor_subject, actor_provider, "
                "actor_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [dataset, rubric, number, int(graders), actor["actor_subject"], actor["actor_subject"],
                 actor["actor_provider"], actor["actor_name"]])
    if answers:
        frame = pd.DataFrame([{**a, "dataset": dataset, "rubric": rubric, "round": number} for a in answers],
                             columns=list(ROUND_ANSWER_COLUMNS))
        for column in ("token", "dataset", "rubric", "item_id", "model", "condition"):
            frame[column] = frame[column].astype(object)
        for column in ("round", "response_id", "position"):
            frame[column] = frame[column].astype("int64")
        insert_frame(con, "grading_answers", frame)
    return number


def set_round_graders_con(con: Connection, dataset: str, rubric: str, round_: int, graders: int,
                          actor: dict) -> None:
    """Change how many graders each answer of a round needs (a new row would be a new round: update;
    the row then names who changed it last)."""
    con.execute("UPDATE grading_rounds SET graders = ?, set_by = ?, actor_subject = ?, actor_provider = ?, "
                "actor_name = ?, set_at = current_timestamp WHERE dataset = ? AND rubric = ? AND round = ?",
                [int(graders), actor["actor_subject"], actor["actor_subject"], actor["actor_provider"],
                 actor["actor_name"], dataset, rubric, int(round_)])


def round_answers_con(con: Connection, dataset: str, rubric: str, round_: int) -> pd.DataFrame:
    """The answers a round serves, in serving order."""
    if not has_table(con, "grading_answers"):
        return pd.DataFrame(columns=list(ROUND_ANSWER_COLUMNS))
    return con.frame(f"SELECT {', '.join(ROUND_ANSWER_COLUMNS)} FROM grading_answers WHERE dataset = ? "
                       "AND rubric = ? AND round = ? ORDER BY position", [dataset, rubric, int(round_)])


def round_answer_con(con: Connection, token: str) -> dict | None:
    if not has_table(con, "grading_answers"):
        return None
    row = con.execute(f"SELECT {', '.join(ROUND_ANSWER_COLUMNS)} FROM grading_answers WHERE token = ?",
                      [str(token)]).fetchone()
    return dict(zip(ROUND_ANSWER_COLUMNS, row)) if row else None


def response_texts_con(con: Connection, response_ids: list[int]) -> dict[int, tuple]:
    """response_id -> (raw_text, parsed_answers JSON text) of stored responses."""
    out: dict[int, tuple] = {}
    ids = sorted({int(r) for r in response_ids})
    for start in range(0, len(ids), 1000):
        chunk = ids[start:start + 1000]
        for rid, raw, parsed in con.execute(
                f"SELECT response_id, raw_text, CAST(parsed_answers AS TEXT) FROM responses "
                f"WHERE response_id IN ({', '.join('?' for _ in chunk)})", chunk).fetchall():
            out[int(rid)] = (raw, parsed)
    return out


def item_record_con(con: Connection, dataset: str, item_id: str) -> tuple[int, str] | None:
    """(version, record JSON text) of the current version of an item."""
    row = con.execute("SELECT version, CAST(record AS TEXT) FROM items WHERE dataset = ? AND item_id = ? "
                      "AND is_current", [dataset, str(item_id)]).fetchone()
    return (int(row[0]), row[1]) if row else None


def item_image_con(con: Connection, dataset: str, item_id: str) -> str | None:
    """The image hash of the current version of an item (None without an image)."""
    row = con.execute("SELECT image_hash FROM items WHERE dataset = ? AND item_id = ? AND is_current",
                      [dataset, str(item_id)]).fetchone()
    return row[0] if row and row[0] else None


def model_keys_con(con: Connection) -> dict[str, str]:
    """Every way a model may be named (key or display name) -> its key."""
    out: dict[str, str] = {}
    for key, name in con.execute("SELECT model, display_name FROM models").fetchall():
        out[str(name)] = str(key)
    for key, _name in con.execute("SELECT model, display_name FROM models").fetchall():
        out[str(key)] = str(key)
    return out


def current_rounds_con(con: Connection, dataset: str) -> pd.DataFrame:
    """The newest grading round of every rubric of a dataset (rubric, round, graders, set_by, set_at)."""
    columns = ["rubric", "round", "graders", "set_by", "set_at"]
    if not has_table(con, "grading_rounds"):
        return pd.DataFrame(columns=columns)
    return con.frame(
        "SELECT rubric, round, graders, set_by, set_at FROM (SELECT *, row_number() OVER (PARTITION BY rubric "
        "ORDER BY round DESC) AS newest FROM grading_rounds WHERE dataset = ?) AS r WHERE newest = 1 ORDER BY rubric",
        [dataset])[columns]

"""Study tables in the store: published per-task / per-dimension results, external scores, model access.

Why tables of their own: VQArt-Bench and MUSE publish one score per model and task (or reasoning
dimension), not per answer format, so they do not fit `reference_type_scores`. Each printed cell is
kept twice, as the fraction the analyses use and as the string the paper printed, because the
consistency checks need to know how much the printing rounded (``0.80`` allows 0.005 either way,
``50.9`` percent 0.0005). The papers' own statements about their tables (an ordering, a chance
level, a claimed leader) are stored beside them so that the checks can test them.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import UserError
from ..vocab import REFERENCE_KIND, access_level
from .connection import Connection
from .core import Store
from .errors import StoreError
from .overrides import LATEST_OVERRIDES_SQL, has_overrides_table
from .runs import latest_clause
from .scores import model_access_sql, model_kind_sql

COLUMN_FIELDS = ("column_name", "kind", "dimension", "position", "n_items", "name_in_table", "name_in_text",
                 "chance", "chance_basis", "answer_format", "scorer")
CELL_FIELDS = ("model", "column_name", "score", "printed", "unit", "table_order")
STATEMENT_FIELDS = ("statement", "subject", "value", "source")


def _has(con: Connection, table: str, column: str | None = None) -> bool:
    """Whether the store has a table (or a column of it). A read-only connection does not migrate, so a
    store written before the study migration lacks these tables: it reads as holding no study data."""
    return con.has_table(table) if column is None else con.has_column(table, column)


def set_model_access_con(con: Connection, model: str, access: str | None) -> None:
    """Record whether a model is open or closed (any published spelling; unknown -> NULL)."""
    con.execute("UPDATE models SET access = ? WHERE model = ?", [access_level(access), model])


def write_study_reference(store: Store, dataset: str, title: str, description: str, models: list[dict],
                          columns: pd.DataFrame, cells: pd.DataFrame, statements: pd.DataFrame) -> dict[str, int]:
    """Register an aggregate-only study dataset and (re)fill its tables in one transaction.

    ``models``: dicts with model, display_name, family, access, api_model_id. ``columns``,
    ``cells``, ``statements``: frames with `COLUMN_FIELDS`, `CELL_FIELDS`, `STATEMENT_FIELDS`.
    Idempotent: the dataset's rows are replaced, so loading twice leaves the same content.
    """
    from .runs import ensure_dataset_con, ensure_model_con

    for name, frame, fields in (("columns", columns, COLUMN_FIELDS), ("cells", cells, CELL_FIELDS),
                                ("statements", statements, STATEMENT_FIELDS)):
        missing = [f for f in fields if f not in frame.columns]
        if missing:
            raise UserError(f"study reference {dataset}: {name} lack column(s) {', '.join(missing)}")
    known = {m["model"] for m in models}
    unknown = sorted(set(cells["model"]) - known)
    if unknown:
        raise UserError(f"study reference {dataset}: cells name unregistered model(s) {', '.join(unknown)}")
    with store.transaction() as con:
        ensure_dataset_con(con, dataset, title, REFERENCE_KIND, simulated=False, aggregate_only=True,
                           description=description)
        for m in models:
            ensure_model_con(con, m["model"], m["display_name"], m.get("family") or None, None,
                             m.get("api_model_id") or None, simulated=False)
            set_model_access_con(con, m["model"], m.get("access"))
        for table in ("reference_columns", "reference_cells", "reference_statements"):
            con.execute(f"DELETE FROM {table} WHERE dataset = ?", [dataset])
        _insert(con, "reference_columns", dataset, columns, COLUMN_FIELDS)
        _insert(con, "reference_cells", dataset, cells, CELL_FIELDS)
        _insert(con, "reference_statements", dataset, statements, STATEMENT_FIELDS)
    return {"models": len(models), "columns": len(columns), "cells": len(cells), "statements": len(statements)}


def _insert(con: Connection, table: str, dataset: str, frame: pd.DataFrame,
            fields: Iterable[str]) -> None:
    fields = list(fields)
    if frame.empty:
        return
    rows = frame[fields].astype(object).where(frame[fields].notna(), None)
    values = [[dataset, *row] for row in rows.itertuples(index=False, name=None)]
    marks = ", ".join("?" for _ in range(len(fields) + 1))
    con.executemany(f"INSERT INTO {table} (dataset, {', '.join(fields)}) VALUES ({marks})", values)


def read_reference_cells(store: Store, dataset: str) -> pd.DataFrame:
    """Printed cells: model (display name), family, access, column_name, score (fraction), printed, unit, table_order."""
    with store.connect(read_only=True) as con:
        if not _has(con, "reference_cells"):
            return pd.DataFrame(columns=["model", "family", "access", *CELL_FIELDS[1:]])
        return con.frame(
            f"""SELECT m.display_name AS model, m.family, {model_access_sql(con)} AS access, c.column_name, c.score,
                       c.printed, c.unit, c.table_order
               FROM reference_cells c JOIN models m ON m.model = c.model
               WHERE c.dataset = ? ORDER BY c.table_order, m.display_name, c.column_name""",
            [dataset],
        )


def read_reference_columns(store: Store, dataset: str) -> pd.DataFrame:
    """The printed table's columns with kind, dimension, n_items, names in table and text, chance."""
    with store.connect(read_only=True) as con:
        if not _has(con, "reference_columns"):
            return pd.DataFrame(columns=list(COLUMN_FIELDS))
        return con.frame(
            f"SELECT {', '.join(COLUMN_FIELDS)} FROM reference_columns WHERE dataset = ? "
            "ORDER BY position NULLS LAST, column_name", [dataset])


def read_reference_statements(store: Store, dataset: str) -> pd.DataFrame:
    """What the paper states about its table (ordering, chance, claimed leader), with the source."""
    with store.connect(read_only=True) as con:
        if not _has(con, "reference_statements"):
            return pd.DataFrame(columns=list(STATEMENT_FIELDS))
        return con.frame(
            f"SELECT {', '.join(STATEMENT_FIELDS)} FROM reference_statements WHERE dataset = ? "
            "ORDER BY statement, subject", [dataset])


def dataset_conditions(store: Store, dataset: str) -> list[str]:
    """Prompt conditions a dataset has runs in (a study asked in one condition has no motivation page)."""
    with store.connect(read_only=True) as con:
        return [r[0] for r in con.execute("SELECT DISTINCT condition FROM runs WHERE dataset = ? ORDER BY 1",
                                          [dataset]).fetchall()]


# ---------------------------------------------------------------- external benchmark scores

def write_external_scores(store: Store, frame: pd.DataFrame, source: str) -> dict[str, int]:
    """Insert or replace (model, benchmark) scores; returns counts added and replaced."""
    with store.transaction() as con:
        con.lock("external_scores")
        before = {(m, b) for m, b in con.execute("SELECT model, benchmark FROM external_scores").fetchall()}
        rows = [[str(r.model), str(r.benchmark), float(r.score), source] for r in frame.itertuples(index=False)]
        con.executemany("DELETE FROM external_scores WHERE model = ? AND benchmark = ?", [r[:2] for r in rows])
        con.executemany("INSERT INTO external_scores (model, benchmark, score, source) VALUES (?, ?, ?, ?)", rows)
    replaced = sum(1 for r in rows if (r[0], r[1]) in before)
    return {"added": len(rows) - replaced, "replaced": replaced}


def read_external_scores(store: Store) -> pd.DataFrame:
    """Every imported external score: model (as named in the file), benchmark, score, source."""
    with store.connect(read_only=True) as con:
        if not _has(con, "external_scores"):
            return pd.DataFrame(columns=["model", "benchmark", "score", "source"])
        return con.frame("SELECT model, benchmark, score, source FROM external_scores ORDER BY benchmark, model")


# ---------------------------------------------------------------- answers behind the study analyses

def _latest(con: Connection, extra: str = "", one_condition: bool = False) -> str:
    """The response a statistic uses, as in `scores.load_scores`: per model x condition x item the
    latest response of repetition 0 that arrived (`runs.latest_clause`: the marker written with the
    response; a transport error is no answer and leaves the item out). ``one_condition``: a second
    parameter after the dataset names the one prompt condition read (the latest is chosen within a
    condition, so the rows are those of every condition with the others left out)."""
    return f"""
    WITH latest AS (
        SELECT r.response_id, u.model AS model_key, u.condition, r.item_id{extra}
        FROM responses r JOIN runs u USING (run_id)
        WHERE u.dataset = ? {"AND u.condition = ?" if one_condition else ""} AND {latest_clause(con)}
          AND (CASE WHEN u.repetition <> 0 THEN u.repetition ELSE r.repetition END) = 0
    )"""


def load_item_scores(store: Store, dataset: str, profile: str, overrides: bool = True) -> pd.DataFrame:
    """model (display name), condition, item_id, score: the lean score rows of the study tables.

    Same responses as `scores.load_scores` (see `_latest`), without the item columns: the study
    views take those from the items they have loaded anyway, which keeps a 200,000-row read fast.
    ``overrides``: a reviewer's score override replaces the computed score, as in `load_scores`.
    """
    with store.connect(read_only=True) as con:
        reviewed = overrides and has_overrides_table(con)
        sql = _latest(con) + (f", ov AS ({LATEST_OVERRIDES_SQL})" if reviewed else "") + f"""
            SELECT m.display_name AS model, {model_kind_sql(con)} AS kind, l.condition, l.item_id,
                   {"coalesce(ov.score, s.score)" if reviewed else "s.score"} AS score
            FROM latest l JOIN models m ON m.model = l.model_key
            JOIN scores s ON s.response_id = l.response_id AND s.profile = ?
            {"LEFT JOIN ov ON ov.response_id = l.response_id AND ov.profile = s.profile "
             "AND ov.item_version = s.item_version AND ov.score IS NOT NULL" if reviewed else ""}"""
        frame = con.frame(sql, [dataset, profile])
    frame["score"] = frame["score"].astype(float)
    return frame


@dataclass(frozen=True)
class DistinctAnswers:
    """The answers of `load_answer_rows` grouped by what an answer's status reads, with who gave each.

    Why: a status depends on the answer and its item only, and a large panel repeats most answers
    (50 simulated models x 5,000 items: 94,000 distinct of 250,000), so the database groups them
    and each distinct answer is classified once; the examinees of a group are small integers.
    """

    examinees: pd.DataFrame  #: model (display name), kind, condition: one row per model x condition
    answers: pd.DataFrame    #: item_id, parsed_answers (JSON text), parse_error, raw_text: one row per group
    counts: np.ndarray       #: how many answers each group holds
    given_by: np.ndarray     #: the examinee row of every answer, group after group (``counts`` long each)


#: Reads of `load_distinct_answers` before it says the store keeps changing under it.
DISTINCT_READ_ATTEMPTS = 3


def load_distinct_answers(store: Store, dataset: str, condition: str | None = None) -> DistinctAnswers:
    """The responses of `load_answer_rows` (no score), one row per distinct (item, parsed answer,
    parse error, raw text) with the examinees (model x condition) that gave it. ``condition``:
    that prompt condition only (None: every one).

    The examinees are numbered in one statement and named in another; on PostgreSQL a run written
    between the two would shift the numbers, so they are named before and after the grouped read
    and the read is repeated when the two differ (a DuckDB file cannot change while it is read).
    """
    one = condition is not None
    pairs = ("SELECT model_key, condition, CAST(row_number() OVER (ORDER BY model_key, condition) - 1 AS INTEGER) AS e "
             "FROM (SELECT DISTINCT u.model AS model_key, u.condition FROM runs u "
             f"WHERE u.dataset = ? {'AND u.condition = ?' if one else ''}) pairs")
    params = [dataset] + ([condition] if one else [])
    with store.connect(read_only=True) as con:
        named = (f"WITH ex AS ({pairs}) SELECT ex.e, m.display_name AS model, {model_kind_sql(con)} AS kind, "
                 "ex.condition FROM ex LEFT JOIN models m ON m.model = ex.model_key ORDER BY ex.e")
        grouped_sql = _latest(con, ", r.raw_text, r.parse_error, CAST(r.parsed_answers AS TEXT) AS parsed_answers",
                              one_condition=one) + f""", ex AS ({pairs})
            SELECT l.item_id, l.parsed_answers, l.parse_error, l.raw_text, array_agg(ex.e) AS given_by
            FROM latest l JOIN ex ON ex.model_key = l.model_key AND ex.condition = l.condition
            GROUP BY l.item_id, l.parsed_answers, l.parse_error, l.raw_text"""
        for _ in range(DISTINCT_READ_ATTEMPTS):
            examinees = con.frame(named, params)
            grouped = con.frame(grouped_sql, params + params, large=True)
            if examinees.equals(con.frame(named, params)):
                break
        else:
            raise StoreError(f"the runs of {dataset} kept changing while their answers were read; try again")
    lists = grouped.pop("given_by").to_numpy(dtype=object)
    counts = np.fromiter((len(x) for x in lists), dtype=np.int64, count=len(lists))
    given_by = np.concatenate(list(lists)).astype(np.int64) if len(lists) else np.empty(0, dtype=np.int64)
    # e runs 0..n-1 and every pair has its row (a left join), so the lists index the frame's rows
    return DistinctAnswers(examinees.drop(columns="e").reset_index(drop=True), grouped, counts, given_by)


def load_answer_rows(store: Store, dataset: str, profile: str | None) -> pd.DataFrame:
    """One row per model x condition x item (the responses of `load_item_scores`; computed scores) with what was answered.

    Columns: model (display name), kind, condition, item_id, parsed_answers (JSON text), parse_error,
    raw_text, score (under ``profile``; NaN when the response has no score). What the distractor and
    invalid-answer analyses read: which option a model chose and whether its answer could be read.
    ``profile=None``: the same rows without the score column (an answer's status reads no score,
    and the join with the scores costs about as much as the rest of a 500,000-row read).
    """
    with store.connect(read_only=True) as con:
        scored = profile is not None
        sql = _latest(con, ", r.raw_text, r.parse_error, CAST(r.parsed_answers AS TEXT) AS parsed_answers") + f"""
            SELECT m.display_name AS model, {model_kind_sql(con)} AS kind, l.condition, l.item_id, l.parsed_answers,
                   l.parse_error, l.raw_text{", s.score" if scored else ""}
            FROM latest l JOIN models m ON m.model = l.model_key
            {"LEFT JOIN scores s ON s.response_id = l.response_id AND s.profile = ?" if scored else ""}
            ORDER BY m.display_name, l.condition, l.item_id"""
        frame = con.frame(sql, [dataset] + ([profile] if scored else []), large=True)
    if scored:
        frame["score"] = frame["score"].astype(float)
    return frame

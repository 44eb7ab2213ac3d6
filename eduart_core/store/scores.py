"""Scores: replacing them, and reading the long score frame every chart and statistic uses.

Why scores can always be recomputed: they are derived from stored responses and the gold item. The
scoring stage (``eduart_core.scoring.rescore``) reads the responses to rescore here
(``rescore_rows_con``), computes their score rows and hands them back (``replace_scores_con``); the
store itself never parses or scores.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ..errors import UserError
from ..vocab import (
    BASELINE_KIND,
    DEFAULT_PROFILE,
    JUDGE_PROFILE_PREFIX,
    MODEL_KIND,
    PAPER_PROFILE,
    PROFILES,
    SIMULATED_KIND,
    STRICT_PROFILE,
    is_profile_name,
)
from .connection import Connection
from .core import Store
from .overrides import LATEST_OVERRIDES_SQL, has_overrides_table
from .runs import insert_frame, latest_clause


def _check_readable(profile: str) -> None:
    """A profile scores can be read under: a built-in one, or a judge profile (stored by judging)."""
    if not is_profile_name(profile):
        raise UserError(f"unknown scoring profile {profile!r}; use {' or '.join(PROFILES)} or a judge profile "
                        f"({JUDGE_PROFILE_PREFIX}JUDGE/RUBRIC)")


#: The columns of a score row as the scoring stage computes it (``replace_scores_con``).
SCORE_ROW_COLUMNS = ["response_id", "profile", "item_version", "score", "correct", "details", "scorer"]

#: A stored response with the item version it is scored against (what the scoring stage reads back).
_RESCORE_SELECT = """SELECT r.response_id, r.raw_text, CAST(r.llm_answer AS TEXT), i.version, CAST(i.record AS TEXT)
           FROM responses r JOIN runs u USING (run_id)"""


def rescore_rows_con(con: Connection, dataset: str | None = None, item_ids: Iterable[str] | None = None,
                     types: Iterable[str] | None = None) -> list[tuple]:
    """(response_id, raw_text, llm_answer text, version, record text) of the stored responses to
    rescore against their items' current versions (all, or of a dataset, some items, some formats)."""
    ids = None if item_ids is None else [str(i) for i in item_ids]
    kinds = None if types is None else [str(t) for t in types]
    return con.execute(
        f"""{_RESCORE_SELECT}
           JOIN items i ON i.dataset = u.dataset AND i.item_id = r.item_id AND i.is_current
           WHERE (? IS NULL OR u.dataset = ?) AND (? IS NULL OR r.item_id = ANY(?))
             AND (? IS NULL OR i.type = ANY(?))""",
        [dataset, dataset, ids, ids, kinds, kinds],
    ).fetchall()


def version_rows_con(con: Connection, dataset: str, versions: dict[str, int]) -> list[tuple]:
    """The same rows as ``rescore_rows_con`` for the stored responses of some items, against given
    versions of them (item_id -> version) rather than the current ones."""
    rows: list[tuple] = []
    for item_id, version in versions.items():
        rows += con.execute(
            f"""{_RESCORE_SELECT}
               JOIN items i ON i.dataset = u.dataset AND i.item_id = r.item_id AND i.version = ?
               WHERE u.dataset = ? AND r.item_id = ?""", [int(version), dataset, str(item_id)]).fetchall()
    return rows


def replace_scores_con(con: Connection, response_ids: list[int], profiles: Iterable[str],
                       frame: pd.DataFrame) -> int:
    """Replace the scores of ``profiles`` of the given responses with ``frame`` (score rows computed by
    the scoring stage, ``SCORE_ROW_COLUMNS``) inside the caller's transaction; returns the rows written.
    Every response named loses its old rows, also one that has no new row (its item can no longer be
    scored)."""
    con.lock("scores")  # two rescores of the same responses take turns (each replaces the rows it saw)
    with con.keys(response_ids) as rescored:
        con.execute(f"DELETE FROM scores WHERE response_id IN (SELECT key FROM {rescored}) AND profile = ANY(?)",
                    [list(profiles)])
    insert_frame(con, "scores", frame, json_columns=("details",))
    return len(frame)


def require_dataset(store: Store, dataset: str) -> None:
    with store.connect(read_only=True) as con:
        if not con.execute("SELECT 1 FROM datasets WHERE dataset = ?", [dataset]).fetchone():
            names = [r[0] for r in con.execute("SELECT dataset FROM datasets ORDER BY 1").fetchall()]
            raise UserError(f"no dataset {dataset!r} in store {store.path} (have: {', '.join(names) or 'none'})")


def model_access_sql(con: Connection, alias: str = "m") -> str:
    """SQL for a model's access ('open' | 'closed' | NULL), also on a store older than that column
    (a read-only connection does not migrate)."""
    return f"{alias}.access" if con.has_column("models", "access") else "CAST(NULL AS TEXT)"


def model_kind_sql(con: Connection, alias: str = "m") -> str:
    """SQL for the kind of a model row (`models` aliased ``alias``).

    Why not just ``m.kind``: a read-only connection does not migrate, so a store written before
    the model-kinds migration has no kind column yet; its kinds are then derived the way the
    migration does.
    """
    derived = (f"CASE WHEN {alias}.simulated THEN '{SIMULATED_KIND}' "
               f"WHEN {alias}.provider = 'offline' THEN '{BASELINE_KIND}' ELSE '{MODEL_KIND}' END")
    return f"coalesce({alias}.kind, {derived})" if con.has_column("models", "kind") else derived


#: The condition that keeps variant items out (`load_scores`, `load_score_table`): ``alias`` is the items
#: table's alias with its dot ("i." or "").
VARIANT_FREE = " AND {alias}record->>'variant_of' IS NULL"

SCORE_COLUMNS = ["model", "condition", "item_id", "type", "language", "has_image", "profile", "score", "correct"]


def load_scores(store: Store, profile: str = DEFAULT_PROFILE, dataset: str | None = None,
                include_repetitions: bool = False, include_details: bool = False,
                overrides: bool = True, variants: bool = False) -> pd.DataFrame:
    """The long score frame: one row per model x condition x item (see CONTRACTS.md).

    The latest response wins when an item was answered twice in the same model x condition. A
    request that failed (``error`` set: no answer arrived) is not an answer: like a missing answer
    file in the published data, it leaves the item out rather than scoring it 0.
    An examinee's repeats (``repetition`` 0..K-1: the main answer and the repeats of ``run --repeat``
    or of imported ``"repeat": k`` lines) are averaged per item: ``score`` is the mean over the
    repeats answered, ``correct`` is True when the answer was right in at least half of them,
    ``overridden`` when any was overridden, ``scorer`` that of the lowest repeat, and ``n_repeats``
    counts them, so K repeats never count as K examinees (`averaged_over_repeats`). With
    ``include_repetitions`` every repeat is its own row (a ``repetition`` column tells them apart;
    ``n_repeats`` is then 1): the input of the stability statistics. ``model`` is the display name; ``model_key`` the stable key; ``task`` and ``dimension``
    are the item's metadata (None when unset), so results can be reported per dimension. ``scorer``
    names the rule set of each score (open text: with its embedding model, also in
    ``attrs["embedding_models"]``). ``include_details`` adds the per-element ``details`` (lists).
    ``kind`` is the model kind (a ``baseline`` row is a reference, which the selection leaves out
    unless switched in).

    ``overrides`` (the "with reviewed overrides" switch, on by default): a response a researcher
    re-scored by hand (``store.overrides``) carries the human score, and ``correct`` follows it
    (score >= 0.5); ``overridden`` marks those rows. Off: every score is the computed one.
    A judge profile (``judge:<judge>/<rubric>``) reads the scores a judge gave, like any other.

    ``variants``: variant items (``variant_of`` set: a rotation, a perturbed image, a translation;
    `eduart_core.variants`) are left out unless asked, so they never enter a dataset's leaderboard or
    item statistics by accident; the invariance views ask for them.
    """
    _check_readable(profile)
    if dataset is not None:
        require_dataset(store, dataset)
    only_sources = "" if variants else VARIANT_FREE.format(alias="i.")
    rep = "CASE WHEN u.repetition <> 0 THEN u.repetition ELSE r.repetition END"
    partition = f"u.dataset, u.model, u.condition, r.item_id, {rep}"
    where_rep = ""
    with store.connect(read_only=True) as con:
        kind = model_kind_sql(con)
        use = overrides and has_overrides_table(con)  # a store from before the review studio has none
        reviewed = f", ov AS ({LATEST_OVERRIDES_SQL})" if use else ""
        reviewed_join = ("LEFT JOIN ov ON ov.response_id = l.response_id AND ov.profile = s.profile "
                         "AND ov.item_version = s.item_version AND ov.score IS NOT NULL") if use else ""
        score = "coalesce(ov.score, s.score)" if use else "s.score"
        correct = "CASE WHEN ov.score IS NULL THEN s.correct ELSE ov.score >= 0.5 END" if use else "s.correct"
        flag = "ov.score IS NOT NULL" if use else "FALSE"
        sql = f"""
        WITH latest AS (
            SELECT response_id, dataset, model_key, condition, item_id, repetition FROM (
                SELECT r.response_id, u.dataset, u.model AS model_key, u.condition, r.item_id, {rep} AS repetition,
                       row_number() OVER (PARTITION BY {partition} ORDER BY r.response_id DESC) AS latest_order
                FROM responses r JOIN runs u USING (run_id)
                WHERE (? IS NULL OR u.dataset = ?) AND r.error IS NULL {where_rep}) ranked
            WHERE latest_order = 1
        ){reviewed}
        SELECT m.display_name AS model, l.condition, l.item_id, i.type, i.language, i.has_image,
               s.profile, {score} AS score, {correct} AS correct, m.family, m.simulated, l.dataset, l.model_key,
               l.repetition, {flag} AS overridden,
               i.record->>'task' AS task,
               i.record->>'dimension' AS dimension,
               {kind} AS kind,
               s.scorer{", CAST(s.details AS TEXT) AS details" if include_details else ""}
        FROM latest l
        JOIN scores s ON s.response_id = l.response_id AND s.profile = ?
        JOIN items i ON i.dataset = l.dataset AND i.item_id = l.item_id AND i.is_current{only_sources}
        JOIN models m ON m.model = l.model_key
        {reviewed_join}
        ORDER BY l.dataset, m.display_name, l.condition, l.item_id, l.repetition"""
        frame = con.frame(sql, [dataset, dataset, profile])
    for column in ("has_image", "correct", "simulated", "overridden"):
        frame[column] = frame[column].astype(bool)
    frame["score"] = frame["score"].astype(float)
    frame["scorer"] = pd.Series([None if _missing(v) else v for v in frame["scorer"]], dtype=object,
                                index=frame.index)
    if include_details:
        frame["details"] = pd.Series([[] if _missing(v) else json.loads(v) for v in frame["details"]],
                                     dtype=object, index=frame.index)
    frame["n_repeats"] = np.ones(len(frame), dtype=np.int64)
    if not include_repetitions:
        frame = averaged_over_repeats(frame).drop(columns=["repetition"])
    frame = frame.reset_index(drop=True)
    frame.attrs["embedding_models"] = _embedding_models(frame)
    return frame


#: The columns of the per-repeat frame (``load_scores(..., include_repetitions=True)``).
REPEAT_FRAME_COLUMNS = ["model", "condition", "item_id", "type", "language", "has_image", "profile", "score",
                        "correct", "family", "simulated", "dataset", "model_key", "repetition", "overridden", "task",
                        "dimension", "kind", "scorer", "n_repeats"]


def repeat_examinees(store: Store, dataset: str | None = None) -> list[tuple[str, str]]:
    """(model key, condition) of every examinee with an answer at a repetition other than 0 (sorted).

    Why on its own: whether there are repeats does not depend on the scoring profile, so a caller
    can ask it once per data version and skip the read of every profile's repeats when there are none.
    """
    if dataset is not None:
        require_dataset(store, dataset)
    with store.connect(read_only=True) as con:
        pairs = con.execute(
            """SELECT DISTINCT u.model, u.condition FROM responses r JOIN runs u USING (run_id)
               WHERE (? IS NULL OR u.dataset = ?) AND r.error IS NULL
                 AND (CASE WHEN u.repetition <> 0 THEN u.repetition ELSE r.repetition END) <> 0""",
            [dataset, dataset]).fetchall()
    return sorted((str(m), str(c)) for m, c in pairs)


def load_repeat_scores(store: Store, profile: str = DEFAULT_PROFILE, dataset: str | None = None,
                       overrides: bool = True, examinees: Iterable[tuple[str, str]] | None = None) -> pd.DataFrame:
    """The per-repeat long frame of the examinees that have repeats: one row per model x condition x
    item x repetition (``load_scores(..., include_repetitions=True)``), only for the model x condition
    pairs with an answer at a repetition other than 0; empty (same columns) when none has repeats.
    ``examinees``: those pairs (`repeat_examinees`), when already known.

    Why a loader of its own: stability needs every repeat, while every other statistic reads the
    averaged frame; a store without repeats answers from one small query instead of a full read.
    """
    _check_readable(profile)
    pairs = repeat_examinees(store, dataset) if examinees is None else list(examinees)
    if not pairs:
        return pd.DataFrame(columns=REPEAT_FRAME_COLUMNS)
    frame = load_scores(store, profile, dataset, include_repetitions=True, overrides=overrides)
    keep = pd.MultiIndex.from_frame(frame[["model_key", "condition"]].astype(str)).isin(
        pd.MultiIndex.from_tuples(pairs))
    return frame[keep].reset_index(drop=True)


#: The keys of one examinee's answer to one item (its repeats share them).
REPEAT_KEYS = ("dataset", "model_key", "condition", "item_id")


def averaged_over_repeats(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per examinee x item from a frame with one row per repeat (``repetition`` column).

    Why: an item statistic (p, r_pb, IRT) and the leaderboard count examinees; K repeats of one
    model are one examinee answering K times, so its score on the item is the mean over its
    repeats. ``correct``: right in at least half of the repeats; ``overridden``: any repeat was;
    the other columns come from the lowest repeat; ``n_repeats`` is the number of repeats averaged.
    The frame must be sorted with the lowest repeat first within each key (as `load_scores` is).
    """
    if frame.empty or not (frame["repetition"] != 0).any():
        return frame
    keys = list(REPEAT_KEYS)
    grouped = frame.groupby(keys, sort=False, observed=True)
    first = grouped.head(1).reset_index(drop=True)
    folded = grouped.agg(score=("score", "mean"), share=("correct", "mean"), overridden=("overridden", "any"),
                         n_repeats=("score", "size")).reset_index()
    out = first.drop(columns=["score", "correct", "overridden", "n_repeats"]).merge(folded, on=keys, how="left")
    out["correct"] = out.pop("share") >= 0.5
    return out[list(frame.columns)]


def _embedding_models(frame: pd.DataFrame) -> list[str]:
    """The embedding models behind the frame's open-text scores; UserError when more than one.

    Why refuse: a similarity under one model is not comparable with one under another, so a mean
    over both would be a number about nothing. `set_embedding_model` rescores them all.
    """
    scorers = pd.unique(frame["scorer"].dropna())  # a few distinct names in 500,000 rows: look at each once
    models = sorted({str(s).split("+", 1)[1] for s in scorers if "+" in str(s)})
    if len(models) > 1:
        raise UserError(f"open-text scores in this store come from {len(models)} embedding models "
                        f"({', '.join(models)}); rescore them with one: python -m eduart_core score "
                        "--embedding-model MODEL")
    return models


#: Key columns of the encoded score table, in the long frame's column order.
TABLE_KEYS = ("model", "condition", "item_id", "type", "language", "has_image", "family", "simulated", "dataset",
              "model_key", "task", "dimension", "kind")


def load_score_table(store: Store, dataset: str, overrides: bool = True, variants: bool = False) -> pd.DataFrame:
    """The latest answer of every model x condition x item of one dataset with the scores of every
    profile side by side (``score_<profile>``, ``correct_<profile>``; NaN/False where a profile
    has no score), key columns encoded once as pandas categoricals.

    Why this shape: the dashboard used to read the long frame once per profile, and converting
    500,000 rows of text columns to Python strings cost several seconds. Here the database
    returns small integer codes (sorted like ``load_scores``: model display name, condition,
    item), the text of each key is read once from the small models and items tables, and
    ``long_scores`` derives the long frame of a profile without another read. The latest answered
    request per key and repeat (``responses.is_latest``, marked when written); an examinee's repeats
    are averaged per item as in ``load_scores`` (``n_repeats_<profile>`` counts them).
    Reviewed score overrides apply as in ``load_scores`` (``overridden_<profile>`` marks them), and
    ``kind`` is each model's kind, so the selection can keep baselines out. Besides the built-in
    profiles, every judge profile stored for the dataset has its columns (``store.judges``), and every
profile whose scores a harness recorded (``store.recorded``).
    """
    from .judges import stored_judge_profiles_con
    from .recorded import stored_recorded_profiles_con

    latest_sql = """
        WITH mk AS (SELECT model, CAST(row_number() OVER (ORDER BY display_name) - 1 AS INTEGER) AS m FROM models),
             ik AS (SELECT item_id, CAST(row_number() OVER (ORDER BY item_id) - 1 AS INTEGER) AS i
                    FROM items WHERE dataset = ? AND is_current{only_sources}),
             ck AS (SELECT condition, CAST(row_number() OVER (ORDER BY condition) - 1 AS INTEGER) AS c
                    FROM (SELECT DISTINCT condition FROM runs WHERE dataset = ?) conditions)
        SELECT r.response_id AS rid, mk.m, ck.c, ik.i,
               CAST(CASE WHEN u.repetition <> 0 THEN u.repetition ELSE r.repetition END AS BIGINT) AS rep
        FROM responses r JOIN runs u USING (run_id)
        JOIN mk ON mk.model = u.model JOIN ik ON ik.item_id = r.item_id JOIN ck ON ck.condition = u.condition
        WHERE u.dataset = ? AND {latest}"""
    only_sources = "" if variants else VARIANT_FREE.format(alias="")
    with store.connect(read_only=True) as con:
        if not con.execute("SELECT 1 FROM datasets WHERE dataset = ?", [dataset]).fetchone():
            names = [r[0] for r in con.execute("SELECT dataset FROM datasets ORDER BY 1").fetchall()]
            raise UserError(f"no dataset {dataset!r} in store {store.path} (have: {', '.join(names) or 'none'})")
        models = con.execute(f"SELECT m.model, m.display_name, m.family, m.simulated, {model_kind_sql(con)} "
                             "FROM models m ORDER BY m.display_name").fetchall()
        items = con.execute("SELECT item_id, type, language, has_image, record->>'task', record->>'dimension' "
                            f"FROM items WHERE dataset = ? AND is_current{only_sources} ORDER BY item_id", [dataset]).fetchall()
        conditions = [r[0] for r in con.execute("SELECT DISTINCT condition FROM runs WHERE dataset = ? ORDER BY 1",
                                                [dataset]).fetchall()]
        latest = con.numpy(latest_sql.format(latest=latest_clause(con), only_sources=only_sources), [dataset] * 3)
        profiles = [*PROFILES, *stored_judge_profiles_con(con, dataset), *stored_recorded_profiles_con(con, dataset)]
        rid = np.asarray(latest["rid"], dtype=np.int64)
        # The scores of those responses: a range scan (responses of a dataset are written together)
        # matched in numpy, about twice as fast as joining a million score rows in the database.
        profile_code = " ".join(f"WHEN '{p.replace(chr(39), chr(39) * 2)}' THEN {k}" for k, p in enumerate(profiles))
        span = [int(rid.min()) if len(rid) else 0, int(rid.max()) if len(rid) else -1]
        scorers = [r[0] for r in con.execute("SELECT DISTINCT scorer FROM scores WHERE response_id BETWEEN ? AND ? "
                                             "AND scorer IS NOT NULL ORDER BY 1", span).fetchall()]
        reviewed = overrides and has_overrides_table(con)  # a store from before the review studio has none
        score_rows = con.numpy(
            (f"WITH ov AS ({LATEST_OVERRIDES_SQL}) " if reviewed else "")
            + f"SELECT s.response_id, CAST(CASE s.profile {profile_code} ELSE -1 END AS SMALLINT) AS profile, "
            + ("coalesce(ov.score, s.score) AS score, CASE WHEN ov.score IS NULL THEN s.correct ELSE ov.score >= 0.5 "
               "END AS correct, ov.score IS NOT NULL AS overridden, " if reviewed else
               "s.score, s.correct, FALSE AS overridden, ")
            + "CAST(coalesce(array_position(CAST(? AS TEXT[]), s.scorer), 0) - 1 AS INTEGER) AS scorer FROM scores s "
            + ("LEFT JOIN ov ON ov.response_id = s.response_id AND ov.profile = s.profile "
               "AND ov.item_version = s.item_version AND ov.score IS NOT NULL " if reviewed else "")
            + "WHERE s.response_id BETWEEN ? AND ?", [scorers, *span])
    # as load_scores: model, condition, item (and the lowest repeat first)
    order = np.lexsort((latest["rep"], latest["i"], latest["c"], latest["m"]))
    codes = {k: np.asarray(latest[k], dtype=np.int64)[order] for k in ("m", "c", "i", "rep")}
    rid = rid[order]
    by_id = np.argsort(rid)
    sorted_ids = rid[by_id]
    found = np.searchsorted(sorted_ids, np.asarray(score_rows["response_id"], dtype=np.int64))
    found = np.minimum(found, max(len(sorted_ids) - 1, 0))
    hit = (sorted_ids[found] == score_rows["response_id"]) if len(sorted_ids) else np.zeros(0, dtype=bool)
    row = by_id[found] if len(sorted_ids) else found
    codes_of_profile = np.asarray(score_rows["profile"], dtype=np.int64)
    for k, profile in enumerate(profiles):
        chosen = hit & (codes_of_profile == k)
        score = np.full(len(rid), np.nan)
        score[row[chosen]] = np.asarray(score_rows["score"], dtype=float)[chosen]
        correct = np.zeros(len(rid), dtype=bool)
        correct[row[chosen]] = np.asarray(score_rows["correct"], dtype=bool)[chosen]
        overridden = np.zeros(len(rid), dtype=bool)
        overridden[row[chosen]] = np.asarray(score_rows["overridden"], dtype=bool)[chosen]
        codes[f"overridden_{profile}"] = overridden
        scorer = np.full(len(rid), -1, dtype=np.int64)
        scorer[row[chosen]] = np.asarray(score_rows["scorer"], dtype=np.int64)[chosen]
        codes[f"score_{profile}"], codes[f"correct_{profile}"] = score, correct
        codes[f"scorer_{profile}"] = pd.Categorical.from_codes(scorer, categories=pd.Index(scorers, dtype=object))
    return _decode_table(_fold_repeats(codes, profiles), models, items, conditions, dataset, profiles)


def _fold_repeats(codes: dict, profiles: list[str]) -> dict:
    """One entry per model x condition x item: each profile's score averaged over the repeats that
    have one (`averaged_over_repeats` says why and how), ``n_repeats_<profile>`` counting them.

    Rows arrive sorted by model, condition, item and repeat; without repeats (the usual store) the
    counts are all 1 and nothing is folded.
    """
    rep = codes.pop("rep")
    n = len(rep)
    if not (rep != 0).any():
        for profile in profiles:
            codes[f"n_repeats_{profile}"] = (~np.isnan(codes[f"score_{profile}"])).astype(np.int64)
        return codes
    m, c, i = codes["m"], codes["c"], codes["i"]
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = (m[1:] != m[:-1]) | (c[1:] != c[:-1]) | (i[1:] != i[:-1])
    starts = np.flatnonzero(new_group)
    out = {k: codes[k][starts] for k in ("m", "c", "i")}
    for profile in profiles:
        score = codes[f"score_{profile}"]
        has = ~np.isnan(score)
        count = np.add.reduceat(has.astype(np.int64), starts)
        total = np.add.reduceat(np.where(has, score, 0.0), starts)
        right = np.add.reduceat((codes[f"correct_{profile}"] & has).astype(np.int64), starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f"score_{profile}"] = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        out[f"correct_{profile}"] = (count > 0) & (2 * right >= count)
        out[f"overridden_{profile}"] = np.add.reduceat(codes[f"overridden_{profile}"].astype(np.int64), starts) > 0
        # the scorer of the lowest repeat that has a score under this profile
        position = np.where(has, np.arange(n), n)
        first = np.minimum.reduceat(position, starts)
        scorer = codes[f"scorer_{profile}"]
        pick = np.where(first < n, first, starts)
        out[f"scorer_{profile}"] = scorer[pick]
        out[f"n_repeats_{profile}"] = count
    return out


def _categorical(codes: np.ndarray, labels: list) -> pd.Categorical:
    """Codes into ``labels`` (None labels become missing values) as a categorical."""
    distinct = sorted({x for x in labels if x is not None})
    position = {x: k for k, x in enumerate(distinct)}
    recode = np.array([position.get(x, -1) if x is not None else -1 for x in labels] + [-1], dtype=np.int64)
    # Object categories, not pandas' Arrow strings: turning a column back into values (a chart,
    # a table, `to_numpy`) is then a numpy take, not an Arrow conversion of every row.
    return pd.Categorical.from_codes(recode[codes], categories=pd.Index(distinct, dtype=object))


def _decode_table(codes: dict, models: list, items: list, conditions: list, dataset: str,
                  profiles: list[str]) -> pd.DataFrame:
    m = np.asarray(codes["m"], dtype=np.int64)
    i = np.asarray(codes["i"], dtype=np.int64)
    c = np.asarray(codes["c"], dtype=np.int64)
    model_keys, names, families, simulated, kinds = (
        (list(col) for col in zip(*models)) if models else ([], [], [], [], []))
    item_ids, types, languages, images, tasks, dimensions = (
        (list(col) for col in zip(*items)) if items else ([], [], [], [], [], []))
    out = {
        "model": _categorical(m, names),
        "condition": _categorical(c, conditions),
        "item_id": _categorical(i, item_ids),
        "type": _categorical(i, types),
        "language": _categorical(i, languages),
        "has_image": np.asarray([bool(x) for x in images] + [False], dtype=bool)[i],
        "family": _categorical(m, families),
        "simulated": np.asarray([bool(x) for x in simulated] + [False], dtype=bool)[m],
        "dataset": pd.Categorical.from_codes(np.zeros(len(m), dtype=np.int64),
                                             categories=pd.Index([dataset], dtype=object)),
        "model_key": _categorical(m, model_keys),
        "task": _categorical(i, tasks),
        "dimension": _categorical(i, dimensions),
        "kind": _categorical(m, kinds),
    }
    for profile in profiles:
        out[f"score_{profile}"] = np.asarray(codes[f"score_{profile}"], dtype=float)
        out[f"correct_{profile}"] = np.asarray(codes[f"correct_{profile}"], dtype=bool)
        out[f"scorer_{profile}"] = codes[f"scorer_{profile}"]
        out[f"overridden_{profile}"] = np.asarray(codes[f"overridden_{profile}"], dtype=bool)
        out[f"n_repeats_{profile}"] = np.asarray(codes[f"n_repeats_{profile}"], dtype=np.int64)
    return pd.DataFrame(out)


def long_scores(table: pd.DataFrame, profile: str) -> pd.DataFrame:
    """The long score frame of one profile (``load_scores`` columns) from ``load_score_table``."""
    _check_readable(profile)
    if f"score_{profile}" not in table:
        have = [c[len("score_"):] for c in table.columns if c.startswith("score_")]
        raise UserError(f"no scores under profile {profile!r} in this dataset (profiles: {', '.join(have)})")
    score = table[f"score_{profile}"].to_numpy()
    keep = ~np.isnan(score)
    keys = table.loc[keep, list(TABLE_KEYS)] if not keep.all() else table[list(TABLE_KEYS)]
    frame = keys.reset_index(drop=True)
    frame.insert(6, "profile", pd.Categorical.from_codes(np.zeros(len(frame), dtype=np.int64),
                                                         categories=pd.Index([profile], dtype=object)))
    frame.insert(7, "score", score[keep])
    frame.insert(8, "correct", table[f"correct_{profile}"].to_numpy()[keep])
    frame.insert(13, "overridden", table[f"overridden_{profile}"].to_numpy()[keep])  # load_scores' column order
    frame["scorer"] = table[f"scorer_{profile}"].to_numpy()[keep] if len(frame) else pd.Categorical([])
    frame["n_repeats"] = table[f"n_repeats_{profile}"].to_numpy()[keep] if f"n_repeats_{profile}" in table \
        else np.ones(len(frame), dtype=np.int64)
    frame.attrs["embedding_models"] = _embedding_models(frame)  # refuses a mix, as load_scores does
    return frame


def load_responses(store: Store, dataset: str, item_id: str | None = None,
                   extra_profiles: Iterable[str] | None = None) -> pd.DataFrame:
    """Every stored response to one item, or to every item of the dataset when ``item_id`` is None
    (all models, conditions, repetitions), with the scores of both profiles.

    For the item inspector: raw text, parsed answer, motivation, errors, and per profile the score,
    correctness and per-element details (columns ``<profile>_score``, ``<profile>_correct``,
    ``<profile>_details``). ``is_latest`` marks the response the long frame uses: the stored marker, so
    a failed request never hides the answer before it. ``kind`` is the model kind (the selection
    leaves baselines and people out unless switched in). Judge profiles (``extra_profiles``; by default
    every one stored for the dataset) add their ``<profile>_score``, ``<profile>_correct`` and
    ``<profile>_details`` columns the same way.
    """
    if extra_profiles is None:
        from .judges import stored_judge_profiles_con

        with store.connect(read_only=True) as con:
            extra_profiles = stored_judge_profiles_con(con, dataset)
    extra = [p for p in dict.fromkeys(extra_profiles) if p not in PROFILES]
    for profile in extra:
        _check_readable(profile)
    extra_cols = "".join(f', x{k}.score AS "{p}_score", x{k}.correct AS "{p}_correct", '
                         f'CAST(x{k}.details AS TEXT) AS "{p}_details"' for k, p in enumerate(extra))
    extra_joins = "".join(f"""
        LEFT JOIN scores x{k} ON x{k}.response_id = r.response_id AND x{k}.profile = ?""" for k in range(len(extra)))
    sql = f"""
        SELECT r.item_id, m.display_name AS model, u.model AS model_key, m.family, m.simulated, u.condition,
               u.run_id, u.origin, CASE WHEN u.repetition <> 0 THEN u.repetition ELSE r.repetition END AS repetition,
               r.response_id, r.raw_text, CAST(r.llm_answer AS TEXT) AS llm_answer,
               CAST(r.parsed_answers AS TEXT) AS parsed_answers, r.motivation, r.parse_error, r.error,
               r.input_tokens, r.output_tokens, r.latency_s, r.image_sent, r.cost_usd, r.batch_job_id, r.created_at,
               st.score AS {STRICT_PROFILE}_score, st.correct AS {STRICT_PROFILE}_correct, CAST(st.details AS TEXT) AS {STRICT_PROFILE}_details,
               pa.score AS {PAPER_PROFILE}_score, pa.correct AS {PAPER_PROFILE}_correct, CAST(pa.details AS TEXT) AS {PAPER_PROFILE}_details,
               coalesce({{latest}}, false) AS is_latest, {{kind}} AS kind{extra_cols}
        FROM responses r JOIN runs u USING (run_id) JOIN models m ON m.model = u.model
        LEFT JOIN scores st ON st.response_id = r.response_id AND st.profile = ?
        LEFT JOIN scores pa ON pa.response_id = r.response_id AND pa.profile = ?{extra_joins}
        WHERE u.dataset = ? AND (? IS NULL OR r.item_id = ?)
        ORDER BY r.item_id, m.display_name, u.condition, repetition, r.response_id DESC"""
    item = None if item_id is None else str(item_id)
    with store.connect(read_only=True) as con:  # the stored marker: a failed request is never the latest
        frame = con.frame(sql.format(latest=latest_clause(con), kind=model_kind_sql(con)),
                          [STRICT_PROFILE, PAPER_PROFILE, *extra, dataset, item, item])
    for column in ("llm_answer", "parsed_answers", f"{STRICT_PROFILE}_details", f"{PAPER_PROFILE}_details",
                   *(f"{p}_details" for p in extra)):
        frame[column] = pd.Series([None if _missing(v) else json.loads(v) for v in frame[column]],
                                  dtype=object, index=frame.index)
    for column in ("raw_text", "motivation", "parse_error", "error"):  # missing text is None, not NaN
        frame[column] = pd.Series([None if _missing(v) else v for v in frame[column]], dtype=object,
                                  index=frame.index)
    return frame


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value))


def stats(store: Store) -> dict:
    """Counts of everything in the store, overall and per dataset (for `stats --json` and pages)."""
    with store.connect(read_only=True) as con:
        one = lambda sql, params=(): con.execute(sql, list(params)).fetchone()[0]  # noqa: E731
        pairs = lambda sql, params=(): {str(k): int(v) for k, v in con.execute(sql, list(params)).fetchall()}  # noqa: E731
        cur = "FROM items WHERE is_current"
        result: dict[str, Any] = {
            "store": str(store.path),
            "items": int(one(f"SELECT count(*) {cur}")),
            "items_by_type": pairs(f"SELECT type, count(*) {cur} GROUP BY 1 ORDER BY 1"),
            "items_by_language": pairs(f"SELECT coalesce(language, 'unknown'), count(*) {cur} GROUP BY 1 ORDER BY 1"),
            "items_with_image": int(one(f"SELECT count(*) {cur} AND has_image")),
            "items_with_data_issue": int(one(f"SELECT count(*) {cur} AND data_issue")),
            "item_versions": int(one("SELECT count(*) FROM items")),
            "images": int(one("SELECT count(*) FROM images")),
            "models": int(one("SELECT count(*) FROM models")),
            "simulated_models": int(one("SELECT count(*) FROM models WHERE simulated")),
            "runs": int(one("SELECT count(*) FROM runs")),
            "runs_in_progress": int(one("SELECT count(*) FROM runs WHERE status = 'running'")),
            "responses": int(one("SELECT count(*) FROM responses")),
            "scores": int(one("SELECT count(*) FROM scores")),
            "scores_by_profile": pairs("SELECT profile, count(*) FROM scores GROUP BY 1 ORDER BY 1"),
            "reference_models": int(one("SELECT count(DISTINCT model) FROM reference_type_scores")),
        }
        datasets: dict[str, dict] = {}
        for name, kind, simulated, aggregate_only in con.execute(
                "SELECT dataset, kind, simulated, aggregate_only FROM datasets ORDER BY dataset").fetchall():
            dcur = "FROM items WHERE is_current AND dataset = ?"
            datasets[name] = {
                "kind": kind, "simulated": bool(simulated), "aggregate_only": bool(aggregate_only),
                "items": int(one(f"SELECT count(*) {dcur}", [name])),
                "items_by_type": pairs(f"SELECT type, count(*) {dcur} GROUP BY 1 ORDER BY 1", [name]),
                "items_by_language": pairs(
                    f"SELECT coalesce(language, 'unknown'), count(*) {dcur} GROUP BY 1 ORDER BY 1", [name]),
                "items_with_image": int(one(f"SELECT count(*) {dcur} AND has_image", [name])),
                "items_with_data_issue": int(one(f"SELECT count(*) {dcur} AND data_issue", [name])),
                # a reference dataset has no runs: its models are those with published aggregates
                "models": int(one("SELECT count(DISTINCT model) FROM runs WHERE dataset = ?", [name])
                              or one("SELECT count(DISTINCT model) FROM reference_type_scores WHERE dataset = ?",
                                     [name])),
                "runs": int(one("SELECT count(*) FROM runs WHERE dataset = ?", [name])),
                "runs_in_progress": int(one("SELECT count(*) FROM runs WHERE dataset = ? AND status = 'running'",
                                            [name])),
                "responses": int(one("SELECT count(*) FROM responses r JOIN runs u USING (run_id) "
                                     "WHERE u.dataset = ?", [name])),
                "scores": int(one("SELECT count(*) FROM scores s JOIN responses r USING (response_id) "
                                  "JOIN runs u USING (run_id) WHERE u.dataset = ?", [name])),
            }
        result["datasets"] = datasets
    return result


def list_datasets(store: Store) -> pd.DataFrame:
    """Datasets with item, run, model and response counts (for pickers and the overview)."""
    with store.connect(read_only=True) as con:
        return con.frame(
            """SELECT d.dataset, d.title, d.kind, d.simulated, d.aggregate_only, d.description, d.created_at,
                      (SELECT count(*) FROM items i WHERE i.dataset = d.dataset AND i.is_current) AS n_items,
                      (SELECT count(*) FROM runs u WHERE u.dataset = d.dataset) AS n_runs,
                      (SELECT count(DISTINCT model) FROM runs u WHERE u.dataset = d.dataset) AS n_models,
                      (SELECT count(*) FROM responses r JOIN runs u USING (run_id)
                        WHERE u.dataset = d.dataset) AS n_responses
               FROM datasets d ORDER BY d.dataset""")


def list_models(store: Store) -> pd.DataFrame:
    """Models with their kind, runs and responses, sorted by display name."""
    with store.connect(read_only=True) as con:
        return con.frame(
            f"""SELECT m.model, m.display_name, m.family, m.provider, m.api_model_id, m.simulated,
                      {model_access_sql(con)} AS access,
                      {model_kind_sql(con)} AS kind, count(DISTINCT u.run_id) AS n_runs, count(r.response_id) AS n_responses,
                      array_agg(DISTINCT u.dataset ORDER BY u.dataset) FILTER (WHERE u.dataset IS NOT NULL) AS datasets
               FROM models m LEFT JOIN runs u USING (model) LEFT JOIN responses r USING (run_id)
               GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 ORDER BY m.display_name""")

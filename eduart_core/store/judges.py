"""Judge profiles, judgements and the calibration gate's settings: the SQL of the judges room.

Why judgements have a table of their own (and not the ``responses`` of a run): a judge answers a
question about an answer, not an item, so its replies must never count as answers to the items
(rankings, item statistics). What a judge's replies become is a scoring profile: one ``scores``
row per judged response under the profile ``judge:<judge>/<rubric>``, written here next to the
judgements it was computed from, so every reader of scores (the long frame, the score table,
overrides) treats it like any other profile.
"""
from __future__ import annotations

import json
from collections.abc import Iterable

import pandas as pd

from ..vocab import HUMAN_MIN_ALPHA, JUDGE_MAX_SEVERITY, JUDGE_MIN_ALPHA, MAIN_PROBE
from .connection import Connection
from .core import Store
from .runs import insert_frame

JUDGEMENT_COLUMNS = ("request_key", "profile", "version", "dataset", "item_id", "model", "condition", "response_id",
                     "criterion", "method", "repetition", "probe", "points", "max_points", "shown_order", "reason",
                     "raw_text", "parse_error", "error", "input_tokens", "output_tokens", "cost_usd", "launch_id")
PROFILE_COLUMNS = ("profile", "dataset", "judge", "judge_name", "provider", "api_model_id", "rubric", "rubric_hash",
                   "prompt_hash", "temperature", "version", "simulated", "launch_id", "created_by")


def has_table(con: Connection, name: str) -> bool:
    """True when the table exists (a store opened read-only before migration 13 has none of these)."""
    return con.has_table(name)


# ---------------------------------------------------------------- profiles

def stored_judge_profiles_con(con: Connection, dataset: str | None = None) -> list[str]:
    """Names of the judge profiles with scores in ``dataset`` (every dataset when None), sorted."""
    if not has_table(con, "judge_profiles"):
        return []
    rows = con.execute("SELECT DISTINCT profile FROM judge_profiles WHERE (? IS NULL OR dataset = ?) ORDER BY 1",
                       [dataset, dataset]).fetchall()
    return [str(r[0]) for r in rows]


def load_judge_profiles(store: Store, dataset: str | None = None) -> pd.DataFrame:
    """Every judge profile of a dataset (or of all) with its version and how many answers it scored."""
    with store.connect(read_only=True) as con:
        if not has_table(con, "judge_profiles"):
            return pd.DataFrame(columns=[*PROFILE_COLUMNS, "created_at", "updated_at", "n_scored"])
        frame = con.frame(
            f"""SELECT {', '.join('p.' + c for c in PROFILE_COLUMNS)}, p.created_at, p.updated_at,
                       (SELECT count(*) FROM scores s JOIN responses r ON r.response_id = s.response_id
                        JOIN runs u ON u.run_id = r.run_id
                        WHERE s.profile = p.profile AND u.dataset = p.dataset) AS n_scored
                FROM judge_profiles p WHERE (? IS NULL OR p.dataset = ?) ORDER BY p.dataset, p.profile""",
            [dataset, dataset])
    frame["simulated"] = frame["simulated"].astype(bool)
    return frame


def register_profile_con(con: Connection, row: dict) -> bool:
    """Create or update a judge profile of a dataset; True when its version changed (or it is new).

    A new version means the judge, its prompt, the rubric or the temperature changed: the old
    scores of the profile in that dataset no longer describe it and are removed here, in the same
    transaction (the old judgements stay, labelled with their version).
    """
    old = con.execute("SELECT version FROM judge_profiles WHERE profile = ? AND dataset = ?",
                      [row["profile"], row["dataset"]]).fetchone()
    row = {**row, "simulated": bool(row.get("simulated", False))}
    values = [row.get(c) for c in PROFILE_COLUMNS]
    if old is None:
        con.execute(f"INSERT INTO judge_profiles ({', '.join(PROFILE_COLUMNS)}) VALUES "
                    f"({', '.join('?' for _ in PROFILE_COLUMNS)})", values)
        return True
    changed = old[0] != row["version"]
    sets = ", ".join(f"{c} = ?" for c in PROFILE_COLUMNS[2:])
    con.execute(f"UPDATE judge_profiles SET {sets}, updated_at = current_timestamp WHERE profile = ? AND dataset = ?",
                [row.get(c) for c in PROFILE_COLUMNS[2:]] + [row["profile"], row["dataset"]])
    if changed:
        delete_profile_scores_con(con, row["profile"], row["dataset"])
    return changed


def delete_profile_scores_con(con: Connection, profile: str, dataset: str) -> None:
    con.execute("""DELETE FROM scores WHERE profile = ? AND response_id IN (
                     SELECT r.response_id FROM responses r JOIN runs u ON u.run_id = r.run_id WHERE u.dataset = ?)""",
                [profile, dataset])


#: The error of a judgement marked against a key corrected since (it no longer counts).
WITHDRAWN = "withdrawn: the item's key was corrected after this judgement"


def withdraw_item_scores_con(con: Connection, dataset: str, item_ids: list[str]) -> pd.DataFrame:
    """Remove every judge-profile score of the responses to ``item_ids`` in ``dataset`` (a corrected key:
    the judge marked those answers against the old key, which its prompt showed, so no arithmetic turns
    them into marks against the new one; they come back when the judge is asked again, and the old
    judgements stay stored but no longer count: their error says withdrawn). Returns every
    judge-profile score of the items' formats as it was (response_id, item_id, model, condition, type,
    profile, score) with ``withdrawn`` saying which were removed: the errata diff's judge rows."""
    if not item_ids or not has_table(con, "judge_profiles"):
        return pd.DataFrame(columns=["response_id", "item_id", "model", "condition", "type", "profile", "score",
                                     "withdrawn"])
    frame = con.frame(
        """SELECT s.response_id, r.item_id, m.display_name AS model, u.condition, i.type, s.profile, s.score
           FROM scores s JOIN responses r USING (response_id) JOIN runs u USING (run_id)
           JOIN models m ON m.model = u.model
           JOIN items i ON i.dataset = u.dataset AND i.item_id = r.item_id AND i.is_current
           WHERE u.dataset = ? AND s.profile IN (SELECT profile FROM judge_profiles WHERE dataset = ?)
             AND i.type IN (SELECT type FROM items WHERE dataset = ? AND is_current AND item_id = ANY(?))""",
        [dataset, dataset, dataset, list(item_ids)])
    frame["withdrawn"] = frame["item_id"].astype(str).isin({str(i) for i in item_ids})
    # the old marks stay as history but never count again (scoring reads answered judgements only)
    con.execute("UPDATE judgements SET error = ? WHERE dataset = ? AND item_id = ANY(?) AND error IS NULL",
                [WITHDRAWN, dataset, list(item_ids)])
    doomed = [int(r) for r in frame.loc[frame["withdrawn"], "response_id"]]
    profiles = sorted(set(frame.loc[frame["withdrawn"], "profile"].astype(str)))
    for start in range(0, len(doomed), 1000):
        chunk = doomed[start:start + 1000]
        con.execute(f"DELETE FROM scores WHERE profile = ANY(?) AND response_id IN ({', '.join('?' for _ in chunk)})",
                    [profiles, *chunk])
    return frame


# ---------------------------------------------------------------- judgements

def add_judgements_con(con: Connection, rows: list[dict]) -> int:
    """Insert judgements whose request key is not stored yet (ingesting a journal twice adds nothing)."""
    if not rows:
        return 0
    keys = list(dict.fromkeys(str(r["request_key"]) for r in rows))
    known: set[str] = set()
    for start in range(0, len(keys), 1000):
        chunk = keys[start:start + 1000]
        known |= {r[0] for r in con.execute(
            f"SELECT request_key FROM judgements WHERE request_key IN ({', '.join('?' for _ in chunk)})",
            chunk).fetchall()}
    fresh, seen = [], set()
    for r in rows:
        key = str(r["request_key"])
        if key in known or key in seen:
            continue
        seen.add(key)
        fresh.append({c: r.get(c) for c in JUDGEMENT_COLUMNS})
    if not fresh:
        return 0
    frame = pd.DataFrame(fresh, columns=list(JUDGEMENT_COLUMNS))
    for column in ("points", "max_points", "cost_usd"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    for column in ("response_id", "repetition"):
        frame[column] = frame[column].astype("int64")
    for column in ("input_tokens", "output_tokens"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("Int64")
    for column in set(JUDGEMENT_COLUMNS) - {"points", "max_points", "cost_usd", "response_id", "repetition",
                                            "input_tokens", "output_tokens"}:
        frame[column] = pd.Series([None if v is None else str(v) for v in frame[column]], dtype=object)
    insert_frame(con, "judgements", frame)
    return len(frame)


def load_judgements(store: Store, dataset: str, profiles: Iterable[str] | None = None,
                    current: bool = True) -> pd.DataFrame:
    """Judgements of a dataset (answered ones and failures), optionally of some profiles.

    ``current``: only those of each profile's current version (the ones its scores come from).
    """
    wanted = None if profiles is None else [str(p) for p in profiles]
    with store.connect(read_only=True) as con:
        if not has_table(con, "judgements"):
            return pd.DataFrame(columns=[*JUDGEMENT_COLUMNS, "created_at"])
        version_join = ("JOIN judge_profiles p ON p.profile = j.profile AND p.dataset = j.dataset "
                        "AND p.version = j.version") if current else ""
        frame = con.frame(
            f"""SELECT {', '.join('j.' + c for c in JUDGEMENT_COLUMNS)}, j.created_at FROM judgements j {version_join}
                WHERE j.dataset = ? ORDER BY j.profile, j.response_id, j.criterion, j.probe, j.repetition,
                      j.created_at""", [dataset])
    if wanted is not None:
        frame = frame[frame["profile"].isin(wanted)].reset_index(drop=True)
    return frame


def count_unparsed(store: Store, profile: str, version: str, launch_id: str) -> int:
    """Answered judge requests of a launch whose reply held no readable verdict."""
    with store.connect(read_only=True) as con:
        if not has_table(con, "judgements"):
            return 0
        return int(con.execute("SELECT count(*) FROM judgements WHERE profile = ? AND version = ? AND launch_id = ? "
                               "AND error IS NULL AND parse_error IS NOT NULL", [profile, version, launch_id]
                               ).fetchone()[0])


def main_judgements_con(con: Connection, profile: str, version: str,
                        response_ids: list[int]) -> list[tuple]:
    """(response_id, criterion, method, repetition, points, max_points) of the answered main judgements."""
    out: list[tuple] = []
    ids = sorted({int(r) for r in response_ids})
    for start in range(0, len(ids), 1000):
        chunk = ids[start:start + 1000]
        out += con.execute(
            f"""SELECT response_id, criterion, method, repetition, points, max_points FROM judgements
                WHERE profile = ? AND version = ? AND probe = ? AND error IS NULL
                  AND response_id IN ({', '.join('?' for _ in chunk)})""",
            [profile, version, MAIN_PROBE, *chunk]).fetchall()
    return out


def replace_profile_scores_con(con: Connection, profile: str, rows: list[dict]) -> int:
    """Write the profile's score of each response in ``rows`` (response_id, item_version, score,
    correct, details (list), scorer), replacing an older score of the same response."""
    if not rows:
        return 0
    ids = [int(r["response_id"]) for r in rows]
    for start in range(0, len(ids), 1000):
        chunk = ids[start:start + 1000]
        con.execute(f"DELETE FROM scores WHERE profile = ? AND response_id IN ({', '.join('?' for _ in chunk)})",
                    [profile, *chunk])
    frame = pd.DataFrame({
        "response_id": pd.Series(ids, dtype="int64"),
        "profile": pd.Series([profile] * len(rows), dtype=object),
        "item_version": pd.Series([int(r["item_version"]) for r in rows], dtype="int64"),
        "score": pd.Series([float(r["score"]) for r in rows], dtype=float),
        "correct": pd.Series([bool(r["correct"]) for r in rows], dtype=bool),
        "details": pd.Series([json.dumps(r["details"], ensure_ascii=False) for r in rows], dtype=object),
        "scorer": pd.Series([str(r["scorer"]) for r in rows], dtype=object),
    })
    insert_frame(con, "scores", frame, json_columns=("details",))
    return len(frame)


def current_item_versions_con(con: Connection, dataset: str) -> dict[str, int]:
    return {str(i): int(v) for i, v in con.execute(
        "SELECT item_id, version FROM items WHERE dataset = ? AND is_current", [dataset]).fetchall()}


# ---------------------------------------------------------------- the calibration gate

def gate_settings(store: Store, dataset: str) -> dict:
    """The gate's thresholds for a dataset: the latest row set for it, else the defaults."""
    defaults = {"min_alpha": JUDGE_MIN_ALPHA, "max_severity": JUDGE_MAX_SEVERITY, "min_human_alpha": HUMAN_MIN_ALPHA,
                "set_by": None, "set_at": None}
    with store.connect(read_only=True) as con:
        if not has_table(con, "judge_gates"):
            return defaults
        row = con.execute("SELECT min_alpha, max_severity, min_human_alpha, set_by, set_at FROM judge_gates "
                          "WHERE dataset = ? ORDER BY set_at DESC LIMIT 1", [dataset]).fetchone()
    if row is None:
        return defaults
    return {"min_alpha": float(row[0]), "max_severity": float(row[1]), "min_human_alpha": float(row[2]),
            "set_by": row[3], "set_at": row[4]}


def set_gate_settings(store: Store, dataset: str, min_alpha: float, max_severity: float, min_human_alpha: float,
                      set_by: str) -> None:
    with store.transaction() as con:
        con.execute("INSERT INTO judge_gates (dataset, min_alpha, max_severity, min_human_alpha, set_by) "
                    "VALUES (?, ?, ?, ?, ?)", [dataset, float(min_alpha), float(max_severity),
                                               float(min_human_alpha), set_by])


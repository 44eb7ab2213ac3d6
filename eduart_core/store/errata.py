"""Errata releases: the SQL of grouping accepted key corrections and applying them (migration 22).

Why a release: a corrected key changes scores, and a number published before the correction must
be traceable to the keys it was computed under. A release is a named, dated group of corrections
(each entry keeps who accepted it, why, the old and new key); applying it (``errata.apply_release``,
which rescores through the scoring stage between ``release_to_apply_con`` and ``record_applied_con``
and withdraws the items' judge-profile scores: the judge marked them against the old key its prompt
showed, and asking it again brings them back) keeps the diff per model, condition, format and
profile. Rows are written once: a release is created whole, applied once (a second apply changes
nothing).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

from ..errors import UserError
from ..vocab import PROFILES
from .connection import Connection
from .core import Store

RELEASE_COLUMNS = ["release_id", "dataset", "name", "created_at", "created_by", "applied_at", "applied_by", "items",
                   "actor_subject", "actor_provider", "actor_name"]
ENTRY_COLUMNS = ["release_id", "item_id", "review_id", "old_version", "new_version", "old_key", "new_key",
                 "accepted_by", "reason", "accepted_at"]
DIFF_COLUMNS = ["release_id", "model", "condition", "type", "profile", "responses", "changed", "score_before",
                "score_after"]


def _ready(con: Connection) -> bool:
    return con.has_table("errata_releases")


def pending_corrections_con(con: Connection, dataset: str) -> pd.DataFrame:
    """Accepted key corrections (key reviews with action correct) not in any release yet, oldest first:
    review_id, item_id, item_version, new_version, reviewer, note, decided_at."""
    # a release entry carries the item's latest correction: it releases that one and every earlier one
    released = ("""AND NOT EXISTS (SELECT 1 FROM errata_entries e JOIN errata_releases r USING (release_id)
                   WHERE r.dataset = k.dataset AND e.item_id = k.item_id AND e.review_id >= k.review_id)"""
                if _ready(con) else "")
    return con.frame(
        f"""SELECT review_id, item_id, item_version, new_version, reviewer, note, decided_at FROM key_reviews k
            WHERE dataset = ? AND action = 'correct' AND new_version IS NOT NULL {released}
            ORDER BY review_id""", [dataset])


def item_key_con(con: Connection, dataset: str, item_id: str, version: int) -> str | None:
    """The key (``answers``) of one item version as JSON text."""
    row = con.execute("SELECT CAST(record AS TEXT) FROM items WHERE dataset = ? AND item_id = ? AND version = ?",
                      [dataset, str(item_id), int(version)]).fetchone()
    if row is None:
        return None
    return json.dumps(json.loads(row[0]).get("answers"), ensure_ascii=False)


def create_release(store: Store, dataset: str, name: str, created_by: str, entries: list[dict],
                   actor: dict | None = None) -> int:
    """Store a release with its entries (dicts of ``ENTRY_COLUMNS`` but release_id) in one transaction."""
    actor = actor or {}
    with store.transaction() as con:
        con.lock(f"errata:{dataset}")
        if con.execute("SELECT 1 FROM errata_releases WHERE dataset = ? AND name = ?", [dataset, name]).fetchone():
            raise UserError(f"dataset {dataset} already has an errata release named {name!r}")
        if len(pending_corrections_con(con, dataset)) == 0:
            raise UserError("the corrections of this release were released meanwhile; nothing released")
        release_id = int(con.execute(
            "INSERT INTO errata_releases (dataset, name, created_by, actor_subject, actor_provider, actor_name) "
            "VALUES (?, ?, ?, ?, ?, ?) RETURNING release_id",
            [dataset, name, created_by, actor.get("actor_subject"), actor.get("actor_provider"),
             actor.get("actor_name")]).fetchone()[0])
        for e in entries:
            con.execute(
                "INSERT INTO errata_entries (release_id, item_id, review_id, old_version, new_version, old_key, "
                "new_key, accepted_by, reason, accepted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [release_id, str(e["item_id"]), int(e["review_id"]), int(e["old_version"]), int(e["new_version"]),
                 e["old_key"], e["new_key"], e["accepted_by"], e.get("reason"), e.get("accepted_at")])
    return release_id


def load_releases(store: Store, dataset: str | None = None) -> pd.DataFrame:
    """Every release (of a dataset), newest first, with its number of items."""
    with store.connect(read_only=True) as con:
        if not _ready(con):
            return pd.DataFrame(columns=RELEASE_COLUMNS)
        return con.frame(
            """SELECT r.release_id, r.dataset, r.name, r.created_at, r.created_by, r.applied_at, r.applied_by,
                      (SELECT count(*) FROM errata_entries e WHERE e.release_id = r.release_id) AS items,
                      r.actor_subject, r.actor_provider, r.actor_name
               FROM errata_releases r WHERE (? IS NULL OR r.dataset = ?) ORDER BY r.release_id DESC""",
            [dataset, dataset])[RELEASE_COLUMNS]


def load_entries(store: Store, release_id: int) -> pd.DataFrame:
    with store.connect(read_only=True) as con:
        return con.frame(f"SELECT {', '.join(ENTRY_COLUMNS)} FROM errata_entries WHERE release_id = ? "
                         "ORDER BY item_id", [int(release_id)])


def load_diff(store: Store, release_id: int) -> pd.DataFrame:
    with store.connect(read_only=True) as con:
        return con.frame(f"SELECT {', '.join(DIFF_COLUMNS)} FROM errata_diffs WHERE release_id = ? "
                         "ORDER BY model, condition, type, profile", [int(release_id)])


def _format_scores_con(con: Connection, dataset: str, types: list[str]) -> pd.DataFrame:
    """Every stored score of the dataset's responses of some formats: response_id, item_id, model (display
    name), condition, type, profile, score."""
    return con.frame(
        """SELECT s.response_id, r.item_id, m.display_name AS model, u.condition, i.type, s.profile, s.score
           FROM scores s JOIN responses r USING (response_id) JOIN runs u USING (run_id)
           JOIN models m ON m.model = u.model
           JOIN items i ON i.dataset = u.dataset AND i.item_id = r.item_id AND i.is_current
           WHERE u.dataset = ? AND i.type = ANY(?) AND s.profile = ANY(?)""", [dataset, types, list(PROFILES)])


@dataclass(frozen=True)
class ReleaseToApply:
    """A release checked and locked for applying: its dataset, items, their old versions (item_id ->
    version before the release) and formats."""

    release_id: int
    dataset: str
    items: list[str]
    old_versions: dict[str, int]
    types: list[str]


def release_to_apply_con(con: Connection, release_id: int) -> ReleaseToApply | None:
    """The release to apply inside the caller's transaction (taking the apply lock); None when it was
    applied already. Refused (UserError, nothing written) when an item's current version is not the
    release's. The caller rescores its items and then calls ``record_applied_con``."""
    con.lock("errata_apply")
    row = con.execute("SELECT dataset, applied_at FROM errata_releases WHERE release_id = ?",
                      [int(release_id)]).fetchone()
    if row is None:
        raise UserError(f"no errata release {release_id}")
    dataset, applied = row
    if applied is not None:
        return None
    entries = con.frame("SELECT item_id, old_version, new_version FROM errata_entries WHERE release_id = ?",
                        [int(release_id)])
    current = dict(con.execute("SELECT item_id, version FROM items WHERE dataset = ? AND is_current AND "
                               "item_id = ANY(?)", [dataset, list(entries["item_id"])]).fetchall())
    moved = [f"{i} (release: version {int(v)}, now {current.get(i)})"
             for i, v in zip(entries["item_id"], entries["new_version"]) if current.get(i) != int(v)]
    if moved:
        raise UserError("the key of " + ", ".join(moved) + " changed after the release; create a new release")
    items = [str(i) for i in entries["item_id"]]
    types = [str(t) for t in con.frame("SELECT DISTINCT type FROM items WHERE dataset = ? AND is_current AND "
                                       "item_id = ANY(?)", [dataset, items])["type"]]
    return ReleaseToApply(int(release_id), str(dataset), items,
                          dict(zip(items, entries["old_version"].astype(int))), types)


def record_applied_con(con: Connection, release: ReleaseToApply, before: pd.DataFrame, judged: pd.DataFrame,
                       applied_by: str) -> None:
    """Write the diff of a release whose items were just rescored and mark it applied, inside the
    caller's transaction. ``before``: the scores of its items' responses against their old versions
    (response_id, profile, score); ``judged``: their judge-profile scores as
    ``judges.withdraw_item_scores_con`` withdrew them."""
    after = _format_scores_con(con, release.dataset, release.types)
    diff = _diff(after, before, set(release.items))
    if judged["withdrawn"].any():
        diff = pd.concat([diff, _judged_diff(judged)], ignore_index=True)
    for r in diff.itertuples():
        con.execute(f"INSERT INTO errata_diffs ({', '.join(DIFF_COLUMNS)}) VALUES ({', '.join('?' for _ in DIFF_COLUMNS)})",
                    [release.release_id, r.model, r.condition, r.type, r.profile, int(r.responses), int(r.changed),
                     float(r.score_before), None if pd.isna(r.score_after) else float(r.score_after)])
    con.execute("UPDATE errata_releases SET applied_at = current_timestamp, applied_by = ? WHERE release_id = ?",
                [applied_by, release.release_id])


def _judged_diff(judged: pd.DataFrame) -> pd.DataFrame:
    """Per model, condition, format and judge profile: the judge-scored responses of the format before the
    release, how many it withdrew, the mean before and the mean of those left (empty when none is left)."""
    if judged.empty:
        return pd.DataFrame(columns=["model", "condition", "type", "profile", "responses", "changed", "score_before",
                                     "score_after"])
    frame = judged.assign(score=judged["score"].astype(float), changed=judged["withdrawn"].astype(bool))
    frame["kept"] = frame["score"].where(~frame["changed"])
    return frame.groupby(["model", "condition", "type", "profile"], observed=True, sort=True).agg(
        responses=("score", "size"), changed=("changed", "sum"), score_before=("score", "mean"),
        score_after=("kept", "mean")).reset_index()


def _diff(after: pd.DataFrame, before: pd.DataFrame, items: set[str]) -> pd.DataFrame:
    """Per model, condition, format and profile: every stored response of the format, how many the release
    changed, the mean score under the old keys (the corrected items scored against their old versions)
    and under the new ones."""
    old = before.set_index(["response_id", "profile"])["score"]
    keyed = pd.MultiIndex.from_arrays([after["response_id"], after["profile"]])
    prior = pd.Series(old.reindex(keyed).to_numpy(), index=after.index)
    corrected = after["item_id"].astype(str).isin(items)
    frame = after.assign(before=prior.where(corrected, after["score"]).fillna(after["score"]).astype(float))
    frame["changed"] = (frame["before"] - frame["score"].astype(float)).abs() > 1e-12
    keys = ["model", "condition", "type", "profile"]
    return frame.groupby(keys, observed=True, sort=True).agg(
        responses=("score", "size"), changed=("changed", "sum"), score_before=("before", "mean"),
        score_after=("score", "mean")).reset_index()

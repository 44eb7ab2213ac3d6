"""Errata releases: accepted key corrections grouped into a named, dated release, applied with a diff.

Why: a key corrected in the suspect-key queue (``suspects.correct_key``: a new item version) changes
scores, and a number published earlier must say which keys it was computed under. A release groups
the corrections accepted since the last one (who accepted each, why, the old and the new key);
applying it re-scores every stored response of its items through the scoring stage's one rescoring
path (``scoring.rescore.rescore_con``, called once, in ``_apply``), so runs stored since the
correction are scored on the new keys too, and keeps the diff: per model, condition, format and
profile, how many stored responses the release changed and the mean score under the old and the new
keys. A judge profile's scores of those items are withdrawn instead
(``store.judges.withdraw_item_scores_con``): the judge's prompt showed the old key, so its marks cannot
be recomputed without asking it again; the diff counts them as changed. Applying twice changes nothing.
Reports name the latest applied release of their dataset (``current_release``).

Permissions are checked here (the key-review role); the SQL lives in ``store.errata``.
"""
from __future__ import annotations

import pandas as pd

from .errors import UserError
from .scoring.rescore import rescore_con, score_against_versions_con
from .store import Store
from .store import errata as db
from .store.items import current_item_ids
from .store.judges import withdraw_item_scores_con
from .team import KEY_REVIEW, Identity, as_identity


def _actor(who: Identity) -> Identity:
    actor = as_identity(who)
    actor.require(KEY_REVIEW)
    return actor


def pending(store: Store, dataset: str) -> pd.DataFrame:
    """Accepted key corrections of ``dataset`` not released yet, one row per item (the earliest old version,
    the latest new version, every reviewer and note)."""
    with store.connect(read_only=True) as con:
        rows = db.pending_corrections_con(con, dataset)
        if rows.empty:
            return pd.DataFrame(columns=[c for c in db.ENTRY_COLUMNS if c != "release_id"])
        out = []
        for item_id, group in rows.groupby("item_id", sort=True):
            old, new = int(group["item_version"].min()), int(group["new_version"].max())
            notes = [str(n) for n in group["note"] if isinstance(n, str) and n.strip()]
            out.append({"item_id": str(item_id), "review_id": int(group["review_id"].max()), "old_version": old,
                        "new_version": new, "old_key": db.item_key_con(con, dataset, str(item_id), old),
                        "new_key": db.item_key_con(con, dataset, str(item_id), new),
                        "accepted_by": ", ".join(dict.fromkeys(str(r) for r in group["reviewer"])),
                        "reason": "; ".join(notes) or None, "accepted_at": group["decided_at"].max(),
                        "review_ids": [int(r) for r in group["review_id"]]})
    return pd.DataFrame(out)


def create_release(store: Store, dataset: str, name: str, actor: Identity,
                   items: list[str] | None = None) -> tuple[int, pd.DataFrame]:
    """Group the accepted corrections not released yet (or those of ``items``) into a release named ``name``;
    returns (release id, its entries). One line and nothing written on a bad input: no name, a name the
    dataset has, no correction waiting, an item that is not in the dataset or has no correction waiting."""
    who = _actor(actor)
    name = (name or "").strip()
    if not name:
        raise UserError("an errata release needs a name (--name)")
    waiting = pending(store, dataset)
    if items:
        wanted = [str(i).strip() for i in items if str(i).strip()]
        known = current_item_ids(store, dataset)
        unknown = [i for i in wanted if i not in known]
        if unknown:
            raise UserError(f"no item {', '.join(unknown)} in dataset {dataset}; nothing released")
        idle = [i for i in wanted if i not in set(waiting["item_id"])]
        if idle:
            raise UserError(f"item {', '.join(idle)} has no accepted key correction waiting for a release; "
                            "nothing released")
        waiting = waiting[waiting["item_id"].isin(wanted)]
    if waiting.empty:
        raise UserError(f"no accepted key correction of dataset {dataset} waits for a release (correct keys in the "
                        "suspect-key queue first)")
    entries = [{k: row[k] for k in db.ENTRY_COLUMNS if k != "release_id"} for row in waiting.to_dict("records")]
    release_id = db.create_release(store, dataset, name, who.recorded_name, entries, who.columns())
    return release_id, waiting.drop(columns="review_ids").reset_index(drop=True)


def find_release(store: Store, dataset: str, name: str) -> pd.Series:
    """One release of a dataset by name (one line when there is none, naming the releases there are)."""
    releases = db.load_releases(store, dataset)
    hit = releases[releases["name"] == str(name)]
    if hit.empty:
        names = ", ".join(releases["name"].astype(str)) or "none yet"
        raise UserError(f"no errata release {name!r} in dataset {dataset} (releases: {names})")
    return hit.iloc[0]


def apply_release(store: Store, dataset: str, name: str, actor: Identity) -> dict:
    """Apply a release: re-score every stored response of its items and write the diff. Idempotent: a release
    applied already is left as it is (``applied`` False). Returns applied, rescored, and the diff."""
    who = _actor(actor)
    release = find_release(store, dataset, name)
    applied, rescored = _apply(store, int(release["release_id"]), who.recorded_name)
    return {"applied": applied, "rescored": rescored, "release_id": int(release["release_id"]),
            "diff": db.load_diff(store, int(release["release_id"]))}


def _apply(store: Store, release_id: int, applied_by: str) -> tuple[bool, int]:
    """Re-score the stored responses of the release's items against their current versions (the release's
    new keys), withdraw their judge-profile scores and write the diff, in one transaction; (applied now,
    score rows re-scored). Applied already: (False, 0), nothing written. Refused (UserError, nothing
    written) when an item's current version is not the release's."""
    with store.transaction() as con:
        release = db.release_to_apply_con(con, release_id)
        if release is None:
            return False, 0
        before = score_against_versions_con(con, release.dataset, release.old_versions)
        rescored = rescore_con(con, dataset=release.dataset, item_ids=release.items)
        judged = withdraw_item_scores_con(con, release.dataset, release.items)  # marked against the old key
        db.record_applied_con(con, release, before, judged, applied_by)
    return True, rescored


def releases(store: Store, dataset: str) -> pd.DataFrame:
    """Every release of a dataset, newest first."""
    return db.load_releases(store, dataset)


def release_entries(store: Store, dataset: str, name: str) -> pd.DataFrame:
    """The corrections of one release (item, old and new version and key, who accepted it, why)."""
    return db.load_entries(store, int(find_release(store, dataset, name)["release_id"]))


def release_diff(store: Store, dataset: str, name: str) -> pd.DataFrame:
    """The score diff one applied release wrote (empty before it is applied)."""
    return db.load_diff(store, int(find_release(store, dataset, name)["release_id"]))


def current_release(store: Store, dataset: str) -> str:
    """The errata release the dataset's scores are computed under, in words: the latest applied release,
    or "no errata release" (and how many accepted corrections are not released yet)."""
    applied = db.load_releases(store, dataset)
    applied = applied[applied["applied_at"].notna()]
    waiting = len(pending(store, dataset))
    tail = f"; {waiting} accepted key correction(s) not released yet" if waiting else ""
    if applied.empty:
        return "no errata release" + tail
    top = applied.iloc[0]
    return f"errata release {top['name']} (applied {pd.Timestamp(top['applied_at']):%Y-%m-%d})" + tail


__all__ = ["apply_release", "create_release", "current_release", "find_release", "pending", "release_diff",
           "release_entries", "releases"]

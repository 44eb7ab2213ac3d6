"""Views of team mode: the audit log of who did what, beyond the review decisions themselves.

Review decisions have their own log (``review-export``, the Review studio's audit section), which
hides blind decisions from the reviewers of a round; everything else that is attributable (round
settings, key reviews, score overrides, launches, role changes) is listed here, one row per act,
with the acting identity's subject, provider and display name.
"""
from __future__ import annotations

import pandas as pd

from ..selection import Selection
from ._base import Source, cached

AUDIT_COLUMNS = ["at", "act", "target", "detail", "subject", "provider", "name"]


def _rows(frame: pd.DataFrame, act, target, detail, at: str) -> list[dict]:
    return [{"at": r[at], "act": act(r), "target": target(r), "detail": detail(r), "subject": r.get("actor_subject"),
             "provider": r.get("actor_provider"), "name": r.get("actor_name")} for r in frame.to_dict("records")]


@cached(maxsize=8)
def _audit(src: Source, dataset: str) -> pd.DataFrame:
    from ..store import extraction as review_db
    from ..store import team as team_db
    from ..store.overrides import load_overrides
    from ..store.suspects import load_key_reviews

    store = src.store
    review_db.ensure_schema(store)
    rows = _rows(review_db.load_round_changes(store), lambda r: "round setting",
                 lambda r: f"{r['dataset']} round {int(r['round'])}",
                 lambda r: f"{int(r['reviewers'])} reviewer(s) per page"
                           + ("; blind adjudication" if r.get("blind_adjudication") is True else ""), "set_at")
    rows += _rows(load_key_reviews(store, dataset), lambda r: f"key {r['action']}",
                  lambda r: f"{dataset}/{r['item_id']} v{int(r['item_version'])}", lambda r: r.get("note"), "decided_at")
    rows += _rows(load_overrides(store, dataset), lambda r: "score override",
                  lambda r: f"{dataset}/{r['item_id']} {r['model']} {r['condition']} ({r['profile']})",
                  lambda r: f"{r['score']}: {r['reason']}", "created_at")
    rows += _rows(team_db.load_events(store), lambda r: r["action"], lambda r: r["target"], lambda r: r["detail"],
                  "created_at")
    rows += _rows(team_db.load_role_changes(store), lambda r: "role granted" if r["granted"] else "role revoked",
                  lambda r: f"{r['subject']}: {r['role']}", lambda r: r.get("note"), "changed_at")
    frame = pd.DataFrame(rows, columns=AUDIT_COLUMNS)
    if frame.empty:
        return frame
    frame["at"] = pd.to_datetime(frame["at"])
    return frame.sort_values("at", kind="stable").reset_index(drop=True)


def audit_log(src: Source, sel: Selection) -> pd.DataFrame:
    """Who did what besides review decisions: round settings, key reviews and overrides (selected dataset), launches, role changes."""
    return _audit(src, sel.dataset)

"""Review decisions, the audit trail and promotion of resolved pages into the benchmark.

Why: an art historian settles each queued discrepancy against the screenshot. Every decision is
appended (never overwritten) with reviewer, time, field, previous and new value and note; a
decision names the decision it was based on, so two people deciding one field at once get a
conflict instead of silently overwriting each other. When the last open field of a page is
settled, the page's record becomes a gold item (a new version when it existed, which re-scores
the stored responses for it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..errors import UserError
from ..store import Store
from ..store import extraction as db
from ..store.extraction import ReviewConflict
from .compare import top_field
from .merge import DEFAULT_IGNORABLE, MergeResult, merge_records
from .paths import get_at, set_at

ACTIONS = ("accept_a", "accept_b", "edit", "flag")
LATEST = "latest"  # based_on sentinel: decide on top of whatever is current (scripts, bulk)

__all__ = ["ACTIONS", "LATEST", "ReviewConflict", "EditRejected", "DecisionResult", "BulkResult",
           "record_comparison", "record_comparisons", "working_record", "decide", "bulk_accept", "review_queue",
           "page_fields", "promote_page", "promote_pages", "attention_pages"]


class EditRejected(UserError):
    """An edited value would make the item invalid; nothing was saved."""

    def __init__(self, path: str, problems: list[str]):
        self.path = path
        self.problems = problems
        super().__init__(f"edit of {path} not saved: " + "; ".join(problems))


@dataclass
class DecisionResult:
    decision_id: int
    page_resolved: bool
    promoted_version: int | None = None
    promotion_error: str | None = None


@dataclass
class BulkResult:
    decided: int = 0
    conflicts: list[str] = field(default_factory=list)
    promoted: list[str] = field(default_factory=list)


def _problems(record: dict) -> list[str]:
    from ..items import check_item

    return list(check_item(record)[1])


def record_comparisons(store: Store, round: int, pairs: list[tuple[str, dict | None, dict | None]],
                       ignorable: tuple[str, ...] | list[str] = DEFAULT_IGNORABLE) -> dict[str, MergeResult]:
    """Compare the two extractions of several pages, store outcomes and discrepancies, and
    promote at once every page that agreed or was auto-merged (few transactions in all)."""
    results: dict[str, MergeResult] = {}
    outcomes = []
    for page_id, a, b in pairs:
        result = merge_records(a, b, ignorable)
        results[page_id] = result
        queued_paths = {d.path for d in result.open_diffs}
        base = a if a is not None else b
        outcomes.append({"page_id": page_id, "round": round, "merge_status": result.status,
                         "format": (result.record or base or {}).get("type"), "base_record": base,
                         "merged_record": result.record,
                         "diffs": [dict(d.to_dict(), field=top_field(d.path), queued=d.path in queued_paths)
                                   for d in result.diffs]})
    written = set(db.save_outcomes(store, outcomes))
    promote_pages(store, [(pid, round, results[pid].record, f"extraction round {round}: {results[pid].status}")
                          for pid in results
                          if pid in written and results[pid].status in ("agreed", "auto_merged")])
    return results


def record_comparison(store: Store, page_id: str, round: int, a: dict | None, b: dict | None,
                      ignorable: tuple[str, ...] | list[str] = DEFAULT_IGNORABLE) -> MergeResult:
    """One page: see ``record_comparisons``."""
    return record_comparisons(store, round, [(page_id, a, b)], ignorable)[page_id]


def working_record(store: Store, page_id: str, round: int) -> dict:
    """The page's base record with every settled decision applied (flags change nothing)."""
    outcome = db.get_outcome(store, page_id, round)
    record = dict(outcome["merged_record"] or outcome["base_record"] or {})
    for path, decision in sorted(db.latest_decisions(store, page_id, round).items()):
        if decision["action"] != "flag":
            record = _write(record, path, decision["new_value"])
    return record


def _write(record: dict, path: str, value: Any) -> dict:
    try:
        return set_at(record, path, value)
    except (KeyError, IndexError, TypeError):
        # The parent is missing from the base record. Diff paths below the top level only exist
        # where both records share the parent, so this only guards against hand-made paths.
        return record


def page_fields(store: Store, page_id: str, round: int) -> pd.DataFrame:
    """The queued fields of one page with both values, state and the decision they stand on."""
    disc = db.load_discrepancies(store, round=round, page_id=page_id, queued_only=True)
    latest = db.latest_decisions(store, page_id, round)
    rows = []
    for row in disc.to_dict("records"):
        decision = latest.get(row["path"])
        state = "open" if decision is None else ("flagged" if decision["action"] == "flag" else "resolved")
        rows.append({
            "path": row["path"], "field": row["field"], "category": row["category"],
            "a": row["value_a"], "b": row["value_b"], "state": state,
            "decision_id": int(decision["decision_id"]) if decision else None,
            "reviewer": decision["reviewer"] if decision else None,
            "value": decision["new_value"] if decision and decision["action"] != "flag" else None,
            "note": decision["note"] if decision else None,
        })
    return pd.DataFrame(rows, columns=["path", "field", "category", "a", "b", "state", "decision_id",
                                       "reviewer", "value", "note"])


def decide(store: Store, page_id: str, round: int, path: str, action: str, reviewer: str,
           value: Any = None, note: str | None = None, based_on: int | None | str = LATEST) -> DecisionResult:
    """Append a decision for one queued field; promote the page when it was the last open one.

    ``based_on`` is the decision id the reviewer saw for this field (None when it was undecided);
    a newer decision by someone else raises ``ReviewConflict``. An edit is validated against the
    item schema first: problems it would introduce raise ``EditRejected`` and nothing is saved.
    """
    reviewer = (reviewer or "").strip()
    if not reviewer:
        raise UserError("a decision needs the reviewer's name")
    if action not in ACTIONS:
        raise UserError(f"unknown action {action!r}; choose from {', '.join(ACTIONS)}")
    disc = db.load_discrepancies(store, round=round, page_id=page_id, queued_only=True)
    match = disc[disc["path"] == path]
    if match.empty:
        raise UserError(f"page {page_id} round {round} has no queued discrepancy at {path}")
    row = match.iloc[0]
    if based_on == LATEST:
        current = db.latest_decisions(store, page_id, round).get(path)
        based_on = int(current["decision_id"]) if current else None
    before = working_record(store, page_id, round)
    previous = get_at(before, path)
    if action == "accept_a":
        new_value = row["value_a"]
    elif action == "accept_b":
        new_value = row["value_b"]
    elif action == "flag":
        if not (note or "").strip():
            raise UserError("a flag needs a note for your colleague")
        new_value = None
    else:
        new_value = value
        after = _write(before, path, new_value)
        added = [p for p in _problems(after) if p not in set(_problems(before))]
        if added:
            raise EditRejected(path, added)
    decision_id = db.append_decision(store, page_id, round, path, action, reviewer, previous,
                                     new_value, note, based_on)
    result = DecisionResult(decision_id, page_resolved=False)
    states = page_fields(store, page_id, round)
    if not states.empty and (states["state"] == "resolved").all():
        result.page_resolved = True
        record = working_record(store, page_id, round)
        result.promoted_version, result.promotion_error = promote_page(
            store, page_id, round, record, note=f"review round {round}, last decision by {reviewer}")
    return result


def bulk_accept(store: Store, reviewer: str, category: str, side: str = "A", round: int | None = None,
                page_id: str | None = None, note: str | None = None) -> BulkResult:
    """Accept side A (or B) for every open field of one category, on one page or the whole queue.

    Fields someone decided meanwhile are reported as conflicts and left alone.
    """
    action = {"A": "accept_a", "B": "accept_b"}.get(side.upper())
    if action is None:
        raise UserError("side must be A or B")
    states = db.field_states(store, round)
    todo = states[(states["state"] == "open") & (states["category"] == category)]
    if page_id is not None:
        todo = todo[todo["page_id"] == page_id]
    result = BulkResult()
    for row in todo.to_dict("records"):
        try:
            outcome = decide(store, row["page_id"], int(row["round"]), row["path"], action, reviewer,
                             note=note or f"bulk accept {side.upper()} for {category}", based_on=None)
        except ReviewConflict:
            result.conflicts.append(f"{row['page_id']} {row['path']}")
            continue
        result.decided += 1
        if outcome.promoted_version is not None:
            result.promoted.append(row["page_id"])
    return result


def promote_page(store: Store, page_id: str, round: int, record: dict | None,
                 note: str) -> tuple[int | None, str | None]:
    """Write the page's record into its dataset as a gold item; returns (version, error)."""
    return promote_pages(store, [(page_id, round, record, note)]).get(page_id, (None, "nothing to promote"))


def promote_pages(store: Store, entries: list[tuple[str, int, dict | None, str]]
                  ) -> dict[str, tuple[int | None, str | None]]:
    """Promote several pages: new items in one import, existing ones as new versions (which
    re-scores their stored responses). A record with problems is not promoted; the problems
    are kept with the page so the reviewer can fix the field at fault."""
    from ..store.items import load_items, save_item_version, upsert_items

    if not entries:
        return {}
    pages = db.load_pages(store).set_index("page_id")
    outcome: dict[str, tuple[int | None, str | None]] = {}
    fresh: dict[str, list[tuple[str, int, dict, str]]] = {}
    existing: list[tuple[str, int, dict, str, str]] = []
    known: dict[str, dict[str, tuple[int, dict]]] = {}
    for page_id, rnd, record, note in entries:
        if record is None:
            outcome[page_id] = (None, "nothing to promote")
            continue
        page = pages.loc[page_id]
        gold = dict(record)
        gold.update(item_id=page["item_id"], exercise=page["exercise"], question=page["question"],
                    source=gold.get("source") or f"extraction/{page['exercise']}")
        gold.setdefault("image", None)
        gold.setdefault("has_image", False)
        problems = _problems(gold)
        if problems:
            outcome[page_id] = (None, "; ".join(problems))
            continue
        dataset = page["dataset"]
        if dataset not in known:
            current = load_items(store, dataset)
            known[dataset] = {str(i): (int(v), r) for i, v, r in
                              zip(current["item_id"], current["version"], current["record"])}
        if page["item_id"] in known[dataset]:
            version, stored = known[dataset][page["item_id"]]
            if _same_record(stored, gold):
                outcome[page_id] = (version, None)  # already the gold: nothing to write or re-score
            else:
                existing.append((page_id, rnd, gold, note, dataset))
        else:
            fresh.setdefault(dataset, []).append((page_id, rnd, gold, note))
    for dataset, group in fresh.items():
        upsert_items(store, [g for _, _, g, _ in group], dataset, origin="extraction", note=group[0][3])
        for page_id, _, _, _ in group:
            outcome[page_id] = (1, None)
    for page_id, _, gold, note, dataset in existing:
        outcome[page_id] = (save_item_version(store, dataset, gold, origin="review", note=note), None)
    rounds = {page_id: rnd for page_id, rnd, _, _ in entries}
    db.set_promotions(store, [(pid, rounds[pid], version, error) for pid, (version, error) in outcome.items()])
    return outcome


def _same_record(stored: dict, gold: dict) -> bool:
    """Whether saving ``gold`` would change the stored record (compared in canonical form)."""
    from ..items import check_item

    try:
        return check_item(stored)[0] == check_item(gold)[0]
    except Exception:  # an odd stored record: let the store decide
        return False


def review_queue(store: Store, round: int | None = None) -> pd.DataFrame:
    """One row per queued page: status (open / flagged / resolved), progress, categories, fields."""
    states = db.field_states(store, round)
    columns = ["page_id", "round", "exercise", "format", "status", "fields", "resolved", "flagged",
               "categories", "field_names", "promoted_version"]
    if states.empty:
        return pd.DataFrame(columns=columns)
    outcomes = db.load_outcomes(store, round)[["page_id", "round", "promoted_version"]]
    rows = []
    for (pid, rnd), group in states.groupby(["page_id", "round"], sort=True):
        n_resolved = int((group["state"] == "resolved").sum())
        n_flagged = int((group["state"] == "flagged").sum())
        status = "resolved" if n_resolved == len(group) else ("flagged" if n_flagged else "open")
        rows.append({"page_id": pid, "round": int(rnd), "exercise": group["exercise"].iloc[0],
                     "format": group["format"].iloc[0], "status": status, "fields": len(group),
                     "resolved": n_resolved, "flagged": n_flagged,
                     "categories": sorted(set(group["category"])), "field_names": sorted(set(group["field"]))})
    frame = pd.DataFrame(rows)
    frame = frame.merge(outcomes, on=["page_id", "round"], how="left")
    return frame[columns]


def attention_pages(store: Store, round: int | None = None) -> pd.DataFrame:
    """Pages outside the queue that still need a person: an extraction failed (nothing to
    compare) or the agreed record could not be promoted because it fails validation."""
    columns = ["page_id", "round", "exercise", "problem"]
    outcomes = db.load_outcomes(store, round)
    if outcomes.empty:
        return pd.DataFrame(columns=columns)
    extractions = db.load_extractions(store, round=round)
    errors: dict[tuple[str, int], list[str]] = {}
    for row in extractions.to_dict("records"):
        if row["error"]:
            errors.setdefault((row["page_id"], int(row["round"])), []).append(f"{row['extractor']}: {row['error']}")
    rows = []
    for row in outcomes.to_dict("records"):
        key = (row["page_id"], int(row["round"]))
        if row["merge_status"] == "failed":
            problem = "; ".join(errors.get(key, [])) or "an extraction is missing"
            rows.append({"page_id": key[0], "round": key[1], "exercise": row["exercise"],
                         "problem": "extraction failed: " + problem})
        elif row["promotion_error"] and row["merge_status"] in ("agreed", "auto_merged"):
            rows.append({"page_id": key[0], "round": key[1], "exercise": row["exercise"],
                         "problem": "not promoted: " + row["promotion_error"]})
    return pd.DataFrame(rows, columns=columns)

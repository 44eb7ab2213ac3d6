"""Review decisions, the audit trail and promotion of resolved pages into the benchmark.

Why: an art historian settles each queued discrepancy against the screenshot. Every decision is
appended (never overwritten) with reviewer, time, field, previous and new value and note. Fields
are decided independently and in any order; the state of a field is derived from its decisions
(``consensus.walk``): with one reviewer per page a decision settles the field; a round can
instead require k >= 2 independent (blind) reviewers, whose agreeing decisions merge and whose
disagreements go to an adjudicator. A decision names the decision it was based on, so two people
deciding one field at once get a conflict instead of silently overwriting each other. When the
last field of a page is settled the page's record becomes a gold item (a new version when it
existed, which re-scores the stored responses for it).
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from ..errors import UserError
from ..store import Store
from ..store import extraction as db
from ..store.extraction import ReviewConflict
from ..team import ADJUDICATE, BULK_ACCEPT, DECIDE, REPAIR_PROMOTIONS, SET_ROUND, Identity, as_identity, operator
from .compare import top_field
from .consensus import (
    ACCEPT_A,
    ACCEPT_B,
    ADJUDICATE_ROLE,
    ADJUDICATION,
    AWAITING,
    EDIT,
    FLAG,
    FLAGGED,
    OPEN,
    RESOLVED,
    REVIEW_ROLE,
    ROLES,
    FieldState,
    canonical,
    contradicts,
    open_for,
    walk,
)
from .merge import DEFAULT_IGNORABLE, MergeResult, merge_records
from .paths import get_at, set_at

logger = logging.getLogger(__name__)

ACTIONS = (ACCEPT_A, ACCEPT_B, EDIT, FLAG)
LATEST = "latest"  # based_on sentinel: decide on top of whatever is current (scripts, bulk)
ORDERS = ("AB", "BA")  # which extractor is shown as "A" (first) to a reviewer

__all__ = ["ACTIONS", "ACCEPT_A", "ACCEPT_B", "EDIT", "FLAG", "LATEST", "ROLES", "REVIEW_ROLE", "ADJUDICATE_ROLE",
           "ReviewConflict", "EditRejected", "PageRejected", "DecisionResult", "BulkResult", "ReviewState",
           "load_state", "shown_order", "true_action", "record_comparison", "record_comparisons", "working_record",
           "decide", "bulk_accept", "review_queue", "page_fields", "promote_page", "promote_pages",
           "attention_pages", "set_reviewers", "round_change", "RoundChange", "decision_key", "visible_state", "field_decisions",
           "decision_message", "page_problems", "refused_choices", "unpromoted_pages", "repair_promotions", "promote_pages_con"]


class EditRejected(UserError):
    """An edited value would make the item invalid; nothing was saved."""

    def __init__(self, path: str, problems: list[str]):
        self.path = path
        self.problems = problems
        super().__init__(f"edit of {path} not saved: " + "; ".join(problems))


class PageRejected(UserError):
    """The decision would complete a page whose fields contradict each other (the record as a
    whole is not a valid item); nothing was saved.

    ``path`` is the field being decided; ``at_fault`` maps each queued field a problem names
    (the decided one when a problem names no queued field) to the problems, in the item's words.
    """

    def __init__(self, path: str, at_fault: dict[str, list[str]]):
        self.path = path
        self.at_fault = at_fault
        self.problems = [p for problems in at_fault.values() for p in problems]
        super().__init__(f"decision on {path} not saved: the page's fields contradict each other: "
                         + "; ".join(self.problems))

    def reasons(self, format_name: str) -> str:
        """The contradictions in the item's words, each named by its field ("True or false: statement C
        has no verdict")."""
        from .editors import field_label

        return "; ".join(f"{field_label(at, format_name)}: {'; '.join(problems)}"
                         for at, problems in self.at_fault.items())

    def message(self, format_name: str, decided: str) -> str:
        """The one message the decided field's card shows (``decided``: e.g. "accepted A")."""
        return (f"Not saved: {decided} would leave this page's fields contradicting each other "
                f"({self.reasons(format_name)}). Nothing was promoted; the page stays open.")


@dataclass
class DecisionResult:
    decision_id: int
    page_resolved: bool
    promoted_version: int | None = None
    promotion_error: str | None = None
    state: str = OPEN          # the field's state after this decision
    conflict: bool = False     # recorded as contradicting a settled value (goes to adjudication)
    after: ReviewState | None = field(default=None, repr=False)  # the round read after deciding


@dataclass
class BulkResult:
    decided: int = 0
    conflicts: list[str] = field(default_factory=list)
    promoted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # "<page> <field>": the page's fields would contradict


# --------------------------------------------------------------------------------- state

@dataclass
class ReviewState:
    """The review tables read once, with every queued field's derived state."""

    pages: pd.DataFrame
    outcomes: pd.DataFrame
    queued: pd.DataFrame
    decisions: pd.DataFrame
    rounds: pd.DataFrame
    states: dict[tuple[str, int, str], FieldState] = field(default_factory=dict)
    needed: dict[tuple[str, int], int] = field(default_factory=dict)
    names_hidden: set[tuple[str, int]] = field(default_factory=set)  # rounds with blind adjudication
    # seeded gold (``review_gold``): (page, round) -> its seed row; served like any page, never promoted
    seeded: dict[tuple[str, int], dict] = field(default_factory=dict)

    def reviewers_needed(self, dataset: str, round: int) -> int:
        return self.needed.get((str(dataset), int(round)), 1)

    def blind_adjudication(self, dataset: str, round: int) -> bool:
        """Whether adjudicators of this round see the decisions without the reviewers' names."""
        return (str(dataset), int(round)) in self.names_hidden

    def dataset_of(self, page_id: str) -> str | None:
        match = self.pages[self.pages["page_id"] == page_id]
        return None if match.empty else str(match["dataset"].iloc[0])

    def state(self, page_id: str, round: int, path: str) -> FieldState:
        return self.states.get((page_id, int(round), path), FieldState())

    def is_seeded(self, page_id: str, round: int) -> bool:
        return (str(page_id), int(round)) in self.seeded

    def fields(self, page_id: str | None = None, round: int | None = None) -> pd.DataFrame:
        """Queued discrepancies (of one page/round when given), values decoded."""
        q = self.queued
        if page_id is not None:
            q = q[q["page_id"] == page_id]
        if round is not None:
            q = q[q["round"] == int(round)]
        return q


def ensure_schema(store: Store) -> None:
    """Bring a store written by an older version up to the review tables (changes the schema, never the data)."""
    db.ensure_schema(store)


def load_state(store: Store, round: int | None = None) -> ReviewState:
    """Read the review tables once and fold every queued field's decisions into its state."""
    data = db.load_review_data(store, round)
    seeds = data.pop("seeds")
    state = ReviewState(**data)
    state.seeded = {(str(r["page_id"]), int(r["round"])): r for r in seeds.to_dict("records")}
    for row in data["rounds"].to_dict("records"):
        state.needed[(str(row["dataset"]), int(row["round"]))] = int(row["reviewers"])
        if row.get("blind_adjudication") is True:
            state.names_hidden.add((str(row["dataset"]), int(row["round"])))
    by_unit: dict[tuple[str, int, str], list[dict]] = {}
    for d in data["decisions"].to_dict("records"):
        by_unit.setdefault((d["page_id"], int(d["round"]), d["path"]), []).append(d)
    for row in data["queued"][["page_id", "round", "path", "dataset"]].itertuples(index=False):
        key = (row.page_id, int(row.round), row.path)
        state.states[key] = walk(by_unit.get(key, []), state.reviewers_needed(row.dataset, row.round))
    return state


def with_page_decisions(state: ReviewState, page_id: str, round: int, decisions: list[dict]) -> ReviewState:
    """A copy of ``state`` whose decisions for one page and round are ``decisions`` (read in the
    write transaction), with that page's field states folded again."""
    d = state.decisions
    keep = d[~((d["page_id"] == page_id) & (d["round"] == int(round)))] if not d.empty else d
    fresh = pd.DataFrame(decisions, dtype=object) if decisions else keep.iloc[0:0]
    merged = pd.concat([keep, fresh], ignore_index=True) if len(keep) else fresh.reset_index(drop=True)
    after = ReviewState(state.pages, state.outcomes, state.queued, merged, state.rounds,
                        dict(state.states), dict(state.needed), set(state.names_hidden), state.seeded)
    by_path: dict[str, list[dict]] = {}
    for row in decisions:
        by_path.setdefault(row["path"], []).append(row)
    for row in state.fields(page_id, round)[["path", "dataset"]].itertuples(index=False):
        after.states[(page_id, int(round), row.path)] = walk(by_path.get(row.path, []),
                                                             state.reviewers_needed(row.dataset, round))
    return after


@dataclass
class RoundChange:
    """What changing a round's reviewers per page would do to the decisions already made.

    Field states are derived from the decisions and the round's setting, so a new setting
    re-reads every decision: in single review one decision settles a field (and a flag holds
    it); with k >= 2 reviewers it is one vote of k, and votes that differ go to the adjudicator.
    """

    dataset: str
    round: int
    before: int
    after: int
    reopened: list[dict] = field(default_factory=list)      # pages settled now that reopen (page_id, promoted_version)
    uncounted: list[dict] = field(default_factory=list)     # decisions that settle their field now and no longer do
    adjudication: list[dict] = field(default_factory=list)  # fields whose decisions now disagree (to the adjudicator)
    released: list[dict] = field(default_factory=list)      # flags that no longer hold their field
    settling: list[dict] = field(default_factory=list)      # fields one decision now settles
    settled: list[str] = field(default_factory=list)        # pages that become settled (promoted on saving)
    seeded: dict | None = None  # review_gold.set_reviewers_seeded: {"seeded", "pool", "pages"} of the seeding

    @property
    def changes(self) -> bool:
        """Whether saving the setting changes the standing of any decision or page."""
        return bool(self.reopened or self.uncounted or self.adjudication or self.released or self.settling)

    def sentences(self) -> list[str]:
        """The change in plain sentences (the page's warning, the command line's output)."""
        from .display import decision_words
        from .editors import field_label

        def where(d: dict) -> str:
            return f"{d['page_id']} · {field_label(d['path'], d.get('format') or '')}"

        def who(d: dict) -> str:
            return f"{where(d)} ({d['reviewer']} {decision_words(d['action'])})"

        out = []
        if self.reopened:
            pages = ", ".join(p["page_id"] + (f" (gold version {p['promoted_version']})"
                                              if p.get("promoted_version") is not None else "") for p in self.reopened)
            out.append(f"{len(self.reopened)} settled page(s) reopen: {pages}. Their gold items stay as promoted "
                       "until the page is settled again.")
        if self.uncounted:
            out.append(f"{len(self.uncounted)} decision(s) stop settling their field: each now counts as one "
                       f"reviewer's vote of {self.after}: " + "; ".join(who(d) for d in self.uncounted) + ".")
        if self.adjudication:
            out.append(f"{len(self.adjudication)} field(s) go to the adjudicator, because their reviewers' "
                       "decisions differ: " + "; ".join(where(d) for d in self.adjudication) + ".")
        if self.released:
            out.append(f"{len(self.released)} flag(s) stop holding their field (a flag holds a field only in "
                       "single review): " + "; ".join(who(d) for d in self.released) + ".")
        if self.settling:
            out.append(f"{len(self.settling)} field(s) are settled by one reviewer's decision: "
                       + "; ".join(who(d) for d in self.settling) + ".")
        if self.settled:
            out.append(f"{len(self.settled)} page(s) become settled and are promoted: {', '.join(self.settled)}.")
        return out


def _settling(st: FieldState) -> list[dict]:
    """The review decisions that settle a field: the one of single review, or the agreeing votes."""
    if st.how == "agreement":
        return list(st.votes.values())
    if st.how == "single" and st.settled_by in st.votes:
        return [st.votes[st.settled_by]]
    return []


def round_change(store: Store | ReviewState, dataset: str, round: int, reviewers: int,
                 viewer: Identity | None = None) -> RoundChange:
    """What setting ``reviewers`` per page for a round would change (nothing is written).

    It names reviewers and their decisions, so only someone who may change the round may ask
    (``viewer``; None: the machine's operator)."""
    actor = operator() if viewer is None else as_identity(viewer)
    actor.require(SET_ROUND)
    state = store if isinstance(store, ReviewState) else load_state(store, round)
    before, after = state.reviewers_needed(dataset, round), max(1, int(reviewers))
    change = RoundChange(str(dataset), int(round), before, after)
    if before == after:
        return change
    q = state.queued
    q = q[(q["dataset"] == dataset) & (q["round"] == int(round))]
    d = state.decisions
    promoted = {str(r["page_id"]): r["promoted_version"] for r in state.outcomes.to_dict("records")
                if int(r["round"]) == int(round)}
    pages: dict[str, list[tuple[FieldState, FieldState]]] = {}
    for row in q.to_dict("records"):
        unit = d[(d["page_id"] == row["page_id"]) & (d["round"] == int(round)) & (d["path"] == row["path"])] \
            if not d.empty else d
        decisions = unit.to_dict("records")
        old, new = state.state(row["page_id"], round, row["path"]), walk(decisions, after)
        pages.setdefault(row["page_id"], []).append((old, new))
        ref = {"page_id": row["page_id"], "path": row["path"], "format": row["format"]}
        if old.resolved and not new.resolved:
            if new.state == ADJUDICATION:
                change.adjudication.append(ref)
            change.uncounted += [{**ref, "reviewer": v["reviewer"], "action": v["action"]} for v in _settling(old)]
        elif not old.resolved and new.resolved:
            change.settling += [{**ref, "reviewer": v["reviewer"], "action": v["action"]} for v in _settling(new)]
        elif new.state == ADJUDICATION and old.state != ADJUDICATION:
            change.adjudication.append(ref)
        if old.state == FLAGGED and new.state != FLAGGED:
            change.released += [{**ref, "reviewer": f["reviewer"], "action": f["action"]} for f in old.flags[-1:]]
    for page_id, states in sorted(pages.items()):
        was, now = all(o.resolved for o, _ in states), all(n.resolved for _, n in states)
        if was and not now:
            version = promoted.get(page_id)
            change.reopened.append({"page_id": page_id, "promoted_version": None if version is None or pd.isna(version)
                                    else int(version)})
        elif now and not was:
            change.settled.append(page_id)
    return change


def set_reviewers(store: Store, dataset: str, round: int, reviewers: int, set_by: Identity | None = None,
                  blind_adjudication: bool = False) -> RoundChange:
    """Require ``reviewers`` independent reviewers per page of a round (1 = single review), and
    whether its adjudicators see the decisions without reviewer names (``blind_adjudication``).

    ``set_by`` is who changes the round (an admin; None: the machine's operator, a script).
    Returns what the change did to the decisions already made (``round_change``, read before
    writing: pages show it and ask to confirm first); pages it settles are promoted. Seeding the
    round with adjudicated pages at the same time is ``review_gold.set_reviewers_seeded``."""
    actor = operator() if set_by is None else as_identity(set_by)
    actor.require(SET_ROUND)
    if int(reviewers) < 1 or int(reviewers) > 9:
        raise UserError(f"reviewers per page must be between 1 and 9, not {reviewers}")
    rounds = db.load_outcomes(store, round)
    if rounds.empty or dataset not in set(rounds["dataset"]):
        raise UserError(f"dataset {dataset!r} has no extraction round {round}")
    change = round_change(store, dataset, round, reviewers, actor)
    db.set_round_reviewers(store, dataset, round, int(reviewers), actor.name, actor=actor.columns(),
                           blind_adjudication=bool(blind_adjudication))
    if change.settled:
        state = load_state(store, round)
        promote_resolved(store, state, [(p, int(round)) for p in change.settled],
                         f"review round {round}: settled when the round changed to {int(reviewers)} reviewer(s)")
    return change


def shown_order(page_id: str, round: int, reviewer: str, reviewers_needed: int) -> str:
    """Which extractor a reviewer sees as "A": randomised per page and reviewer in blind rounds.

    Deterministic (a hash), so the order is the same on every redraw and can be recorded with
    each decision; single-review rounds keep the extractors' own order.
    """
    if reviewers_needed <= 1 or not reviewer:
        return ORDERS[0]
    digest = hashlib.sha256(f"{page_id}|{int(round)}|{reviewer.strip().casefold()}".encode()).digest()
    return ORDERS[digest[0] % 2]


def true_action(shown_side: str, order: str) -> str:
    """The stored action for the side a reviewer clicked ("A" = the first side shown)."""
    side = shown_side.upper()
    if side not in ("A", "B"):
        raise UserError("side must be A or B")
    extractor = order[0] if side == "A" else order[1]
    return ACCEPT_A if extractor == "A" else ACCEPT_B


def decision_key(dataset: str, page_id: str, round: int, path: str, reviewer: str, role: str, action: str,
                 value: Any, note: str | None, decided_at: str | None, occurrence: int = 0) -> str:
    """Content key of a decision: the same decision imported twice is recognised and skipped."""
    content = canonical([dataset, page_id, int(round), path, reviewer, role, action,
                         value if action == EDIT else None, note or None, decided_at, occurrence])
    return hashlib.sha256(content.encode()).hexdigest()


def now_utc() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


# --------------------------------------------------------------------------------- records

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


def _base_record(state: ReviewState, page_id: str, round: int) -> dict:
    o = state.outcomes
    match = o[(o["page_id"] == page_id) & (o["round"] == int(round))]
    if match.empty:
        raise UserError(f"page {page_id} has no comparison in round {round}")
    row = match.iloc[0]
    return dict(row["merged_record"] or row["base_record"] or {})


def working_record(store: Store | ReviewState, page_id: str, round: int) -> dict:
    """The page's base record with every settled field's value applied."""
    state = store if isinstance(store, ReviewState) else load_state(store, round)
    record = _base_record(state, page_id, round)
    for path in sorted(state.fields(page_id, round)["path"]):
        st = state.state(page_id, round, path)
        if st.settled:
            record = _write(record, path, st.value)
    return record


def _write(record: dict, path: str, value: Any) -> dict:
    try:
        return set_at(record, path, value)
    except (KeyError, IndexError, TypeError):
        # The parent is missing from the base record. Diff paths below the top level only exist
        # where both records share the parent, so this only guards against hand-made paths.
        logger.warning("cannot write %s into the record: its parent is missing", path)
        return record


# --------------------------------------------------------------------------------- fields

def visible_state(st: FieldState, reviewer: str | None, role: str, needed: int) -> str:
    """The state of a field as one person may know it.

    In a blind round a reviewer learns nothing of the other decisions: a field they decided stays
    "decided by you" whatever the others chose (agreement, disagreement and the settled value are
    not theirs to see, so the moment of settling tells nothing either), and a field they did not
    decide looks open until it is settled.
    """
    if needed > 1 and role == REVIEW_ROLE:
        if reviewer and reviewer in st.votes:
            return AWAITING
        return RESOLVED if st.resolved else OPEN
    return st.state


def _aliases(decisions: list[dict]) -> dict[str, str]:
    """Reviewer name -> "reviewer 1", "reviewer 2", ... in the order they first decided."""
    out: dict[str, str] = {}
    for d in sorted(decisions, key=lambda d: int(d["decision_id"])):
        if (d.get("role") or REVIEW_ROLE) == REVIEW_ROLE and d["reviewer"] not in out:
            out[d["reviewer"]] = f"reviewer {len(out) + 1}"
    return out


def field_decisions(state: ReviewState, page_id: str, round: int, path: str, role: str = ADJUDICATE_ROLE,
                    reviewer: str | None = None) -> list[dict]:
    """Every decision on one field as ``role`` may see it (oldest first).

    A blind reviewer sees only their own; an adjudicator sees every decision, with the reviewers
    named "reviewer 1", "reviewer 2" while the field is unsettled in a round with blind
    adjudication (the ``reviewer`` key holds the name or that alias).
    """
    d = state.decisions
    if d.empty:
        return []
    rows = d[(d["page_id"] == page_id) & (d["round"] == int(round)) & (d["path"] == path)].to_dict("records")
    dataset = state.dataset_of(page_id) or ""
    needed = state.reviewers_needed(dataset, round)
    st = state.state(page_id, round, path)
    if needed > 1 and role == REVIEW_ROLE:
        return [r for r in rows if r["reviewer"] == reviewer and (r.get("role") or REVIEW_ROLE) == REVIEW_ROLE]
    if role == ADJUDICATE_ROLE and state.blind_adjudication(dataset, round) and not st.resolved:
        alias = _aliases(rows)
        return [{**r, "reviewer": alias.get(r["reviewer"], r["reviewer"]),
                 "actor_subject": None, "actor_name": None} if (r.get("role") or REVIEW_ROLE) == REVIEW_ROLE
                else r for r in rows]
    return rows


FIELD_COLUMNS = ["path", "field", "category", "a", "b", "state", "decision_id", "reviewer", "value", "note",
                 "order", "mine", "votes", "needed", "how", "my_action", "my_value"]


def page_fields(store: Store | ReviewState, page_id: str, round: int, reviewer: str | None = None,
                role: str = REVIEW_ROLE) -> pd.DataFrame:
    """The queued fields of one page, as one person may see them (object dtype: never NaN).

    ``a``/``b`` are in the order this reviewer is shown (swapped in blind rounds when ``order``
    is "BA"); ``decision_id`` is what a decision must be based on (the field's latest decision,
    or in blind rounds the reviewer's own); ``mine`` says whether the field waits for this
    person. In blind rounds a reviewer sees neither the others' names nor their values nor
    whether they decided (``visible_state``: a field they did not decide opens up once settled,
    one they decided never shows the outcome); with blind adjudication an adjudicator sees
    "reviewer 1", "reviewer 2" instead of names.
    """
    state = store if isinstance(store, ReviewState) else load_state(store, round)
    frame = state.fields(page_id, round)
    if frame.empty:
        return pd.DataFrame(columns=FIELD_COLUMNS, dtype=object)
    dataset = frame["dataset"].iloc[0]
    needed = state.reviewers_needed(dataset, round)
    blind = needed > 1 and role == REVIEW_ROLE
    masked = role == ADJUDICATE_ROLE and state.blind_adjudication(dataset, round)
    order = shown_order(page_id, round, reviewer or "", needed) if role == REVIEW_ROLE else ORDERS[0]
    rows = []
    for row in frame.to_dict("records"):
        st = state.state(page_id, round, row["path"])
        a, b = (row["value_a"], row["value_b"]) if order == "AB" else (row["value_b"], row["value_a"])
        own = st.reviewer_decision(reviewer) if reviewer else None
        shown_state = visible_state(st, reviewer, role, needed)
        if blind:
            mine = [d for d in [own, *st.flags] if d and d["reviewer"] == reviewer
                    and (d.get("role") or REVIEW_ROLE) == REVIEW_ROLE]
            latest_id = max((int(d["decision_id"]) for d in mine), default=None)
            who, note = (reviewer if own else None), (own or {}).get("note")
        else:
            latest_id = st.last_id
            who, note = (st.last or {}).get("reviewer"), (st.last or {}).get("note")
            if masked and not st.resolved and who:
                who = _aliases([*st.votes.values(), *st.flags]).get(who, who)
        rows.append({
            "path": row["path"], "field": row["field"], "category": row["category"], "a": a, "b": b,
            "state": shown_state, "decision_id": latest_id, "reviewer": who,
            "value": st.value if st.settled and (not blind or shown_state == RESOLVED) else None,
            "note": note, "order": order, "mine": open_for(st, reviewer or "", role, needed),
            "votes": len(st.votes) if not blind or shown_state == RESOLVED else int(own is not None),
            "needed": needed, "how": st.how if not blind or shown_state == RESOLVED else None,
            "my_action": own["action"] if own else None, "my_value": own["new_value"] if own else None,
        })
    return pd.DataFrame(rows, columns=FIELD_COLUMNS, dtype=object)


def field_table(state: ReviewState) -> pd.DataFrame:
    """One row per queued field with its state (the queue, the CLI status and bulk accept use it)."""
    columns = ["dataset", "page_id", "round", "path", "field", "category", "format", "exercise", "state",
               "votes", "needed", "how", "reviewers"]
    rows = []
    for row in state.queued.to_dict("records"):
        st = state.state(row["page_id"], row["round"], row["path"])
        rows.append({"dataset": row["dataset"], "page_id": row["page_id"], "round": int(row["round"]),
                     "path": row["path"], "field": row["field"], "category": row["category"],
                     "format": row["format"], "exercise": row["exercise"], "state": st.state,
                     "votes": len(st.votes), "needed": state.reviewers_needed(row["dataset"], row["round"]),
                     "how": st.how, "reviewers": sorted(st.votes)})
    return pd.DataFrame(rows, columns=columns)


# --------------------------------------------------------------------------------- deciding

def _check(state_needed: int, role: str, reviewer: str, based_on: Any, value: Any, source: str):
    """The in-transaction check of a new decision against the field's stored decisions."""
    def check(decisions: list[dict]) -> dict:
        st = walk(decisions, state_needed)
        blind = state_needed > 1 and role == REVIEW_ROLE
        if based_on != LATEST:
            if blind:
                mine = [d for d in decisions if d["reviewer"] == reviewer and (d.get("role") or REVIEW_ROLE) == role]
                seen = int(mine[-1]["decision_id"]) if mine else None
                latest = mine[-1] if mine else None
            else:
                seen, latest = st.last_id, st.last
            if seen != (int(based_on) if based_on is not None else None):
                raise ReviewConflict(path_of(decisions), latest or {})
        if value is _NO_VALUE or role == ADJUDICATE_ROLE:
            return {"conflict": False}
        if role == REVIEW_ROLE and source in ("page", "bulk") and st.state == ADJUDICATION and not blind:
            raise UserError("this field waits for an adjudicator; your decision was not saved")
        # a decision that contradicts a settled value without having seen it (an import, a late
        # blind reviewer) is kept as a conflict for adjudication, never silently overwriting
        saw_it = not blind and source in ("page", "bulk", "cli")
        return {"conflict": contradicts(st, value, reviewer, state_needed) and not saw_it}
    return check


_NO_VALUE = object()


def path_of(decisions: list[dict]) -> str:
    return decisions[-1]["path"] if decisions else "field"


def decide(store: Store, page_id: str, round: int, path: str, action: str, reviewer: Identity,
           value: Any = None, note: str | None = None, based_on: int | None | str = LATEST, *,
           role: str = REVIEW_ROLE, order: str | None = None, source: str = "page",
           state: ReviewState | None = None) -> DecisionResult:
    """Append a decision for one queued field; promote the page when its last field settles.

    ``action`` names the true extractor (accept_a / accept_b), an edit or a flag; pages map the
    side a reviewer clicked with ``true_action``. ``based_on`` is the decision id the reviewer
    saw (``page_fields(...)["decision_id"]``); a newer decision raises ``ReviewConflict``. An edit
    is validated against the item schema first: problems it would introduce raise
    ``EditRejected`` and nothing is saved. A decision that would complete the page (as this
    person knows it) is checked with the page as a whole: fields that contradict each other raise
    ``PageRejected`` naming the fields at fault, and nothing is saved. ``state`` (a ``ReviewState`` the caller already read)
    saves a read; the checks that matter run against the stored decisions in the write itself.
    ``reviewer`` is the acting ``Identity`` (``team.local(name)`` in single-machine mode); its roles must
    allow deciding (``review`` role) or adjudicating, and its subject and provider are stored.
    """
    if action not in ACTIONS:
        raise UserError(f"unknown action {action!r}; choose from {', '.join(ACTIONS)}")
    if role not in ROLES:
        raise UserError(f"unknown role {role!r}; choose from {', '.join(ROLES)}")
    actor = as_identity(reviewer)
    actor.require(ADJUDICATE if role == ADJUDICATE_ROLE else DECIDE)
    reviewer = actor.key
    state = state or load_state(store, round)
    match = state.fields(page_id, round)
    match = match[match["path"] == path]
    if match.empty and state is not None:  # a state read before this field was queued: read again
        state = load_state(store, round)
        match = state.fields(page_id, round)
        match = match[match["path"] == path]
    if match.empty:
        raise UserError(f"page {page_id} round {round} has no queued discrepancy at {path}")
    row = match.iloc[0]
    needed = state.reviewers_needed(row["dataset"], round)
    before = working_record(state, page_id, round)
    previous = get_at(before, path)
    if action == ACCEPT_A:
        new_value = row["value_a"]
    elif action == ACCEPT_B:
        new_value = row["value_b"]
    elif action == FLAG:
        if not (note or "").strip():
            raise UserError("a flag needs a note for your colleague")
        new_value = None
    else:
        new_value = value
        check_edit(before, path, new_value)
    order = order or (shown_order(page_id, round, reviewer, needed) if role == REVIEW_ROLE else ORDERS[0])
    if action != FLAG:
        at_fault = page_problems(state, page_id, round, path, new_value, reviewer, role)
        if at_fault:
            raise PageRejected(path, at_fault)
    decided_at = now_utc()
    key = decision_key(row["dataset"], page_id, round, path, reviewer, role, action, new_value, note,
                       decided_at.isoformat(timespec="microseconds"))
    check = _check(needed, role, reviewer, based_on, _NO_VALUE if action == FLAG else new_value, source)
    done: dict[str, Any] = {}
    note_of_promotion = f"review round {round}, last decision by {actor.name}"

    def promote_with_it(con, fresh: list[dict]) -> None:
        """In the decision's transaction: the page's promotion when this decision settles its last field."""
        after = with_page_decisions(state, page_id, round, fresh)
        done.clear()
        done["after"] = after
        if _all_settled(after, page_id, round):
            record = working_record(after, page_id, round)
            done["promoted"] = promote_pages_con(con, store, [(page_id, round, record, note_of_promotion)],
                                                 state.pages).get(page_id, (None, "nothing to promote"))

    decision_id = db.append_decision(store, page_id, round, path, action, reviewer, previous, new_value, note,
                                     None if based_on == LATEST else based_on, check=check, role=role,
                                     shown_order=order, source=source, decision_key=key, decided_at=decided_at,
                                     then=promote_with_it, **actor.columns())
    after = done["after"]
    field_state = after.state(page_id, round, path)
    conflict = any(int(d["decision_id"]) == decision_id for d in field_state.conflicts)
    result = DecisionResult(decision_id, page_resolved="promoted" in done, state=field_state.state, conflict=conflict,
                            after=after)
    if "promoted" in done:
        result.promoted_version, result.promotion_error = done["promoted"]
    return result


def _all_settled(state: ReviewState, page_id: str, round: int) -> bool:
    paths = list(state.fields(page_id, round)["path"])
    return bool(paths) and all(state.state(page_id, round, p).resolved for p in paths)


def decision_message(result: DecisionResult, blind: bool) -> str:
    """What the person who just decided is told about the outcome (after "<field>: accepted A.").

    In a blind round nothing: whether the others agree, disagree or have decided at all, and
    whether the page was promoted, would tell the reviewer the other decisions.
    """
    if blind:
        return "Blind review: the other reviewers' decisions stay hidden."
    parts = []
    if result.conflict:
        parts.append("It contradicts the settled value, so the field goes to the adjudicator.")
    elif result.state == ADJUDICATION:
        parts.append("The reviewers disagree: the field goes to the adjudicator.")
    if result.promoted_version is not None:
        parts.append(f"Page resolved and promoted as gold (version {result.promoted_version}).")
    elif result.promotion_error:
        parts.append(f"Page resolved but not promoted: {result.promotion_error}")
    return " ".join(parts)


def _page_as_decided(state: ReviewState, page_id: str, round: int, path: str, value: Any, reviewer: str | None,
                     role: str) -> dict | None:
    """The page's record once ``value`` is decided at ``path``, as the person deciding knows the
    page (a blind reviewer: their own decisions; anyone else: the settled values); None while
    another field still waits for them, so the page is not complete yet."""
    needed = state.reviewers_needed(state.dataset_of(page_id) or "", round)
    blind = needed > 1 and role == REVIEW_ROLE
    record = _base_record(state, page_id, round)
    for other in sorted(state.fields(page_id, round)["path"]):
        if other == path:
            decided = value
        else:
            st = state.state(page_id, round, other)
            own = st.reviewer_decision(reviewer) if blind and reviewer else None
            if own is not None:
                decided = own.get("new_value")
            elif st.resolved:
                decided = st.value
            else:
                return None
        record = _write(record, other, decided)
    return record


def page_problems(state: ReviewState, page_id: str, round: int, path: str, value: Any,
                  reviewer: str | None = None, role: str = REVIEW_ROLE) -> dict[str, list[str]]:
    """Whether deciding ``value`` at ``path`` would complete the page with fields that contradict
    each other (e.g. three statements but two verdicts): the queued fields at fault and their
    problems, empty when the page stays incomplete or is a valid item.

    The page is checked as it would be promoted (its id, exercise and question filled in). Only
    problems of the reviewed fields count: a defect elsewhere in the record is no reviewer's
    decision to refuse (promotion reports it and the page is listed as needing attention).
    """
    from ..items import ItemValidationError, validate_item

    record = _page_as_decided(state, page_id, round, path, value, reviewer, role)
    if record is None:
        return {}
    page = state.pages[state.pages["page_id"] == page_id]
    gold = dict(record)
    if not page.empty:
        row = page.iloc[0]
        gold.update(item_id=row["item_id"], exercise=row["exercise"], question=row["question"],
                    source=gold.get("source") or f"extraction/{row['exercise']}")
    gold.setdefault("image", None)
    gold.setdefault("has_image", bool(gold["image"]))  # as promotion does
    try:
        validate_item(gold)
    except ItemValidationError as exc:
        paths = sorted(state.fields(page_id, round)["path"])
        at_fault: dict[str, list[str]] = {}
        for item_field, problem in zip(exc.fields, exc.problems):
            # the field the problem names, else the decided one or another queued field of that part of the item
            near = [p for p in paths if top_field(p) == top_field(item_field)]
            target = (item_field if item_field in paths else path if path in near else near[0] if near else None)
            if target is None:
                continue
            words = problem.removeprefix(f"item {exc.item_id}: field {item_field}: ")
            at_fault.setdefault(target, []).append(words)
        return at_fault
    except Exception as exc:  # a record the validator cannot read: promotion reports it
        logger.warning("cannot check page %s as a whole: %s", page_id, exc)
    return {}


def refused_choices(state: ReviewState, page_id: str, round: int, path: str, reviewer: str | None = None,
                    role: str = REVIEW_ROLE) -> dict[str, PageRejected]:
    """Which of the offered extractions (``accept_a`` / ``accept_b``, the true extractors) would
    complete the page with fields that contradict each other, as this person knows the page; each
    with the ``PageRejected`` that deciding it would raise. Empty when both are consistent (also
    while another field still waits, so the page is not complete yet). Pages offer only the others
    and say why before the click."""
    match = state.fields(page_id, round)
    match = match[match["path"] == path]
    if match.empty:
        return {}
    row = match.iloc[0]
    out = {}
    for action, value in ((ACCEPT_A, row["value_a"]), (ACCEPT_B, row["value_b"])):
        at_fault = page_problems(state, page_id, round, path, value, reviewer, role)
        if at_fault:
            out[action] = PageRejected(path, at_fault)
    return out


def check_edit(before: dict, path: str, value: Any) -> None:
    """Raise ``EditRejected`` when writing ``value`` at ``path`` adds item problems."""
    after = _write(before, path, value)
    added = [p for p in _problems(after) if p not in set(_problems(before))]
    if added:
        raise EditRejected(path, added)


def bulk_accept(store: Store, reviewer: Identity, category: str, side: str = "A", round: int | None = None,
                page_id: str | None = None, note: str | None = None, role: str = REVIEW_ROLE) -> BulkResult:
    """Accept side A (or B, the true extractors) for every field of one category still waiting
    for this reviewer, on one page or the whole queue. Fields someone decided meanwhile are
    reported as conflicts and left alone.

    Never in a blind round: a bulk accept settles fields without their pages being opened, and
    two reviewers accepting in bulk would agree by construction. A blind round asked for by
    name is refused; across every round, blind rounds are left out.
    """
    actor = as_identity(reviewer)
    actor.require(BULK_ACCEPT)
    action = {"A": ACCEPT_A, "B": ACCEPT_B}.get(side.upper())
    if action is None:
        raise UserError("side must be A or B")
    state = load_state(store, round)
    table = field_table(state)
    if round is not None:
        blind = sorted({str(d) for d, n in zip(table["dataset"], table["needed"]) if int(n) > 1})
        if blind:
            raise UserError(f"bulk accepts are unavailable in blind rounds ({', '.join(blind)} round {round} "
                            "needs independent reviewers): decide each field on its page")
    todo = table[(table["category"] == category) & (table["needed"].astype(int) <= 1)]
    if page_id is not None:
        todo = todo[todo["page_id"] == page_id]
    result = BulkResult()
    for row in todo.to_dict("records"):
        st = state.state(row["page_id"], row["round"], row["path"])
        if not open_for(st, actor.key, role, int(row["needed"])):
            continue
        try:
            outcome = decide(store, row["page_id"], int(row["round"]), row["path"], action, actor,
                             note=note or f"bulk accept {side.upper()} for {category}", role=role, source="bulk",
                             order=ORDERS[0])
        except ReviewConflict:
            result.conflicts.append(f"{row['page_id']} {row['path']}")
            continue
        except PageRejected:
            result.rejected.append(f"{row['page_id']} {row['path']}")
            continue
        result.decided += 1
        if outcome.promoted_version is not None:
            result.promoted.append(row["page_id"])
    return result


# --------------------------------------------------------------------------------- promotion

def promote_page(store: Store, page_id: str, round: int, record: dict | None,
                 note: str) -> tuple[int | None, str | None]:
    """Write the page's record into its dataset as a gold item; returns (version, error)."""
    return promote_pages(store, [(page_id, round, record, note)]).get(page_id, (None, "nothing to promote"))


def promote_pages(store: Store, entries: list[tuple[str, int, dict | None, str]],
                  pages: pd.DataFrame | None = None) -> dict[str, tuple[int | None, str | None]]:
    """Promote several pages in one transaction: new items, or new versions of existing ones
    (which re-scores their stored responses). A record with problems is not promoted; the
    problems are kept with the page so the reviewer can fix the field at fault."""
    if not entries:
        return {}
    pages = pages if pages is not None else db.load_pages(store)
    with store.transaction() as con:
        return promote_pages_con(con, store, entries, pages)


def promote_pages_con(con, store: Store, entries: list[tuple[str, int, dict | None, str]],
                      pages: pd.DataFrame) -> dict[str, tuple[int | None, str | None]]:
    """``promote_pages`` inside the caller's transaction (a decision and the promotion it completes
    commit together). Idempotent: a page whose gold item already holds the record keeps its version."""
    from ..items import check_item
    from ..scoring.item_writes import store_prepared
    from ..scoring.rescore import rescore_con
    from ..store.items import ImportReport, prepare_items, write_items
    from ..store.review_gold import seeded_keys_con
    from ..store.runs import current_items_con

    pages = pages.set_index("page_id")
    outcome: dict[str, tuple[int | None, str | None]] = {}
    rounds = {page_id: rnd for page_id, rnd, _, _ in entries}
    seeded = seeded_keys_con(con)
    known_seeded: dict[str, dict] = {}
    gold_pages = [(page_id, rnd) for page_id, rnd, record, _ in entries
                  if record is not None and (str(page_id), int(rnd)) in seeded]
    if gold_pages:  # seeded gold: never written into the dataset; reads as the item's current gold version
        entries = [e for e in entries if (str(e[0]), int(e[1])) not in seeded]
        for page_id, _ in gold_pages:
            dataset, item_id = pages.loc[page_id, "dataset"], pages.loc[page_id, "item_id"]
            if dataset not in known_seeded:
                known_seeded[dataset] = current_items_con(con, dataset)
            outcome[page_id] = (known_seeded[dataset].get(item_id, (None, None))[0], None)
    known: dict[str, dict[str, tuple[int, dict]]] = {}
    fresh: dict[str, list[tuple[str, dict, str]]] = {}
    existing: dict[str, list[tuple[str, dict, str, int]]] = {}
    for page_id, _, record, note in entries:
        if record is None:
            outcome[page_id] = (None, "nothing to promote")
            continue
        page = pages.loc[page_id]
        gold = dict(record)
        gold.update(item_id=page["item_id"], exercise=page["exercise"], question=page["question"],
                    source=gold.get("source") or f"extraction/{page['exercise']}")
        gold.setdefault("image", None)
        gold.setdefault("has_image", bool(gold["image"]))  # a paper's question names its image by hash
        problems = _problems(gold)
        if problems:
            outcome[page_id] = (None, "; ".join(problems))
            continue
        dataset = page["dataset"]
        if dataset not in known:
            known[dataset] = current_items_con(con, dataset)
        if page["item_id"] in known[dataset]:
            version, stored = known[dataset][page["item_id"]]
            if _same_record(stored, gold):
                outcome[page_id] = (version, None)  # already the gold: nothing to write or re-score
            else:
                existing.setdefault(dataset, []).append((page_id, gold, note, version))
        else:
            fresh.setdefault(dataset, []).append((page_id, gold, note))
    for dataset, group in fresh.items():
        report = ImportReport(dataset=dataset)
        items = prepare_items(con, store, [g for _, g, _ in group], None, report,
                              image_hashes=_stored_images(con, [g for _, g, _ in group]), check=check_item)
        store_prepared(con, items, dataset, "extraction", report, keep_invalid=False, note=group[0][2])
        for page_id, _, _ in group:
            outcome[page_id] = (1, None)
    for dataset, group in existing.items():
        for page_id, gold, note, version in group:  # one note per version: why it exists
            report = ImportReport(dataset=dataset)
            items = prepare_items(con, store, [gold], None, report, image_hashes=_stored_images(con, [gold]),
                                  check=check_item)
            changed = write_items(con, items, dataset, "review", note, report)  # keeps the stored image
            if changed:
                rescore_con(con, dataset=dataset, item_ids=changed)
            outcome[page_id] = (version + 1 if changed else version, None)
    db.set_promotions_con(con, [(pid, rounds[pid], version, error) for pid, (version, error) in outcome.items()])
    return outcome


def _stored_images(con, golds: list[dict]) -> dict[str, str]:
    """item id -> image hash, for records whose ``image`` is the hash of an image already in the
    store (a question of a PDF paper attached to one of the paper's images): the item gets it."""
    named = {g["item_id"]: g["image"] for g in golds if isinstance(g.get("image"), str) and len(g["image"]) == 64}
    if not named:
        return {}
    hashes = sorted(set(named.values()))  # two questions may show one image
    marks = ", ".join("?" for _ in hashes)
    known = {row[0] for row in con.execute(f"SELECT image_hash FROM images WHERE image_hash IN ({marks})",
                                           hashes).fetchall()}
    return {item_id: h for item_id, h in named.items() if h in known}


def _same_record(stored: dict, gold: dict) -> bool:
    """Whether saving ``gold`` would change the stored record (compared in canonical form)."""
    from ..items import check_item

    try:
        return check_item(stored)[0] == check_item(gold)[0]
    except Exception as exc:  # an odd stored record: let the store decide
        logger.warning("cannot compare the stored record with the reviewed one: %s", exc)
        return False


def promote_resolved(store: Store, state: ReviewState, pages: list[tuple[str, int]], note: str) -> list[str]:
    """Promote those of ``pages`` whose every field is settled (after an import); returns them."""
    entries = []
    for page_id, rnd in sorted(set(pages)):
        paths = list(state.fields(page_id, rnd)["path"])
        if paths and all(state.state(page_id, rnd, p).resolved for p in paths):
            entries.append((page_id, rnd, working_record(state, page_id, rnd), note))
    done = promote_pages(store, entries, pages=state.pages)
    return [pid for pid, (version, _) in done.items() if version is not None]


def unpromoted_pages(state: ReviewState) -> list[tuple[str, int, dict | None]]:
    """(page, round, record) of the pages that are settled (the extractors agreed, or every queued
    field is resolved) but hold neither a gold version nor a reason why not: their promotion was
    interrupted (a store written before decisions and promotions shared one transaction)."""
    out = []
    for row in state.outcomes.to_dict("records"):
        version, error = row.get("promoted_version"), row.get("promotion_error")
        if (version is not None and not pd.isna(version)) or (error is not None and not pd.isna(error)):
            continue
        page_id, rnd = str(row["page_id"]), int(row["round"])
        if state.is_seeded(page_id, rnd):
            continue  # seeded gold: never promoted
        if row["merge_status"] in ("agreed", "auto_merged") and row.get("merged_record"):
            out.append((page_id, rnd, dict(row["merged_record"])))
        elif row["merge_status"] == "queued" and _all_settled(state, page_id, rnd):
            out.append((page_id, rnd, working_record(state, page_id, rnd)))
    return out


def repair_promotions(store: Store, actor: Identity | None = None) -> dict[tuple[str, int], tuple[int | None, str | None]]:
    """Promote every settled page whose promotion was interrupted (``unpromoted_pages``); returns
    (page, round) -> (version, error). Running it again changes nothing. ``actor`` (None: the
    machine's operator) must be an admin; the repair is recorded in the audit log."""
    from ..store import team as audit

    who = operator() if actor is None else as_identity(actor)
    who.require(REPAIR_PROMOTIONS)
    state = load_state(store)
    missing = unpromoted_pages(state)
    done: dict[tuple[str, int], tuple[int | None, str | None]] = {}
    for rnd in sorted({r for _, r, _ in missing}):  # a page id is promoted once per call: one round at a time
        entries = [(pid, r, record, f"review-repair: promotion of round {r} after an interrupted write")
                   for pid, r, record in missing if r == rnd]
        for page_id, outcome in promote_pages(store, entries, pages=state.pages).items():
            done[(page_id, rnd)] = outcome
    if done:
        audit.add_event(store, "review repair", f"{len(done)} page(s)",
                        {"pages": [f"{p} round {r}" for p, r in sorted(done)]}, who.columns())
    return done


# --------------------------------------------------------------------------------- queues

QUEUE_COLUMNS = ["page_id", "round", "dataset", "exercise", "format", "status", "fields", "resolved", "flagged",
                 "adjudication", "awaiting", "mine", "needed", "categories", "field_names", "promoted_version"]


def review_queue(store: Store | ReviewState, round: int | None = None, reviewer: str | None = None,
                 role: str = REVIEW_ROLE) -> pd.DataFrame:
    """One row per queued page: status, progress, categories, fields, and how many of its
    fields wait for this person (``mine``; every open field when no reviewer is given).

    Status: adjudication (a field waits for the adjudicator) > flagged > open (nobody or not
    every reviewer decided yet) > resolved. In the reviewer role a blind round's fields count as
    this reviewer may know them (``visible_state``): without ``reviewer`` (the ``show`` view)
    every unsettled field of a blind round is open, so no page tells who is still awaited.
    """
    state = store if isinstance(store, ReviewState) else load_state(store, round)
    table = field_table(state)
    if round is not None and not table.empty:
        table = table[table["round"] == int(round)]
    if table.empty:
        return pd.DataFrame(columns=QUEUE_COLUMNS)
    promoted = {(r["page_id"], int(r["round"])): r["promoted_version"] for r in state.outcomes.to_dict("records")}
    rows = []
    for (pid, rnd), group in table.groupby(["page_id", "round"], sort=True):
        needed = int(group["needed"].iloc[0])
        states = [visible_state(state.state(pid, rnd, p), reviewer, role, needed) for p in group["path"]]
        n = {s: states.count(s) for s in (RESOLVED, FLAGGED, ADJUDICATION, AWAITING)}
        if n[ADJUDICATION]:
            status = ADJUDICATION
        elif n[RESOLVED] == len(group):
            status = RESOLVED
        elif n[FLAGGED]:
            status = FLAGGED
        else:
            status = OPEN
        if reviewer and reviewer in state.seeded.get((str(pid), int(rnd)), {}).get("excluded", ()):
            mine = 0  # seeded gold from a page this person decided when it was adjudicated: not theirs to check
        elif reviewer:
            mine = sum(open_for(state.state(pid, rnd, p), reviewer, role, needed) for p in group["path"])
        else:
            mine = len(group) - n[RESOLVED]
        version = promoted.get((pid, int(rnd)))
        if needed > 1 and role == REVIEW_ROLE and n[RESOLVED] < len(group):
            version = None  # a blind reviewer learns of the promotion only as far as they see settled fields
        rows.append({"page_id": pid, "round": int(rnd), "dataset": group["dataset"].iloc[0],
                     "exercise": group["exercise"].iloc[0], "format": group["format"].iloc[0], "status": status,
                     "fields": len(group), "resolved": n[RESOLVED], "flagged": n[FLAGGED],
                     "adjudication": n[ADJUDICATION], "awaiting": n[AWAITING], "mine": int(mine), "needed": needed,
                     "categories": sorted(set(group["category"])), "field_names": sorted(set(group["field"])),
                     "promoted_version": None if version is None or pd.isna(version) else int(version)})
    return pd.DataFrame(rows, columns=QUEUE_COLUMNS)


def next_page(queue: pd.DataFrame, current: tuple[str, int] | None) -> tuple[str, int] | None:
    """The next page (after ``current``, wrapping around) that still has fields for this person."""
    waiting = [(r.page_id, int(r.round)) for r in queue.itertuples() if int(r.mine) > 0]
    if not waiting:
        return None
    if current is None:
        return waiting[0]
    later = [p for p in waiting if (p[1], p[0]) > (current[1], current[0])]
    return later[0] if later else (waiting[0] if waiting[0] != current else None)


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
    exercises = {(str(r["page_id"]), int(r["round"])): r["exercise"] for r in outcomes.to_dict("records")}
    for page_id, rnd, _ in unpromoted_pages(load_state(store, round)):
        rows.append({"page_id": page_id, "round": rnd, "exercise": exercises.get((page_id, rnd)),
                     "problem": "settled, but its promotion was interrupted: run `python -m eduart_core review-repair`"})
    return pd.DataFrame(rows, columns=columns)

"""The state of one reviewed field, derived from its append-only decisions (pure functions).

Why one walk over the log instead of "the latest decision wins": a round may need k >= 2
independent reviewers per page (blind double review). Then a field settles only when k people
have decided it and agree; when they disagree it waits for an adjudicator, who sees every
decision. A decision that contradicts a settled field (an imported decision, a late reviewer) is
kept and marked as a conflict: it sends the field back to adjudication instead of silently
overwriting the gold. With k = 1 the walk reduces to the old rule: a reviewer's decision, taken
while seeing the current value, settles (or replaces) the value.

Decisions are dicts with at least ``decision_id, reviewer, role, action, new_value, conflict``;
values are compared as canonical JSON (key order and spacing of JSON do not matter, the text
inside strings does).
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

REVIEW_ROLE = "review"
ADJUDICATE_ROLE = "adjudicate"
ROLES = (REVIEW_ROLE, ADJUDICATE_ROLE)
FLAG = "flag"
ACCEPT_A, ACCEPT_B, EDIT = "accept_a", "accept_b", "edit"  # the other decisions (A and B: the extractors)

# Field states, in the order a page moves through them.
OPEN = "open"                  # nobody decided yet
AWAITING = "awaiting"          # some of the k reviewers decided (blind review)
FLAGGED = "flagged"            # a reviewer left a question for a colleague (single review)
ADJUDICATION = "adjudication"  # reviewers disagree, or a decision contradicts the settled value
RESOLVED = "resolved"
STATES = (OPEN, AWAITING, FLAGGED, ADJUDICATION, RESOLVED)


def canonical(value: Any) -> str:
    """The category of a decided value: canonical JSON (what agreement statistics compare)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass
class FieldState:
    """Where one (page, round, path) stands after its decisions."""

    state: str = OPEN
    value: Any = None                 # the settled value (meaningful when settled)
    settled: bool = False             # a value was settled at some point (kept while adjudicating)
    how: str | None = None            # single | agreement | adjudication
    settled_by: str | None = None     # whose decision set the value (single review, adjudication)
    votes: dict[str, dict] = field(default_factory=dict)   # reviewer -> latest non-flag review decision
    flags: list[dict] = field(default_factory=list)
    conflicts: list[dict] = field(default_factory=list)    # conflict decisions not yet adjudicated
    adjudications: list[dict] = field(default_factory=list)
    last_id: int | None = None        # latest decision id of the field (single review: based_on)
    last: dict | None = None          # the latest decision (any role or action)

    @property
    def resolved(self) -> bool:
        return self.state == RESOLVED

    def reviewer_decision(self, reviewer: str) -> dict | None:
        """The latest non-flag review decision of one reviewer (their own view in blind review)."""
        return self.votes.get(reviewer)


def _is_true(value: Any) -> bool:
    return bool(value) and not (isinstance(value, float) and math.isnan(value))  # NaN is truthy


def walk(decisions: Iterable[dict], reviewers_needed: int = 1) -> FieldState:
    """Fold a field's decisions (any order; sorted by decision_id here) into its state."""
    k = max(1, int(reviewers_needed or 1))
    st = FieldState()
    flagged = False
    needs_adjudication = False
    for d in sorted(decisions, key=lambda d: int(d["decision_id"])):
        st.last_id, st.last = int(d["decision_id"]), d
        role = d.get("role") or REVIEW_ROLE
        if d["action"] == FLAG:
            st.flags.append(d)
            if k == 1:
                flagged = True
            continue
        value = d.get("new_value")
        if role == ADJUDICATE_ROLE:
            st.value, st.settled, st.how, st.settled_by = value, True, "adjudication", str(d["reviewer"])
            st.adjudications.append(d)
            st.conflicts = []
            needs_adjudication = flagged = False
            continue
        st.votes[str(d["reviewer"])] = d
        flagged = False
        if st.settled:
            if canonical(value) != canonical(st.value):
                if _is_true(d.get("conflict")):
                    st.conflicts.append(d)
                    needs_adjudication = True
                elif not needs_adjudication:  # single review: a decision taken on the current value
                    st.value, st.how, st.settled_by = value, "single", str(d["reviewer"])
            continue
        if k == 1:
            if _is_true(d.get("conflict")):
                st.conflicts.append(d)
                needs_adjudication = True
            else:
                st.value, st.settled, st.how, st.settled_by = value, True, "single", str(d["reviewer"])
            continue
        if len(st.votes) >= k:
            categories = {canonical(v.get("new_value")) for v in st.votes.values()}
            if len(categories) == 1:
                st.value, st.settled, st.how, st.settled_by = value, True, "agreement", None
                needs_adjudication = False
            else:
                needs_adjudication = True
    if needs_adjudication:
        st.state = ADJUDICATION
    elif flagged:
        st.state = FLAGGED
    elif st.settled:
        st.state = RESOLVED
    elif st.votes:
        st.state = AWAITING
    else:
        st.state = OPEN
    return st


def contradicts(state: FieldState, value: Any, reviewer: str | None = None, reviewers_needed: int = 1) -> bool:
    """Whether deciding ``value`` now would contradict the field's settled value.

    In single review the person who settled the field may revise it (that is no contradiction);
    in blind review a settled field changes only through the adjudicator.
    """
    if not state.settled or canonical(value) == canonical(state.value):
        return False
    return not (reviewers_needed <= 1 and reviewer is not None and state.settled_by == reviewer
                and state.how == "single")


def open_for(state: FieldState, reviewer: str, role: str, reviewers_needed: int) -> bool:
    """Whether this field still waits for this person in this role (their personal queue)."""
    if role == ADJUDICATE_ROLE:
        return state.state == ADJUDICATION
    if reviewers_needed > 1:  # blind: whether others disagree is not this reviewer's to know
        return state.state != RESOLVED and reviewer not in state.votes
    if state.state in (RESOLVED, ADJUDICATION):
        return False
    return state.state in (OPEN, FLAGGED)

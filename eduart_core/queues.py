"""Work queues: "Next" hands a person the next unit that needs them and holds it for them a while.

Why: in team mode two reviewers used to open the same page at the same moment, because the queue
handed out nothing. A unit is a page of a review round (``review:<round>``; for its adjudicators,
``adjudicate:<round>``: a page with a field waiting for adjudication, one adjudicator at a time) or
an answer of a grading round (``grading:<dataset>:<rubric>:<round>``; for its adjudicators,
``grading-adjudicate:<dataset>:<rubric>:<round>``: an answer whose graders disagree on a criterion
nobody decided yet, one adjudicator at a time, never one who graded it). "Needs them": the unit still has work for
this person (``review_queue``'s ``mine``; an answer they began, or one they have not graded that
has fewer than k graders) and has room: at most k people work on it, k being the round's
reviewers per page or graders per answer (1 in single review). Those who already decided on it
count against the k places as well as those holding it now (in single review only the holders:
anyone may finish a page someone began). Nobody is handed a unit twice at once: their own hold is
renewed instead.

A hold lasts ``hold_s`` seconds (``DEFAULT_HOLD_S``), or until the person finishes the unit or
skips it; a hold that runs out frees the unit without anyone doing anything (the person's browser
may simply be gone). A skipped unit comes to that person last. The exclusion is the store's
(``store.holds``: row locks on PostgreSQL, so it holds across app servers; on a DuckDB file within
the one server that writes it).

Blindness: what "Next" returns is the unit's id and the hold's end, nothing of anyone's decision;
why a unit is not handed out (others decided on it, or hold it) is never said per unit, only as one
count of both (``Waiting.elsewhere``); the graders' marks of a disputed answer reach an adjudicator
only, through ``judges.grading.open_disputed``. Every function checks the person's roles (deciding or
adjudicating review fields, grading or adjudicating grades) before it reads or writes, and every hold
records who took it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from .errors import UserError
from .extraction.consensus import ADJUDICATE_ROLE, REVIEW_ROLE
from .store import Store
from .store import holds as db
from .team import ADJUDICATE, ADJUDICATE_GRADES, DECIDE, GRADE, Identity, as_identity
from .vocab import GRADE_ROLE

DEFAULT_HOLD_S = 15 * 60.0
MAX_HOLD_S = 24 * 3600.0


@dataclass(frozen=True)
class Handed:
    """The unit "Next" handed out: a page id (review) or an answer's token (grading)."""

    unit: str
    round: int
    held_until: datetime   # UTC


@dataclass(frozen=True)
class Waiting:
    """What waits for a person in a queue (counts only: blind rounds stay blind)."""

    mine: int        # units that need this person and have room now
    elsewhere: int   # units that need this person but already have their people (deciding or holding)
    held: str | None = None   # the unit this person holds now, if any


def check_hold(hold_s: float) -> float:
    """A hold time in seconds, or one line saying what is wrong with it."""
    if isinstance(hold_s, bool) or not isinstance(hold_s, int | float) or math.isnan(hold_s):
        raise UserError(f"a hold time must be a number of seconds, not {hold_s!r}")
    if not 0 < hold_s <= MAX_HOLD_S:
        raise UserError(f"a hold time must be more than 0 and at most {MAX_HOLD_S:.0f} seconds (one day), "
                        f"not {hold_s:g}")
    return float(hold_s)


def now_utc() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def review_queue_name(round: int, role: str = REVIEW_ROLE) -> str:
    """The review round's queue of reviewers, or of its adjudicators (their own holds: an adjudicator
    holding a page never keeps a reviewer from it, nor the other way round)."""
    return f"review:{int(round)}" if role == REVIEW_ROLE else f"adjudicate:{int(round)}"


#: What a person must be allowed to do to be handed a page in each review role.
_REVIEW_ACTIONS = {REVIEW_ROLE: DECIDE, ADJUDICATE_ROLE: ADJUDICATE}


def _review_action(role: str) -> str:
    if role not in _REVIEW_ACTIONS:
        raise UserError(f"unknown review role {role!r}; use {' or '.join(_REVIEW_ACTIONS)}")
    return _REVIEW_ACTIONS[role]


def grading_queue_name(dataset: str, rubric: str, round: int, role: str = GRADE_ROLE) -> str:
    """The grading round's queue of graders, or of its adjudicators (their own holds, as in review)."""
    kind = "grading" if role == GRADE_ROLE else "grading-adjudicate"
    return f"{kind}:{dataset}:{rubric}:{int(round)}"


#: What a person must be allowed to do to be handed an answer in each grading role.
_GRADING_ACTIONS = {GRADE_ROLE: GRADE, ADJUDICATE_ROLE: ADJUDICATE_GRADES}


def _grading_action(role: str) -> str:
    if role not in _GRADING_ACTIONS:
        raise UserError(f"unknown grading role {role!r}; use {' or '.join(_GRADING_ACTIONS)}")
    return _GRADING_ACTIONS[role]


# ---------------------------------------------------------------- review rounds

def _review_candidates(state, round: int, person: str, queue=None,
                       role: str = REVIEW_ROLE) -> tuple[list[db.Candidate], dict[str, int]]:
    """Pages of the round that need ``person``, in the queue's order, with their places, and every
    page's position in that order (``queue``: ``review_queue`` of ``state`` for this person in
    ``role``, when the caller has it). An adjudicator's page has one place: one adjudicator settles it."""
    from .extraction.review import review_queue

    if queue is None:
        queue = review_queue(state, round=round, reviewer=person, role=role)
    queue = queue[queue["round"] == int(round)]
    pages = [str(p) for p in queue["page_id"].tolist()]
    needed = queue["needed"].to_numpy() if role == REVIEW_ROLE else np.ones(len(pages), dtype=int)
    rows = [(pages[k], int(needed[k]), int(k)) for k in np.flatnonzero(queue["mine"].to_numpy() > 0)]
    order = {p: k for k, p in enumerate(pages)}
    deciders: dict[str, set[str]] = {}
    d = state.decisions
    if not d.empty and any(n > 1 for _, n, _ in rows):  # in single review only holders count
        mine = d[(d["round"] == int(round)) & (d["role"].fillna(REVIEW_ROLE) == REVIEW_ROLE)]
        for page_id, reviewer in zip(mine["page_id"].tolist(), mine["reviewer"].tolist()):
            deciders.setdefault(str(page_id), set()).add(str(reviewer))
    return [db.Candidate(page, n, frozenset(deciders.get(page, set()) - {person}) if n > 1 else frozenset(), k)
            for page, n, k in rows], order


def next_review_page(store: Store, who: Identity, round: int, *, state=None, queue=None,
                     after: str | None = None, leave: bool = True, hold_s: float = DEFAULT_HOLD_S,
                     now: datetime | None = None, role: str = REVIEW_ROLE) -> Handed | None:
    """Hold the next page of review round ``round`` that needs ``who`` in ``role`` (a reviewer, or an
    adjudicator: a page with a field waiting for adjudication, one adjudicator at a time) and return it
    (None: nothing has room for them now). ``after``: the page they leave (the search starts after it,
    wrapping round; without it, a page they hold already is handed back); ``leave``: their hold on
    ``after`` ends (False: they keep it). ``state``: a ``ReviewState`` already read, and ``queue`` its
    ``review_queue`` for this person in ``role`` (a page has both at hand)."""
    from .extraction.review import load_state

    actor = _acting(who, _review_action(role))
    hold_s = check_hold(hold_s)
    now = now or now_utc()
    name = review_queue_name(round, role)
    if after is not None and leave:
        db.release(store, name, str(after), actor.key, db.LEFT, now)
    state = state if state is not None else load_state(store, round)
    candidates, order = _review_candidates(state, round, actor.key, queue, role)
    return _hand_out(store, actor, name, int(round), candidates, None if after is None else order.get(after),
                     hold_s, now)


def review_waiting(store: Store, who: Identity, round: int, *, state=None, queue=None,
                   now: datetime | None = None, role: str = REVIEW_ROLE) -> Waiting:
    """Counts of what waits for ``who`` in a review round (no unit named but their own hold)."""
    from .extraction.review import load_state

    actor = _acting(who, _review_action(role))
    state = state if state is not None else load_state(store, round)
    return _waiting(store, actor.key, review_queue_name(round, role),
                    _review_candidates(state, round, actor.key, queue, role)[0], now)


def review_holder(store: Store, who: Identity, round: int, page_id: str,
                  now: datetime | None = None, role: str = REVIEW_ROLE) -> tuple[str, datetime] | None:
    """("you" | "another", held until) for a page someone holds now, else None (never the other's name)."""
    return _holder(store, review_queue_name(round, role), str(page_id), as_identity(who).key, now)


def finish_review_page(store: Store, who: Identity, round: int, page_id: str,
                       now: datetime | None = None, role: str = REVIEW_ROLE) -> bool:
    """End ``who``'s hold on a page they finished (False when they held none)."""
    actor = _acting(who, _review_action(role))
    return db.release(store, review_queue_name(round, role), str(page_id), actor.key, db.FINISHED,
                      now or now_utc())


def skip_review_page(store: Store, who: Identity, round: int, page_id: str, *, state=None, queue=None,
                     hold_s: float = DEFAULT_HOLD_S, now: datetime | None = None,
                     role: str = REVIEW_ROLE) -> Handed | None:
    """Leave a page for others (it comes to ``who`` last) and hold the next one for them."""
    actor = _acting(who, _review_action(role))
    hold_s = check_hold(hold_s)
    now = now or now_utc()
    _skip(store, review_queue_name(round, role), str(page_id), actor, now)
    return next_review_page(store, actor, round, state=state, queue=queue, after=str(page_id), hold_s=hold_s,
                            now=now, role=role)


# ---------------------------------------------------------------- grading rounds

def _grading_candidates(store: Store, dataset: str, rubric: str, actor: Identity,
                        role: str = GRADE_ROLE) -> tuple[int, list[db.Candidate], dict[str, int]]:
    """The answers of the current round that need ``actor`` in ``role``, in the queue's order, with
    their places, and every answer's position in the round's order. A grader's answer has k places
    (those who graded it count against them; answers they began come first); a disputed answer has
    one: one adjudicator settles it."""
    from .judges.grading import disputed_queue, grader_queue

    if role == ADJUDICATE_ROLE:
        number, disputed = disputed_queue(store, dataset, rubric, actor)
        order = {token: position for position, (token, _open) in enumerate(disputed)}
        return number, [db.Candidate(token, 1, frozenset(), order[token]) for token, is_open in disputed if is_open], \
            order
    number, k, rows = grader_queue(store, dataset, rubric, actor)
    order = {token: position for position, (token, *_rest) in enumerate(rows)}
    out = [db.Candidate(token, k, frozenset(set(graders) - {actor.key}), order[token])
           for token, graders, began, is_open in rows if is_open]
    return number, [c for c in out if c.unit in _began(rows)] + [c for c in out if c.unit not in _began(rows)], order


def _began(rows: list[tuple]) -> set[str]:
    return {token for token, _graders, began, _open in rows if began}


def next_grading_answer(store: Store, dataset: str, rubric: str, who: Identity, *, after: str | None = None,
                        leave: bool = True, hold_s: float = DEFAULT_HOLD_S, now: datetime | None = None,
                        role: str = GRADE_ROLE) -> Handed | None:
    """Hold the next answer of the current grading round that needs ``who`` in ``role`` (a grader: answers
    they began first; an adjudicator: a disputed answer they graded none of, one adjudicator at a time) and
    return it (its token), or None. ``after``: the answer they leave (``leave``: their hold on it ends)."""
    actor = _acting(who, _grading_action(role))
    hold_s = check_hold(hold_s)
    now = now or now_utc()
    number, candidates, order = _grading_candidates(store, dataset, rubric, actor, role)
    name = grading_queue_name(dataset, rubric, number, role)
    if after is not None and leave:
        db.release(store, name, str(after), actor.key, db.LEFT, now)
    return _hand_out(store, actor, name, number, candidates, order.get(after) if after is not None else None,
                     hold_s, now)


def grading_waiting(store: Store, dataset: str, rubric: str, who: Identity, now: datetime | None = None,
                    role: str = GRADE_ROLE) -> Waiting:
    """Counts of what waits for ``who`` in ``role`` in the current grading round (no answer named but
    their own hold)."""
    actor = _acting(who, _grading_action(role))
    number, candidates, _order = _grading_candidates(store, dataset, rubric, actor, role)
    return _waiting(store, actor.key, grading_queue_name(dataset, rubric, number, role), candidates, now)


def grading_holder(store: Store, who: Identity, task, now: datetime | None = None) -> tuple[str, datetime] | None:
    """("you" | "another", held until) for the answer of ``task`` when someone holds it now in the
    task's role, else None (never the other's name)."""
    actor = _acting(who, _grading_action(task.role))
    return _holder(store, grading_queue_name(task.dataset, task.rubric, task.round, task.role), task.token,
                   actor.key, now)


def finish_grading_answer(store: Store, who: Identity, task, now: datetime | None = None) -> bool:
    """End ``who``'s hold on the answer of ``task`` (a ``GradingTask``: a grader's, or an adjudicator's
    disputed answer) they finished."""
    actor = _acting(who, _grading_action(task.role))
    return db.release(store, grading_queue_name(task.dataset, task.rubric, task.round, task.role), task.token,
                      actor.key, db.FINISHED, now or now_utc())


def skip_grading_answer(store: Store, who: Identity, task, *, hold_s: float = DEFAULT_HOLD_S,
                        now: datetime | None = None) -> Handed | None:
    """Leave the answer of ``task`` for others (it comes to ``who`` last) and hold the next one in the
    task's role."""
    actor = _acting(who, _grading_action(task.role))
    hold_s = check_hold(hold_s)
    now = now or now_utc()
    _skip(store, grading_queue_name(task.dataset, task.rubric, task.round, task.role), task.token, actor, now)
    return next_grading_answer(store, task.dataset, task.rubric, actor, after=task.token, hold_s=hold_s, now=now,
                               role=task.role)


# ---------------------------------------------------------------- shared

def _acting(who: Identity, action: str) -> Identity:
    actor = as_identity(who)
    actor.require(action)
    return actor


def _holder(store: Store, queue: str, unit: str, person: str, now: datetime | None) -> tuple[str, datetime] | None:
    holds = db.load_holds(store, queue, now or now_utc())
    rows = holds[holds["unit"] == unit]
    if rows.empty:
        return None
    own = rows[rows["holder"] == person]
    if not own.empty:
        return "you", own["held_until"].iloc[0]
    return "another", rows["held_until"].min()


def _skip(store: Store, queue: str, unit: str, actor: Identity, now: datetime) -> None:
    person = actor.key
    if not db.release(store, queue, unit, person, db.SKIPPED, now):
        db.mark_skipped(store, queue, unit, person, actor.columns(), now)  # never held: remembered as skipped all the same


def _tiers(candidates: list[db.Candidate], after: int | None, skipped: frozenset[str],
           mine: set[str]) -> list[list[db.Candidate]]:
    """The candidates in groups of preference. Leaving a unit (``after``: its position in the queue's
    order): the queue's order from just after it (wrapping round; that unit last), new work first,
    then the units this person holds already (moving on means new work), units they skipped last of
    all. Without ``after``: a unit they hold already first (they come back to it), then the rest."""
    if after is None:
        ordered = candidates
    else:
        ordered = ([c for c in candidates if c.position > after] + [c for c in candidates if c.position < after]
                   + [c for c in candidates if c.position == after])
    own = [c for c in ordered if c.unit in mine]
    new = [c for c in ordered if c.unit not in mine and c.unit not in skipped]
    last = [c for c in ordered if c.unit not in mine and c.unit in skipped]
    return [own, new, last] if after is None else [new, own, last]


def _hand_out(store: Store, actor: Identity, queue: str, number: int, candidates: list[db.Candidate],
              after: int | None, hold_s: float, now: datetime | None) -> Handed | None:
    """Hold the first candidate with room (``after``: the position in the queue's order of the unit
    the person leaves; without it their own held unit comes first)."""
    if not candidates:
        return None
    now = now or now_utc()
    until = now + timedelta(seconds=hold_s)

    def tiers(state: db.QueueState) -> list[list[db.Candidate]]:
        mine = {u for u, who in state.held.items() if actor.key in who}
        return _tiers(candidates, after, state.skipped, mine)

    units = [c.unit for c in candidates]
    db.ensure_units(store, queue, units)
    unit, wanted = db.claim(store, queue, tiers, actor.key, actor.columns(), now, until)
    if unit is None and wanted:  # every row full, or a row this process thought was there is gone: once more
        db.ensure_units(store, queue, units, again=True)
        unit, _ = db.claim(store, queue, tiers, actor.key, actor.columns(), now, until)
    return Handed(unit, number, until) if unit is not None else None


def _waiting(store: Store, person: str, queue: str, candidates: list[db.Candidate],
             now: datetime | None) -> Waiting:
    held = db.queue_state(store, queue, person, now or now_utc()).held
    room = [c for c in candidates if db.has_room(c, held.get(c.unit, frozenset()), person)]
    mine = next((c.unit for c in candidates if person in held.get(c.unit, ())), None)
    return Waiting(len(room), len(candidates) - len(room), mine)

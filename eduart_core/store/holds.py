"""Holds of a work queue: which person has which unit (a review page, an answer to grade) until when.

Why a table and a row lock rather than a page's memory: in team mode several app servers hand out
work from one PostgreSQL store, so "this page is taken" must be known to the database. A claim
locks the unit's row in ``work_units`` (PostgreSQL: ``FOR UPDATE SKIP LOCKED``, so a second
claimant moves on to another unit instead of waiting; a DuckDB file: the row is updated, so two
claims of one unit in one server collide and one is retried), reads the unit's holds inside that
lock, and writes its own hold only while the unit has room (``capacity`` people: 1, or the
round's reviewers per page). Holds are not data a page caches: their transactions leave the
store's data version alone.

A hold is active while ``released_at`` is NULL and ``held_until`` lies ahead; a hold that ran out
needs nothing done to it (the unit is simply free again). Times are UTC without a zone, as the
decisions' ``decided_at``.
"""
from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

import pandas as pd

from .connection import DUCKDB, Variants
from .core import Store
from .errors import StoreConflictError

HOLD_COLUMNS = ("queue", "unit", "holder", "held_at", "held_until", "released_at", "outcome", "actor_subject",
                "actor_provider", "actor_name")
#: How far past the first free unit a claim that met another claim spreads (so that twenty people
#: clicking at once do not all queue for the same few rows).
SPREAD = 32
FINISHED, SKIPPED, LEFT = "finished", "skipped", "left"  # how a hold ended before it ran out

#: The lock of one unit's row: skipped when another claim holds it (PostgreSQL), a colliding update (DuckDB).
_LOCK_UNIT = Variants(
    duckdb="UPDATE work_units SET claims = claims + 1 WHERE queue = ? AND unit = ? RETURNING unit",
    postgres="SELECT unit FROM work_units WHERE queue = ? AND unit = ? FOR UPDATE SKIP LOCKED")
#: The holders of one unit now. Read by a statement of its own after the lock: on PostgreSQL each statement
#: sees what was committed before it began, so a claim that held the row before this one is seen.
_UNIT_HOLDERS = ("SELECT holder FROM work_holds WHERE queue = ? AND unit = ? AND released_at IS NULL "
                 "AND held_until > ?")
#: A hold is no data: a crash may lose the last holds (their units are free again), so PostgreSQL need not
#: wait for the disk before answering (said with the hold's write and the COMMIT, in one round trip).
_QUICK_COMMIT = "SET LOCAL synchronous_commit TO OFF"
_HOLD_UPSERT = (
    f"INSERT INTO work_holds ({', '.join(HOLD_COLUMNS)}) VALUES ({', '.join('?' for _ in HOLD_COLUMNS)}) "
    "ON CONFLICT (queue, unit, holder) DO UPDATE SET held_at = excluded.held_at, held_until = excluded.held_until, "
    "released_at = NULL, outcome = NULL, actor_subject = excluded.actor_subject, "
    "actor_provider = excluded.actor_provider, actor_name = excluded.actor_name")


@dataclass(frozen=True)
class Candidate:
    """A unit this person may be handed: ``capacity`` people at once at most, ``taken`` the people
    (other than this person) who already count against it without a hold (they decided on it)."""

    unit: str
    capacity: int = 1
    taken: frozenset[str] = frozenset()
    position: int = 0   # in the queue's order


@dataclass(frozen=True)
class QueueState:
    """What a claim needs to know first, read through one connection."""

    held: dict[str, frozenset[str]]  # unit -> who holds it now
    skipped: frozenset[str]          # units this person skipped and has not taken again since


def queue_state(store: Store, queue: str, holder: str | None = None, now: datetime | None = None) -> QueueState:
    """Who holds which unit of a queue now, and what ``holder`` skipped (plain tuples: "next" runs on
    every click, so no DataFrame here)."""
    if not store.exists():
        return QueueState({}, frozenset())
    with store.connect(read_only=True) as con:
        if not con.has_table("work_holds"):
            return QueueState({}, frozenset())
        return queue_state_con(con, queue, holder, now or _now())


def queue_state_con(con, queue: str, holder: str | None, now: datetime) -> QueueState:
    """``queue_state`` on an open connection (a claim reads it inside its own transaction)."""
    rows = con.execute("SELECT unit, holder, outcome, released_at IS NULL AND held_until > ? FROM work_holds "
                       "WHERE queue = ? AND (outcome = ? OR (released_at IS NULL AND held_until > ?))",
                       [now, queue, SKIPPED, now]).fetchall()
    held: dict[str, set[str]] = {}
    skipped = set()
    for unit, who, outcome, active in rows:
        if active:
            held.setdefault(unit, set()).add(who)
        elif outcome == SKIPPED and who == holder:
            skipped.add(unit)
    return QueueState({u: frozenset(h) for u, h in held.items()}, frozenset(skipped))


def load_holds(store: Store, queue: str, now: datetime | None = None) -> pd.DataFrame:
    """The active holds of a queue (every column of ``HOLD_COLUMNS``), oldest first."""
    if not store.exists():
        return pd.DataFrame(columns=list(HOLD_COLUMNS))
    with store.connect(read_only=True) as con:
        if not con.has_table("work_holds"):
            return pd.DataFrame(columns=list(HOLD_COLUMNS))
        cur = con.execute(f"SELECT {', '.join(HOLD_COLUMNS)} FROM work_holds WHERE queue = ? AND released_at IS NULL "
                          "AND held_until > ? ORDER BY held_at", [queue, now or _now()])
        return pd.DataFrame(cur.fetchall(), columns=list(HOLD_COLUMNS), dtype=object)


def hold_history(store: Store, queue: str) -> list[tuple[str, str, datetime, datetime]]:
    """Every hold a queue gave that was not a bare skip mark: (unit, holder, from, to), ``to`` its release or
    its end (a person's last hold of a unit; `bench team` checks that no two overlap)."""
    with store.connect(read_only=True) as con:
        if not con.has_table("work_holds"):
            return []
        rows = con.execute("SELECT unit, holder, held_at, held_until, released_at FROM work_holds WHERE queue = ? "
                           "AND held_until > held_at", [queue]).fetchall()
    return [(str(u), str(h), start, min(end, released) if released is not None else end)
            for u, h, start, end, released in rows]


#: Units whose lockable row this process knows exists (rows are never deleted), per store and queue.
_KNOWN: dict[tuple[str, str], set[str]] = {}


def ensure_units(store: Store, queue: str, units: Iterable[str], again: bool = False) -> None:
    """Make the lockable row of every unit that lacks one (``again``: do not trust this process's memory)."""
    known = _KNOWN.setdefault((str(store.path), queue), set())
    if again:
        known.clear()
    missing = [u for u in units if u not in known]
    if missing:
        add_units(store, queue, missing)
        known.update(missing)


def add_units(store: Store, queue: str, units: Iterable[str]) -> None:
    """Make the lockable row of each unit (once per unit and queue)."""
    rows = [[queue, str(u)] for u in dict.fromkeys(units)]
    if rows:
        with store.transaction(bump=False) as con:
            con.executemany("INSERT INTO work_units (queue, unit) VALUES (?, ?) ON CONFLICT (queue, unit) DO NOTHING",
                            rows)


def claim(store: Store, queue: str, tiers_of: Callable[[QueueState], list[list[Candidate]]], holder: str,
          actor: dict, now: datetime, until: datetime) -> tuple[str | None, bool]:
    """Hold the first candidate with room for ``holder`` (or renew their own hold on it); returns (its unit,
    or None when every candidate is full or locked by another claim right now; whether any candidate had
    room when the claim began).

    ``tiers_of``: the candidates in groups of preference (new work before the units the person holds
    already, skipped units last), made from the queue's state, which the claim reads in its own
    transaction (one round trip with BEGIN, one connection for the whole claim: "next" runs on every
    click). A later group is tried only when every unit of the earlier ones is full: a unit whose row
    another claim has locked right now may still have room once that claim ends, so the claim waits a
    moment and looks again (``BUSY_TRIES`` times, reading the holds afresh) before it settles for a less
    wanted unit. The candidates' rows must exist (``add_units``). A DuckDB write that collided with
    another claim is tried again as well; after the last try the one-line ``StoreConflictError`` reaches
    the caller.
    """
    tiers: list[list[Candidate]] | None = None
    for attempt in range(BUSY_TRIES):
        last = attempt == BUSY_TRIES - 1
        try:
            with store.transaction(bump=False) as con:
                state = queue_state_con(con, queue, holder, now)
                if tiers is None:
                    tiers = [t for t in (_with_room(t, state.held, holder) for t in tiers_of(state)) if t]
                    if not tiers:
                        return None, False
                else:  # a later try: drop what filled up meanwhile
                    tiers = [_with_room(t, state.held, holder) for t in tiers]
                unit, tiers = _claim_con(con, queue, tiers, holder, actor, now, until, settle=last)
        except StoreConflictError:
            if last:
                raise
            unit = _BUSY
        if unit is None or isinstance(unit, str):  # not _BUSY
            return unit, True
        time.sleep(random.uniform(0.002, 0.01) * (attempt + 1))  # let the other claims end
    raise AssertionError("unreachable")


#: How often a claim that met rows locked by other claims looks again before it settles.
BUSY_TRIES = 6
_BUSY = object()


def _with_room(tier: list[Candidate], held: dict[str, frozenset[str]], holder: str) -> list[Candidate]:
    return [c for c in tier if has_room(c, held.get(c.unit, frozenset()), holder)]


def _lock_and_read(con, queue: str, unit: str, now: datetime) -> set[str] | None:
    """The unit's row locked for this transaction and its holders now; None when another claim has the
    row (PostgreSQL: the two statements travel in one round trip, each with its own snapshot)."""
    if con.dialect == DUCKDB:
        if not con.execute(con.sql(_LOCK_UNIT), [queue, unit]).fetchall():
            return None
        return {r[0] for r in con.execute(_UNIT_HOLDERS, [queue, unit, now]).fetchall()}
    cur = con.execute(f"{_LOCK_UNIT.postgres}; {_UNIT_HOLDERS}", [queue, unit, queue, unit, now])
    locked = cur.fetchall()
    cur.nextset()
    holders = {r[0] for r in cur.fetchall()}
    return holders if locked else None


def _claim_con(con, queue: str, tiers: list[list[Candidate]], holder: str, actor: dict, now: datetime,
               until: datetime, settle: bool) -> tuple[object, list[list[Candidate]]]:
    """One try: the claimed unit, None (everything full) or ``_BUSY`` (a wanted unit was locked by
    another claim and ``settle`` is False), with the tiers left to try (full units dropped)."""
    kept: list[list[Candidate]] = []
    for n, tier in enumerate(tiers):
        left, busy, missed = list(tier), [], False
        while left:
            if missed:  # others are claiming the same front of the queue: try a little further on, at random
                at = random.randrange(min(len(left), SPREAD))
                left = left[at:] + left[:at]
            c = left.pop(0)
            holders = _lock_and_read(con, queue, c.unit, now)
            if holders is None:
                busy.append(c)
                missed = True
                continue  # another claim has this unit's row right now: the next unit
            if not has_room(c, holders, holder):
                # taken since the caller read the holds: so may others be; read them again (on PostgreSQL each
                # statement sees what was committed before it) and drop every candidate that is full now
                held = _active(con, queue, now)
                left = [x for x in left if has_room(x, held.get(x.unit, set()), holder)]
                missed = True
                continue
            if con.dialect != DUCKDB:
                con.write_at_commit(_QUICK_COMMIT)
            con.write_at_commit(_HOLD_UPSERT, [queue, c.unit, holder, now, until, None, None,
                                               actor.get("actor_subject"), actor.get("actor_provider"),
                                               actor.get("actor_name")])
            return c.unit, []
        kept.append(busy)
        if busy and not settle:
            return _BUSY, kept + [list(t) for t in tiers[n + 1:]]
    return None, kept


def _active(con, queue: str, now: datetime) -> dict[str, set[str]]:
    held: dict[str, set[str]] = {}
    for unit, who in con.execute("SELECT unit, holder FROM work_holds WHERE queue = ? AND released_at IS NULL "
                                 "AND held_until > ?", [queue, now]).fetchall():
        held.setdefault(unit, set()).add(who)
    return held


def has_room(c: Candidate, holders: set[str] | frozenset[str], person: str) -> bool:
    """Whether ``person`` may hold ``c`` while ``holders`` hold it: their own hold, or a free place."""
    if not holders and not c.taken:  # the common case, on every candidate of every click: no sets built
        return c.capacity > 0
    return person in holders or len((holders - {person}) | (set(c.taken) - {person})) < c.capacity


def release(store: Store, queue: str, unit: str, holder: str, outcome: str, now: datetime) -> bool:
    """End ``holder``'s hold on a unit (``finished``, ``skipped`` or ``left``); False when they held nothing there."""
    with store.transaction(bump=False) as con:
        rows = con.execute("UPDATE work_holds SET released_at = ?, outcome = ? WHERE queue = ? AND unit = ? "
                           "AND holder = ? AND released_at IS NULL RETURNING unit",
                           [now, outcome, queue, str(unit), holder]).fetchall()
    return bool(rows)


def mark_skipped(store: Store, queue: str, unit: str, holder: str, actor: dict, now: datetime) -> None:
    """Remember that ``holder`` skipped a unit they did not hold (it comes to them last)."""
    with store.transaction(bump=False) as con:
        con.execute(_HOLD_UPSERT, [queue, str(unit), holder, now, now, None, None, actor.get("actor_subject"),
                                   actor.get("actor_provider"), actor.get("actor_name")])
        con.execute("UPDATE work_holds SET released_at = ?, outcome = ? WHERE queue = ? AND unit = ? AND holder = ?",
                    [now, SKIPPED, queue, str(unit), holder])


def _now() -> datetime:
    from datetime import UTC

    return datetime.now(UTC).replace(tzinfo=None)

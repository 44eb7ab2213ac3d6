"""Exam sessions: a researcher sets one up, people sit it item by item, the answers are scored.

Why sessions: a school class or a panel of experts sits the same kind of form (items per format and
language of one dataset, one time limit per item, one group), each person a different sample of the
items so that together they cover the dataset. A respondent sees one item at a time without its key,
answers it in the format's own editor (`humans.forms`), may pause and resume, and never sees a
model's answer, a key or a score. Each answer is stored as a response of the respondent's run
(model = the pseudonym, condition ``default``: answer only) through ``scoring.responses.add_responses_con``:
the same parser and scorers as every model answer.

Every write checks the acting identity: setting up and closing a session needs `team.RUN_EXAMS`
(researcher, admin), sitting needs `team.SIT_EXAM` (respondent) and the sitter must be the
respondent: the same signed-in subject, or in single-machine mode the same typed name.

Time is the seconds an item was on screen: the clock of an item starts when it becomes current (a
new form, the previous answer, a resume) and stops at its answer or a pause. ``now`` (epoch
seconds) may be passed, so tests need no sleeping. An answer given after the item's time limit (plus
`GRACE_S`) is recorded as empty (scored 0) and marked timed out.
"""
from __future__ import annotations

import math
import os
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..errors import UserError
from ..scoring.responses import add_responses_con
from ..store import Store
from ..store import humans as db
from ..store.runs import create_run_con, current_items_con, finish_run, refresh_run_totals_con
from ..team import RUN_EXAMS, SIT_EXAM, Identity, as_identity
from ..vocab import DEFAULT_CONDITION, format_names, is_language_code
from . import forms
from .people import clean_group, name_key, new_pseudonym, register_con

ORIGIN = "exam"
OPEN, CLOSED = "open", "closed"
SITTING, PAUSED, FINISHED = "sitting", "paused", "finished"
#: Seconds an answer may arrive after the limit (the page's round trip) and still count.
GRACE_S = 5.0
MAX_PER_CELL = 100
#: The longest time limit per item, in seconds: a day (a longer one would be no limit in practice).
MAX_TIME_LIMIT_S = 86_400


def _store(store: Store | str | os.PathLike) -> Store:
    return store if isinstance(store, Store) else Store(store)  # a file path or a postgresql:// URL


def _now(now: float | None) -> float:
    return float(time.time() if now is None else now)


def run_id_for(session_id: str, respondent: str) -> str:
    return f"{ORIGIN}:{session_id}:{respondent}"


@dataclass(frozen=True)
class Question:
    """The current item of a form, as the respondent may see it (no key, no score)."""

    session_id: str
    respondent: str
    position: int
    n_items: int
    item_id: str
    record: dict                 # `forms.blind_record`: question and options only
    image_path: str | None
    elapsed_s: float             # time on this item so far (the running stretch included)
    time_limit_s: int | None

    @property
    def time_left_s(self) -> float | None:
        return None if not self.time_limit_s else max(0.0, self.time_limit_s - self.elapsed_s)


@dataclass(frozen=True)
class Sitting:
    """Who sits a session and where they are: the pseudonym, the status and the items answered."""

    session_id: str
    respondent: str
    status: str
    answered: int
    n_items: int
    resumed: bool = False


# ---------------------------------------------------------------- the researcher's side

def create_session(store: Store | str, dataset: str, *, group: str, per_cell: int, actor: Identity,
                   formats: tuple[str, ...] | list[str] = (), languages: tuple[str, ...] | list[str] = (),
                   time_limit_s: int | None = None, title: str | None = None, seed: int | None = None) -> str:
    """Set up an open exam session on ``dataset``; returns its id (refused unless researcher or admin)."""
    as_identity(actor).require(RUN_EXAMS)
    store = _store(store)
    group = clean_group(group)
    if not isinstance(per_cell, int) or not 1 <= per_cell <= MAX_PER_CELL:
        raise UserError(f"items per format and language must be a whole number from 1 to {MAX_PER_CELL}, "
                        f"not {per_cell!r}")
    unknown = sorted(set(formats) - set(format_names()))
    if unknown:
        raise UserError(f"unknown format(s) {', '.join(unknown)}; use {', '.join(format_names())}")
    bad = sorted(x for x in languages if not is_language_code(x))
    if bad:
        raise UserError(f"unknown language code(s) {', '.join(map(repr, bad))} (ISO 639-1, such as it or en)")
    if time_limit_s is not None and (not isinstance(time_limit_s, int) or not 0 <= time_limit_s <= MAX_TIME_LIMIT_S):
        raise UserError(f"the time limit per item is a whole number of seconds from 0 (no limit) to "
                        f"{MAX_TIME_LIMIT_S} (a day), not {time_limit_s!r}")
    form = forms.sample_form(_pool(store, dataset), per_cell, "preview", formats, languages)
    if not form:
        raise UserError(f"dataset {dataset!r} has no item a person can sit in the chosen formats and languages")
    session_id = "S-" + secrets.token_hex(4)
    db.add_session(store, {
        "session_id": session_id, "dataset": dataset, "title": (title or "").strip() or f"{dataset}: {group}",
        "human_group": group, "per_cell": per_cell, "formats": list(formats), "languages": list(languages),
        "time_limit_s": time_limit_s or None, "seed": int(seed if seed is not None else secrets.randbelow(10**9)),
        "status": OPEN, **actor.columns()})
    return session_id


def close_session(store: Store | str, session_id: str, actor: Identity) -> None:
    """Close a session: nobody can start or go on sitting it (the answers stay)."""
    as_identity(actor).require(RUN_EXAMS)
    store = _store(store)
    _session(store, session_id)
    db.close_session(store, session_id, datetime.now(UTC).replace(tzinfo=None))


def _pool(store: Store, dataset: str):
    """The items of ``dataset`` a person can sit (item_id, type, language)."""
    if not store.exists():
        raise UserError(f"no store at {store.path}")
    with store.connect(read_only=True) as con:
        items = current_items_con(con, dataset)
    return forms.form_items({**record, "item_id": item_id} for item_id, (_v, record) in items.items())


def _adaptive(store: Store, session: dict):
    """The adaptive setup of a session (`humans.adaptive_exam`), None for a sampled form."""
    from ..store.adaptive import adaptive_session

    conf = adaptive_session(store, session["session_id"])
    if conf is None:
        return None
    from .adaptive_form import people_setup

    return people_setup(store, session["dataset"], conf)


def _session(store: Store, session_id: str) -> dict:
    session = db.get_session(store, session_id)
    if session is None:
        raise UserError(f"no exam session {session_id!r}")
    return session


# ---------------------------------------------------------------- the respondent's side

def _who_key(who: Identity) -> dict[str, str | None]:
    """How a sitter is found again: the signed-in subject, else the typed name folded."""
    if who.signed_in:
        return {"subject": who.subject}
    return {"name_key": name_key(who.name)}


def begin(store: Store | str, session_id: str, who: Identity, now: float | None = None) -> Sitting:
    """Start (a new pseudonym and a sampled form) or resume the sitter's form of an open session."""
    as_identity(who).require(SIT_EXAM)
    store = _store(store)
    session = _session(store, session_id)
    if session["status"] != OPEN:
        raise UserError(f"exam session {session_id} is closed")
    found = db.find_respondent(store, session_id, **_who_key(who))
    if found:
        return resume(store, session_id, found, who, now)
    taken = db.taken_pseudonyms(store)
    respondent = new_pseudonym(taken)
    setup = _adaptive(store, session)
    if setup is not None:  # an adaptive form starts with one item and grows with each answer
        from .adaptive_form import first_item

        form = [first_item(setup, session_id, respondent)]
    else:
        form = forms.sample_form(_pool(store, session["dataset"]), int(session["per_cell"]),
                                 f"{session['seed']}|{respondent}", session["formats"], session["languages"])
    if not form:
        raise UserError(f"exam session {session_id}: the dataset has no item left to sit")
    identity: dict[str, Any] = {"name": who.name, "name_key": name_key(who.name)} | (
        {"subject": who.subject, "provider": who.provider} if who.signed_in else {})
    with store.transaction() as con:
        register_con(con, respondent, session["human_group"], origin="session", session_id=session_id, **identity)
        create_run_con(con, run_id_for(session_id, respondent), session["dataset"], respondent, DEFAULT_CONDITION,
                       ORIGIN, launch_id=session_id, status="running",
                       params={"session": session_id, "group": session["human_group"]})
        db.add_form_con(con, session_id, respondent, form, _now(now))
    return Sitting(session_id, respondent, SITTING, 0, len(form))


def _check_sitter(store: Store, session_id: str, respondent: str, who: Identity) -> dict:
    as_identity(who).require(SIT_EXAM)
    row = db.respondent_of(store, respondent)
    if row is None or row.get("session_id") != session_id:
        raise UserError(f"{respondent} does not sit exam session {session_id}")
    mine = (row.get("subject") == who.subject) if who.signed_in else (
        row.get("subject") is None and row.get("name_key") == name_key(who.name))
    if not mine:
        raise UserError(f"{who.name or who.subject} may not answer for another respondent")
    return row


def _current(form) -> Any:
    """The first unanswered row of a form (None when every item is answered)."""
    left = form[~form["answered"].astype(bool)]
    return left.iloc[0] if len(left) else None


def _elapsed(row, now: float) -> float:
    running = row["clock_from"]
    extra = max(0.0, now - float(running)) if running is not None and not math.isnan(float(running)) else 0.0
    return float(row["elapsed_s"] or 0.0) + extra


def sitting(store: Store | str, session_id: str, respondent: str) -> Sitting:
    """Where a respondent is (status and items answered): a read, for the page."""
    store = _store(store)
    form = db.load_form(store, session_id, respondent)
    status = db.attempt_status(store, session_id, respondent) or FINISHED
    return Sitting(session_id, respondent, status, int(form["answered"].astype(bool).sum()), len(form))


def current_question(store: Store | str, session_id: str, respondent: str,
                     now: float | None = None) -> Question | None:
    """The item the respondent answers now, without its key (None when the form is done)."""
    from ..store.items import get_item, image_path

    store = _store(store)
    session = _session(store, session_id)
    form = db.load_form(store, session_id, respondent)
    row = _current(form)
    if row is None:
        return None
    item = get_item(store, session["dataset"], str(row["item_id"])) or {}
    record = dict(item.get("record") or {})
    record.setdefault("item_id", str(row["item_id"]))
    picture = None
    if item.get("image_hash"):
        try:
            picture = str(image_path(store, item["image_hash"]))
        except (OSError, KeyError, UserError):
            picture = None
    return Question(session_id, respondent, int(row["position"]), len(form), str(row["item_id"]),
                    forms.blind_record(record), picture, _elapsed(row, _now(now)),
                    int(session["time_limit_s"]) if session.get("time_limit_s") else None)


def answer(store: Store | str, session_id: str, respondent: str, item_id: str, values: dict | None,
           who: Identity, now: float | None = None) -> Sitting:
    """Record the answer to the current item (``values``: the answer editor's control values; None
    or {} skips the item) and start the next item's clock. Returns where the respondent is now."""
    store = _store(store)
    _check_sitter(store, session_id, respondent, who)
    session = _session(store, session_id)
    if session["status"] != OPEN:
        raise UserError(f"exam session {session_id} is closed: no more answers")
    now = _now(now)
    form = db.load_form(store, session_id, respondent)
    row = _current(form)
    if row is None:
        raise UserError("this form is finished: every item is answered")
    if str(row["item_id"]) != str(item_id):
        raise UserError(f"item {item_id} is not the current item of this form (it is item {int(row['position'])})")
    setup = _adaptive(store, session)
    elapsed = _elapsed(row, now)
    limit = session.get("time_limit_s")
    timed_out = bool(limit) and elapsed > float(limit or 0) + GRACE_S
    with store.transaction() as con:
        items = current_items_con(con, session["dataset"])
        record = {**items[str(item_id)][1], "item_id": str(item_id)}
        raw = forms.answer_text(record, None if timed_out else values)
        run_id = run_id_for(session_id, respondent)
        key = f"{item_id}:answer"
        add_responses_con(con, run_id, [{"item_id": str(item_id), "raw_text": raw, "request_key": key,
                                         "repetition": 0, "latency_s": round(elapsed, 3), "error": None}],
                          {str(item_id): items[str(item_id)]})
        db.mark_answered_con(con, session_id, respondent, int(row["position"]), elapsed, timed_out,
                             db.response_id_con(con, run_id, key))
        later = form[form["position"] > int(row["position"])]
        later = later[~later["answered"].astype(bool)]
        if setup is not None:  # the next adaptive item, or the stop
            from ..store.adaptive import append_form_item_con
            from .adaptive_form import after_answer_con

            following = after_answer_con(con, setup, session, respondent, run_id)
            if following is not None:  # appended with its clock running
                append_form_item_con(con, session_id, respondent, int(row["position"]) + 1, following, now)
                later = [following]
        elif len(later):
            db.set_clock_con(con, session_id, respondent, int(later["position"].iloc[0]),
                             float(later["elapsed_s"].iloc[0] or 0.0), now)
        if not len(later):
            db.set_attempt_con(con, session_id, respondent, FINISHED)
            refresh_run_totals_con(con, run_id)
    if not len(later):
        finish_run(store, run_id_for(session_id, respondent), "completed")
    return sitting(store, session_id, respondent)


def pause(store: Store | str, session_id: str, respondent: str, who: Identity, now: float | None = None) -> Sitting:
    """Stop the clock of the current item; the form waits until `resume`."""
    store = _store(store)
    _check_sitter(store, session_id, respondent, who)
    row = _current(db.load_form(store, session_id, respondent))
    if row is not None:
        with store.transaction() as con:
            db.set_clock_con(con, session_id, respondent, int(row["position"]), _elapsed(row, _now(now)), None)
            db.set_attempt_con(con, session_id, respondent, PAUSED)
    return sitting(store, session_id, respondent)


def resume(store: Store | str, session_id: str, respondent: str, who: Identity, now: float | None = None) -> Sitting:
    """Go on with a form: the current item's clock runs again from where it stopped."""
    store = _store(store)
    _check_sitter(store, session_id, respondent, who)
    if _session(store, session_id)["status"] != OPEN:
        raise UserError(f"exam session {session_id} is closed")
    row = _current(db.load_form(store, session_id, respondent))
    if row is not None and (row["clock_from"] is None or math.isnan(float(row["clock_from"]))):
        with store.transaction() as con:
            db.set_clock_con(con, session_id, respondent, int(row["position"]), float(row["elapsed_s"] or 0.0),
                             _now(now))
            db.set_attempt_con(con, session_id, respondent, SITTING)
    state = sitting(store, session_id, respondent)
    return Sitting(state.session_id, state.respondent, state.status, state.answered, state.n_items, resumed=True)


__all__ = ["CLOSED", "FINISHED", "GRACE_S", "OPEN", "ORIGIN", "PAUSED", "SITTING", "Question", "Sitting", "answer",
           "begin", "close_session", "create_session", "current_question", "pause", "resume", "run_id_for", "sitting"]

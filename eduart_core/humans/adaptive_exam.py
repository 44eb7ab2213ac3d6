"""Adaptive exam sessions: each respondent gets the next item by the adaptive rule of `run --adaptive`.

Why the same engine: people and models then sit the same bank version under the same rules
(`analysis.adaptive`: EAP, maximum information, format balance, randomesque exposure, SE or cap stop),
so a respondent's final ability is on the models' scale and joins `views.adaptive_ranking` beside them.

How a form grows: an adaptive session's form starts with one item (the most informative at the prior
mean); each answer (`humans.sessions.answer`) is scored (the bank's profile, the format's score
level), the respondent's test is replayed from the form's answered items in order (seeded by session
and respondent, so a replay makes the same choices), its trajectory stored, and the next item
appended with its clock running, or the form finished at the stop. The form lives in the store, so
closing the browser loses nothing: the same link finds the respondent and the current item again.
Only the bank's items a person can sit (`humans.forms.answerable`) are in the engine; the bank check
(at least 20 usable items) applies to those.
"""
from __future__ import annotations

from ..errors import UserError
from ..runner.adaptive import parse_adaptive
from ..store import Store
from ..store import adaptive as db
from ..store import humans as store_humans
from ..team import RUN_EXAMS, Identity, as_identity
from . import sessions
from .adaptive_form import people_setup, replay


def create_adaptive_session(store: Store | str, dataset: str, *, group: str, bank: int, actor: Identity,
                            target_se: float = 0.30, max_items: int | None = None, balance: str = "formats",
                            time_limit_s: int | None = None, title: str | None = None,
                            show_result: bool = False) -> str:
    """Open an adaptive exam session on a bank version of ``dataset``; returns its id.

    Refused with one line, nothing stored: no `team.RUN_EXAMS`, a target SE <= 0, an unknown bank
    version, fewer than 20 bank items a person can sit."""
    as_identity(actor).require(RUN_EXAMS)
    store = store if isinstance(store, Store) else Store(store)
    options = parse_adaptive(bank, target_se, max_items, balance)
    conf = {"bank_version": options["bank"], "target_se": options["target_se"], "max_items": options["max_items"],
            "balance": options["balance"], "show_result": bool(show_result)}
    people_setup(store, dataset, conf)  # every check before anything is stored
    session_id = sessions.create_session(store, dataset, group=group, per_cell=1, actor=actor,
                                         time_limit_s=time_limit_s, title=title)
    with store.transaction() as con:
        db.add_adaptive_session_con(con, {"session_id": session_id, **conf})
    return session_id


def about_left(store: Store | str, session_id: str, respondent: str) -> int | None:
    """About how many questions a respondent of an adaptive session has left, the current one included
    (None: not an adaptive session)."""
    from ..store.runs import current_items_con

    store = store if isinstance(store, Store) else Store(store)
    conf = db.adaptive_session(store, session_id)
    if conf is None:
        return None
    session = store_humans.get_session(store, session_id)
    if session is None:
        raise UserError(f"no exam session {session_id!r}")
    setup = people_setup(store, session["dataset"], conf)
    with store.connect(read_only=True) as con:
        records = current_items_con(con, session["dataset"])
        answered = db.answered_raw_con(con, session_id, respondent)
    return replay(setup, answered, records, f"{session_id}/{respondent}").about_left()


def result_for(store: Store | str, session_id: str, respondent: str) -> str | None:
    """What a respondent of a finished adaptive form may see of their result: one sentence with the ability
    and its 95% interval on the bank's scale, only when the organiser allowed it (``show_result``); None otherwise."""
    from ..analysis.intervals import Z95

    store = store if isinstance(store, Store) else Store(store)
    conf = db.adaptive_session(store, session_id)
    if conf is None or not bool(conf["show_result"]):
        return None
    runs = db.load_adaptive_runs(store)
    row = runs[runs["run_id"] == sessions.run_id_for(session_id, respondent)]
    if row.empty or row["stop_reason"].isna().iloc[0]:
        return None
    theta, se, n = float(row["ability"].iloc[0]), float(row["ability_se"].iloc[0]), int(row["n_items"].iloc[0])
    return (f"Your ability on the item bank's scale (version {int(row['bank_version'].iloc[0])}): {theta:+.2f} logit, "
            f"95% interval {theta - Z95 * se:+.2f} to {theta + Z95 * se:+.2f}, after {n} questions. The models are "
            "on the same scale: your session's organiser can show you where.")


__all__ = ["about_left", "create_adaptive_session", "result_for"]

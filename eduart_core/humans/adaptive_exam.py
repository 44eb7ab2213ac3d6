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

from ..analysis.adaptive import Bank, Engine, Session
from ..errors import UserError
from ..runner.adaptive import AdaptiveSetup, level_of, parse_adaptive
from ..store import Store
from ..store import adaptive as db
from ..team import RUN_EXAMS, Identity


def people_setup(store: Store, dataset: str, conf: dict) -> AdaptiveSetup:
    """The engine of an adaptive session: the bank version's items a person can sit."""
    from ..store.banks import load_bank
    from ..store.items import load_items
    from ..vocab import DEFAULT_PROFILE
    from . import forms

    header, items = load_bank(store, dataset, int(conf["bank_version"]))
    catalogue = load_items(store, dataset)
    sittable = {str(i) for i, r in zip(catalogue["item_id"], catalogue["record"])
                if isinstance(r, dict) and forms.answerable(r)}
    items = items[items["item_id"].astype(str).isin(sittable)]
    bank = Bank.from_items(items, float(header["latent_sd"] or 1.0))
    options = {"bank": int(conf["bank_version"]), "target_se": float(conf["target_se"]),
               "max_items": None if conf.get("max_items") is None or conf["max_items"] != conf["max_items"]
               else int(conf["max_items"]), "balance": str(conf["balance"])}
    profile = (header.get("selection") or {}).get("profile") or DEFAULT_PROFILE
    return AdaptiveSetup(dataset, int(header["version"]), str(profile), Engine(bank, balance=options["balance"]),
                         options)


def create_adaptive_session(store: Store | str, dataset: str, *, group: str, bank: int, actor: Identity,
                            target_se: float = 0.30, max_items: int | None = None, balance: str = "formats",
                            time_limit_s: int | None = None, title: str | None = None,
                            show_result: bool = False) -> str:
    """Open an adaptive exam session on a bank version of ``dataset``; returns its id.

    Refused with one line, nothing stored: no `team.RUN_EXAMS`, a target SE <= 0, an unknown bank
    version, fewer than 20 bank items a person can sit."""
    from . import sessions

    actor.require(RUN_EXAMS)
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


def _replay(setup: AdaptiveSetup, answered: list[tuple[str, str]], records: dict, seed: str) -> Session:
    opts = setup.options
    session = Session(setup.engine, opts["target_se"], opts.get("max_items"), seed)
    for item_id, raw in answered:
        if item_id in session.index:
            session.record(item_id, level_of({**records[item_id][1], "item_id": item_id}, raw, setup.profile))
    return session


def first_item(setup: AdaptiveSetup, session_id: str, respondent: str) -> str:
    """The first item of a respondent's adaptive form."""
    item = _replay(setup, [], {}, f"{session_id}/{respondent}").next_item()
    if item is None:
        raise UserError(f"exam session {session_id}: the bank has no item to ask")
    return item


def after_answer_con(con, setup: AdaptiveSetup, session: dict, respondent: str, run_id: str) -> str | None:
    """In the answer's transaction: store the trajectory so far and return the next item (None: the test is over)."""
    from ..store.runs import current_items_con

    records = current_items_con(con, session["dataset"])
    state = _replay(setup, db.answered_raw_con(con, session["session_id"], respondent), records,
                    f"{session['session_id']}/{respondent}")
    header, steps = _trajectory(setup, state, run_id, session["dataset"])
    db.save_trajectory_con(con, header, steps)
    return state.next_item()


def _trajectory(setup: AdaptiveSetup, state: Session, run_id: str, dataset: str) -> tuple[dict, list[dict]]:
    theta, se = state.estimate
    opts = setup.options
    header = {"run_id": run_id, "dataset": dataset, "bank_version": setup.version, "target_se": opts["target_se"],
              "max_items": opts.get("max_items"), "balance": opts["balance"], "rules": setup.engine.rules,
              "n_bank": len(setup.engine.bank), "n_items": len(state.steps), "n_skipped": 0, "ability": theta,
              "ability_se": se, "stop_reason": state.stop_reason()}
    steps = [{"step": s.step, "item_id": s.item_id, "type": s.type, "difficulty": s.difficulty, "level": s.level,
              "information": s.information, "ability": s.ability, "ability_se": s.se} for s in state.steps]
    return header, steps


def about_left(store: Store | str, session_id: str, respondent: str) -> int | None:
    """About how many questions a respondent of an adaptive session has left, the current one included
    (None: not an adaptive session)."""
    from ..store.runs import current_items_con
    from . import sessions

    store = store if isinstance(store, Store) else Store(store)
    conf = db.adaptive_session(store, session_id)
    if conf is None:
        return None
    session = sessions._session(store, session_id)
    setup = people_setup(store, session["dataset"], conf)
    with store.connect(read_only=True) as con:
        records = current_items_con(con, session["dataset"])
        answered = db.answered_raw_con(con, session_id, respondent)
    return _replay(setup, answered, records, f"{session_id}/{respondent}").about_left()


def result_for(store: Store | str, session_id: str, respondent: str) -> str | None:
    """What a respondent of a finished adaptive form may see of their result: one sentence with the ability
    and its 95% interval on the bank's scale, only when the organiser allowed it (``show_result``); None otherwise."""
    from ..analysis.intervals import Z95
    from . import sessions

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


__all__ = ["about_left", "after_answer_con", "create_adaptive_session", "first_item", "people_setup", "result_for"]

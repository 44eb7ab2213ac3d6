"""The adaptive form of one respondent: its engine, its first item, the next item after each answer.

Why apart from `humans.adaptive_exam`: `humans.sessions` calls these inside its own transactions (a new
form, an answer), and `adaptive_exam` sets sessions up through `humans.sessions`; keeping the form's
rule here keeps the imports one-way. The rule is `run --adaptive`'s (`analysis.adaptive`): the bank
version's items a person can sit (`humans.forms.answerable`), replayed from the form's answered items in
order and seeded by session and respondent, so a replay makes the same choices.
"""
from __future__ import annotations

import pandas as pd

from ..analysis.adaptive import Bank, Engine, Session
from ..errors import UserError
from ..runner.adaptive import AdaptiveSetup, level_of
from ..store import Store
from ..store import adaptive as db


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
               "max_items": None if pd.isna(conf.get("max_items")) else int(conf["max_items"]),
               "balance": str(conf["balance"])}
    profile = (header.get("selection") or {}).get("profile") or DEFAULT_PROFILE
    return AdaptiveSetup(dataset, int(header["version"]), str(profile), Engine(bank, balance=str(conf["balance"])),
                         options)


def replay(setup: AdaptiveSetup, answered: list[tuple[str, str]], records: dict, seed: str) -> Session:
    opts = setup.options
    session = Session(setup.engine, opts["target_se"], opts.get("max_items"), seed)
    for item_id, raw in answered:
        if item_id in session.index:
            session.record(item_id, level_of({**records[item_id][1], "item_id": item_id}, raw, setup.profile))
    return session


def first_item(setup: AdaptiveSetup, session_id: str, respondent: str) -> str:
    """The first item of a respondent's adaptive form."""
    item = replay(setup, [], {}, f"{session_id}/{respondent}").next_item()
    if item is None:
        raise UserError(f"exam session {session_id}: the bank has no item to ask")
    return item


def after_answer_con(con, setup: AdaptiveSetup, session: dict, respondent: str, run_id: str) -> str | None:
    """In the answer's transaction: store the trajectory so far and return the next item (None: the test is over)."""
    from ..store.runs import current_items_con

    records = current_items_con(con, session["dataset"])
    state = replay(setup, db.answered_raw_con(con, session["session_id"], respondent), records,
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


__all__ = ["after_answer_con", "first_item", "people_setup", "replay"]

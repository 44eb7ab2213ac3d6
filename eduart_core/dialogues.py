"""Multi-turn items: items sharing a ``dialogue_id`` form one conversation, asked in ``turn`` order.

Why a module: the runner needs the order of the turns (turn t is asked after turn t-1, with the
earlier questions and the model's own earlier answers), and the inspector needs the whole
conversation of one model back. Both read the same rule here: turns sorted by ``turn``, then by
item id when two items claim the same turn (the importer warns about that).
"""
from __future__ import annotations

import pandas as pd

from .items import render_prompt_text
from .store import Store
from .store.items import load_items
from .store.scores import load_responses

#: Columns of `dialogue_turns`, in order.
DIALOGUE_COLUMNS: tuple[str, ...] = (
    "dialogue_id", "turn", "item_id", "type", "question", "model", "model_key", "condition", "run_id",
    "answer", "motivation", "error", "strict_score", "paper_score", "strict_details",
)


def turn_order(items: pd.DataFrame) -> dict[str, list[str]]:
    """dialogue_id -> its item ids in asking order (``load_items`` frame: dialogue_id, turn)."""
    if items.empty or "dialogue_id" not in items:
        return {}
    turns = items.loc[items["dialogue_id"].notna(), ["dialogue_id", "turn", "item_id"]]
    order: dict[str, list[str]] = {}
    for row in sorted(turns.itertuples(index=False), key=lambda r: (str(r.dialogue_id), int(r.turn or 0),
                                                                    str(r.item_id))):
        order.setdefault(str(row.dialogue_id), []).append(str(row.item_id))
    return order


def earlier_turns(items: pd.DataFrame) -> dict[str, list[str]]:
    """item_id -> the item ids asked before it in its dialogue (empty list for a first turn)."""
    out: dict[str, list[str]] = {}
    for ids in turn_order(items).values():
        for position, item_id in enumerate(ids):
            out[item_id] = ids[:position]
    return out


def complete_dialogues(selected: pd.DataFrame, all_items: pd.DataFrame) -> pd.DataFrame:
    """``selected`` plus the earlier turns of every dialogue item in it, in item order.

    Why: a later turn only makes sense after the earlier ones; asking turn 3 alone would be a
    different question. So a selection (``--items``, ``--limit``, ``--sample``) that picks a later
    turn brings its earlier turns along.
    """
    before = earlier_turns(all_items)
    wanted = set(selected["item_id"])
    for item_id in list(wanted):
        wanted.update(before.get(item_id, []))
    if len(wanted) == len(selected):
        return selected
    return all_items[all_items["item_id"].isin(wanted)].sort_values("item_id")


def dialogue_of(items: pd.DataFrame, item_id: str) -> str | None:
    """The dialogue an item belongs to, or None."""
    rows = items.loc[items["item_id"] == str(item_id), "dialogue_id"] if "dialogue_id" in items else []
    return next((str(v) for v in rows if v is not None and not pd.isna(v)), None)


def dialogue_turns(store: Store, dataset: str, dialogue_id: str, *, model: str | None = None,
                   condition: str | None = None) -> pd.DataFrame:
    """The whole conversation of a dialogue: one row per turn and answering model x condition.

    Each row holds the turn's question (model-ready text), the model's answer as it wrote it (or
    the error that stopped the dialogue there), and its scores under both profiles (the newest
    request of repetition 0; once answered, the response the score frame uses). A turn nobody answered yet keeps one row with
    empty model columns, so the page still shows the question. ``model`` (key or display name)
    and ``condition`` narrow the rows.
    """
    items = load_items(store, dataset)
    ids = turn_order(items).get(str(dialogue_id))
    if not ids:
        return pd.DataFrame(columns=list(DIALOGUE_COLUMNS))
    records = dict(zip(items["item_id"], items["record"]))
    rows = []
    for item_id in ids:
        record = records[item_id]
        base = {"dialogue_id": str(dialogue_id), "turn": record.get("turn"), "item_id": item_id,
                "type": record.get("type"), "question": render_prompt_text(record)}
        answers = load_responses(store, dataset, item_id)
        # the newest request per model and condition (rows come newest first): the answer, or the
        # error that stopped the dialogue there (a failed request is never the score frame's answer)
        answers = answers[answers["repetition"] == 0].drop_duplicates(["model_key", "condition"])
        if model is not None:
            answers = answers[(answers["model_key"] == model) | (answers["model"] == model)]
        if condition is not None:
            answers = answers[answers["condition"] == condition]
        if answers.empty:
            rows.append(base)
        for answer in answers.itertuples(index=False):
            rows.append({**base, "model": answer.model, "model_key": answer.model_key,
                         "condition": answer.condition, "run_id": answer.run_id, "answer": answer.raw_text,
                         "motivation": answer.motivation, "error": answer.error,
                         "strict_score": answer.strict_score, "paper_score": answer.paper_score,
                         "strict_details": answer.strict_details})
    frame = pd.DataFrame(rows, columns=list(DIALOGUE_COLUMNS))
    return frame.sort_values(["model", "condition", "turn", "item_id"], na_position="first",
                             kind="stable").reset_index(drop=True)

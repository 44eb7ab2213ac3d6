"""What models answer when they do not answer right: distractors chosen, invalid and refused answers.

Why: an accuracy hides two different failures. A model that picks the "same colour, wrong object"
distractor most of the time has a perception problem the benchmark designed a trap for; a model
that writes prose, an option that does not exist, or declines to answer has a format or policy
problem. MUSE-style items label every wrong option with the kind of trap it is (`distractor_type`),
so the share of wrong answers going to each kind can be compared with what uniform guessing among
the wrong options would give. Pure functions: answers and item records in, frames out; vectorised,
because a VQArt-scale panel gives 200,000 answers.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Callable

import numpy as np
import pandas as pd

from ..errors import UserError
from ..refusals import is_refusal
from ..vocab import DIMENSION_COLUMN, MCQ_TYPE, OVERALL_COLUMN, TASK_COLUMN
from ._frame import finish
from .intervals import wilson_interval

OK, REFUSED, UNPARSEABLE, NOT_AN_OPTION = "ok", "refused", "unparseable", "not an option"
ANSWER_STATUSES = (OK, REFUSED, UNPARSEABLE, NOT_AN_OPTION)
UNLABELLED = "unlabelled"
ALL_MODELS = "All models"


@functools.lru_cache(maxsize=65536)
def _ids_of(text: str) -> tuple[str, ...]:
    """Option ids named by a stored parsed-answers JSON text (decoded once per distinct text)."""
    try:
        parsed = json.loads(text)
    except (TypeError, ValueError):
        return ()
    if not isinstance(parsed, list):
        return ()
    out = []
    for entry in parsed:
        value = entry.get("id") if isinstance(entry, dict) else entry
        if value is not None and str(value).strip():
            out.append(str(value).strip().upper())
    return tuple(out)


def _has_entries(text: object) -> bool:
    if not isinstance(text, str):
        return False
    try:
        parsed = json.loads(text)
    except ValueError:
        return False
    return isinstance(parsed, list) and bool(parsed)


def _no_answer(raw: pd.Series) -> pd.Series:
    """Refused when the text declines to answer, else unparseable (applied to the few answers without one)."""
    return pd.Series(np.where(raw.map(is_refusal).to_numpy(dtype=bool), REFUSED, UNPARSEABLE), index=raw.index)


def _item_options(items: pd.DataFrame) -> pd.DataFrame:
    """One row per item option: item_id, option id, is_gold, distractor_type (choice items only)."""
    rows = []
    for item_id, record in zip(items["item_id"], items["record"]):
        if not isinstance(record, dict) or not isinstance(record.get("choices"), list):
            continue
        gold = {str(a.get("id")).strip().upper() for a in record.get("answers") or [] if isinstance(a, dict)}
        for c in record["choices"]:
            if isinstance(c, dict) and c.get("id") is not None:
                ident = str(c["id"]).strip().upper()
                rows.append((item_id, ident, ident in gold, c.get("distractor_type") or UNLABELLED))
    return pd.DataFrame(rows, columns=["item_id", "option", "is_gold", "distractor_type"])


def _choice_status(sub: pd.DataFrame, options: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """A choice item: readable when it names one of the item's option ids (the first such id counts)."""
    texts = sub["parsed_answers"]
    ids = {t: _ids_of(t) for t in texts.dropna().unique()}
    first = texts.map({t: (v[0] if v else None) for t, v in ids.items()})
    known = set((options["item_id"].astype(str) + "\x1f" + options["option"]).tolist())
    item = sub["item_id"].astype(str)
    ok = (item + "\x1f" + first.fillna("").astype(str)).isin(known).to_numpy() & first.notna().to_numpy()
    chosen = pd.Series(np.where(ok, first.to_numpy(dtype=object), None), index=sub.index, dtype=object)
    # rare: the first id is no option but a later one is ("E, B"): the first option named counts
    several = ~ok & texts.map({t: len(v) > 1 for t, v in ids.items()}).fillna(False).to_numpy(dtype=bool)
    for index in np.flatnonzero(several):
        label = sub.index[index]
        chosen[label] = next((i for i in ids[texts.iloc[index]] if f"{item.iloc[index]}\x1f{i}" in known), None)
    status = pd.Series(np.where(chosen.notna(), OK, NOT_AN_OPTION), index=sub.index, dtype=object)
    none = first.isna().to_numpy()
    if none.any():
        status[none] = _no_answer(sub.loc[none, "raw_text"])
    return status, chosen


def _generic_status(sub: pd.DataFrame, options: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Any other format: readable when the parser found an answer list with something in it."""
    error = sub["parse_error"] if "parse_error" in sub else pd.Series(None, index=sub.index)
    readable = sub["parsed_answers"].map(_has_entries) & ~error.map(lambda e: isinstance(e, str) and bool(e))
    status = pd.Series(OK, index=sub.index, dtype=object)
    if (~readable).any():
        status[~readable] = _no_answer(sub.loc[~readable, "raw_text"])
    return status, pd.Series(None, index=sub.index, dtype=object)


#: How an answer of each format is read for these analyses (explicit; other formats use the generic rule).
#: A reader takes the answers of one format (and every item option) and returns (status, chosen option).
ANSWER_READERS: dict[str, Callable[[pd.DataFrame, pd.DataFrame], tuple[pd.Series, pd.Series]]] = {
    MCQ_TYPE: _choice_status,
}


def answer_statuses(answers: pd.DataFrame, items: pd.DataFrame, *, by: str = TASK_COLUMN) -> pd.DataFrame:
    """Every answer with its status and chosen option: model, item_id, column, status, chosen."""
    missing = [c for c in ("model", "item_id", "parsed_answers", "raw_text") if c not in answers]
    if missing:
        raise UserError(f"answers lack column(s): {', '.join(missing)}")
    types = dict(zip(items["item_id"], items["type"])) if "type" in items else {}
    columns = dict(zip(items["item_id"], items[by])) if by in items else {}
    options = _item_options(items)
    d = answers.loc[answers["item_id"].isin(set(items["item_id"]))]
    fmt = d["item_id"].map(types)
    status = pd.Series(index=d.index, dtype=object)
    chosen = pd.Series(index=d.index, dtype=object)
    for name, sub in d.groupby(fmt, sort=False):
        reader = ANSWER_READERS.get(str(name), _generic_status)
        s, c = reader(sub, options)
        status[sub.index], chosen[sub.index] = s, c
    return pd.DataFrame({"model": d["model"], "item_id": d["item_id"], "column": d["item_id"].map(columns),
                         "status": status, "chosen": chosen}).reset_index(drop=True)


def answer_status(record: dict, parsed: object, raw: object, parse_error: object = None) -> tuple[str, str | None]:
    """(status, chosen option id) of one answer; status is one of `ANSWER_STATUSES`."""
    items = pd.DataFrame({"item_id": ["x"], "type": [record.get("type")], "record": [record]})
    answers = pd.DataFrame({"model": ["m"], "item_id": ["x"], "raw_text": [raw], "parse_error": [parse_error],
                            "parsed_answers": [parsed if isinstance(parsed, str) or parsed is None
                                               else json.dumps(parsed)]})
    row = answer_statuses(answers, items).iloc[0]
    return str(row["status"]), (None if pd.isna(row["chosen"]) else str(row["chosen"]))


def _check_by(by: str) -> None:
    if by not in (TASK_COLUMN, DIMENSION_COLUMN):
        raise UserError(f"group by {by!r}? use {TASK_COLUMN} or {DIMENSION_COLUMN}")


def invalid_rates(answers: pd.DataFrame, items: pd.DataFrame, *, by: str = TASK_COLUMN,
                  statuses: pd.DataFrame | None = None) -> pd.DataFrame:
    """Share of answers that could not be read (refused, unparseable, not an option) per model and task.

    Columns: model, column, n, n_refused, n_unparseable, n_not_an_option, n_invalid, rate, ci_low,
    ci_high (Wilson 95% on n). One `overall` row per model covers all its answers; items without a
    ``by`` value count there only. ``statuses``: `answer_statuses` of the same answers, when already known.
    """
    _check_by(by)
    st = statuses if statuses is not None else answer_statuses(answers, items, by=by)
    columns = ["model", "column", "n", "n_refused", "n_unparseable", "n_not_an_option", "n_invalid", "rate",
               "ci_low", "ci_high"]
    if st.empty:
        return finish(pd.DataFrame(columns=columns), 0, grouping=by)
    both = pd.concat([st.dropna(subset=["column"]), st.assign(column=OVERALL_COLUMN)], ignore_index=True)
    for status in (REFUSED, UNPARSEABLE, NOT_AN_OPTION):
        both[status] = both["status"] == status
    out = both.groupby(["model", "column"], sort=False).agg(
        n=("status", "size"), n_refused=(REFUSED, "sum"), n_unparseable=(UNPARSEABLE, "sum"),
        n_not_an_option=(NOT_AN_OPTION, "sum")).reset_index()
    out["n_invalid"] = out["n_refused"] + out["n_unparseable"] + out["n_not_an_option"]
    out["rate"] = out["n_invalid"] / out["n"]
    out["ci_low"], out["ci_high"] = wilson_interval(out["rate"].to_numpy(float), out["n"].to_numpy(float))
    order = list(dict.fromkeys([*st["column"].dropna(), OVERALL_COLUMN]))
    out["_c"] = out["column"].map({c: i for i, c in enumerate(order)})
    out = out.sort_values(["model", "_c"], kind="stable").drop(columns="_c")
    return finish(out[columns], 0, grouping=by)


def distractor_choices(answers: pd.DataFrame, items: pd.DataFrame, *, by: str = TASK_COLUMN,
                       statuses: pd.DataFrame | None = None) -> pd.DataFrame:
    """Among wrong option choices, the share that went to each distractor type, per model and task.

    A wrong choice is a readable answer naming an option other than the right one. Columns: model,
    column, distractor_type, n_wrong (wrong choices of the model in the column), n_chose, share,
    ci_low, ci_high (Wilson 95% on n_wrong), expected_share (the share if wrong choices fell uniformly
    on the item's wrong options). Rows of model "All models" pool every model. Options without a
    label count as "unlabelled". ``statuses``: `answer_statuses` of the same answers, when already known.
    """
    _check_by(by)
    columns = ["model", "column", "distractor_type", "n_wrong", "n_chose", "share", "ci_low", "ci_high",
               "expected_share"]
    st = statuses if statuses is not None else answer_statuses(answers, items, by=by)
    options = _item_options(items)
    chosen = st.loc[(st["status"] == OK) & st["chosen"].notna() & st["column"].notna()]
    chosen = chosen.merge(options.rename(columns={"option": "chosen"}), on=["item_id", "chosen"], how="inner")
    wrong = chosen.loc[~chosen["is_gold"], ["model", "column", "item_id", "distractor_type"]]
    if wrong.empty:
        return finish(pd.DataFrame(columns=columns), 0, grouping=by)
    wrong = pd.concat([wrong, wrong.assign(model=ALL_MODELS)], ignore_index=True)
    n_wrong = wrong.groupby(["model", "column"], sort=False).size().rename("n_wrong")
    picked = wrong.groupby(["model", "column", "distractor_type"], sort=False).size().rename("n_chose")
    # what uniform guessing among an item's wrong options would give, summed over the wrong answers
    offered = options.loc[~options["is_gold"]].groupby(["item_id", "distractor_type"]).size().rename("k").reset_index()
    offered["frac"] = offered["k"] / offered.groupby("item_id")["k"].transform("sum")
    per_item = wrong.groupby(["model", "column", "item_id"], sort=False).size().rename("times").reset_index()
    expected = per_item.merge(offered[["item_id", "distractor_type", "frac"]], on="item_id")
    expected["e"] = expected["times"] * expected["frac"]
    expected = expected.groupby(["model", "column", "distractor_type"], sort=False)["e"].sum()
    out = pd.concat([picked, expected], axis=1).fillna(0.0).reset_index()
    out = out.merge(n_wrong.reset_index(), on=["model", "column"])
    out["n_chose"] = out["n_chose"].astype(int)
    out["share"] = out["n_chose"] / out["n_wrong"]
    out["expected_share"] = out["e"] / out["n_wrong"]
    out["ci_low"], out["ci_high"] = wilson_interval(out["share"].to_numpy(float), out["n_wrong"].to_numpy(float))
    out["_m"] = (out["model"] == ALL_MODELS).astype(int)
    out = out.sort_values(["_m", "model", "column", "distractor_type"], kind="stable")
    return finish(out[columns], 0, grouping=by)


__all__ = ["ALL_MODELS", "ANSWER_READERS", "ANSWER_STATUSES", "answer_status", "answer_statuses",
           "distractor_choices", "invalid_rates"]

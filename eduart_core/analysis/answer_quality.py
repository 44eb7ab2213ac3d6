"""What models answer when they do not answer right: distractors chosen, invalid and refused answers.

Why: an accuracy hides two different failures. A model that picks the "same colour, wrong object"
distractor most of the time has a perception problem the benchmark designed a trap for; a model
that writes prose, an option that does not exist, or declines to answer has a format or policy
problem. MUSE-style items label every wrong option with the kind of trap it is (`distractor_type`),
so the share of wrong answers going to each kind can be compared with what uniform guessing among
the wrong options would give. Pure functions: answers and item records in, frames out.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Callable

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


@functools.lru_cache(maxsize=4096)
def _loads(text: str) -> object:
    """Parsed answers are few distinct strings repeated over many answers: decode each once."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def _entries(parsed: object) -> list:
    if isinstance(parsed, str):
        parsed = _loads(parsed)
    return parsed if isinstance(parsed, list) else []


def _ids(parsed: object) -> list[str]:
    out = []
    for entry in _entries(parsed):
        value = entry.get("id") if isinstance(entry, dict) else entry
        if value is not None and str(value).strip():
            out.append(str(value).strip().upper())
    return out


def _no_answer(raw: object) -> str:
    return REFUSED if is_refusal(raw) else UNPARSEABLE


def _choice_status(record: dict, parsed: object, raw: object, parse_error: object) -> tuple[str, str | None]:
    """A choice item: readable when it names one of the item's option ids (the first one counts)."""
    ids = _ids(parsed)
    if not ids:
        return _no_answer(raw), None
    options = {str(c.get("id")).strip().upper() for c in record.get("choices") or [] if isinstance(c, dict)}
    chosen = next((i for i in ids if i in options), None)
    return (OK, chosen) if chosen else (NOT_AN_OPTION, None)


def _generic_status(record: dict, parsed: object, raw: object, parse_error: object) -> tuple[str, str | None]:
    """Any other format: readable when the parser found an answer list with something in it."""
    if _entries(parsed) and not (isinstance(parse_error, str) and parse_error):
        return OK, None
    return _no_answer(raw), None


#: How an answer of each format is read for these analyses (explicit; other formats use the generic rule).
ANSWER_READERS: dict[str, Callable[[dict, object, object, object], tuple[str, str | None]]] = {
    MCQ_TYPE: _choice_status,
}


def answer_status(record: dict, parsed: object, raw: object, parse_error: object = None) -> tuple[str, str | None]:
    """(status, chosen option id) of one answer; status is one of `ANSWER_STATUSES`."""
    reader = ANSWER_READERS.get(str(record.get("type")), _generic_status)
    return reader(record, parsed, raw, parse_error)


def _statuses(answers: pd.DataFrame, items: pd.DataFrame, by: str) -> pd.DataFrame:
    missing = [c for c in ("model", "item_id", "parsed_answers", "raw_text") if c not in answers]
    if missing:
        raise UserError(f"answers lack column(s): {', '.join(missing)}")
    records = dict(zip(items["item_id"], items["record"]))
    columns = dict(zip(items["item_id"], items[by])) if by in items else {}
    rows = []
    for r in answers.itertuples(index=False):
        record = records.get(r.item_id)
        if not isinstance(record, dict):
            continue
        status, chosen = answer_status(record, r.parsed_answers, r.raw_text, getattr(r, "parse_error", None))
        rows.append((r.model, r.item_id, columns.get(r.item_id), status, chosen))
    return pd.DataFrame(rows, columns=["model", "item_id", "column", "status", "chosen"])


def invalid_rates(answers: pd.DataFrame, items: pd.DataFrame, *, by: str = TASK_COLUMN) -> pd.DataFrame:
    """Share of answers that could not be read (refused, unparseable, not an option) per model and task.

    Columns: model, column, n, n_refused, n_unparseable, n_not_an_option, n_invalid, rate, ci_low,
    ci_high (Wilson 95% on n). One `overall` row per model covers all its answers; items without a
    ``by`` value count there only.
    """
    if by not in (TASK_COLUMN, DIMENSION_COLUMN):
        raise UserError(f"group by {by!r}? use {TASK_COLUMN} or {DIMENSION_COLUMN}")
    st = _statuses(answers, items, by)
    columns = ["model", "column", "n", "n_refused", "n_unparseable", "n_not_an_option", "n_invalid", "rate",
               "ci_low", "ci_high"]
    if st.empty:
        return finish(pd.DataFrame(columns=columns), 0)
    overall = st.assign(column=OVERALL_COLUMN)
    both = pd.concat([st.dropna(subset=["column"]), overall], ignore_index=True)
    for status in (REFUSED, UNPARSEABLE, NOT_AN_OPTION):
        both[status] = both["status"] == status
    g = both.groupby(["model", "column"], sort=False)
    out = g.agg(n=("status", "size"), n_refused=(REFUSED, "sum"), n_unparseable=(UNPARSEABLE, "sum"),
                n_not_an_option=(NOT_AN_OPTION, "sum")).reset_index()
    out["n_invalid"] = out["n_refused"] + out["n_unparseable"] + out["n_not_an_option"]
    out["rate"] = out["n_invalid"] / out["n"]
    out["ci_low"], out["ci_high"] = wilson_interval(out["rate"].to_numpy(float), out["n"].to_numpy(float))
    order = list(dict.fromkeys([*st["column"].dropna(), OVERALL_COLUMN]))
    out["_c"] = out["column"].map({c: i for i, c in enumerate(order)})
    out = out.sort_values(["model", "_c"], kind="stable").drop(columns="_c")
    return finish(out[columns], 0, grouping=by)


def distractor_choices(answers: pd.DataFrame, items: pd.DataFrame, *, by: str = TASK_COLUMN) -> pd.DataFrame:
    """Among wrong option choices, the share that went to each distractor type, per model and task.

    A wrong choice is a readable answer naming an option other than the right one. Columns: model,
    column, distractor_type, n_wrong (wrong choices of the model in the column), n_chose, share,
    ci_low, ci_high (Wilson 95% on n_wrong), expected_share (the share if wrong choices fell uniformly
    on the item's wrong options). Rows of model "All models" pool every model. Options without a
    label count as "unlabelled".
    """
    st = _statuses(answers, items, by)
    columns = ["model", "column", "distractor_type", "n_wrong", "n_chose", "share", "ci_low", "ci_high",
               "expected_share"]
    records = dict(zip(items["item_id"], items["record"]))
    rows = []
    for r in st.loc[(st["status"] == OK) & st["chosen"].notna() & st["column"].notna()].itertuples(index=False):
        record = records[r.item_id]
        gold = {str(a.get("id")).strip().upper() for a in record.get("answers") or [] if isinstance(a, dict)}
        if r.chosen in gold:
            continue
        types = {str(c.get("id")).strip().upper(): (c.get("distractor_type") or UNLABELLED)
                 for c in record.get("choices") or [] if isinstance(c, dict)}
        wrong = [t for i, t in types.items() if i not in gold]
        if not wrong:
            continue
        offered = pd.Series(wrong).value_counts(normalize=True).to_dict()
        rows.append((r.model, r.column, types.get(r.chosen, UNLABELLED), offered))
    if not rows:
        return finish(pd.DataFrame(columns=columns), 0, grouping=by)
    wrong = pd.DataFrame(rows, columns=["model", "column", "chosen_type", "offered"])
    kinds = sorted({t for o in wrong["offered"] for t in o} | set(wrong["chosen_type"]))
    both = pd.concat([wrong, wrong.assign(model=ALL_MODELS)], ignore_index=True)
    for kind in kinds:
        both[f"c:{kind}"] = (both["chosen_type"] == kind).astype(int)
        both[f"e:{kind}"] = [o.get(kind, 0.0) for o in both["offered"]]
    g = both.groupby(["model", "column"], sort=False)
    sums = g[[f"c:{k}" for k in kinds] + [f"e:{k}" for k in kinds]].sum()
    n_wrong = g.size()
    out = []
    for (model, column), total in n_wrong.items():
        for kind in kinds:
            chose = int(sums.loc[(model, column), f"c:{kind}"])
            expected = float(sums.loc[(model, column), f"e:{kind}"]) / total
            if chose == 0 and expected == 0:
                continue
            out.append({"model": model, "column": column, "distractor_type": kind, "n_wrong": int(total),
                        "n_chose": chose, "share": chose / total, "expected_share": expected})
    frame = pd.DataFrame(out)
    frame["ci_low"], frame["ci_high"] = wilson_interval(frame["share"].to_numpy(float), frame["n_wrong"].to_numpy(float))
    frame["_m"] = (frame["model"] == ALL_MODELS).astype(int)
    frame = frame.sort_values(["_m", "model", "column", "distractor_type"], kind="stable").drop(columns="_m")
    return finish(frame[columns], 0, grouping=by)


def answer_statuses(answers: pd.DataFrame, items: pd.DataFrame, *, by: str = TASK_COLUMN) -> pd.DataFrame:
    """Every answer with its status and chosen option (model, item_id, column, status, chosen)."""
    return _statuses(answers, items, by)


__all__ = ["ALL_MODELS", "ANSWER_READERS", "ANSWER_STATUSES", "answer_status", "answer_statuses",
           "distractor_choices", "invalid_rates"]

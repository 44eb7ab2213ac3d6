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
from ..formats import AnswerFormat, find_format
from ..formats.base import OPTION_CHECK, OPTIONS_CHECK, TEXT_CHECK
from ..refusals import is_refusal
from ..vocab import DIMENSION_COLUMN, OVERALL_COLUMN, TASK_COLUMN
from ._frame import finish
from .intervals import wilson_interval

OK, REFUSED, UNPARSEABLE, NOT_AN_OPTION = "ok", "refused", "unparseable", "not an option"
ANSWER_STATUSES = (OK, REFUSED, UNPARSEABLE, NOT_AN_OPTION)
UNLABELLED = "unlabelled"
ALL_MODELS = "All models"
#: Above this share of invalid answers (no option named, unreadable, refused) a model is warned about:
#: its scores say more about its answer format than about what it knows.
INVALID_WARN_ABOVE = 0.05
#: Above this share a model is left out of the IRT fit unless asked for (its ability would be an
#: artefact of its output format, and it pulls the scale's lower end).
IRT_LEAVE_OUT_ABOVE = 0.5
INVALID_WORDS = "an answer is invalid when it names no option (or no statement or blank of the item), cannot be read, or refuses"
INVALID_RULE = (f"warning above {INVALID_WARN_ABOVE:.0%} of a model's answers invalid; above {IRT_LEAVE_OUT_ABOVE:.0%} "
                "the model is left out of the IRT fit unless invalid answers are included")


@functools.lru_cache(maxsize=65536)
def _decoded(text: str) -> object:
    """A stored parsed-answers JSON text, decoded once per distinct text (None when it is no JSON);
    read, never changed, by `_ids_of` and `_has_entries`."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None


@functools.lru_cache(maxsize=65536)
def _ids_of(text: str) -> tuple[str, ...]:
    """Option ids named by a stored parsed-answers JSON text (decoded once per distinct text)."""
    parsed = _decoded(text)
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
    parsed = _decoded(text)
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
    """A choice item: readable when it names one of the item's option ids (the first such id counts).

    Integer codes throughout (distinct answer texts, option labels, items): a VQArt-scale panel
    gives 200,000 answers but only a few dozen distinct answer texts.
    """
    text_codes, texts = pd.factorize(sub["parsed_answers"])          # -1: no parsed answer
    ids = [_ids_of(t) if isinstance(t, str) else () for t in texts]
    labels = sorted(set(options["option"]) | {i for v in ids for i in v})
    label_index = {label: k for k, label in enumerate(labels)}
    first = np.array([label_index[v[0]] if v else -1 for v in ids] + [-1])[text_codes]
    item_codes, item_ids = pd.factorize(sub["item_id"])
    option_item = pd.Index(item_ids).get_indexer(options["item_id"])
    mine = option_item >= 0
    known = np.zeros((len(item_ids), max(1, len(labels))), dtype=bool)
    known[option_item[mine], [label_index[o] for o in options["option"].to_numpy()[mine]]] = True
    ok = (first >= 0) & known[item_codes, np.maximum(first, 0)]
    names = np.array(labels + [None], dtype=object)
    chosen = names[np.where(first >= 0, first, len(labels))]  # fancy indexing: a new array
    chosen[~ok] = None
    # rare: the first id is no option but a later one is ("E, B"): the first option named counts
    several = ~ok & np.array([len(v) > 1 for v in ids] + [False])[text_codes]
    for row in np.flatnonzero(several):
        found = [label_index[i] for i in ids[text_codes[row]] if known[item_codes[row], label_index[i]]]
        chosen[row] = labels[found[0]] if found else None
    status = np.where(pd.notna(chosen), OK, NOT_AN_OPTION).astype(object)
    none = first < 0
    if none.any():
        status[none] = _no_answer(sub["raw_text"].iloc[np.flatnonzero(none)]).to_numpy()
    return pd.Series(status, index=sub.index, dtype=object), pd.Series(chosen, index=sub.index, dtype=object)


def _check_status(sub: pd.DataFrame, options: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """A several-answer choice item: readable when it names one of the item's option ids (no single choice to report)."""
    status, _ = _choice_status(sub, options)
    return status, pd.Series(None, index=sub.index, dtype=object)


def _item_keys(items: pd.DataFrame) -> dict[str, frozenset[str]]:
    """item_id -> the ids an answer may name (options, statements, blanks), for items whose key uses ids."""
    out: dict[str, frozenset[str]] = {}
    for item_id, record in zip(items["item_id"], items["record"]):
        if not isinstance(record, dict):
            continue
        entries = [e for field in ("choices", "answers") if isinstance(record.get(field), list)
                   for e in record[field] if isinstance(e, dict)]
        ids = {str(e["id"]).strip().upper() for e in entries if e.get("id") is not None and str(e["id"]).strip()}
        if ids:
            out[str(item_id)] = frozenset(ids)
    return out


def _generic_status(sub: pd.DataFrame, keys: dict[str, frozenset[str]]) -> tuple[pd.Series, pd.Series]:
    """Any other format: readable when the parser found an answer list with something in it; on an item
    keyed by ids (statements, blanks), an answer whose ids name none of the item's is not an option.

    Each distinct answer text is decoded once, and each distinct (item, answer text) pair checked
    once (a 50 x 5,000 panel repeats most texts), instead of once per answer."""
    text_codes, distinct = pd.factorize(sub["parsed_answers"])  # -1: no parsed answer
    texts = distinct.to_numpy(dtype=object)  # positional reads of a plain array (an arrow Index is slow)
    entries = np.array([_has_entries(t) for t in texts] + [False], dtype=bool)[text_codes]
    if "parse_error" in sub:
        error_codes, errors = pd.factorize(sub["parse_error"])
        failed = np.array([isinstance(e, str) and bool(e) for e in errors] + [False], dtype=bool)[error_codes]
    else:
        failed = np.zeros(len(sub), dtype=bool)
    readable = entries & ~failed
    values = np.full(len(sub), OK, dtype=object)
    if (~readable).any():
        values[~readable] = _no_answer(sub["raw_text"].iloc[np.flatnonzero(~readable)]).to_numpy()
    item_codes, item_ids = pd.factorize(sub["item_id"])
    item_keys = [keys.get(str(i)) for i in item_ids]
    keyed = np.array([bool(k) for k in item_keys] + [False], dtype=bool)[item_codes]
    rows = np.flatnonzero(readable & keyed)
    if len(rows):
        pair_codes, pairs = pd.factorize(item_codes[rows].astype(np.int64) * (len(texts) + 1) + text_codes[rows])
        named: dict[int, tuple[str, ...]] = {}  # the ids of each distinct text, read once
        for code in np.unique(pairs % (len(texts) + 1)).tolist():
            named[code] = _ids_of(texts[code])
        foreign = np.array([_names_none(item_keys[item], named[text]) for item, text in
                            zip((pairs // (len(texts) + 1)).tolist(), (pairs % (len(texts) + 1)).tolist())],
                           dtype=bool)
        values[rows[foreign[pair_codes]]] = NOT_AN_OPTION
    status = pd.Series(values, index=sub.index, dtype=object)
    return status, pd.Series(None, index=sub.index, dtype=object)


def _names_none(known: frozenset[str], named: tuple[str, ...]) -> bool:
    """An answer that names ids (``named``: `_ids_of` its text), none of them one of the item's (``known``)."""
    return bool(named) and known.isdisjoint(named)


@functools.lru_cache(maxsize=65536)
def _entries_of(text: str) -> tuple:
    try:
        parsed = json.loads(text)
    except (TypeError, ValueError):
        return ()
    return tuple(e for e in parsed if isinstance(e, dict)) if isinstance(parsed, list) else ()


def _first_text(parsed: object, raw: object) -> str:
    """The answer text of a single-part answer (a free-form reply is its own answer text)."""
    entries = _entries_of(parsed) if isinstance(parsed, str) else ()
    for entry in entries:
        value = entry.get("text", entry.get("description"))
        if value is not None:
            return str(value)
    return raw if isinstance(raw, str) else ""


def _rowwise(sub: pd.DataFrame, judge: Callable[[str], str]) -> tuple[pd.Series, pd.Series]:
    """Each answer judged by its answer text (`_first_text`); each distinct text judged once (a
    panel of 50 models repeats most short answers)."""
    texts = [_first_text(p, r) for p, r in zip(sub["parsed_answers"].to_numpy(dtype=object),
                                                  sub["raw_text"].to_numpy(dtype=object))]
    codes, distinct = pd.factorize(np.array(texts, dtype=object))
    verdicts = np.array([judge(t) for t in distinct], dtype=object)
    status = verdicts[codes] if len(codes) else np.empty(0, dtype=object)
    return pd.Series(status, index=sub.index, dtype=object), pd.Series(None, index=sub.index, dtype=object)


def _text_status(fmt: AnswerFormat) -> Callable[[pd.DataFrame, pd.DataFrame], tuple[pd.Series, pd.Series]]:
    """A single-part answer judged by its text: readable when the format reads an answer in it
    (`AnswerFormat.reads_answer`: a count names exactly one number, a free text is any text), else
    refused when it declines to answer, else unparseable."""
    def judge(text: str) -> str:
        if fmt.reads_answer(text):
            return OK
        return REFUSED if is_refusal(text) else UNPARSEABLE

    def reader(sub: pd.DataFrame, options: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
        return _rowwise(sub, judge)
    return reader


#: How an answer is read for these analyses, by the format's `AnswerFormat.answer_check` (the formats
#: declaring none use the generic rule). A reader takes the answers of one format (and every item
#: option) and returns (status, chosen option).
ANSWER_READERS: dict[str, Callable[[pd.DataFrame, pd.DataFrame], tuple[pd.Series, pd.Series]]] = {
    OPTION_CHECK: _choice_status,
    OPTIONS_CHECK: _check_status,
}


def _reader(name: object) -> Callable[[pd.DataFrame, pd.DataFrame], tuple[pd.Series, pd.Series]] | None:
    """The reader of a format's answers (None: the generic rule)."""
    fmt = find_format(name)
    if fmt is None or fmt.answer_check is None:
        return None
    return _text_status(fmt) if fmt.answer_check == TEXT_CHECK else ANSWER_READERS.get(fmt.answer_check)


def answer_statuses(answers: pd.DataFrame, items: pd.DataFrame, *, by: str = TASK_COLUMN) -> pd.DataFrame:
    """Every answer with its status and chosen option: model, (condition,) item_id, column, status, chosen."""
    missing = [c for c in ("model", "item_id", "parsed_answers", "raw_text") if c not in answers]
    if missing:
        raise UserError(f"answers lack column(s): {', '.join(missing)}")
    options = _item_options(items)
    keys = _item_keys(items)
    position = pd.Index(items["item_id"]).get_indexer(answers["item_id"])
    known = position >= 0
    # the readers see only what an answer's status reads (a copy of 500,000 rows of every column costs)
    read = [c for c in ("model", "condition", "item_id", "parsed_answers", "raw_text", "parse_error") if c in answers]
    d = answers if known.all() else answers.iloc[np.flatnonzero(known)]
    d = d.reset_index(drop=True)[read]
    position = position[known]
    fmt = (items["type"].to_numpy(dtype=object) if "type" in items else np.full(len(items), None))[position]
    column = (items[by].to_numpy(dtype=object) if by in items else np.full(len(items), None))[position]
    status = np.empty(len(d), dtype=object)
    chosen = np.empty(len(d), dtype=object)
    for name in pd.unique(fmt):
        rows = np.flatnonzero(fmt == name)
        reader = _reader(name)
        sub = d.iloc[rows]
        s, c = reader(sub, options) if reader is not None else _generic_status(sub, keys)
        status[rows], chosen[rows] = s.to_numpy(dtype=object), c.to_numpy(dtype=object)
    out = pd.DataFrame({"model": d["model"], "item_id": d["item_id"], "column": column, "status": status,
                        "chosen": chosen})
    if "condition" in d:  # examinees may be model x condition pairs (IRT person fit)
        out.insert(1, "condition", d["condition"].to_numpy())
    return out


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


def invalid_by_model(statuses: pd.DataFrame) -> pd.DataFrame:
    """Invalid answers per model: the counts behind the warnings and the IRT fit's leave-out rule.

    ``statuses``: `answer_statuses` rows, or counts of them (a column ``n``: how many answers a row
    stands for; `views.invalid_answers` classifies each distinct answer once). Columns: model,
    n_answers, n_refused, n_unparseable, n_not_an_option, n_invalid, invalid_rate, warning (above
    `INVALID_WARN_ABOVE`), irt_left_out (above `IRT_LEAVE_OUT_ABOVE`), sentence ("n of N answers
    name no option or do not parse").
    Models with a warning come first, the worst first.
    """
    columns = ["model", "n_answers", "n_refused", "n_unparseable", "n_not_an_option", "n_invalid", "invalid_rate",
               "warning", "irt_left_out", "sentence"]
    if statuses.empty:
        return finish(pd.DataFrame(columns=columns), 0, rule=INVALID_RULE, words=INVALID_WORDS)
    weight = statuses["n"].to_numpy(dtype=np.int64) if "n" in statuses else np.ones(len(statuses), dtype=np.int64)
    flags = {name: np.where(statuses["status"] == status, weight, 0) for name, status in
             (("n_refused", REFUSED), ("n_unparseable", UNPARSEABLE), ("n_not_an_option", NOT_AN_OPTION))}
    out = statuses[["model"]].assign(n_answers=weight, **flags).groupby("model", sort=False).agg(
        n_answers=("n_answers", "sum"), n_refused=("n_refused", "sum"), n_unparseable=("n_unparseable", "sum"),
        n_not_an_option=("n_not_an_option", "sum")).reset_index()
    out["n_invalid"] = out["n_refused"] + out["n_unparseable"] + out["n_not_an_option"]
    out["invalid_rate"] = out["n_invalid"] / out["n_answers"]
    out["warning"] = out["invalid_rate"] > INVALID_WARN_ABOVE
    out["irt_left_out"] = out["invalid_rate"] > IRT_LEAVE_OUT_ABOVE
    out["sentence"] = [_invalid_sentence(r) for r in out.itertuples()]
    out = out.sort_values(["warning", "invalid_rate", "model"], ascending=[False, False, True], kind="stable")
    return finish(out[columns].reset_index(drop=True), 0, rule=INVALID_RULE, words=INVALID_WORDS)


def _invalid_sentence(row) -> str:
    parts = [f"{n} {words}" for n, words in ((row.n_not_an_option, "name no option"),
                                             (row.n_unparseable, "do not parse"), (row.n_refused, "refuse"))
             if n]
    return (f"{row.model}: {row.n_invalid} of {row.n_answers} answers name no option, do not parse or refuse "
            f"({'; '.join([f'{row.invalid_rate:.0%}', *parts])})")


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


__all__ = ["ALL_MODELS", "ANSWER_READERS", "ANSWER_STATUSES", "INVALID_RULE", "INVALID_WARN_ABOVE",
           "INVALID_WORDS", "IRT_LEAVE_OUT_ABOVE", "answer_status", "answer_statuses", "distractor_choices",
           "invalid_by_model", "invalid_rates"]

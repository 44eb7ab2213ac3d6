"""Distractor analysis of option items: which wrong options attract whom.

Why: a wrong option that the strongest models agree on is either a trap worth studying or a key
error; an option nobody picks does no work; a wrong option chosen more often by stronger
examinees (positive point-biserial) behaves like a key. These flags feed the suspect-key queue.

Definitions (ShinyItemAnalysis vocabulary, examinees as in CTT):
- examinees are ranked by their mean score over the selected items; the upper and lower thirds
  are the top and bottom floor(n/3) (at least one each); the upper half is the top ceil(n/2);
- an option's share is the share of the examinees who answered the item that chose it (a
  multiple-answer item lets one examinee choose several; an unreadable answer chooses none);
- an option's point-biserial is the correlation between choosing it (0/1) and the examinee's
  mean score over the *other* items (corrected); distractors should be negative;
- non-functional: a wrong option chosen by under 5% of the examinees;
- consensus wrong: a wrong option chosen by at least half of the upper half.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from ..formats.common import selected_ids
from ..text import norm_id, norm_strict
from ..vocab import CONSENSUS_WRONG, DISTRACTOR_FLAGS, NON_FUNCTIONAL, POSITIVE_DISTRACTOR
from ._frame import prepare, sort_frame

#: A wrong option chosen by fewer than this share of examinees is non-functional.
NON_FUNCTIONAL_BELOW = 0.05
#: A wrong option chosen by at least this share of the upper half is a consensus-wrong option.
CONSENSUS_SHARE = 0.5

COLUMNS = ["item_id", "type", "option", "is_key", "n_examinees", "n_chose", "share", "share_upper", "share_lower",
           "r_pb", "flag", "flags", "item_p"]


def chosen_options(answers: object) -> list[str]:
    """The option ids a parsed answer selects (entries marked FALSE are not selections)."""
    if not isinstance(answers, list):
        return []
    entries = [e if isinstance(e, dict) else {"id": e} for e in answers if isinstance(e, dict | str)]
    return sorted(selected_ids(entries, norm_strict))


def option_keys(records: Iterable[tuple[str, Mapping]]) -> dict[str, tuple[list[str], set[str]]]:
    """item_id -> (option ids in order, key ids) for records with listed options."""
    out = {}
    for item_id, record in records:
        if not isinstance(record, Mapping):
            continue
        options = [norm_id(c.get("id")) for c in record.get("choices") or [] if isinstance(c, Mapping)]
        key = {norm_id(a.get("id")) for a in record.get("answers") or [] if isinstance(a, Mapping)} - {""}
        if options and key:
            out[str(item_id)] = ([o for o in options if o], key)
    return out


def option_texts(records: Iterable[tuple[str, Mapping]]) -> dict[tuple[str, str], str]:
    """(item_id, option id) -> the option's text, so a table lists "B" with what option B says."""
    out = {}
    for item_id, record in records:
        if isinstance(record, Mapping):
            for choice in record.get("choices") or []:
                if isinstance(choice, Mapping) and norm_id(choice.get("id")):
                    out[(str(item_id), norm_id(choice.get("id")))] = str(choice.get("text") or "")
    return out


def _corr(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3:
        return float("nan")
    sx, sy = x.std(), y.std()
    if sx <= 1e-12 or sy <= 1e-12:
        return float("nan")
    return float(((x - x.mean()) * (y - y.mean())).mean() / (sx * sy))


def distractor_analysis(scores: pd.DataFrame, choices: pd.DataFrame,
                        keys: Mapping[str, tuple[list[str], set[str]]]) -> pd.DataFrame:
    """One row per option item and option: shares overall / upper third / lower third, r_pb, flags.

    ``scores``: the long frame of the examinees (model x condition rows; every selected item
    counts towards the ranking); ``choices``: model, condition, item_id, answers (parsed);
    ``keys``: `option_keys` of the items. ``flag`` is the most important flag of an option
    (consensus_wrong, positive_distractor, non_functional), ``flags`` all of them. attrs:
    n_examinees, n_upper_third, n_upper_half.
    """
    d, dropped = prepare(scores, ["model", "condition", "item_id", "type", "score"])
    examinees = d[["model", "condition"]].drop_duplicates().reset_index(drop=True)
    n = len(examinees)
    totals = d.groupby(["model", "condition"], sort=False)["score"].agg(["sum", "count"])
    examinees = examinees.join(totals, on=["model", "condition"])
    examinees["mean"] = examinees["sum"] / examinees["count"]
    order = examinees.sort_values(["mean", "model", "condition"], ascending=[False, True, True], kind="stable").index
    third = max(1, n // 3)
    upper_half = math.ceil(n / 2)
    upper = set(order[:third])
    lower = set(order[-third:]) if n > 1 else set()
    top_half = set(order[:upper_half])
    eidx = {(m, c): i for i, (m, c) in enumerate(zip(examinees["model"], examinees["condition"]))}

    picked: dict[tuple[int, str], list[str]] = {}
    for m, c, item, answers in zip(choices["model"], choices["condition"], choices["item_id"], choices["answers"]):
        e = eidx.get((m, c))
        if e is not None:
            picked[(e, str(item))] = chosen_options(answers)

    rows = []
    option_items = d[d["item_id"].astype(str).isin(list(keys))]
    for item_id, group in option_items.groupby("item_id", sort=False):
        options, key = keys[str(item_id)]
        ex = np.array([eidx[(m, c)] for m, c in zip(group["model"], group["condition"])])
        own = group["score"].to_numpy(dtype=float)
        rest = (examinees["sum"].to_numpy()[ex] - own) / np.maximum(examinees["count"].to_numpy()[ex] - 1, 1)
        chose = {o: np.array([o in picked.get((e, str(item_id)), []) for e in ex], dtype=float) for o in options}
        in_upper = np.array([e in upper for e in ex])
        in_lower = np.array([e in lower for e in ex])
        in_half = np.array([e in top_half for e in ex])
        for option in options:
            x = chose[option]
            is_key = option in key
            share = float(x.mean()) if len(x) else float("nan")
            r = _corr(x, rest)
            flags = []
            if not is_key:
                if in_half.any() and x[in_half].sum() >= math.ceil(CONSENSUS_SHARE * in_half.sum()) and x[in_half].sum() > 0:
                    flags.append(CONSENSUS_WRONG)
                if not math.isnan(r) and r > 0:
                    flags.append(POSITIVE_DISTRACTOR)
                if share < NON_FUNCTIONAL_BELOW:
                    flags.append(NON_FUNCTIONAL)
            flags.sort(key=list(DISTRACTOR_FLAGS).index)
            rows.append({"item_id": str(item_id), "type": group["type"].iloc[0], "option": option, "is_key": is_key,
                         "n_examinees": len(ex), "n_chose": int(x.sum()), "share": share,
                         "share_upper": float(x[in_upper].mean()) if in_upper.any() else float("nan"),
                         "share_lower": float(x[in_lower].mean()) if in_lower.any() else float("nan"),
                         "r_pb": r, "flag": flags[0] if flags else None, "flags": ", ".join(flags),
                         "item_p": float(own.mean())})
    out = pd.DataFrame(rows, columns=COLUMNS)
    out = sort_frame(out, ["type"]) if len(out) else out
    out.attrs.update(n_dropped=int(dropped), n_examinees=n, n_upper_third=third, n_upper_half=upper_half)
    return out


def consensus_wrong_items(table: pd.DataFrame) -> pd.DataFrame:
    """Items with a consensus-wrong option: item_id, option, share_upper_half detail (for the queue)."""
    hit = table[table["flags"].str.contains(CONSENSUS_WRONG, regex=False, na=False)]
    return hit[["item_id", "type", "option", "n_chose", "n_examinees", "share", "share_upper", "r_pb"]].reset_index(
        drop=True)


__all__ = ["COLUMNS", "CONSENSUS_SHARE", "NON_FUNCTIONAL_BELOW", "chosen_options", "consensus_wrong_items",
           "distractor_analysis", "option_keys"]

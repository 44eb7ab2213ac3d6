"""Views of the failure explorer (the Item inspector page): the filtered item list, the model x
condition matrix, the item card, both profiles' marks of one response, and two models compared.

Loading and keying only: the counts come from `analysis.explorer`, the words from `display`.
Every function here is also a `show` view, so the CLI prints what the page draws.
"""
from __future__ import annotations

import logging

import pandas as pd

from .. import analysis, display
from ..errors import UserError
from ..selection import Selection
from ..vocab import PROFILES
from ._base import EmptySelection, Source, baseline_models, cached, items, selected_scores
from .items import item_list

logger = logging.getLogger(__name__)

_FLAG_COLUMNS = ["n_wrong_with_justification", "n_profile_changes", "baselines_right", "baseline_only_right"]


def _with_baselines(src: Source, sel: Selection) -> Selection:
    """The selection widened to the baseline models too (read as references, even when the user
    picked some models: a picker never offers baselines)."""
    extra = tuple(b for b in baseline_models(src, sel.dataset) if b not in sel.models)
    return sel.with_(baselines=True, models=(*sel.models, *extra) if sel.models else ())


def _both_conditions(src: Source, sel: Selection) -> pd.DataFrame | None:
    try:
        return selected_scores(src, sel, all_conditions=True)
    except EmptySelection:
        return None


@cached()
def item_flags(src: Source, sel: Selection, profiles: bool = True) -> pd.DataFrame:
    """Per item: models right, wrong only with justification, score changes between profiles, baselines right.

    Counts over the selected models; right means full credit in the selected profile and condition,
    except `n_wrong_with_justification` (right in default, not in motivation) and
    `n_profile_changes` (models whose strict and paper scores differ in the selected condition;
    ``profiles=False`` skips it, and the second profile's scores, and counts 0). Baselines are
    counted apart (`baselines_right`) unless the selection counts them as examinees.
    """
    wanted = tuple(dict.fromkeys((*PROFILES, sel.profile))) if profiles else (sel.profile,)
    with_baselines = _with_baselines(src, sel)  # read them: "only a baseline is right" needs their answers
    by_profile = {p: _both_conditions(src, with_baselines.with_(profile=p)) for p in wanted}
    if by_profile[sel.profile] is None:
        raise EmptySelection("No model has answered the items of this selection yet.")
    usable = {p: f for p, f in by_profile.items() if f is not None}
    return analysis.item_flags(usable, sel.profile, sel.condition, baseline_models(src, sel.dataset),
                               count_baselines=sel.baselines)


@cached()
def explorer_items(src: Source, sel: Selection, filter: str = analysis.EVERY_ITEM, search: str = "") -> pd.DataFrame:
    """The inspector's item list with the filter counts, kept by a quick filter and a search (options: filter, search).

    Filters: see `analysis.ITEM_FILTERS` (`show --list` names them). Items nobody has answered are
    listed (their counts are 0).
    """
    if filter not in analysis.ITEM_FILTERS:
        raise UserError(f"unknown filter {filter!r}; use one of {', '.join(analysis.ITEM_FILTERS)}")
    table = item_list(src, sel)
    try:  # the other profile's scores are read only for the filter that compares the profiles
        flags = item_flags(src, sel, profiles=filter == analysis.PROFILE_CHANGE)[["item_id", *_FLAG_COLUMNS]]
    except EmptySelection:
        flags = pd.DataFrame(columns=["item_id", *_FLAG_COLUMNS])
    table = table.merge(flags, on="item_id", how="left")
    for column in _FLAG_COLUMNS[:-1]:
        table[column] = table[column].fillna(0).astype(int)
    table["baseline_only_right"] = table["baseline_only_right"].astype("boolean").fillna(False).astype(bool)
    return analysis.filter_items(table, filter, search).reset_index(drop=True)


@cached()
def failure_matrix(src: Source, sel: Selection, filter: str = analysis.EVERY_ITEM, search: str = "") -> pd.DataFrame:
    """Right / partial / wrong for every item x model x condition of the explorer's list (options: filter, search).

    Both conditions, the selected profile and models; right = score 1, partial = between, wrong = 0.
    Baseline models are marked too (as references), whatever the selection's baselines switch.
    """
    listed = explorer_items(src, sel, filter=filter, search=search)["item_id"]
    frame = _both_conditions(src, _with_baselines(src, sel))
    if frame is None:
        return pd.DataFrame(columns=["item_id", "model", "condition", "score", "correct", "state"])
    return analysis.failure_matrix(frame, list(listed))


def _record(src: Source, dataset: str, item_id: str) -> dict:
    found = items(src, dataset)
    row = found[found["item_id"] == item_id]
    if row.empty:
        raise UserError(f"dataset {dataset!r} has no item {item_id!r}")
    record = row.iloc[0]["record"]
    return record if isinstance(record, dict) else {}


def item_card(src: Source, sel: Selection, item: str = "") -> pd.DataFrame:
    """The item card's rows (option item): element, text and the right answer in the format's words."""
    if not item:
        raise UserError("Choose an item (option item=<id>).")
    shown = display.card(_record(src, sel.dataset, item))
    return pd.DataFrame(shown["rows"], columns=["element", "text", "gold"])


@cached(maxsize=4)
def latest_responses(src: Source, dataset: str) -> pd.DataFrame:
    """The response behind each score of a dataset (latest, first repetition), both profiles' details."""
    from ..store import scores as store_scores

    frame = store_scores.load_responses(src.store, dataset, None)
    keep = frame["is_latest"].astype(bool) & (frame["repetition"].fillna(0) == 0)
    return frame[keep].reset_index(drop=True)


def answer_marks(src: Source, sel: Selection, item: str = "", model: str = "", condition: str = "") -> pd.DataFrame:
    """Both profiles side by side for one response (options item, model, condition): element, expected, given, marks."""
    if not item or not model:
        raise UserError("Choose a response (options item=<id>, model=<display name>[, condition=...]).")
    from ..store import scores as store_scores

    responses = store_scores.load_responses(src.store, sel.dataset, item)
    responses = responses[responses["is_latest"].astype(bool) & (responses["model"] == model)
                          & (responses["condition"] == (condition or sel.condition))]
    if responses.empty:
        raise EmptySelection(f"{model} has no answer to item {item} in condition {condition or sel.condition}.")
    row = responses.iloc[0]
    return display.profile_marks({p: row.get(f"{p}_details") for p in PROFILES}, _record(src, sel.dataset, item))


@cached()
def model_comparison(src: Source, sel: Selection, a: str = "", b: str = "", only: str = "differ") -> pd.DataFrame:
    """Items where models A and B differ (options a, b, only), with both answers and justifications side by side.

    Selected condition and profile; ``only`` is one of `analysis.COMPARE_FILTERS` (differ,
    a_right_b_wrong, b_right_a_wrong). Attrs: the comparison summary over every item both answered (counts, exact McNemar p).
    """
    if not a or not b or a == b:
        raise UserError("Choose two different models A and B (options a=<display name>, b=<display name>).")
    if only not in analysis.COMPARE_FILTERS:
        raise UserError(f"unknown comparison filter {only!r}; use one of {', '.join(analysis.COMPARE_FILTERS)}")
    frame = selected_scores(src, sel.with_(models=(a, b), baselines=True))  # a baseline may be A or B
    compared = analysis.compare_models(frame, a, b)
    if compared.empty:
        raise EmptySelection(f"{a} and {b} have no item in common in this selection.")
    summary = analysis.comparison_summary(compared)
    shown = analysis.filter_comparison(compared, only).reset_index(drop=True)
    answers = latest_responses(src, sel.dataset)
    answers = answers[answers["condition"] == sel.condition].set_index(["item_id", "model"])
    records = dict(zip(items(src, sel.dataset)["item_id"], items(src, sel.dataset)["record"]))
    for side, name in (("a", a), ("b", b)):
        texts, reasons, raws = [], [], []
        for item_id in shown["item_id"]:
            key = (item_id, name)
            row = answers.loc[key] if key in answers.index else None
            if isinstance(row, pd.DataFrame):
                row = row.iloc[0]
            record = records.get(item_id) or {}
            texts.append(display.answer_summary(row[f"{sel.profile}_details"], record) if row is not None else "")
            reasons.append((row["motivation"] or "") if row is not None else "")
            raws.append((row["raw_text"] or "") if row is not None else "")
        shown[f"answer_{side}"] = texts
        shown[f"justification_{side}"] = reasons
        shown[f"raw_{side}"] = raws
    shown["gold"] = [display.card(records.get(i) or {})["gold"] for i in shown["item_id"]]
    shown.attrs.update(summary=summary, model_a=a, model_b=b, only=only)
    return shown

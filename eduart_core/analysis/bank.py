"""Calibrating an item bank: which items enter it, and the parameters they are frozen with.

Why a bank: adaptive testing asks items whose parameters are known in advance, on one scale that
does not move when more answers arrive. The bank is made from one IRT fit of a selection's
answers, in two steps a psychometrician would expect:

1. the selection is fitted (the same fit the IRT views show) and each item is sorted: an item
   answered by fewer than `MIN_ANSWERS` examinees ("too_few_answers"), an item every examinee got
   right or every examinee got wrong ("no_variance": it carries no information), and an item whose
   item fit is flagged underfit by `analysis.irt_fit.item_fit` ("misfit") are left out, each with
   its reason in words; overfit items stay (answers more predictable than the model expects are no
   threat to the scale);
2. the kept items are fitted again without the left-out ones (one pass, not repeated: the scale is
   the one of the usable items, and a second round of flags would chase noise on a small panel).
   The refit's item parameters are the bank.

A bank with fewer than `MIN_BANK_ITEMS` usable items is refused: an adaptive run on it could not
stop at a useful standard error before it ran out of items.
"""
from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from ..bankdraft import BANK_ITEM_COLUMNS, MIN_BANK_ITEMS, BankDraft
from ..errors import UserError
from .irt import IrtFit
from .irt_fit import UNDERFIT, item_fit

#: Fewest examinees who answered an item for its parameters to enter a bank.
MIN_ANSWERS = 5
MISFIT, TOO_FEW, NO_VARIANCE = "misfit", "too_few_answers", "no_variance"
LEFT_OUT_REASONS: dict[str, str] = {
    MISFIT: "underfit in the first fit (item fit flag)",
    TOO_FEW: f"answered by fewer than {MIN_ANSWERS} examinees",
    NO_VARIANCE: "every examinee got it right, or every examinee got it wrong: it carries no information",
}
METHOD = (f"one IRT fit of the selection's answers; items answered by fewer than {MIN_ANSWERS} examinees, items "
          "without variance and items flagged underfit by the item fit left out; the remaining items fitted "
          "again (one pass) and their parameters frozen")

_PARAMETERS = ["family", "n_levels", "difficulty", "difficulty_se", "discrimination", "discrimination_se",
               "thresholds", "threshold_se", "threshold_levels", "at_bound", "disordered"]


def _left_out(first: IrtFit, flags: pd.DataFrame) -> tuple[dict[str, str], dict[str, str]]:
    """(item -> left_out code, item -> reason in words) from the first fit and its item fit."""
    codes: dict[str, str] = {}
    words: dict[str, str] = {}
    for row in first.items.itertuples():
        item = str(row.item_id)
        if int(row.n_examinees) < MIN_ANSWERS or row.status == "too_few":
            codes[item] = TOO_FEW
            words[item] = f"answered by {int(row.n_examinees)} examinees, fewer than {MIN_ANSWERS}"
        elif row.status in ("all_right", "all_wrong"):
            codes[item] = NO_VARIANCE
            words[item] = ("every examinee got it right" if row.status == "all_right"
                           else "every examinee got it wrong") + ": it carries no information"
    for row in flags.itertuples():
        item = str(row.item_id)
        if row.flag == UNDERFIT and item not in codes:
            codes[item] = MISFIT
            words[item] = str(row.reason)
    return codes, words


def calibrate(rows: pd.DataFrame, first: IrtFit, refit: Callable[[pd.DataFrame], IrtFit]) -> BankDraft:
    """The bank of a selection: ``rows`` its long score frame, ``first`` the fit of those rows,
    ``refit`` the same model fitted to a frame (called once, on the usable items' rows).

    Raises UserError (one line) when fewer than `MIN_BANK_ITEMS` items are usable.
    """
    flags = item_fit(first)
    codes, words = _left_out(first, flags)
    all_items = [str(i) for i in first.items["item_id"]]
    usable = [i for i in all_items if i not in codes]
    if len(usable) < MIN_BANK_ITEMS:
        counts = ", ".join(f"{sum(c == code for c in codes.values())} {code.replace('_', ' ')}"
                           for code in (MISFIT, TOO_FEW, NO_VARIANCE))
        raise UserError(f"a bank needs at least {MIN_BANK_ITEMS} usable items; this selection has {len(usable)} of "
                        f"{len(all_items)} (left out: {counts}); nothing was stored")
    final = refit(rows[rows["item_id"].astype(str).isin(set(usable))])
    kept = final.items.assign(item_id=final.items["item_id"].astype(str)).set_index("item_id")
    for item in usable:  # the refit could leave an item without information (not expected: its answers are unchanged)
        status = kept.loc[item, "status"] if item in kept.index else "too_few"
        if status != "fitted":
            codes[item] = NO_VARIANCE if status in ("all_right", "all_wrong") else TOO_FEW
            words[item] = f"left without information in the refit ({status})"
    fit_stats = flags.assign(item_id=flags["item_id"].astype(str)).set_index("item_id")[["infit", "outfit"]]
    table = first.items.assign(item_id=first.items["item_id"].astype(str))[["item_id", "type", "n_examinees", "p"]]
    table = table.join(fit_stats, on="item_id")
    table["in_bank"] = ~table["item_id"].isin(set(codes))
    table["left_out"] = pd.Series([codes.get(i) for i in table["item_id"]], index=table.index, dtype=object)
    table["reason"] = pd.Series([words.get(i) for i in table["item_id"]], index=table.index, dtype=object)
    params = kept[_PARAMETERS]
    for column in _PARAMETERS:
        values = [params.at[i, column] if inside else None for i, inside in zip(table["item_id"], table["in_bank"])]
        table[column] = pd.Series(values, index=table.index, dtype=object)
    for column in ("difficulty", "difficulty_se", "discrimination", "discrimination_se"):
        table[column] = pd.to_numeric(table[column], errors="coerce").astype(float)
    table = table.sort_values(["in_bank", "item_id"], ascending=[False, True], kind="stable")
    examinees = final.abilities.loc[final.abilities["n_items"] > 0, "examinee"].astype(str).tolist()
    return BankDraft(model=final.model, items=table[BANK_ITEM_COLUMNS].reset_index(drop=True), examinees=examinees,
                     n_examinees=int(final.n_examinees), log_likelihood=float(final.log_likelihood),
                     latent_sd=float(final.latent_sd), converged=bool(final.converged), se_method=final.se_method,
                     rule=_rule(final), method=METHOD, notes=list(final.notes))


def _rule(fit: IrtFit) -> str:
    if fit.level_rules:
        return fit.rule + "; " + "; ".join(f"{k}: {v}" for k, v in sorted(fit.level_rules.items()))
    return fit.rule


__all__ = ["BANK_ITEM_COLUMNS", "BankDraft", "LEFT_OUT_REASONS", "METHOD", "MIN_ANSWERS", "MIN_BANK_ITEMS",
           "MISFIT", "NO_VARIANCE", "TOO_FEW", "calibrate"]

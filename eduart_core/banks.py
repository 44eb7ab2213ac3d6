"""Freezing an item bank: a selection's answers -> an IRT calibration -> a new bank version in the store.

Why here (not in a view or the store): it reads through the views (the same score frame and the same
first fit the IRT views show, so a bank's left-out misfits are the item-fit view's underfit flags),
calibrates with `analysis.bank`, checks the permission and writes with `store.banks`.

Examinees: one per model, in the selection's one prompt condition (stated in the bank). Counting a
model once per condition would enter two nearly identical answer sets and make item SEs look
about 30% smaller than they are; a bank is about items, not about the conditions.
"""
from __future__ import annotations

from dataclasses import dataclass

from .analysis.bank import BankDraft, calibrate
from .analysis.irt_pcm import fit_model
from .errors import UserError
from .selection import Selection
from .store import Store
from .team import FREEZE_BANK, Identity, as_identity
from .vocab import EXAMINEES_MODELS, IRT_AUTO, IRT_INVALID_EXCLUDE


@dataclass(frozen=True)
class FrozenBank:
    """What `freeze_bank` stored: the dataset, the version number and the calibration."""

    dataset: str
    version: int
    draft: BankDraft


def freeze_bank(store: Store, sel: Selection, model: str, who: Identity) -> FrozenBank:
    """Fit ``model`` (``auto``: the IRT views' default for the dataset) to the selection's answers and
    store the usable items' parameters as the dataset's next bank version.

    Refused with one line, nothing stored: an identity without `team.FREEZE_BANK`, an unknown dataset,
    an aggregate-only or empty selection, fewer than `analysis.bank.MIN_BANK_ITEMS` usable items.
    """
    from . import views
    from .links import not_found
    from .store import items as store_items
    from .store.banks import save_bank
    from .views import irt as irt_views

    identity = as_identity(who)
    identity.require(FREEZE_BANK)
    src = views.Source.of(store)
    names = list(views.datasets(src)["dataset"])
    if sel.dataset not in names:
        raise UserError(not_found("dataset", sel.dataset, where=str(store.path), available=names))
    resolved = irt_views.resolve_model(src, sel, model)
    first = irt_views.irt_fit(src, sel, resolved, EXAMINEES_MODELS, IRT_INVALID_EXCLUDE)
    rows = views.selected_scores(src, sel)
    left = set(irt_views.mostly_invalid(src, sel, EXAMINEES_MODELS)["model"])
    rows = rows[~rows["model"].isin(left)]
    parts = irt_views.score_parts_of(src, sel.dataset)
    draft = calibrate(rows, first, lambda frame: fit_model(frame, resolved, parts))
    catalogue = store_items.load_items(store, sel.dataset)
    versions = {str(i): int(v) for i, v in zip(catalogue["item_id"], catalogue["version"])}
    version = save_bank(store, sel.dataset, draft, sel.to_query(full=True), [sel.condition], versions,
                        identity.columns())
    return FrozenBank(sel.dataset, version, draft)


__all__ = ["FrozenBank", "IRT_AUTO", "freeze_bank"]

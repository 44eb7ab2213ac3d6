"""The shape of an item bank between its fit and the store: what `analysis.bank` drafts and `store.banks` freezes.

Why its own module: the analysis room makes a draft and the store writes it, and the store imports
nothing from the rooms above it; both read the draft's shape here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

#: Fewest usable items a bank is frozen with.
MIN_BANK_ITEMS = 20
#: The per-item columns of a bank (in the bank, or left out with the reason).
BANK_ITEM_COLUMNS = ["item_id", "type", "in_bank", "left_out", "reason", "n_examinees", "p", "family", "n_levels",
                     "difficulty", "difficulty_se", "discrimination", "discrimination_se", "thresholds",
                     "threshold_se", "threshold_levels", "at_bound", "disordered", "infit", "outfit"]


@dataclass
class BankDraft:
    """A bank before it is stored: its items (in and left out) and the facts of its fit."""

    model: str
    items: pd.DataFrame
    examinees: list[str]
    n_examinees: int
    log_likelihood: float
    latent_sd: float
    converged: bool
    se_method: str
    rule: str
    method: str
    notes: list[str] = field(default_factory=list)

    @property
    def n_items(self) -> int:
        return int(self.items["in_bank"].sum())

"""Views of the item banks (`python -m eduart_core bank`): one version's items, and the versions.

A bank is frozen: these views read its stored rows and never refit. Each row of `bank` carries its
version's header facts as columns (`HEADER_COLUMNS`: version, model, panel size, date), so a row read alone says which
calibration it belongs to; ``attrs["caption"]`` says the same in words (`show bank --caption`).
"""
from __future__ import annotations

import pandas as pd

from ..analysis.bank import MISFIT, NO_VARIANCE, TOO_FEW
from ..selection import Selection
from ..vocab import IRT_SHORT_NAMES
from ._base import Source

#: The header facts every row of `bank` carries.
HEADER_COLUMNS = ("bank_version", "irt_model", "panel_size", "fitted_at")


def _when(value: object) -> str:
    return pd.Timestamp(value).strftime("%Y-%m-%d %H:%M") if value is not None and not pd.isna(value) else "?"


def bank(src: Source, sel: Selection, version: int = 0) -> pd.DataFrame:
    """One item bank version of the dataset (option version=N; 0: the latest): each item's frozen parameters, or why it was left out."""
    from ..store.banks import load_bank

    header, frame = load_bank(src.store, sel.dataset, version or None)
    frame = frame.copy()
    frame.insert(0, "bank_version", int(header["version"]))
    frame.insert(1, "irt_model", str(header["irt_model"]))
    frame["n_examinees"] = frame["n_examinees"].astype("Int64")
    frame["panel_size"] = int(header["n_examinees"])  # the examinees every parameter rests on, as in the IRT views
    frame["fitted_at"] = header["fitted_at"]
    counts = frame["left_out"].value_counts()
    left = ", ".join(f"{int(counts.get(code, 0))} {code.replace('_', ' ')}" for code in (MISFIT, TOO_FEW, NO_VARIANCE))
    conditions = ", ".join(header["conditions"] or [])
    frame.attrs.update({k: (v if not isinstance(v, pd.Timestamp) else v.isoformat()) for k, v in header.items()})
    frame.attrs["caption"] = (
        f"Item bank version {int(header['version'])} of {sel.dataset}: {int(header['n_items'])} items with "
        f"{IRT_SHORT_NAMES.get(str(header['irt_model']), header['irt_model'])} parameters, frozen on "
        f"{_when(header['fitted_at'])} by {header['actor_name'] or 'an unrecorded actor'} from the answers of "
        f"{int(header['n_examinees'])} examinees (condition {conditions}; log-likelihood "
        f"{float(header['log_likelihood']):.2f}); left out: {left}.")
    return frame


def banks(src: Source, sel: Selection) -> pd.DataFrame:
    """The item bank versions of the dataset, oldest first: model, items in and left out, examinees, condition, log-likelihood, date, who."""
    from ..store.banks import load_bank_versions

    frame = load_bank_versions(src.store, sel.dataset)
    if frame.empty:
        frame.attrs["caption"] = f"{sel.dataset} has no item bank yet."
    else:
        latest = int(frame["version"].max())
        frame.attrs["caption"] = (f"{len(frame)} item bank version(s) of {sel.dataset}; the latest is version {latest}. "
                                  "A version is never changed: refitting makes the next one.")
    return frame

"""Item banks in the store: numbered, frozen versions of calibrated item parameters per dataset.

Why append-only: an adaptive run reports abilities on one bank version's scale; if refitting changed
that version's rows, the run's abilities could no longer be recomputed. So a version is inserted
once, in one transaction (its header and every item row, or nothing), and never updated: a refit
is the next version. The permission is checked by the caller (`eduart_core.banks`); the acting
identity's columns are recorded on the version.
"""
from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from ..bankdraft import BANK_ITEM_COLUMNS, MIN_BANK_ITEMS, BankDraft
from ..errors import UserError
from .connection import Connection
from .core import Store

VERSION_COLUMNS = ["version", "irt_model", "n_items", "n_left_out", "n_examinees", "conditions", "examinees",
                   "selection", "log_likelihood", "latent_sd", "converged", "se_method", "rule", "method",
                   "fitted_at", "actor_subject", "actor_provider", "actor_name"]
_JSON_VERSION = ("conditions", "examinees", "selection")
_JSON_ITEM = ("thresholds", "threshold_se", "threshold_levels")


def _number(value: Any) -> float | None:
    """A float for the store (NaN and None are NULL)."""
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _text(value: object) -> str | None:
    """Text for the store (a missing value, None or NaN, is NULL)."""
    return value if isinstance(value, str) else None


def _json_list(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return json.dumps([v if isinstance(v, str) else _number(v) for v in value])


def save_bank(store: Store, dataset: str, draft: BankDraft, selection: dict, conditions: list[str],
              item_versions: dict[str, int], actor: dict) -> int:
    """Store ``draft`` as the dataset's next bank version and return its number.

    ``selection``: the selection's query-string form; ``item_versions``: item -> the version
    answered; ``actor``: the identity columns of who froze it. Refused (one line, nothing stored)
    for a draft with fewer than the items in the bank (`bankdraft.MIN_BANK_ITEMS`) or an unknown dataset.
    """
    if draft.n_items < MIN_BANK_ITEMS:
        raise UserError(f"a bank needs at least {MIN_BANK_ITEMS} usable items; this one has {draft.n_items}; "
                        "nothing was stored")
    with store.transaction() as con:
        con.lock(f"bank_versions:{dataset}")  # two banks frozen at once get two numbers
        if not con.execute("SELECT 1 FROM datasets WHERE dataset = ?", [dataset]).fetchone():
            raise UserError(f"unknown dataset {dataset!r}; nothing was stored")
        last = con.execute("SELECT max(version) FROM bank_versions WHERE dataset = ?", [dataset]).fetchone()[0]
        version = int(last or 0) + 1
        con.execute(
            "INSERT INTO bank_versions (dataset, version, irt_model, selection, conditions, examinees, n_examinees, "
            "n_items, n_left_out, log_likelihood, latent_sd, converged, se_method, rule, method, actor_subject, "
            "actor_provider, actor_name) VALUES (?, ?, ?, CAST(? AS JSON), CAST(? AS JSON), CAST(? AS JSON), ?, ?, ?, "
            "?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [dataset, version, draft.model, json.dumps(selection), json.dumps(list(conditions)),
             json.dumps(list(draft.examinees)), int(draft.n_examinees), draft.n_items,
             int(len(draft.items) - draft.n_items), _number(draft.log_likelihood), _number(draft.latent_sd),
             bool(draft.converged), draft.se_method, draft.rule, draft.method, actor.get("actor_subject"),
             actor.get("actor_provider"), actor.get("actor_name")])
        con.executemany(
            "INSERT INTO bank_items (dataset, version, item_id, item_version, type, in_bank, left_out, reason, "
            "n_examinees, p, family, n_levels, difficulty, difficulty_se, discrimination, discrimination_se, "
            "thresholds, threshold_se, threshold_levels, at_bound, disordered, infit, outfit) VALUES (?, ?, ?, ?, ?, "
            "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS JSON), CAST(? AS JSON), CAST(? AS JSON), ?, ?, ?, ?)",
            [[dataset, version, str(r["item_id"]), item_versions.get(str(r["item_id"])), _text(r["type"]),
              bool(r["in_bank"]), _text(r["left_out"]), _text(r["reason"]), int(r["n_examinees"]), _number(r["p"]),
              _text(r["family"]) if r["in_bank"] else None, int(r["n_levels"]) if r["in_bank"] else None,
              _number(r["difficulty"]), _number(r["difficulty_se"]), _number(r["discrimination"]),
              _number(r["discrimination_se"]), _json_list(r["thresholds"]), _json_list(r["threshold_se"]),
              _json_list(r["threshold_levels"]), bool(r["at_bound"]) if r["in_bank"] else None,
              bool(r["disordered"]) if r["in_bank"] else None, _number(r["infit"]), _number(r["outfit"])]
             for r in draft.items.to_dict("records")])
    return version


def _decoded(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    for column in columns:
        frame[column] = pd.Series([json.loads(v) if isinstance(v, str) else None for v in frame[column]],
                                  dtype=object, index=frame.index)
    return frame


def load_bank_versions(store: Store, dataset: str) -> pd.DataFrame:
    """Every bank version of a dataset, oldest first (JSON columns decoded)."""
    with store.connect(read_only=True) as con:
        return _versions_con(con, dataset)


def _versions_con(con: Connection, dataset: str) -> pd.DataFrame:
    if not con.has_table("bank_versions"):  # a store opened read-only before migration 18
        return pd.DataFrame(columns=VERSION_COLUMNS)
    casts = {c: f"CAST({c} AS TEXT) AS {c}" for c in _JSON_VERSION}
    frame = con.frame(f"SELECT {', '.join(casts.get(c, c) for c in VERSION_COLUMNS)} FROM bank_versions "
                      "WHERE dataset = ? ORDER BY version", [dataset])
    return _decoded(frame, _JSON_VERSION)


def load_bank(store: Store, dataset: str, version: int | None = None) -> tuple[pd.Series, pd.DataFrame]:
    """(header, items) of one bank version (``None``: the latest); one line for a dataset without
    banks or an unknown version."""
    with store.connect(read_only=True) as con:
        versions = _versions_con(con, dataset)
        if versions.empty:
            raise UserError(f"dataset {dataset!r} has no item bank yet; make one with `python -m eduart_core bank "
                            f"--dataset {dataset}`")
        number = int(versions["version"].max()) if version is None else int(version)
        if number not in set(versions["version"].astype(int)):
            known = ", ".join(str(int(v)) for v in versions["version"])
            raise UserError(f"dataset {dataset!r} has no bank version {number} (versions: {known})")
        casts = {c: f"CAST({c} AS TEXT) AS {c}" for c in _JSON_ITEM}
        items = con.frame(f"SELECT {', '.join(casts.get(c, c) for c in ['item_version', *BANK_ITEM_COLUMNS])} "
                          "FROM bank_items WHERE dataset = ? AND version = ? ORDER BY in_bank DESC, item_id",
                          [dataset, number])
    header = versions[versions["version"].astype(int) == number].iloc[0]
    return header, _decoded(items, _JSON_ITEM)


__all__ = ["VERSION_COLUMNS", "load_bank", "load_bank_versions", "save_bank"]

"""Format-specific statistics beyond the item score: numeric errors, per-part accuracy, chance.

Why separate functions: a counting item scored 0 can be off by one or off by ten, and a
three-part answer can miss one part or all three; the item score hides both. These read the
per-element `details` the scorers keep (one list per model x condition x item), so they need the
long frame plus a `details` column (`store.scores.load_scores(..., include_details=True)`).
Pure functions, DataFrame in, DataFrame out; every row says its n.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import UserError
from ..vocab import MULTI_PART_TYPE, NUMERIC_TYPE
from .intervals import wilson_interval

_KEYS = ["model", "condition"]
_EPS = 1e-9


def _detail_rows(df: pd.DataFrame, fmt: str) -> pd.DataFrame:
    missing = [c for c in (*_KEYS, "item_id", "type", "details") if c not in df.columns]
    if missing:
        raise UserError(f"details frame lacks column(s): {', '.join(missing)}")
    sub = df[df["type"] == fmt]
    rows = [{"model": r.model, "condition": r.condition, "item_id": r.item_id, **d}
            for r in sub.itertuples(index=False) for d in (r.details or []) if isinstance(d, dict)]
    return pd.DataFrame(rows)


def numeric_errors(df: pd.DataFrame) -> pd.DataFrame:
    """Per model and condition, over `numeric` items: how far off the numbers are.

    Columns: model, condition, n (answers), n_parsed (answers naming exactly one number),
    accuracy (share right within tolerance, over all answers), mae (mean absolute error over
    parsed answers), off_by_one_rate (share of parsed answers exactly 1 away from the gold value),
    exact_rate (share of parsed answers exactly equal).
    """
    columns = [*_KEYS, "n", "n_parsed", "accuracy", "mae", "off_by_one_rate", "exact_rate"]
    rows = _detail_rows(df, NUMERIC_TYPE)
    if rows.empty:
        return pd.DataFrame(columns=columns)
    rows["parsed"] = rows["abs_error"].notna()
    rows["abs_error"] = pd.to_numeric(rows["abs_error"], errors="coerce")
    out = []
    for (model, condition), g in rows.groupby(_KEYS, sort=True):
        parsed = g.loc[g["parsed"], "abs_error"].to_numpy(dtype=float)
        out.append({"model": model, "condition": condition, "n": len(g), "n_parsed": len(parsed),
                    "accuracy": float(g["right"].astype(bool).mean()),
                    "mae": float(parsed.mean()) if len(parsed) else np.nan,
                    "off_by_one_rate": float((np.abs(parsed - 1) < _EPS).mean()) if len(parsed) else np.nan,
                    "exact_rate": float((parsed < _EPS).mean()) if len(parsed) else np.nan})
    return pd.DataFrame(out, columns=columns)


def part_accuracy(df: pd.DataFrame, labels: dict[str, dict] | None = None) -> pd.DataFrame:
    """Per model, condition and part of `multi_part_choice` items: share of parts answered right.

    `labels` (item_id -> part id -> label, e.g. "lateral") groups parts by label across items;
    without it parts are grouped by id (A, B, ...). Columns: model, condition, part, n, n_right,
    accuracy, ci_low, ci_high (Wilson 95%, z = 1.96).
    """
    columns = [*_KEYS, "part", "n", "n_right", "accuracy", "ci_low", "ci_high"]
    rows = _detail_rows(df, MULTI_PART_TYPE)
    if rows.empty:
        return pd.DataFrame(columns=columns)
    labels = labels or {}
    rows["part"] = [labels.get(str(i), {}).get(str(e)) or str(e) for i, e in zip(rows["item_id"], rows["element"])]
    grouped = rows.groupby([*_KEYS, "part"], sort=True)["right"]
    out = grouped.agg(n="size", n_right=lambda s: int(s.astype(bool).sum())).reset_index()
    out["accuracy"] = out["n_right"] / out["n"]
    low, high = wilson_interval(out["accuracy"].to_numpy(), out["n"].to_numpy())
    out["ci_low"], out["ci_high"] = low, high
    return out[columns]


def chance_levels(items: pd.DataFrame) -> pd.DataFrame:
    """Per format: the mean chance level of its items (expected strict score of a random answer).

    `items` has `item_id`, `type` and `record` (as `store.items.load_items` returns). Formats
    without a defined chance level (free text) get NaN with n_defined 0.
    """
    from ..formats import find_format

    rows = []
    for record in items["record"]:
        fmt = find_format(record.get("type")) if isinstance(record, dict) else None
        rows.append({"type": record.get("type") if isinstance(record, dict) else None,
                     "chance": fmt.chance(record) if fmt is not None else None})
    frame = pd.DataFrame(rows, columns=["type", "chance"])
    if frame.empty:
        return pd.DataFrame(columns=["type", "n_items", "n_defined", "chance"])
    frame["chance"] = pd.to_numeric(frame["chance"], errors="coerce")
    out = frame.groupby("type", sort=False).agg(n_items=("chance", "size"), n_defined=("chance", "count"),
                                                chance=("chance", "mean")).reset_index()
    return out

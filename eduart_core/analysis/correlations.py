"""Rank correlations across models: between tasks (or dimensions), and with external benchmarks.

Why Spearman and pairwise-complete: these tables have a few dozen models at most and scores on
different scales (accuracy, similarity percentages, external leaderboards), so only the ranking is
comparable; a model missing from one column must not drop it from every other pair. Every cell
says how many models it rests on and its p value, because a rho from eight models means little.
"""
from __future__ import annotations

import re
import unicodedata
import warnings

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import UserError
from ._frame import finish

CORRELATION_COLUMNS = ["column_a", "column_b", "rho", "p", "n"]
EXTERNAL_COLUMNS = ["column", "benchmark", "rho", "p", "n", "models"]


def _spearman(x: np.ndarray, y: np.ndarray) -> tuple[float, float, int]:
    """rho, p and n over the models that have both values (NaN when fewer than 3 or a constant)."""
    keep = ~(np.isnan(x) | np.isnan(y))
    n = int(keep.sum())
    if n < 3 or np.unique(x[keep]).size < 2 or np.unique(y[keep]).size < 2:
        return float("nan"), float("nan"), n
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.spearmanr(x[keep], y[keep])
    return float(result.statistic), float(result.pvalue), n


def task_correlations(grid: pd.DataFrame) -> pd.DataFrame:
    """Spearman rho between every pair of columns of a model x column grid (diagonal included).

    Columns: column_a, column_b, rho, p, n (models with both scores). Pairwise-complete: a model
    without a score in one column still counts for the other pairs.
    """
    if grid.shape[1] < 2:
        raise UserError("a correlation between tasks needs at least two tasks or dimensions")
    values = {c: grid[c].to_numpy(dtype=float) for c in grid.columns}
    rows = []
    for a in grid.columns:
        for b in grid.columns:
            rho, p, n = _spearman(values[a], values[b])
            rows.append({"column_a": a, "column_b": b, "rho": rho, "p": p, "n": n})
    return finish(pd.DataFrame(rows, columns=CORRELATION_COLUMNS), 0, n_models=int(len(grid)))


def name_key(name: object) -> str:
    """How a model name is matched between files: accents, case, spaces and punctuation ignored."""
    text = unicodedata.normalize("NFKD", str(name or ""))
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    return re.sub(r"[\W_]+", "", text)


def external_correlations(grid: pd.DataFrame, external: pd.DataFrame, aliases: dict[str, str] | None = None
                          ) -> pd.DataFrame:
    """Spearman rho between each column of a model x column grid and each external benchmark.

    ``external``: model, benchmark, score. Models are matched by name (case, spaces, punctuation and
    accents ignored; ``aliases`` maps other names, e.g. model keys, to the grid's display names).
    Columns: column, benchmark, rho, p, n (models with both scores), models (their names, ';').
    attrs["unmatched"]: external model names that matched no model of the grid.
    """
    missing = [c for c in ("model", "benchmark", "score") if c not in external]
    if missing:
        raise UserError(f"external scores lack column(s): {', '.join(missing)}")
    if external.empty:
        raise UserError("no external benchmark scores imported yet (`import-external FILE.csv`)")
    lookup = {name_key(m): m for m in grid.index}
    for alias, target in (aliases or {}).items():
        if target in grid.index:
            lookup.setdefault(name_key(alias), target)
    matched = external.assign(grid_model=external["model"].map(lambda m: lookup.get(name_key(m))))
    unmatched = sorted(set(matched.loc[matched["grid_model"].isna(), "model"].astype(str)))
    matched = matched.dropna(subset=["grid_model"])
    wide = matched.pivot_table(index="grid_model", columns="benchmark", values="score", aggfunc="mean")
    wide = wide.reindex(grid.index)
    rows = []
    for column in grid.columns:
        x = grid[column].to_numpy(dtype=float)
        for bench in wide.columns:
            y = wide[bench].to_numpy(dtype=float)
            rho, p, n = _spearman(x, y)
            both = [m for m, a, b in zip(grid.index, x, y) if not (np.isnan(a) or np.isnan(b))]
            rows.append({"column": column, "benchmark": bench, "rho": rho, "p": p, "n": n, "models": "; ".join(both)})
    return finish(pd.DataFrame(rows, columns=EXTERNAL_COLUMNS), 0, unmatched=unmatched)

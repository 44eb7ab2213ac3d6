"""Scores per task or reasoning dimension (VQArt-Bench / MUSE style), with honest intervals.

Why a module of its own: those benchmarks report one number per model and task (or dimension)
plus an "overall" whose aggregation the papers rarely state. Here the overall is always computed
with a declared rule (micro over items, task-macro or dimension-macro) and the rule travels with
every row. Many questions share one picture, and answers to questions about the same picture are
not independent, so intervals are clustered by image: the Wilson interval is taken on the effective
number of items (n divided by the design effect of the clustering), never on the raw count.
Every column carries its chance level, and a model (or the median model) below it is flagged.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import UserError
from ..vocab import (
    AGGREGATIONS,
    AS_PRINTED_AGGREGATION,
    DIMENSION_COLUMN,
    DIMENSION_MACRO_AGGREGATION,
    MICRO_AGGREGATION,
    OVERALL_COLUMN,
    TASK_COLUMN,
    TASK_MACRO_AGGREGATION,
)
from ._frame import finish, prepare
from .intervals import Z95, wilson_interval

#: Columns of `dimension_scores` (also of `published_dimension_scores`).
DIMENSION_SCORE_COLUMNS = [
    "model", "column", "kind", "dimension", "n", "score", "ci_low", "ci_high", "interval", "n_clusters",
    "chance", "below_chance", "rank", "mark", "is_median", "aggregation",
]
MEDIAN_ROW = "Median of models"
BEST, SECOND = "best", "second"
#: Below chance means below it by more than the printing could hide (computed values: float noise).
_EPS = 1e-9


def _check_grouping(by: str) -> None:
    if by not in (TASK_COLUMN, DIMENSION_COLUMN):
        raise UserError(f"group by {by!r}? use {TASK_COLUMN} or {DIMENSION_COLUMN}")


def _cluster_variance(d: pd.DataFrame, keys: list[str], weight: str | None = None) -> pd.DataFrame:
    """Per group of ``keys``: G (clusters) and the cluster-robust variance of the (weighted) mean.

    ``d`` has the keys, `resid` (score minus its column mean) and `cluster`; with ``weight`` the
    estimator is sum(w * y) (weights summing to 1 per group), else the plain mean.
    """
    term = d["resid"] * (d[weight] if weight else 1.0)
    per_cluster = term.groupby([d[k] for k in keys] + [d["cluster"]], sort=False).sum()
    levels = list(range(len(keys)))
    sq = per_cluster.pow(2).groupby(level=levels, sort=False).sum()
    g = per_cluster.groupby(level=levels, sort=False).size()
    out = pd.DataFrame({"ss": sq, "G": g})
    if not weight:
        n = d.groupby(keys, sort=False).size()
        out["ss"] = out["ss"] / n.reindex(out.index).pow(2)
    out["var"] = np.where(out["G"] > 1, out["G"] / (out["G"] - 1) * out["ss"], np.nan)
    return out.reset_index()


def _effective_wilson(score: np.ndarray, n: np.ndarray, var: np.ndarray, clustered: np.ndarray):
    """Wilson 95% on the effective n = p(1-p) / clustered variance (never above n); plain n otherwise."""
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(clustered & (var > 0), score * (1 - score) / var, n)
    n_eff = np.where(np.isfinite(n_eff) & (n_eff > 0), np.minimum(n_eff, n), n)
    return wilson_interval(score, n_eff)


def _marks(frame: pd.DataFrame) -> pd.DataFrame:
    """Dense rank per column among models (ties share a rank and a mark): best = 1, second = 2."""
    models = ~frame["is_median"]
    rank = frame.loc[models].groupby("column", sort=False)["score"].rank(method="dense", ascending=False)
    frame["rank"] = pd.Series(np.nan, index=frame.index)
    frame.loc[models, "rank"] = rank
    frame["mark"] = np.select([frame["rank"] == 1, frame["rank"] == 2], [BEST, SECOND], "")
    return frame


def _median_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per column with the median model's score (the median is flagged like a model)."""
    g = frame.groupby(["column", "kind"], sort=False, dropna=False)
    med = g.agg(dimension=("dimension", "first"), score=("score", "median"), n=("n", "median"),
                chance=("chance", "first")).reset_index()
    med["model"] = MEDIAN_ROW
    med["is_median"] = True
    return med


def _flag_below(frame: pd.DataFrame, tolerance: pd.Series | float = _EPS) -> pd.DataFrame:
    frame["below_chance"] = (frame["chance"].notna() & (frame["score"] + tolerance < frame["chance"])).astype(bool)
    return frame


def dimension_scores(df: pd.DataFrame, *, by: str = DIMENSION_COLUMN, aggregation: str = MICRO_AGGREGATION,
                     order: list[str] | None = None) -> pd.DataFrame:
    """Score per model x task (or dimension) and an overall column aggregated by a declared rule.

    Input: the long score frame (model, item_id, score, ``by``) plus optional `cluster` (the image an
    item shows; items without one are their own cluster), `chance` (the item's chance level), and
    `task` / `dimension` (for task-macro / dimension-macro overalls). One condition is expected.
    Columns: `DIMENSION_SCORE_COLUMNS`. `interval` says whether the Wilson interval is clustered by
    image; `mark` is best / second per column (dense ranks, ties share); a `Median of models` row per
    column carries the median model's score and its own below-chance flag. attrs: aggregation,
    grouping, n_dropped.
    """
    _check_grouping(by)
    if aggregation not in (MICRO_AGGREGATION, TASK_MACRO_AGGREGATION, DIMENSION_MACRO_AGGREGATION):
        raise UserError(f"unknown aggregation {aggregation!r}; use micro, task_macro or dimension_macro")
    need = ["model", "item_id", "score", by]
    extra = [c for c in ("cluster", "chance", TASK_COLUMN, DIMENSION_COLUMN) if c in df.columns and c not in need]
    d, dropped = prepare(df, need + extra)
    d = d.loc[d[by].notna()].copy()
    if d.empty:
        raise UserError(f"no scored item has a {by}: this analysis needs items with a {by}")
    macro_key = {TASK_MACRO_AGGREGATION: TASK_COLUMN, DIMENSION_MACRO_AGGREGATION: DIMENSION_COLUMN}.get(aggregation)
    if macro_key and (macro_key not in d or d[macro_key].isna().all()):
        raise UserError(f"{AGGREGATIONS[aggregation]} needs items with a {macro_key}")
    d["cluster"] = d["cluster"].fillna(d["item_id"]) if "cluster" in d else d["item_id"]
    if "chance" not in d:
        d["chance"] = np.nan
    d["column"] = d[by].astype(str)

    cols = _column_rows(d, ["model", "column"])
    cols["kind"] = by
    dim_of = d.groupby("column", sort=False)[DIMENSION_COLUMN].first() if by == TASK_COLUMN and DIMENSION_COLUMN in d \
        else None
    cols["dimension"] = cols["column"].map(dim_of) if dim_of is not None else \
        (cols["column"] if by == DIMENSION_COLUMN else None)
    overall = _overall_rows(d, aggregation, macro_key)
    frame = pd.concat([cols, overall], ignore_index=True)
    frame["is_median"] = False
    frame = _flag_below(frame)
    frame = pd.concat([frame, _flag_below(_median_rows(frame))], ignore_index=True)
    frame = _marks(frame)
    frame["aggregation"] = AGGREGATIONS[aggregation]
    frame = _order(frame, order)
    return finish(frame[DIMENSION_SCORE_COLUMNS], dropped, aggregation=aggregation, grouping=by)


def _column_rows(d: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Mean, n, chance and the (clustered when images are shared) Wilson interval per group of keys."""
    g = d.groupby(keys, sort=False)
    out = g.agg(n=("score", "size"), score=("score", "mean"), chance=("chance", "mean"),
                n_clusters=("cluster", "nunique")).reset_index()
    d = d.assign(resid=d["score"] - g["score"].transform("mean"))
    var = _cluster_variance(d, keys)
    out = out.merge(var[keys + ["var"]], on=keys, how="left")
    clustered = (out["n_clusters"] < out["n"]).to_numpy()
    out["ci_low"], out["ci_high"] = _effective_wilson(out["score"].to_numpy(float), out["n"].to_numpy(float),
                                                      out["var"].to_numpy(float), clustered)
    out["interval"] = np.where(clustered, "Wilson 95% on the effective n, clustered by image", "Wilson 95%")
    return out.drop(columns="var")


def _overall_rows(d: pd.DataFrame, aggregation: str, macro_key: str | None) -> pd.DataFrame:
    """The overall column per model under the declared aggregation, with a clustered interval."""
    if macro_key is None:
        out = _column_rows(d, ["model"])
    else:
        d = d.loc[d[macro_key].notna()].copy()
        g = d.groupby(["model", macro_key], sort=False)
        d["resid"] = d["score"] - g["score"].transform("mean")
        groups = g["score"].transform("size")
        k = d.groupby("model", sort=False)[macro_key].transform("nunique")
        d["w"] = 1.0 / (k * groups)           # each of the k groups weighs 1/k, shared by its items
        means = g.agg(mean=("score", "mean"), chance=("chance", "mean")).reset_index()
        out = means.groupby("model", sort=False).agg(score=("mean", "mean"), chance=("chance", "mean")).reset_index()
        sizes = d.groupby("model", sort=False).agg(n=("score", "size"), n_clusters=("cluster", "nunique"))
        out = out.merge(sizes.reset_index(), on="model")
        var = _cluster_variance(d, ["model"], weight="w")
        out = out.merge(var[["model", "var"]], on="model", how="left")
        # the linearised variance of a mean of group means: clustered or not, an effective n follows
        out["ci_low"], out["ci_high"] = _effective_wilson(out["score"].to_numpy(float), out["n"].to_numpy(float),
                                                          out["var"].to_numpy(float),
                                                          np.ones(len(out), dtype=bool))
        shared = out["n_clusters"] < out["n"]
        out["interval"] = np.where(shared, "Wilson 95% on the effective n of the macro mean, clustered by image",
                                   "Wilson 95% on the effective n of the macro mean")
        out = out.drop(columns="var")
    out["column"] = OVERALL_COLUMN
    out["kind"] = OVERALL_COLUMN
    out["dimension"] = None
    return out


def _order(frame: pd.DataFrame, order: list[str] | None) -> pd.DataFrame:
    """Columns in the given (or first-seen) order, overall last; models by overall score, median last."""
    columns = list(dict.fromkeys([*(order or []), *frame["column"]]))
    columns = [c for c in columns if c != OVERALL_COLUMN] + [OVERALL_COLUMN]
    overall = frame.loc[(frame["column"] == OVERALL_COLUMN) & ~frame["is_median"]].set_index("model")["score"]
    model_rank = {m: i for i, m in enumerate(overall.sort_values(ascending=False, kind="stable").index)}
    key_col = frame["column"].map({c: i for i, c in enumerate(columns)})
    key_model = frame["model"].map(model_rank).fillna(len(model_rank))
    return frame.assign(_c=key_col, _m=key_model).sort_values(["_m", "model", "_c"], kind="stable") \
        .drop(columns=["_c", "_m"]).reset_index(drop=True)


# ---------------------------------------------------------------- published tables

def rounding_half_unit(printed: pd.Series, unit: pd.Series) -> pd.Series:
    """How far a printed value may be from the true one: half a unit in its last printed digit, as a fraction.

    '0.80' (fraction) -> 0.005; '50.9' (percent) -> 0.0005; a computed value (no printed text) -> 0.
    """
    def one(text, u) -> float:
        if text is None or (isinstance(text, float) and np.isnan(text)) or str(text).strip() == "":
            return 0.0
        text = str(text).strip()
        decimals = len(text.split(".", 1)[1]) if "." in text else 0
        half = 0.5 * 10.0 ** (-decimals)
        return half / 100.0 if u == "percent" else half
    return pd.Series([one(t, u) for t, u in zip(printed, unit)], index=printed.index, dtype=float)


def published_dimension_scores(cells: pd.DataFrame, columns: pd.DataFrame,
                               order: list[str] | None = None) -> pd.DataFrame:
    """`dimension_scores` columns from a printed table (model, column_name, score, printed, unit).

    The overall column is the printed one (aggregation: as printed, rule not stated); intervals are
    Wilson on the printed item count where the paper gives one and the column is an accuracy (the
    answers are not available, so they cannot be clustered by image); without a count they stay empty.
    A model is below chance when even the rounding cannot lift it to the chance level.
    """
    need = ["model", "column_name", "score"]
    missing = [c for c in need if c not in cells]
    if missing:
        raise UserError(f"published cells lack column(s): {', '.join(missing)}")
    meta = columns.set_index("column_name")
    frame = cells.rename(columns={"column_name": "column"}).copy()
    frame["kind"] = frame["column"].map(meta["kind"]).fillna(DIMENSION_COLUMN)
    frame["dimension"] = frame["column"].map(meta["dimension"])
    frame["n"] = frame["column"].map(meta["n_items"]).astype(float)
    frame["chance"] = frame["column"].map(meta["chance"]).astype(float)
    accuracy = frame["column"].map(meta["scorer"]).fillna("").astype(str).str.startswith("accuracy")
    low, high = wilson_interval(frame["score"].to_numpy(float), frame["n"].to_numpy(float))
    frame["ci_low"] = np.where(accuracy & frame["n"].notna(), low, np.nan)
    frame["ci_high"] = np.where(accuracy & frame["n"].notna(), high, np.nan)
    frame["interval"] = np.where(accuracy & frame["n"].notna(), "Wilson 95% on the printed n (not clustered: "
                                 "answers not published)", "none (no item count printed)")
    frame["n_clusters"] = np.nan
    frame["is_median"] = False
    half = rounding_half_unit(frame.get("printed", pd.Series(None, index=frame.index)),
                              frame.get("unit", pd.Series(None, index=frame.index)))
    frame = _flag_below(frame, half + _EPS)
    frame = pd.concat([frame, _flag_below(_median_rows(frame))], ignore_index=True)
    frame = _marks(frame)
    frame["aggregation"] = AGGREGATIONS[AS_PRINTED_AGGREGATION]
    order = order or list(columns.sort_values("position")["column_name"])
    frame = _order_published(frame, order)
    return finish(frame[DIMENSION_SCORE_COLUMNS], 0, aggregation=AS_PRINTED_AGGREGATION)


def _order_published(frame: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Printed row order (table_order) and printed column order, overall last, median last."""
    columns = [c for c in dict.fromkeys([*order, *frame["column"]]) if c != OVERALL_COLUMN] + [OVERALL_COLUMN]
    rows = frame.get("table_order")
    key_model = rows.fillna(1e9) if rows is not None else frame["model"].rank(method="dense")
    key_col = frame["column"].map({c: i for i, c in enumerate(columns)})
    return frame.assign(_m=key_model, _c=key_col).sort_values(["_m", "model", "_c"], kind="stable") \
        .drop(columns=["_m", "_c"]).reset_index(drop=True)


def score_grid(scores: pd.DataFrame, *, include_overall: bool = False) -> pd.DataFrame:
    """Model x column matrix of scores (models only, no median row), columns in their shown order."""
    d = scores.loc[~scores["is_median"].astype(bool)]
    if not include_overall:
        d = d.loc[d["kind"] != OVERALL_COLUMN]
    columns = list(dict.fromkeys(d["column"]))
    grid = d.pivot_table(index="model", columns="column", values="score", aggfunc="first", sort=False)
    return grid.reindex(columns=columns).reindex(list(dict.fromkeys(d["model"])))


# ---------------------------------------------------------------- families

FAMILY_GROUP, ENVELOPE_GROUP = "family", "envelope"
BEST_AVAILABLE = "Best available"
NOT_STATED = "(family not stated)"


def family_best(scores: pd.DataFrame, families: dict[str, str], access: dict[str, str | None] | None = None
                ) -> pd.DataFrame:
    """Best model per family per column, and the "best available" envelope (also per access level).

    ``scores``: `dimension_scores` rows (the median row and the overall column are used as given:
    the overall is a column like any other here). Columns: group, group_kind (family | envelope),
    column, model, score, n_models (models of the group with a score in the column).
    Models without a family form the group "(family not stated)".
    """
    d = scores.loc[~scores["is_median"].astype(bool), ["model", "column", "score"]].dropna(subset=["score"])
    if d.empty:
        return pd.DataFrame(columns=["group", "group_kind", "column", "model", "score", "n_models"])
    columns = list(dict.fromkeys(d["column"]))
    d = d.assign(family=d["model"].map(lambda m: families.get(m) or NOT_STATED))
    parts = [_best_of(d, "family", FAMILY_GROUP)]
    parts.append(_best_of(d.assign(family=BEST_AVAILABLE), "family", ENVELOPE_GROUP))
    if access:
        acc = d["model"].map(lambda m: access.get(m))
        for level in sorted({a for a in acc if a}):
            parts.append(_best_of(d.loc[acc == level].assign(family=f"Best {level}"), "family", ENVELOPE_GROUP))
    out = pd.concat(parts, ignore_index=True)
    out["_c"] = out["column"].map({c: i for i, c in enumerate(columns)})
    out = out.sort_values(["group_kind", "group", "_c"], kind="stable").drop(columns="_c")
    return finish(out, 0)


def _best_of(d: pd.DataFrame, key: str, kind: str) -> pd.DataFrame:
    idx = d.sort_values(["score", "model"], ascending=[False, True], kind="stable") \
        .groupby([key, "column"], sort=False).head(1)
    counts = d.groupby([key, "column"], sort=False).size().rename("n_models").reset_index()
    out = idx.merge(counts, on=[key, "column"])
    out = out.rename(columns={key: "group"})
    out["group_kind"] = kind
    return out[["group", "group_kind", "column", "model", "score", "n_models"]]


__all__ = ["BEST", "DIMENSION_SCORE_COLUMNS", "MEDIAN_ROW", "SECOND", "Z95", "dimension_scores", "family_best",
           "published_dimension_scores", "rounding_half_unit", "score_grid"]

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


def _clustered_stats(group: np.ndarray, n_groups: int, y: np.ndarray, cluster: np.ndarray, chance: np.ndarray,
                     weight: np.ndarray | None = None, centre: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per group code: n, mean (or the weighted sum), clusters, mean chance and the cluster-robust variance.

    Integer codes and ``np.bincount`` instead of string group-bys: a VQArt-scale table has 200,000
    answers. Without ``weight`` the estimator is the group's plain mean and the residuals are taken
    from it; with ``weight`` (summing to 1 per group) it is sum(w * y) and ``centre`` gives each
    answer's reference mean (its sub-group's mean), as the linearised variance of a mean of means needs.
    """
    n = np.bincount(group, minlength=n_groups).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.bincount(group, weights=y, minlength=n_groups) / n
        if weight is None:
            term = y - mean[group]
            score = mean
        else:
            term = weight * (y - centre)
            score = np.bincount(group, weights=weight * y, minlength=n_groups)
        pairs, inverse = np.unique(group.astype(np.int64) * (int(cluster.max()) + 1) + cluster, return_inverse=True)
        pair_group = pairs // (int(cluster.max()) + 1)
        pair_sum = np.bincount(inverse, weights=term, minlength=len(pairs))
        ss = np.bincount(pair_group, weights=pair_sum ** 2, minlength=n_groups)
        g = np.bincount(pair_group, minlength=n_groups).astype(float)
        if weight is None:
            ss = ss / n ** 2
        var = np.where(g > 1, g / (g - 1) * ss, np.nan)
        defined = ~np.isnan(chance)
        chance_mean = np.bincount(group[defined], weights=chance[defined], minlength=n_groups) / \
            np.bincount(group[defined], minlength=n_groups)
    return {"n": n, "score": score, "n_clusters": g, "var": var, "chance": chance_mean}


def _clustered_interval(score: np.ndarray, n: np.ndarray, var: np.ndarray, clustered: np.ndarray):
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

    cols = _column_rows(d)
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


def _codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    codes, uniques = pd.factorize(values, sort=False)
    return codes.astype(np.int64), np.asarray(uniques, dtype=object)


def _with_interval(out: pd.DataFrame, clustered: np.ndarray, var: np.ndarray, words: tuple[str, str]) -> pd.DataFrame:
    out["ci_low"], out["ci_high"] = _clustered_interval(out["score"].to_numpy(float), out["n"].to_numpy(float),
                                                      var, clustered)
    out["interval"] = np.where(clustered, words[0], words[1])
    return out


def _column_rows(d: pd.DataFrame) -> pd.DataFrame:
    """Per model x column: mean, n, chance and the Wilson interval (on the effective n when pictures are shared)."""
    model, models = _codes(d["model"])
    column, columns = _codes(d["column"])
    cluster, _ = _codes(d["cluster"])
    group = model * len(columns) + column
    stats = _clustered_stats(group, len(models) * len(columns), d["score"].to_numpy(float), cluster,
                             d["chance"].to_numpy(float))
    present = stats["n"] > 0
    index = np.flatnonzero(present)
    out = pd.DataFrame({"model": models[index // len(columns)], "column": columns[index % len(columns)],
                        "n": stats["n"][present], "score": stats["score"][present],
                        "chance": stats["chance"][present], "n_clusters": stats["n_clusters"][present]})
    clustered = out["n_clusters"].to_numpy() < out["n"].to_numpy()
    return _with_interval(out, clustered, stats["var"][present],
                          ("Wilson 95% on the effective n, clustered by image", "Wilson 95%"))


def _overall_rows(d: pd.DataFrame, aggregation: str, macro_key: str | None) -> pd.DataFrame:
    """The overall column per model under the declared aggregation, with a clustered interval."""
    if macro_key is not None:
        d = d.loc[d[macro_key].notna()]
    model, models = _codes(d["model"])
    cluster, _ = _codes(d["cluster"])
    y = d["score"].to_numpy(float)
    chance = d["chance"].to_numpy(float)
    if macro_key is None:
        stats = _clustered_stats(model, len(models), y, cluster, chance)
        clustered = stats["n_clusters"] < stats["n"]
        words = ("Wilson 95% on the effective n, clustered by image", "Wilson 95%")
    else:
        part, parts = _codes(d[macro_key])
        sub = model * len(parts) + part                     # model x task (or dimension)
        sub_n = np.bincount(sub, minlength=len(models) * len(parts)).astype(float)
        sub_mean = np.bincount(sub, weights=y, minlength=len(sub_n)) / np.where(sub_n > 0, sub_n, 1)
        k = np.bincount(np.flatnonzero(sub_n > 0) // len(parts), minlength=len(models)).astype(float)
        weight = 1.0 / (k[model] * sub_n[sub])            # each of the k groups weighs 1/k, shared by its items
        stats = _clustered_stats(model, len(models), y, cluster, chance, weight=weight, centre=sub_mean[sub])
        # the chance of a macro mean is the mean of its groups' chance levels
        sub_chance = _clustered_stats(sub, len(sub_n), y, cluster, chance)["chance"]
        table = pd.DataFrame({"model": np.arange(len(sub_n)) // len(parts), "chance": sub_chance})[sub_n > 0]
        stats["chance"] = table.groupby("model")["chance"].mean().reindex(range(len(models))).to_numpy(float)
        # the linearised variance of a mean of group means: clustered or not, an effective n follows
        clustered = np.ones(len(models), dtype=bool)
        shared = stats["n_clusters"] < stats["n"]
        words = ("Wilson 95% on the effective n of the macro mean, clustered by image",
                 "Wilson 95% on the effective n of the macro mean")
    out = pd.DataFrame({"model": models, "n": stats["n"], "score": stats["score"], "chance": stats["chance"],
                        "n_clusters": stats["n_clusters"]})
    out = _with_interval(out, clustered, stats["var"], words)
    if macro_key is not None:
        out["interval"] = np.where(shared, words[0], words[1])
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

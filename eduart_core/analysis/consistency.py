"""Does a results table add up? Checks of an aggregate table against itself and against its text.

Why: reading VQArt-Bench and MUSE against their own numbers shows an "Overall" column that no mean
of the other columns reproduces, a row order "by average performance" that the plain average
contradicts, columns whose typical model scores below chance, and a column named differently in
the table and the text. Each check allows exactly what the printing can hide: a value printed with
two decimals may be 0.005 off, so two printed values may differ by the sum of their half units
before anything is wrong. The same checks run on a table computed here (where nothing is rounded
and the overall's aggregation is declared), so a user's own table gets the same scrutiny.

Input: `cells` (model, column, score as a fraction; optional printed, unit, table_order, n),
`columns` (column_name, kind, optional n_items, name_in_table, name_in_text, chance, dimension) and
`statements` (statement, subject, value, source). Output: one row per check with `check, subject,
expected, found, verdict, detail`.
"""
from __future__ import annotations

import unicodedata

import numpy as np
import pandas as pd

from ..vocab import (
    AS_PRINTED_AGGREGATION,
    DIMENSION_MACRO_AGGREGATION,
    MICRO_AGGREGATION,
    OVERALL_COLUMN,
    TASK_MACRO_AGGREGATION,
    VERDICT_FLAG,
    VERDICT_NOT_APPLICABLE,
    VERDICT_NOTE,
    VERDICT_OK,
    VERDICT_PROBLEM,
)
from ._frame import finish
from .study_scores import rounding_half_unit

CHECK_COLUMNS = ["check", "subject", "expected", "found", "verdict", "detail"]
OVERALL_CHECK = "overall column vs mean of the columns"
ORDER_CHECK = "stated row order vs average"
CHANCE_CHECK = "column below chance"
NAME_CHECK = "column name in table vs text"
CLAIM_CHECK = "stated best model vs table"
_EPS = 1e-9
WEIGHTED, UNWEIGHTED = "weighted", "unweighted"


def _fmt(value: float, unit: str | None) -> str:
    """A value in the unit the table prints: fractions with 4 decimals, percentages with 2."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "n/a"
    return f"{100 * value:.2f}" if unit == "percent" else (f"{value:.4f}" if unit == "fraction" else f"{100 * value:.1f}%")


def _gap(value: float, unit: str | None) -> str:
    """A difference in the table's unit ('0.0246', '1.39 points', '2.5 points')."""
    if unit == "fraction":
        return f"{abs(value):.4f}"
    return f"{100 * abs(value):.2f} points" if unit == "percent" else f"{100 * abs(value):.1f} points"


def _row(check: str, subject: str, expected: str, found: str, verdict: str, detail: str) -> dict:
    return {"check": check, "subject": subject, "expected": expected, "found": found, "verdict": verdict,
            "detail": detail}


def _prepared(cells: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    d = cells.copy()
    if "column_name" in d and "column" not in d:
        d = d.rename(columns={"column_name": "column"})
    for col in ("printed", "unit", "table_order", "n"):
        if col not in d:
            d[col] = None
    d["half"] = rounding_half_unit(d["printed"], d["unit"])
    units = [u for u in d["unit"].dropna().unique()]
    unit = units[0] if len(units) == 1 else None
    return d, unit


def consistency_checks(cells: pd.DataFrame, columns: pd.DataFrame, statements: pd.DataFrame | None = None, *,
                       declared: str = AS_PRINTED_AGGREGATION) -> pd.DataFrame:
    """Every check on one table; ``declared`` is the overall's stated aggregation (as printed: unknown).

    A table computed here declares micro (compared with the item-weighted mean), task-macro or
    dimension-macro (compared with the unweighted mean); a printed one that states no rule is
    compared with both, and only a gap beyond rounding for every rule is inconsistent.
    """
    d, unit = _prepared(cells)
    statements = statements if statements is not None else pd.DataFrame(columns=["statement", "subject", "value",
                                                                                 "source"])
    meta = columns.rename(columns={"column_name": "column"}).set_index("column") if len(columns) else \
        pd.DataFrame(columns=["kind"])
    rows: list[dict] = []
    rows += _overall_checks(d, meta, unit, declared)
    rows += _order_checks(d, meta, statements, unit)
    rows += _chance_checks(d, meta, unit)
    rows += _name_checks(meta)
    rows += _claim_checks(d, meta, statements, unit)
    return finish(pd.DataFrame(rows, columns=CHECK_COLUMNS), 0)


# ---------------------------------------------------------------- overall column

def _parts(d: pd.DataFrame, meta: pd.DataFrame) -> pd.DataFrame:
    kind = d["column"].map(meta["kind"]) if "kind" in meta else pd.Series(None, index=d.index)
    return d.loc[(kind != OVERALL_COLUMN) & (d["column"] != OVERALL_COLUMN)]


def _relation_words(gap: float, rule: str, unit: str | None) -> str:
    if abs(gap) < 1e-6:
        return f"equals the {rule} mean"
    return f"{_gap(gap, unit)} {'below' if gap < 0 else 'above'} the {rule} mean"


def _overall_checks(d: pd.DataFrame, meta: pd.DataFrame, unit: str | None, declared: str) -> list[dict]:
    kind = d["column"].map(meta["kind"]) if "kind" in meta else pd.Series(None, index=d.index)
    overall = d.loc[(kind == OVERALL_COLUMN) | (d["column"] == OVERALL_COLUMN)]
    if overall.empty:
        return [_row(OVERALL_CHECK, "the table", "an overall column to compare", "no overall column",
                     VERDICT_NOT_APPLICABLE, "The table has no overall column, so there is nothing to recompute.")]
    parts = _parts(d, meta)
    weights = parts["n"].astype(float) if parts["n"].notna().all() else \
        parts["column"].map(meta["n_items"] if "n_items" in meta else {}).astype(float)
    parts = parts.assign(w=weights)
    rules = {MICRO_AGGREGATION: [WEIGHTED], TASK_MACRO_AGGREGATION: [UNWEIGHTED],
             DIMENSION_MACRO_AGGREGATION: [UNWEIGHTED]}.get(declared, [WEIGHTED, UNWEIGHTED])
    rows, beyond_all, below_all, checked = [], 0, 0, 0
    for model, o in overall.groupby("model", sort=False):
        mine = parts.loc[parts["model"] == model].dropna(subset=["score"])
        if len(mine) < 2:
            continue
        value, half_o = float(o["score"].iloc[0]), float(o["half"].iloc[0])
        means = {UNWEIGHTED: float(mine["score"].mean())}
        if mine["w"].notna().all() and mine["w"].sum() > 0:
            means[WEIGHTED] = float(np.average(mine["score"], weights=mine["w"]))
        used = [r for r in rules if r in means]
        if not used:
            continue
        checked += 1
        allow = half_o + float(mine["half"].max()) + _EPS
        gaps = {r: value - means[r] for r in used}
        beyond = [r for r in used if abs(gaps[r]) > allow]
        below = all(g < 0 for g in gaps.values())
        beyond_all += len(beyond) == len(used)
        below_all += below
        verdict = VERDICT_PROBLEM if len(beyond) == len(used) else (VERDICT_NOTE if beyond else VERDICT_OK)
        expected = " or ".join(f"{r} mean {_fmt(means[r], unit)}" for r in used)
        expected += f" (rounding allows ±{_gap(allow - _EPS, unit)})" if allow > 2 * _EPS else " (exactly)"
        found = f"{_fmt(value, unit)}: " + ", ".join(_relation_words(gaps[r], r, unit) for r in used)
        if verdict == VERDICT_PROBLEM:
            detail = (f"{model}'s overall ({_fmt(value, unit)}) cannot come from its columns: it is "
                      + " and ".join(f"{_gap(gaps[r], unit)} {'below' if gaps[r] < 0 else 'above'} the {r} mean"
                                     for r in used) + ", more than rounding allows.")
        elif verdict == VERDICT_NOTE:
            fits = [r for r in used if r not in beyond]
            detail = (f"{model}'s overall fits the {' and '.join(fits)} mean within rounding but not the "
                      f"{' and '.join(beyond)} mean.")
        else:
            detail = f"{model}'s overall matches the mean of its columns within rounding."
        rows.append(_row(OVERALL_CHECK, model, expected, found, verdict, detail))
    if checked:
        rule_words = " and ".join(rules) if len(rules) > 1 else rules[0]
        found = f"{beyond_all} of {checked} models beyond rounding for every rule ({rule_words})"
        if len(rules) > 1 or below_all:
            found += f"; {below_all} of {checked} below {'both means' if len(rules) > 1 else 'the mean'}"
        verdict = VERDICT_PROBLEM if beyond_all else VERDICT_OK
        detail = (f"For {beyond_all} of {checked} models the printed overall is not any stated or plausible mean of "
                  "the columns; the table does not say how it was aggregated." if beyond_all else
                  f"Every model's overall matches the {rule_words} mean of its columns.")
        rows.insert(0, _row(OVERALL_CHECK, f"all {checked} models", f"overall = {rule_words} mean of the columns",
                            found, verdict, detail))
    return rows


# ---------------------------------------------------------------- stated order

def _averages(parts: pd.DataFrame, meta: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per model: the candidate averages a "sorted by average" could mean, with their rounding slack."""
    base = parts.dropna(subset=["score"])
    out = {"plain mean of the columns": base.groupby("model", sort=False).agg(
        avg=("score", "mean"), half=("half", "max"), order=("table_order", "first"))}
    dims = base["column"].map(meta["dimension"]) if "dimension" in meta else pd.Series(None, index=base.index)
    if dims.notna().all() and dims.nunique() > 1:
        by_dim = base.assign(dim=dims).groupby(["model", "dim"], sort=False).agg(score=("score", "mean"),
                                                                                half=("half", "max"),
                                                                                order=("table_order", "first"))
        out["mean of the dimension means"] = by_dim.groupby(level=0, sort=False).agg(
            avg=("score", "mean"), half=("half", "max"), order=("order", "first"))
    n_items = base["column"].map(meta["n_items"]) if "n_items" in meta else pd.Series(None, index=base.index)
    if n_items.notna().all() and len(base):
        w = base.assign(w=n_items.astype(float))
        out["item-weighted mean"] = w.groupby("model", sort=False).apply(
            lambda g: pd.Series({"avg": np.average(g["score"], weights=g["w"]), "half": g["half"].max(),
                                 "order": g["table_order"].iloc[0]}), include_groups=False)
    return out


def _order_checks(d: pd.DataFrame, meta: pd.DataFrame, statements: pd.DataFrame, unit: str | None) -> list[dict]:
    stated = statements.loc[statements["statement"] == "ordering"] if len(statements) else statements
    if stated.empty:
        return [_row(ORDER_CHECK, "the table", "a stated row order", "no row order stated", VERDICT_NOT_APPLICABLE,
                     "The table does not say how its rows are ordered.")]
    claim = stated.iloc[0]
    if d["table_order"].isna().all():
        return [_row(ORDER_CHECK, str(claim["subject"]), f"rows ordered by {claim['value']}", "row order not recorded",
                     VERDICT_NOT_APPLICABLE, "The printed row order was not recorded with the table.")]
    rows: list[dict] = []
    summaries: list[dict] = []
    for name, avg in _averages(_parts(d, meta), meta).items():
        avg = avg.sort_values("order", kind="stable")
        models, values, halves = list(avg.index), avg["avg"].to_numpy(float), avg["half"].to_numpy(float)
        rises = [i for i in range(1, len(values)) if values[i] - values[i - 1] > halves[i] + halves[i - 1] + _EPS]
        pairs = sum(1 for i in range(len(values)) for j in range(i + 1, len(values))
                    if values[j] - values[i] > halves[i] + halves[j] + _EPS)
        primary = not summaries
        summaries.append(_row(
            ORDER_CHECK, f"{claim['subject']} ({name})",
            f"{claim['value']} decreases down the {len(models)} rows ({claim['source']})",
            f"{len(rises)} adjacent inversions; {pairs} discordant pairs beyond rounding",
            VERDICT_PROBLEM if rises else VERDICT_OK,
            (f"Under the {name}, the average goes up instead of down at {len(rises)} places in the printed order."
             if rises else f"The printed order follows the {name}.")))
        if primary:
            for i in rises:
                rows.append(_row(
                    ORDER_CHECK, f"rows {i} and {i + 1}: {models[i - 1]} above {models[i]}",
                    f"{name} of {models[i - 1]} >= that of {models[i]}",
                    f"{_fmt(values[i - 1], unit)} < {_fmt(values[i], unit)} ({_gap(values[i] - values[i - 1], unit)})",
                    VERDICT_PROBLEM,
                    f"{models[i - 1]} is printed above {models[i]}, but its {name} is lower by "
                    f"{_gap(values[i] - values[i - 1], unit)}."))
    return summaries + rows


# ---------------------------------------------------------------- chance

def _chance_checks(d: pd.DataFrame, meta: pd.DataFrame, unit: str | None) -> list[dict]:
    chance = d["column"].map(meta["chance"]).astype(float) if "chance" in meta else pd.Series(np.nan, index=d.index)
    d = d.assign(chance=chance).dropna(subset=["score"])
    rows, undefined = [], []
    for column, g in d.groupby("column", sort=False):
        level = g["chance"].iloc[0]
        if np.isnan(level):
            undefined.append(str(column))
            continue
        below = g.loc[g["score"] + g["half"] + _EPS < level]
        median = float(g["score"].median())
        median_below = median + float(g["half"].max()) + _EPS < level
        names = ", ".join(f"{m} ({_fmt(s, unit)})" for m, s in zip(below["model"], below["score"]))
        verdict = VERDICT_FLAG if median_below else (VERDICT_NOTE if len(below) else VERDICT_OK)
        found = f"median {_fmt(median, unit)}; {len(below)} of {len(g)} models below" + (f": {names}" if names else "")
        detail = (f"In {column} the median model scores {_fmt(median, unit)}, below the chance level "
                  f"{_fmt(level, unit)}: answering at random would do better." if median_below else
                  (f"In {column}, {len(below)} of {len(g)} models score below the chance level {_fmt(level, unit)}."
                   if len(below) else f"Every model in {column} scores at or above chance."))
        rows.append(_row(CHANCE_CHECK, str(column), f"at or above chance {_fmt(level, unit)}", found, verdict, detail))
    if undefined:
        rows.append(_row(CHANCE_CHECK, ", ".join(undefined), "a chance level", "none stated or derivable",
                         VERDICT_NOT_APPLICABLE, "These columns have no chance level (free answers, counts, or an "
                         "option count the paper does not give), so they cannot be compared with chance."))
    return rows


# ---------------------------------------------------------------- names

def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", str(text))
    return " ".join("".join(c for c in text if not unicodedata.combining(c)).casefold().split())


def _abbreviates(short: str, full: str) -> bool:
    """'Cls.' abbreviates 'Classification': same first letter, its letters in order, a final dot."""
    if not short.endswith("."):
        return False
    letters = short[:-1]
    if not letters or not full or letters[0] != full[0]:
        return False
    it = iter(full)
    return all(ch in it for ch in letters)


def name_relation(in_table: str, in_text: str) -> str:
    """'same', 'abbreviated' (every word equal or a dotted abbreviation) or 'differs'."""
    a, b = _fold(in_table), _fold(in_text)
    if a == b:
        return "same"
    wa, wb = a.split(), b.split()
    if len(wa) == len(wb) and all(x == y or _abbreviates(x, y) for x, y in zip(wa, wb)):
        return "abbreviated"
    return "differs"


def _name_checks(meta: pd.DataFrame) -> list[dict]:
    if not {"name_in_table", "name_in_text"} <= set(meta.columns):
        return [_row(NAME_CHECK, "the table", "column names in table and text", "not given",
                     VERDICT_NOT_APPLICABLE, "Only one name per column is known.")]
    both = meta.loc[meta["name_in_table"].notna() & meta["name_in_text"].notna()
                    & (meta.get("kind") != OVERALL_COLUMN)]
    if both.empty:
        return [_row(NAME_CHECK, "the table", "column names in table and text", "not given",
                     VERDICT_NOT_APPLICABLE, "Only one name per column is known.")]
    relation = {c: name_relation(r["name_in_table"], r["name_in_text"]) for c, r in both.iterrows()}
    differs = [c for c, rel in relation.items() if rel == "differs"]
    abbreviated = sum(rel == "abbreviated" for rel in relation.values())
    rows = [_row(NAME_CHECK, f"all {len(both)} columns", "the same name in the table and the text",
                 f"{len(both) - len(differs)} of {len(both)} match ({abbreviated} abbreviated); {len(differs)} differ",
                 VERDICT_PROBLEM if differs else VERDICT_OK,
                 ("Column names differ between the table and the text: " + "; ".join(
                     f"'{both.loc[c, 'name_in_text']}' is called '{both.loc[c, 'name_in_table']}' in the table"
                     for c in differs) + "." if differs else
                  "Every column has the same name in the table and the text (abbreviations spelled out)."))]
    for c in differs:
        r = both.loc[c]
        rows.append(_row(NAME_CHECK, str(c), f"'{r['name_in_text']}' (text)", f"'{r['name_in_table']}' (table)",
                         VERDICT_PROBLEM, f"The table calls the column '{r['name_in_table']}', the text "
                         f"'{r['name_in_text']}': a reader cannot be sure they are the same thing."))
    return rows


# ---------------------------------------------------------------- claims

def _claim_checks(d: pd.DataFrame, meta: pd.DataFrame, statements: pd.DataFrame, unit: str | None) -> list[dict]:
    claims = statements.loc[statements["statement"] == "best_everywhere"] if len(statements) else statements
    rows = []
    parts = _parts(d, meta).dropna(subset=["score"])
    for claim in claims.itertuples(index=False):
        model = str(claim.subject)
        mine = parts.loc[parts["model"] == model].set_index("column")
        if mine.empty:
            rows.append(_row(CLAIM_CHECK, model, "the model in the table", "not in the table", VERDICT_PROBLEM,
                             f"The text names {model} as best, but the table has no such row."))
            continue
        beaten = []
        for column, g in parts.groupby("column", sort=False):
            if column not in mine.index:
                continue
            own, own_half = float(mine.loc[column, "score"]), float(mine.loc[column, "half"])
            better = g.loc[(g["model"] != model) & (g["score"] - g["half"] > own + own_half + _EPS)]
            if len(better):
                who = ", ".join(f"{m} ({_fmt(s, unit)})" for m, s in zip(better["model"], better["score"]))
                beaten.append(f"{column}: {who} against {_fmt(own, unit)}")
        rows.append(_row(CLAIM_CHECK, model, f"best or tied in every column ({claim.source})",
                         "; ".join(beaten) if beaten else "best or tied everywhere",
                         VERDICT_PROBLEM if beaten else VERDICT_OK,
                         (f"The text says {model} is best on every measure, but the table shows it beaten in "
                          + "; ".join(beaten) + "." if beaten else f"{model} is best or tied in every column.")))
    return rows

"""The plain sentences of the comparison of models and people, computed from its tables.

Why a module of its own: the Overview, presentation mode and the report say the same sentences,
and every word in them ("above", "below", "cannot be told apart") must follow from the numbers of
`analysis.humans.gap_table`, never be written by hand.
"""
from __future__ import annotations

import math

import pandas as pd

from ..analysis.humans import ALL, ALL_PEOPLE
from ..rounding import fmt_percent
from ..vocab import format_label, language_label

#: Below this many points a gap is called a tie in words (the interval still says how sure it is).
TIE_POINTS = 0.5


def points(value: float) -> str:
    """A difference of two fractions in percentage points, one decimal ('12.3')."""
    return fmt_percent(abs(value))


def _interval(low: float, high: float) -> str:
    if math.isnan(low) or math.isnan(high):
        return "too few items that differ to tell: no interval"
    noise = "within sampling noise, " if low <= 0 <= high else ""
    return f"{noise}95% CI (paired t) {fmt_percent(low, signed=True)} to {fmt_percent(high, signed=True)} points"


def relation(gap: float) -> str:
    """'12.3 points above', '4.0 points below' or 'level with' (under `TIE_POINTS`)."""
    if math.isnan(gap):
        return "not comparable with"
    if abs(100 * gap) < TIE_POINTS:
        return "level with"
    return f"{points(gap)} points {'above' if gap > 0 else 'below'}"


def _plural(group: str, n: int) -> str:
    if group == ALL_PEOPLE:
        return "person" if n == 1 else "people"
    return group if n == 1 or group.endswith("s") else group + "s"


def group_counts(gaps: pd.DataFrame) -> list[tuple[str, int]]:
    """(group, people) of the named groups, from the rows over every item."""
    overall = gaps[(gaps["scope"] == ALL) & (gaps["group"] != ALL_PEOPLE)]
    return [(str(g), int(n)) for g, n in zip(overall["group"], overall["n_people"])]


def headline(gaps: pd.DataFrame, *, simulated: bool) -> str:
    """One sentence: who sat how many items, and where the best model stands against them."""
    overall = gaps[gaps["scope"] == ALL]
    if overall.empty:
        return "No person has answered items of this selection yet."
    pooled = overall[overall["group"] == ALL_PEOPLE]
    everyone = (pooled if len(pooled) else overall).iloc[0]
    named = overall[overall["group"] != ALL_PEOPLE]
    counts = ", ".join(f"{n} {_plural(g, n)}" for g, n in group_counts(gaps))
    n = int(everyone["n_people"])
    who = f"{n} {'simulated ' if simulated else ''}{'person' if n == 1 else 'people'} ({counts})"
    phrases = [f"{'beats' if g.gap_median >= 0 else 'trails'} the median {g.group} by {points(g.gap_median)} points"
               for g in named.itertuples(index=False)]
    top = named.sort_values("best_person_mean", ascending=False).iloc[0]
    phrases.append(f"{'beats' if top['gap_best'] >= 0 else 'trails'} the best {top['group']} by "
                   f"{points(top['gap_best'])} points")
    return (f"{who} sat {int(everyone['n_items'])} items: the best model, {everyone['best_model']}, "
            + ", ".join(phrases[:-1]) + f" and {phrases[-1]}.")


def sentences(gaps: pd.DataFrame) -> list[str]:
    """Per group: the median and the best person against the best model, with n and intervals; then
    the formats and languages where the gap to the median person is smallest and largest."""
    out = []
    for row in gaps[gaps["scope"] == ALL].itertuples(index=False):
        group = _plural(str(row.group), int(row.n_people))
        out.append(
            f"{group.capitalize()} (n = {int(row.n_people)}, {int(row.n_items)} items): the median one scores "
            f"{fmt_percent(row.median_person_mean)}% on their items, and the best model ({row.best_model}) is "
            f"{relation(row.gap_median)} them on the {int(row.n_items_median)} items both answered "
            f"({_interval(row.gap_median_ci_low, row.gap_median_ci_high)}); the best one scores "
            f"{fmt_percent(row.best_person_mean)}%, and the best model is {relation(row.gap_best)} them on "
            f"{int(row.n_items_best)} items ({_interval(row.gap_best_ci_low, row.gap_best_ci_high)}).")
    pooled_name = ALL_PEOPLE if (gaps["group"] == ALL_PEOPLE).any() else (gaps["group"].iloc[0] if len(gaps) else "")
    by_format = gaps[(gaps["scope"] == "format") & (gaps["group"] == pooled_name)].dropna(subset=["gap_median"])
    if len(by_format) >= 2:
        low, high = by_format.loc[by_format["gap_median"].idxmin()], by_format.loc[by_format["gap_median"].idxmax()]
        out.append(
            f"Against the median person the best model of each format does best on {format_label(high['type'])} "
            f"({relation(high['gap_median'])}, {int(high['n_items_median'])} items; "
            f"{_interval(high['gap_median_ci_low'], high['gap_median_ci_high'])}) and worst on "
            f"{format_label(low['type'])} ({relation(low['gap_median'])}, {int(low['n_items_median'])} items; "
            f"{_interval(low['gap_median_ci_low'], low['gap_median_ci_high'])}).")
    by_language = gaps[(gaps["scope"] == "language") & (gaps["group"] == pooled_name)]
    if len(by_language) >= 2:
        out.append("By language, the best model against the median person: " + "; ".join(
            f"{language_label(r.language)} {relation(r.gap_median)} ({int(r.n_items_median)} items; "
            f"{_interval(r.gap_median_ci_low, r.gap_median_ci_high)})" for r in by_language.itertuples(index=False))
            + ".")
    return out


__all__ = ["TIE_POINTS", "group_counts", "headline", "points", "relation", "sentences"]

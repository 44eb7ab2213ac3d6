"""The plain sentences of the comparison of models and people, computed from its tables.

Why a module of its own: the Overview, presentation mode and the report say the same sentences,
and every word in them ("above", "below", "cannot be told apart") must follow from the numbers of
`analysis.humans.gap_table`, never be written by hand. A direction ("beats", "above") is named
only when the gap's 95% interval excludes zero; otherwise the sentence says the two cannot be
told apart on the items they share.
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


def _apart(low: float, high: float) -> bool:
    """True when the interval is known and excludes zero (a direction may be named)."""
    return not (math.isnan(low) or math.isnan(high)) and (low > 0 or high < 0)


def versus(gap: float, low: float, high: float, n_items: int | None = None) -> str:
    """The model against them in words, with the interval: a direction only when it excludes zero
    (``n_items``: said when the surrounding sentence does not say on how many items)."""
    if math.isnan(gap):
        return "not comparable with them"
    on = f" on {n_items} items" if n_items is not None else ""
    if _apart(low, high):
        return f"{relation(gap)} them ({_interval(low, high)}{on})"
    why = ("too few items for an interval" if math.isnan(low) or math.isnan(high)
           else f"95% CI {fmt_percent(low, signed=True)} to {fmt_percent(high, signed=True)} points, which holds zero")
    return f"not told apart from them ({points(gap)} points between them{on}; {why})"


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


def headline(gaps: pd.DataFrame, *, simulated: bool, level_with: list[str] | tuple[str, ...] = ()) -> str:
    """One sentence: who sat how many items, and where the highest-scoring model stands against them.

    ``level_with``: the models the leaderboard cannot tell from that model (its tie group); named so
    that the sentence never reads as "the best model" where the ranking carries no such order."""
    overall = gaps[gaps["scope"] == ALL]
    if overall.empty:
        return "No person has answered items of this selection yet."
    pooled = overall[overall["group"] == ALL_PEOPLE]
    everyone = (pooled if len(pooled) else overall).iloc[0]
    named = overall[overall["group"] != ALL_PEOPLE]
    counts = ", ".join(f"{n} {_plural(g, n)}" for g, n in group_counts(gaps))
    n = int(everyone["n_people"])
    who = f"{n} {'simulated ' if simulated else ''}{'person' if n == 1 else 'people'} ({counts})"
    phrases = [_standing(f"the median {g.group}", g.gap_median, g.gap_median_ci_low, g.gap_median_ci_high,
                         g.n_items_median) for g in named.itertuples(index=False)]
    top = named.sort_values("best_person_mean", ascending=False).iloc[0]
    phrases.append(_standing(f"the best {top['group']}", top["gap_best"], top["gap_best_ci_low"],
                             top["gap_best_ci_high"], top["n_items_best"]))
    level = ""
    if level_with:
        others = list(level_with)
        names = others[0] if len(others) == 1 else ", ".join(others[:-1]) + " and " + others[-1]
        level = f", level on the leaderboard with {names}"
    return (f"{who} sat {int(everyone['n_items'])} items: the highest-scoring model, {everyone['best_model']}{level}, "
            + ", ".join(phrases[:-1]) + (" and " if len(phrases) > 1 else "") + f"{phrases[-1]}.")


def _standing(whom: str, gap: float, low: float, high: float, n_items: float) -> str:
    """'beats the median expert by 12.3 points', or 'cannot be told apart from ...' when the interval holds zero."""
    if _apart(low, high):
        return f"{'beats' if gap > 0 else 'trails'} {whom} by {points(gap)} points"
    n = "" if n_items is None or (isinstance(n_items, float) and math.isnan(n_items)) else f" on {int(n_items)} items"
    return f"cannot be told apart from {whom} ({points(gap)} points apart{n})"


def sentences(gaps: pd.DataFrame) -> list[str]:
    """Per group: the median and the best person against the best model, with n and intervals; then
    the formats and languages where the gap to the median person is smallest and largest."""
    out = []
    for row in gaps[gaps["scope"] == ALL].itertuples(index=False):
        group = _plural(str(row.group), int(row.n_people))
        out.append(
            f"{group.capitalize()} (n = {int(row.n_people)}, {int(row.n_items)} items): the median one scores "
            f"{fmt_percent(row.median_person_mean)}% on their items, and the highest-scoring model ({row.best_model}) "
            f"is {versus(row.gap_median, row.gap_median_ci_low, row.gap_median_ci_high)} "
            f"on the {int(row.n_items_median)} items both answered; the best one scores "
            f"{fmt_percent(row.best_person_mean)}%, and the model is "
            f"{versus(row.gap_best, row.gap_best_ci_low, row.gap_best_ci_high)} on "
            f"{int(row.n_items_best)} items.")
    pooled_name = ALL_PEOPLE if (gaps["group"] == ALL_PEOPLE).any() else (gaps["group"].iloc[0] if len(gaps) else "")
    by_format = gaps[(gaps["scope"] == "format") & (gaps["group"] == pooled_name)].dropna(subset=["gap_median"])
    if len(by_format) >= 2:
        low, high = by_format.loc[by_format["gap_median"].idxmin()], by_format.loc[by_format["gap_median"].idxmax()]
        out.append(
            f"Against the median person the top model of each format has its largest gap on "
            f"{format_label(high['type'])} ("
            f"{versus(high['gap_median'], high['gap_median_ci_low'], high['gap_median_ci_high'], int(high['n_items_median']))}"
            f") and its smallest on {format_label(low['type'])} ("
            f"{versus(low['gap_median'], low['gap_median_ci_low'], low['gap_median_ci_high'], int(low['n_items_median']))}"
            ").")
    by_language = gaps[(gaps["scope"] == "language") & (gaps["group"] == pooled_name)]
    if len(by_language) >= 2:
        out.append("By language, the highest-scoring model against the median person: " + "; ".join(
            f"{language_label(r.language)}: "
            f"{versus(r.gap_median, r.gap_median_ci_low, r.gap_median_ci_high, int(r.n_items_median))}"
            for r in by_language.itertuples(index=False)) + ".")
    return out


__all__ = ["TIE_POINTS", "group_counts", "headline", "points", "relation", "sentences", "versus"]

"""Plain-language key findings written from the current data, for the overview page and report.

A stakeholder reads these sentences instead of the tables, so each one is generated from the
numbers on screen (never hard-coded), states its uncertainty, and names the test and the n it
rests on. The headline is read aloud (no statistician's words: `STATISTICIAN_WORDS`); the test,
n, interval and correction are "How we know" (`Finding.how_we_know`). A direction or an order
is named only when the interval or the corrected test carries it; otherwise the sentence says
that the data do not tell. Inputs are analysis outputs (fractions); every function tolerates
missing pieces.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .analysis.intervals import Z95
from .vocab import (
    OVERALL_COLUMN,
    VERDICT_FLAG,
    VERDICT_NOT_APPLICABLE,
    VERDICT_PROBLEM,
    format_label,
    language_label,
)


@dataclass(frozen=True)
class Finding:
    """One sentence for people, the test behind it and the n it rests on.

    ``headline`` is what a stakeholder reads aloud (no test names, no intervals: presentation
    mode shows it in large type); ``detail`` carries the numbers and intervals; ``test`` names
    the method; ``n`` is the sample size the statement rests on and ``n_unit`` says what was
    counted (items, models, ...). Detail, test and n are shown together as "How we know".
    """

    headline: str
    detail: str
    test: str
    n: int | None = None
    n_unit: str = ""

    def how_we_know(self) -> str:
        """The statistical detail behind the headline in one paragraph: numbers, method, n."""
        size = f"; n = {self.n} {self.n_unit}".rstrip() if self.n is not None else ""
        return f"{self.detail} Method: {self.test}{size}."


#: Words a stakeholder's headline never uses (they belong in "How we know").
STATISTICIAN_WORDS = ("macro", "micro average", "odds ratio", "CI", "Holm", "signed rank", "signed-rank", "EAP",
                      "pcm", "Wilcoxon", "t-test", "p <", "p =", "r_pb", "Test:", "95%", "interval",
                      "bootstrap", "logit", "regression")


def statistician_words(text: str) -> list[str]:
    """The statistician's words in ``text`` (whole words for the short ones), for tests and checks."""
    found = []
    for word in STATISTICIAN_WORDS:
        pattern = r"\b" + re.escape(word) + r"\b" if word.isalpha() else re.escape(word)
        if re.search(pattern, text, flags=0 if word in ("CI", "EAP") else re.IGNORECASE):
            found.append(word)
    return found


def odds_words(ratio: float) -> str:
    """An odds ratio read in words ("about half the odds", "about twice the odds")."""
    if not np.isfinite(ratio) or ratio <= 0:
        return "odds that cannot be read"
    if 0.9 <= ratio <= 1.1:
        return "about the same odds"
    if ratio < 1:
        inverse = 1 / ratio
        named = {2: "half the odds", 3: "a third of the odds", 4: "a quarter of the odds", 5: "a fifth of the odds"}
        whole = int(round(inverse))
        if whole in named and abs(inverse - whole) <= 0.15 * whole:
            return f"about {named[whole]}"
        return f"about {100 * ratio:.0f}% of the odds"
    named = {2: "twice", 3: "three times", 4: "four times", 5: "five times"}
    whole = int(round(ratio))
    if whole in named and abs(ratio - whole) <= 0.15 * whole:
        return f"about {named[whole]} the odds"
    return f"about {ratio:.1f} times the odds"


#: Significance level of every finding that counts significant results.
ALPHA = 0.05
#: "About as much": neither share of variance is more than this many times the other.
SIMILAR_RATIO = 1.25


def _p(x: float) -> str:
    return f"{100 * x:.1f}%"


def _pp(x: float) -> str:
    return f"{100 * x:+.1f} points"


def _pv(p: float) -> str:
    return "p < .001" if p < 0.001 else f"p = {p:.3f}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _names(names: list[str]) -> str:
    """'A', 'A and B', 'A, B and C'."""
    names = [str(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _has_groups(board: pd.DataFrame | None) -> bool:
    return board is not None and "tie_group" in board and board["tie_group"].notna().any()


def _ranking_test(board: pd.DataFrame) -> str:
    """The method of the tie groups, with the number of pairs it corrects for."""
    n = len(board)
    return (f"paired t test of every pair's macro-average difference on the items every model answered, clustered "
            f"by image, Holm-corrected across all {n * (n - 1) // 2} pairs (family-wise 5%); groups: the highest "
            "model not yet grouped opens a group with every model it is not separated from")


def _with_interval(row) -> str:
    return (f"{row['model']} {_p(row['macro'])} (95% interval {100 * row['macro_ci_low']:.1f} to "
            f"{100 * row['macro_ci_high']:.1f}; ranks {int(row['rank_best'])}-{int(row['rank_worst'])})")


def _group_leader_finding(b: pd.DataFrame) -> Finding:
    """The top tie group: level when it holds several models; a lead only for a group of one."""
    n_common = int(b["n_common"].max()) if "n_common" in b else int(b["n_items"].max())
    first = b[b["tie_group"] == 1]
    top = first.iloc[0]
    test = _ranking_test(b)
    rows = "; ".join(_with_interval(r) for _, r in first.iterrows())
    if len(first) > 1:
        low, high = first["macro"].min(), first["macro"].max()
        spread = (f"{'both' if len(first) == 2 else 'all'} average {_p(high)}" if _p(low) == _p(high)
                  else f"their averages lie between {_p(low)} and {_p(high)}")
        headline = (f"{_names(list(first['model']))} cannot be told apart: {spread}, and on these {n_common} items "
                    "none of them is ahead of the others beyond chance.")
        detail = (f"Macro average (unweighted mean of the format means) of the first tie group, the models that "
                  f"cannot be told from the highest: {rows}. No pair among them is separated on the {n_common} items "
                  f"every model answered; the order inside the group follows the point estimates only. "
                  f"{len(b)} models compared.")
        return Finding(headline, detail, test, n_common, "items answered by every model")
    second = b.iloc[1]
    gap = 100 * (top["macro"] - second["macro"])
    headline = (f"{top['model']} scores highest, {_p(top['macro'])} on average, {gap:.1f} points ahead of "
                f"{second['model']}: ahead of every other model beyond sampling noise.")
    detail = (f"Macro average (unweighted mean of the format means): {_with_interval(top)}; the next, "
              f"{_with_interval(second)}. {top['model']} is separated from each of the other {len(b) - 1} models on "
              f"the {n_common} items every model answered, so it is alone in the first tie group.")
    return Finding(headline, detail, test, n_common, "items answered by every model")


def leader_finding(board: pd.DataFrame, paired: dict | None = None) -> Finding | None:
    """Who scores highest, and whether the data can tell it from the others.

    With the leaderboard's tie groups (`analysis.ranking`: paired tests of every pair, Holm), the
    sentence names the first tie group: several models are "cannot be told apart", and only a
    group of one is said to score highest beyond sampling noise. Without tie groups, ``paired``
    (`analysis.paired_macro_difference(leader, runner-up)`) decides between "too close to call"
    and a lead; without either (published aggregates hold no item-level answers) the gap is
    reported as untested and no model is said to lead.
    """
    if board is None or len(board) < 1:
        return None
    b = board.sort_values("macro", ascending=False, kind="stable")
    top = b.iloc[0]
    n = int(top.get("n_items", 0) or 0)
    if len(b) == 1:
        return Finding(f"{top['model']} scores {_p(top['macro'])} on average over the formats.",
                       f"Macro average = unweighted mean of the format means; n = {n} items.",
                       "descriptive (macro average)", n, "items")
    if _has_groups(b):
        return _group_leader_finding(b)
    second = b.iloc[1]
    gap = 100 * (top["macro"] - second["macro"])
    usable = (paired is not None and paired.get("model_a") == top["model"]
              and paired.get("model_b") == second["model"])
    if paired is None or not usable:
        return Finding(
            f"{top['model']} has the highest average score, {_p(top['macro'])}, {gap:.1f} points above "
            f"{second['model']}; the published averages cannot show whether that gap is more than chance.",
            f"Macro average = unweighted mean of the format means over {n} items; {len(b)} models compared. "
            "Item-level answers are not available here, so the gap cannot be tested with a paired comparison.",
            "descriptive (macro averages; no paired test possible)", n, "items")
    noise = paired["ci_low"] <= 0 <= paired["ci_high"]
    verdict = ("within sampling noise: the interval includes 0" if noise
               else "beyond sampling noise: the interval excludes 0")
    if noise:
        headline = (f"{top['model']} and {second['model']} are too close to call: {_p(top['macro'])} against "
                    f"{_p(second['macro'])} on average, a gap within sampling noise on {paired['n_items']} items.")
    else:
        headline = (f"{top['model']} scores highest, {_p(top['macro'])} on average, {gap:.1f} points ahead of "
                    f"{second['model']}: a lead beyond sampling noise.")
    detail = (f"Macro average (unweighted mean of the format means). On the {paired['n_items']} items both answered, "
              f"the macro difference is "
              f"{_pp(paired['diff_macro'])} (95% interval {100 * paired['ci_low']:+.1f} to "
              f"{100 * paired['ci_high']:+.1f}), {verdict}; {top['model']} scores higher on "
              f"{paired['n_a_better']} items, {second['model']} on {paired['n_b_better']}. "
              f"{len(b)} models compared.")
    test = (f"paired bootstrap of the macro-average difference (items resampled within format, "
            f"{paired['n_boot']} draws, 95% percentile interval)")
    return Finding(headline, detail, test, int(paired["n_items"]), "items answered by both models")


def tie_groups_finding(board: pd.DataFrame | None, max_named: int = 12) -> Finding | None:
    """How many groups the data can tell apart among all models, and who is in each.

    Replaces comparing unpaired intervals: every model answered the same items, so the groups come
    from paired tests of every pair (Holm-corrected). None without tie groups (published
    aggregates: no item answers to pair) or with fewer than three models. Names are listed up to
    ``max_named`` models; beyond that the groups are given by size.
    """
    if board is None or not _has_groups(board) or len(board) < 3:
        return None
    b = board.sort_values(["tie_group", "macro"], ascending=[True, False], kind="stable")
    n_common = int(b["n_common"].max()) if "n_common" in b else int(b["n_items"].max())
    groups = [list(g["model"]) for _, g in b.groupby("tie_group", sort=True)]
    if len(groups) == 1:
        headline = (f"The data cannot order these {len(b)} models: on these {n_common} items no model is ahead of "
                    "another beyond chance.")
    elif len(b) <= max_named:
        listed = "; then ".join(_names(g) for g in groups)
        headline = (f"The {len(b)} models fall into {len(groups)} groups that the data can tell apart, highest first: "
                    f"{listed}. Within a group the order is not settled.")
    else:
        sizes = ", ".join(str(len(g)) for g in groups)
        headline = (f"The {len(b)} models fall into {len(groups)} groups that the data can tell apart (of {sizes} "
                    "models, highest first); within a group the order is not settled.")
    ranks = "; ".join(f"{r['model']} {int(r['rank_best'])}-{int(r['rank_worst'])}" for _, r in b.iterrows())
    detail = (f"Tie groups on the {n_common} items every model answered; the ranks each model could hold: {ranks}. "
              "A model in a later group is below the first model of every earlier group beyond chance; two models "
              "of one group are not separated from that group's first.")
    return Finding(headline, detail, _ranking_test(b), n_common, "items answered by every model")


def mcq_ceiling_finding(board: pd.DataFrame, k: int = 6) -> Finding | None:
    """Whether the multiple-choice 95% intervals of the leaderboard's top ``k`` models all overlap.

    The models are the top of the leaderboard (by macro average), not the best on multiple choice,
    and the sentence says only what the test shows: intervals that overlap, or not. Overlapping
    intervals mean these items alone do not order the models; they do not show the models equal.
    """
    if board is None or "mcq" not in board or board["mcq"].notna().sum() < 3:
        return None
    order = board.sort_values(["rank", "model"] if "rank" in board else ["macro"],
                              ascending="rank" in board, kind="stable")
    b = order.dropna(subset=["mcq"]).head(k)
    span = 100 * (b["mcq"].max() - b["mcq"].min())
    overlap = bool(b["mcq_ci_low"].max() <= b["mcq_ci_high"].min())
    if overlap:
        head = (f"On multiple choice the leaderboard's top {len(b)} models cannot be told apart: their accuracies "
                f"lie within {span:.1f} points, inside each other's margins of error.")
    else:
        head = (f"On multiple choice the leaderboard's top {len(b)} models do not all score alike: their "
                f"accuracies are {span:.1f} points apart, more than their margins of error.")
    n = int(board["n_mcq"].max()) if "n_mcq" in board and board["n_mcq"].notna().any() else None
    detail = (("The 95% intervals all overlap. " if overlap else "The 95% intervals do not all overlap. ")
              + "Share of single-answer multiple-choice items answered right" + (f" (n = {n} items each)" if n else "")
              + f" by the {len(b)} models ranked highest on the macro average. "
              + ("Intervals that overlap mean these items alone do not order the models, not that the models are "
                 "equal." if overlap else "At least two of them are apart by more than their intervals."))
    return Finding(head, detail, f"Wilson score 95% interval (z = {Z95}) per model, overlap of the intervals", n,
                   "multiple-choice items per model")


def hardest_format_finding(type_means: pd.DataFrame) -> Finding | None:
    """The format whose top score is lowest, with the top model's interval, against the highest top score.

    With one format there is nothing to compare: the sentence says it is the only format and
    never calls its top score the lowest of any format.
    """
    if type_means is None or type_means.empty:
        return None
    tm = type_means.dropna(subset=["mean"])
    best = tm.groupby("type")["mean"].max()
    if best.empty:
        return None
    t = best.idxmin()
    row = tm[tm["type"] == t].sort_values("mean", ascending=False).iloc[0]
    n = int(row["n"]) if "n" in row and pd.notna(row["n"]) else 0
    interval = ""
    if "ci_low" in row and pd.notna(row.get("ci_low")) and pd.notna(row.get("ci_high")):
        interval = f", 95% interval {_p(row['ci_low'])} to {_p(row['ci_high'])}"
    name = format_label(t).lower()
    top = f"The highest score on this format is {_p(best[t])} ({row['model']}{interval}; n = {n} items)"
    if len(best) == 1:
        return Finding(f"On {name}, the only format here, no model scores above {_p(best[t])}.", top + ".",
                       f"Wilson score 95% interval (z = {Z95}) on the format mean", n, "items of the format")
    easy = best.idxmax()
    return Finding(
        f"On {name} no model scores above {_p(best[t])}, against up to {_p(best[easy])} on "
        f"{format_label(easy).lower()}.",
        f"{top}: the lowest top score of the {len(best)} formats (point estimates); the highest top score is "
        f"{_p(best[easy])} on {format_label(easy).lower()}.",
        f"Wilson score 95% interval (z = {Z95}) on the format mean", n, "items of the format")


def spread_finding(type_means: pd.DataFrame) -> Finding | None:
    """The largest best-minus-worst format gap of a model (one condition): the Formats page's story."""
    if type_means is None or type_means.empty:
        return None
    tm = type_means
    g = tm.groupby("model")["mean"].agg(["max", "min"])
    if g.empty:
        return None
    g["spread"] = g["max"] - g["min"]
    m = g["spread"].idxmax()
    return Finding(
        f"{m}'s best and worst formats are {100 * g.loc[m, 'spread']:.0f} points apart.",
        f"Across the {len(g)} models the median best-minus-worst gap is {100 * g['spread'].median():.0f} points.",
        "descriptive (format means)", int(len(g)), "models")


def format_vs_model_finding(variance: dict | None) -> Finding | None:
    """Does the format move scores more than the model? Worded from the shares of variance.

    ``variance`` is `analysis.format_model_variance` of the model x format means.
    """
    if not variance:
        return None
    f, m, rest = variance["share_format"], variance["share_model"], variance["share_rest"]
    if f > SIMILAR_RATIO * m:
        head = "Which format a question uses moves scores more than which model answers it."
    elif m > SIMILAR_RATIO * f:
        head = "Which model answers moves scores more than which format the question uses."
    else:
        head = "The question format matters about as much as the model."
    dropped = variance.get("models_dropped", 0)
    detail = (f"Of the variation of the {variance['n_cells']} model x format means ({variance['n_models']} models x "
              f"{variance['n_formats']} formats), the format explains {100 * f:.0f}%, the model {100 * m:.0f}%, "
              f"and {100 * rest:.0f}% is model-specific (some models do better on some formats)."
              + (f" {_plural(dropped, 'model')} without a mean on every format left out." if dropped else ""))
    return Finding(head, detail,
                   "two-way decomposition of the sum of squares of the model x format means "
                   f"(descriptive; 'about as much' when neither share exceeds {SIMILAR_RATIO} times the other)",
                   int(variance["n_cells"]), "model x format means")


def _answered_differently(e: pd.DataFrame) -> pd.Series:
    """Models with at least one paired item scored differently between the conditions (unknown: kept)."""
    if not {"n_improved", "n_degraded"} <= set(e.columns):
        return pd.Series(True, index=e.index)
    moved = pd.to_numeric(e["n_improved"], errors="coerce") + pd.to_numeric(e["n_degraded"], errors="coerce")
    return moved.isna() | (moved > 0)


def motivation_finding(effect: pd.DataFrame) -> Finding | None:
    """Does asking for a justification help? Both directions, and significance after Holm.

    A model that scored every paired item the same in both conditions has nothing to test: it is
    named and left out of every count, so the headline and the test speak of the same models.
    """
    if effect is None or effect.empty or "delta_macro" not in effect:
        return None
    e = effect.dropna(subset=["delta_macro"])
    if e.empty:
        return None
    moved = _answered_differently(e)
    idle = e.loc[~moved, "model"].astype(str).tolist()
    e = e.loc[moved]
    n_paired = pd.to_numeric(e["n_paired"], errors="coerce").dropna() if "n_paired" in e else pd.Series(dtype=float)
    n = int(n_paired.min()) if len(n_paired) else None
    items = ""
    if n is not None:
        hi = int(n_paired.max())
        items = f" on {n} paired items per model" if hi == n else f" on {n} to {hi} paired items per model"
    left_out = (f"{_plural(len(idle), 'model')} scored every paired item the same in both conditions and "
                f"{'is' if len(idle) == 1 else 'are'} not counted ({', '.join(idle)})") if idle else ""
    if e.empty:
        every = pd.to_numeric(effect["n_paired"], errors="coerce").dropna() if "n_paired" in effect else pd.Series()
        return Finding("Asking for a justification changed no model's score on any item.",
                       f"Motivation minus default, item by item; {left_out}.", "descriptive (per-item scores)",
                       int(every.min()) if len(every) else None, "paired items per model")
    up = int((e["delta_macro"] > 1e-12).sum())
    down = int((e["delta_macro"] < -1e-12).sum())
    rise, drop = e.loc[e["delta_macro"].idxmax()], e.loc[e["delta_macro"].idxmin()]
    level = len(e) - up - down
    moves = [f"macro average rises for {up} and drops for {down}" + (f" and stays level for {level}" if level else "")
             + f" of {len(e)} models (point estimates)"]
    if up:
        moves.append(f"largest rise {_pp(rise['delta_macro'])} ({rise['model']})")
    if down:
        moves.append(f"largest drop {_pp(drop['delta_macro'])} ({drop['model']})")
    wilcoxon = "p_wilcoxon" in e and e["p_wilcoxon"].notna().any()
    ttest = not wilcoxon and "p_ttest" in e and e["p_ttest"].notna().any()
    pcol = "p_holm" if (wilcoxon or ttest) and "p_holm" in e and e["p_holm"].notna().any() else None
    if pcol:
        tested = e[e[pcol].notna()]
        sig = tested[tested[pcol] < ALPHA]
        verb = "is" if len(sig) == 1 else "are"
        if wilcoxon:
            # the signed-rank test tests whether rises or drops carry more rank weight: its direction is
            # the sign of the rank-biserial correlation, not that of a pooled mean difference
            base = "Wilcoxon signed-rank test on the non-zero per-item differences"
            sign = sig["rank_biserial"] if "rank_biserial" in sig else pd.Series(np.nan, index=sig.index)
            sig_text = (f"after Holm correction across {len(tested)} models, the signed-rank test finds "
                        f"{_plural(len(sig), 'model')} whose per-item rises and drops are unbalanced at p < .05")
            if len(sig) and sign.notna().all():
                sig_text += (f" ({int((sign > 0).sum())} towards rises, {int((sign < 0).sum())} towards drops, "
                             "by the signed ranks)")
        else:
            base = "paired t-test on the pooled per-item scores (published p-values)"
            sign = sig["delta_micro"] if "delta_micro" in sig else pd.Series(np.nan, index=sig.index)
            sig_text = (f"after Holm correction across {len(tested)} models, {len(sig)} pooled per-item "
                        f"{'difference' if len(sig) == 1 else 'differences'} {verb} significant at p < .05")
            if len(sig) and sign.notna().all():
                sig_text += f" ({int((sign > 0).sum())} up, {int((sign < 0).sum())} down)"
        test = f"{base}, Holm-adjusted across {len(tested)} models (p < .05)"
        headline = _motivation_headline(len(tested), len(sig), sign)
    else:
        sig_text, test = "no test available for these data", "descriptive (macro averages)"
        headline = (f"Asking for a justification moved the average scores of {_plural(len(e), 'model')} by "
                    f"{_pp(drop['delta_macro'])} to {_pp(rise['delta_macro'])}; these data allow no test of whether "
                    "any of these changes is more than chance.")
    detail = (f"Macro average, motivation minus default{items}: " + "; ".join(moves)
              + f"; {sig_text}" + (f"; {left_out}" if left_out else "") + ".")
    return Finding(headline, detail, test, n, "paired items per model")


def _motivation_headline(tested: int, changed: int, sign: pd.Series) -> str:
    """What the corrected test carries, in words: the models it finds changed (by direction when
    known) and the rest, which changed within noise."""
    start = "Asking for a justification "
    if not changed:
        return start + f"changes the score of none of {tested} models beyond chance: all changed within noise."
    rest = tested - changed
    tail = "" if not rest else ("; the other model changed within noise" if rest == 1
                                else f"; the other {rest} changed within noise")
    if len(sign) == changed and sign.notna().all():
        ups, downs = int((sign > 0).sum()), int((sign < 0).sum())
        parts = []
        if ups:
            parts.append(f"raises the score of {ups} of {tested} models")
        if downs:
            parts.append(f"lowers it for {downs}" if ups else f"lowers the score of {downs} of {tested} models")
        if ups + downs < changed:
            parts.append(f"changes it without a clear direction for {changed - ups - downs}")
        return start + " and ".join(parts) + " beyond chance" + tail + "."
    return start + f"changes the score of {changed} of {tested} models beyond chance" + tail + "."


def _image_sentence(r: pd.Series, n_items: object) -> str:
    """What the image odds ratio's interval allows one to say, in words (no odds ratio, no interval)."""
    read = f"{odds_words(r['odds_ratio'])} of a right answer"
    if read.startswith("about the same odds"):  # a small effect the interval still places on one side
        read = (f"the odds of a right answer are {abs(100 * (r['odds_ratio'] - 1)):.0f}% "
                f"{'lower' if r['odds_ratio'] < 1 else 'higher'}")
    if r["ci_high"] < 1:
        return f"Items with an image are answered correctly less often than comparable items without one: {read}."
    if r["ci_low"] > 1:
        return f"Items with an image are answered correctly more often than comparable items without one: {read}."
    size = f" on these {n_items} items" if n_items else ""
    return ("Once format, language and model are taken into account, the data do not tell whether an image makes "
            f"a question harder or easier{size}.")


def image_finding(regression: pd.DataFrame | None, effect: pd.DataFrame | None = None) -> Finding | None:
    """Image items after adjusting for format, language and model (odds ratio)."""
    if regression is not None and len(regression) and (regression["predictor"] == "has_image:True").any():
        r = regression[regression["predictor"] == "has_image:True"].iloc[0]
        n_obs = regression.attrs.get("n_obs")
        n_items, n_models = regression.attrs.get("n_items"), regression.attrs.get("n_models")
        size = f" The fit rests on {n_obs} model x item rows ({n_items} items, {n_models} models)." if n_obs else ""
        return Finding(
            _image_sentence(r, n_items),
            f"Odds ratio for an image {r['odds_ratio']:.2f} ({odds_words(r['odds_ratio'])}), 95% CI "
            f"{r['ci_low']:.2f} to {r['ci_high']:.2f}"
            + (" (includes 1)" if r["ci_low"] <= 1 <= r["ci_high"] else "")
            + ". Raw with/without comparisons mix formats and languages; the regression adjusts for them." + size,
            "logistic regression, correct ~ format + image + language + model, item-clustered errors",
            int(n_obs) if n_obs else None, "model x item rows")
    compared = effect.dropna(subset=["delta"]) if effect is not None and "delta" in effect else None
    if compared is not None and len(compared):  # models with items both with and without an image
        d = 100 * compared["delta"].mean()
        n = (int(compared["n_with"].max() + compared["n_without"].max())
             if {"n_with", "n_without"} <= set(compared) else None)
        head = ("Without an adjusted comparison the data do not tell what an image does to a question: "
                f"raw averages with and without an image differ by {abs(d):.1f} points, a difference that also "
                "reflects format and language.")
        return Finding(head, f"Mean over {_plural(len(compared), 'model')} of the with-minus-without difference: "
                       f"{_pp(d / 100)} (raw, unadjusted, untested); the two subsets differ in format and language.",
                       "descriptive (raw means)", n, "items")
    return None  # every item has an image, or none has: there is nothing to compare


def unstable_model_finding(result: dict | None) -> Finding | None:
    """The model whose answers change between repeats more than every rival's, or None.

    ``result`` is `analysis.stability.unstable_model`: it exists only when the exact McNemar test on
    the items both models answered in repeats, Holm-corrected over the rivals, says the candidate
    flips more than each of them; with no such model (or no repeats) there is no sentence, since
    nothing the data carry could be said about an order of stability.
    """
    if not result:
        return None
    headline = (f"{result['model']} changes its answers between repeated runs more often than every other model: "
                f"on {_p(result['flip_rate'])} of its repeated items it was right in some runs and wrong in others.")
    detail = (f"Flip rate = share of items right in some repeats and wrong in others, on the {result['items']} items "
              f"{result['model']} answered in at least two repeats (up to {result['repeats']} repeats): "
              f"{_p(result['flip_rate'])} (95% Wilson interval {_p(result['flip_low'])} to {_p(result['flip_high'])}); "
              f"the highest flip rate among its {_plural(result['rivals'], 'rival')} is "
              f"{_p(result['rival_max_rate'])}. Largest Holm-adjusted {_pv(result['p_max'])} against a rival.")
    test = ("one-sided exact McNemar test on the items both models answered in repeats (flipped or not, paired by "
            "item), Holm-corrected over the rivals, alpha = 0.05")
    return Finding(headline, detail, test, int(result["items"]), "items with repeats")


def labelled(found: list[Finding], prefix: str) -> list[Finding]:
    """Findings whose headline starts with ``prefix`` (e.g. "Simulated respondents: ", from
    `labels.DataLabel.finding_prefix`), so a headline shown alone still says what answered."""
    if not prefix:
        return list(found)
    return [replace(f, headline=prefix + f.headline) for f in found]


def key_findings(board: pd.DataFrame | None, type_means: pd.DataFrame | None = None,
                 effect: pd.DataFrame | None = None, regression: pd.DataFrame | None = None,
                 image: pd.DataFrame | None = None, paired: dict | None = None,
                 variance: dict | None = None, prefix: str = "", unstable: dict | None = None) -> list[Finding]:
    """Up to six findings, most important first; missing inputs are skipped; then, when repeats name a
    model whose answers flip more than every rival's (``unstable``, `unstable_model_finding`), that one.

    Every frame holds the selected condition only, except ``effect`` (default vs motivation).
    ``paired`` is the leader vs runner-up comparison (`analysis.paired_macro_difference`),
    ``variance`` the format/model shares (`analysis.format_model_variance`); ``prefix`` starts
    every headline (see `labelled`).
    """
    candidates = [
        leader_finding(board, paired),
        tie_groups_finding(board),
        hardest_format_finding(type_means),
        format_vs_model_finding(variance),
        motivation_finding(effect),
        image_finding(regression, image),
    ]
    found = [f for f in candidates if f is not None][:6]
    stability = unstable_model_finding(unstable)
    return labelled(found + ([stability] if stability else []), prefix)


# ---------------------------------------------------------------- published per-task tables

def study_leader_finding(scores: pd.DataFrame) -> Finding | None:
    """Who leads the printed overall column of a published per-task table, and by how much (descriptive).

    ``scores`` is `views.dimension_scores` of the table: one row per model and column, the
    overall column named `vocab.OVERALL_COLUMN`, median-model rows marked ``is_median``.
    """
    if scores is None or scores.empty:
        return None
    rows = scores.loc[~scores["is_median"].astype(bool) & (scores["column"] == OVERALL_COLUMN)].dropna(subset=["score"])
    if rows.empty:
        return None
    rows = rows.sort_values("score", ascending=False, kind="stable")
    top = rows.iloc[0]
    head = f"{top['model']} has the highest published overall score, {_p(top['score'])}"
    if len(rows) > 1:
        second = rows.iloc[1]
        gap = 100 * (top["score"] - second["score"])
        head += (f", {gap:.1f} points above {second['model']}" if gap >= 0.05 else f", level with {second['model']}")
        head += "; the published table cannot show whether that gap is more than chance"
    aggregation = str(top.get("aggregation") or "as printed in the publication")
    return Finding(head + ".",
                   f"Overall score: {aggregation}; {len(rows)} models in the table. "
                   "The answers behind it are not published, so the gap cannot be tested.",
                   "descriptive (published table; no test possible)", int(len(rows)), "models in the table")


def study_hardest_finding(scores: pd.DataFrame) -> Finding | None:
    """The column of a published table where even the best model stays lowest, with its interval."""
    if scores is None or scores.empty:
        return None
    rows = scores.loc[~scores["is_median"].astype(bool) & (scores["column"] != OVERALL_COLUMN)].dropna(subset=["score"])
    if rows.empty:
        return None
    best = rows.groupby("column")["score"].max()
    column = best.idxmin()
    row = rows[rows["column"] == column].sort_values("score", ascending=False, kind="stable").iloc[0]
    n = int(row["n"]) if "n" in row and pd.notna(row["n"]) else None
    interval = (f", 95% interval {_p(row['ci_low'])} to {_p(row['ci_high'])}"
                if pd.notna(row.get("ci_low")) and pd.notna(row.get("ci_high")) else "")
    test = (str(row.get("interval") or "Wilson 95% interval on the printed n") if interval
            else "descriptive (published table; no item count printed, so no interval)")
    lowest = (f"; the lowest top score of the {len(best)} columns (point estimates)" if len(best) > 1
              else "; the only column besides the overall one")
    return Finding(f"In {column} no model of the published table scores above {_p(best[column])}.",
                   f"The highest score there is {_p(row['score'])} ({row['model']}{interval})"
                   + (f" (n = {n} items as printed)" if n else "") + lowest + ".",
                   test, n if n else int(rows["model"].nunique()), "items of the column" if n else "models in the table")


def study_checks_finding(checks: pd.DataFrame) -> Finding | None:
    """Whether the published table adds up: how many applicable consistency checks find a problem."""
    if checks is None or checks.empty:
        return None
    applicable = checks.loc[checks["verdict"] != VERDICT_NOT_APPLICABLE]
    total = int(applicable["check"].nunique())
    if not total:
        return None
    problems = applicable.loc[applicable["verdict"].isin([VERDICT_PROBLEM, VERDICT_FLAG])]
    kinds = int(problems["check"].nunique())
    if kinds:
        head = f"The published table does not add up on {kinds} of {total} consistency checks."
        detail = f"First: {problems.iloc[0]['detail']}"
    else:
        head = f"The published table passes all {total} applicable consistency checks."
        detail = "Overall against the column means, stated order, chance levels and names."
    return Finding(head, detail, "consistency checks of the printed numbers (allowing half a unit of the last "
                   "printed digit per value)", total, "checks")


def study_findings(scores: pd.DataFrame | None, checks: pd.DataFrame | None) -> list[Finding]:
    """The findings of a published per-task table (no item-level data): leader, hardest column, checks."""
    candidates = [study_leader_finding(scores), study_hardest_finding(scores), study_checks_finding(checks)]
    return [f for f in candidates if f is not None]


FINDING_COLUMNS = ["headline", "detail", "test", "n", "n_unit"]


def as_frame(found: list[Finding]) -> pd.DataFrame:
    """Findings as rows (headline, detail, test, n, n_unit): the `show findings` twin of the Overview list."""
    return pd.DataFrame([{"headline": f.headline, "detail": f.detail, "test": f.test,
                          "n": f.n, "n_unit": f.n_unit} for f in found],
                        columns=FINDING_COLUMNS).astype({"n": "Int64"})


def image_raw_finding(effect: pd.DataFrame) -> Finding | None:
    """How far the raw with-image and without-image means of the models lie apart (untested, no direction)."""
    if effect is None or effect.empty or not {"mean_with", "mean_without"} <= set(effect.columns):
        return None
    e = effect.dropna(subset=["mean_with", "mean_without"])
    if e.empty:
        return None
    higher = int((e["mean_with"] > e["mean_without"]).sum())
    lower = int((e["mean_with"] < e["mean_without"]).sum())
    delta = 100 * (e["mean_with"] - e["mean_without"])
    n_with = int(e["n_with"].max()) if "n_with" in e else 0
    n_without = int(e["n_without"].max()) if "n_without" in e else 0
    return Finding(f"Raw averages with and without an image differ by {delta.min():+.1f} to {delta.max():+.1f} points "
                   f"across {_plural(len(e), 'model')}: an untested comparison that also mixes format and language, so "
                   "it does not show what the image does.",
                   f"Mean score on {n_without} items without and {n_with} with an image, per model; {higher} of "
                   f"{len(e)} models score higher and {lower} lower with an image (point estimates, untested).",
                   "descriptive (raw means; formats and languages differ between the two subsets)",
                   n_without + n_with, "items")


def image_adjusted_verdict(regression: pd.DataFrame | None) -> Finding | None:
    """The image odds ratio of the regression, and what its 95% interval allows one to say."""
    if regression is None or not len(regression) or not (regression["predictor"] == "has_image:True").any():
        return None
    r = regression[regression["predictor"] == "has_image:True"].iloc[0]
    n_obs = regression.attrs.get("n_obs")
    return Finding(_image_sentence(r, regression.attrs.get("n_items")),
                   f"Odds ratio {r['odds_ratio']:.2f} ({odds_words(r['odds_ratio'])}), 95% interval "
                   f"{r['ci_low']:.2f} to {r['ci_high']:.2f}"
                   + (" (includes 1)" if r["ci_low"] <= 1 <= r["ci_high"] else "") + f", {_pv(r['p'])}.",
                   "logistic regression correct ~ format + image + language + model, "
                   "item-clustered standard errors", int(n_obs) if n_obs else None, "model x item rows")


def regression_reference_text(regression: pd.DataFrame, rules: bool = True) -> str:
    """The reference levels of a regression in words, for captions ('References: single-answer ...').

    Each odds ratio compares with these levels, so a caption that hides them hides what the
    numbers mean; with ``rules`` each level says why it was used (published, chosen, a rule).
    """
    refs = regression.attrs.get("reference") or {}
    why = regression.attrs.get("reference_rule") or {}
    if not refs:
        return "References: not recorded"
    words = {
        "type": lambda v: format_label(v),
        "has_image": lambda v: "image items" if v else "no image",
        "language": lambda v: language_label(v),
        "model": lambda v: f"model {v}",
    }
    parts = []
    for factor in ("type", "has_image", "language", "model"):
        if factor in refs:
            text = words[factor](refs[factor])
            parts.append(f"{text} [{why[factor]}]" if rules and why.get(factor) else text)
    return "References: " + ", ".join(parts)

"""Models and people on the same items: group accuracy with intervals, and the gaps between them.

Input: the long score frame of models and people (``kind`` tells them apart: ``human`` rows are
people, every other row a model) and each person's group (pseudonym -> group). People answer
sampled forms, so a person has answered only some items and two people rarely the same ones.

Choices (stated in the captions and the report's methods):
- Accuracy of a model in a cell (a format x language, a format, a language, everything) is its mean
  item score there, with the Wilson 95% interval over its items, as everywhere else.
- Accuracy of a group of people in a cell is the mean over every answer its members gave there.
  Its 95% interval is a Wilson interval on the group's answers with the effective sample size of a
  sample clustered two ways (people and items are both samples): n_eff = answers / design effect,
  the design effect being the cluster-robust variance with people as clusters plus the one with
  items as clusters, over the variance of independent answers p(1 - p)/n, and at least 1. Adding
  the two variances counts the person x item residual twice, so the interval errs wide; with one
  person (or one item) only the other part remains.
- The gaps compare the best model of a scope (highest mean there) with two people of a group: the
  median person (by accuracy on their own items of the scope; the lower middle one for an even
  count, as the regression's median-ability model) and the best person. Each gap is model minus
  person on the items both answered, with a 95% paired t interval: mean of the per-item
  differences +- t(0.975, n - 1) x their SD / sqrt(n). Why not the percentile bootstrap used before:
  on the 7-8 items of a small cell it covered about 0.88-0.93 instead of 0.95 and its discrete
  resamples decided whether zero was inside; the t interval holds its level there (checked by
  simulation in the tests). With fewer than 2 items both answered, or every difference the same
  (no spread to estimate), the interval is not estimable: NaN, and the sentences say the cell is
  too small to tell.

The work is done on dense examinee x item matrices (numpy), so 50 models and 200 people on 5,000
items take a fraction of a second.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..vocab import DEFAULT_HUMAN_GROUP, HUMAN_KIND, format_rank
from .intervals import Z95, wilson_interval

ALL = "all"
#: The name of every group pooled (shown when there are two groups or more).
ALL_PEOPLE = "all people"
MODELS = "models"
PEOPLE = "people"
GROUP_INTERVAL_WORDS = ("95% Wilson interval on the group's answers, effective size for people and items as "
                        "crossed samples (cluster-robust design effect, at least 1)")
MODEL_INTERVAL_WORDS = f"95% Wilson score interval over items, z = {Z95}"
GAP_INTERVAL_WORDS = ("95% paired t interval on the per-item differences over the items both answered (Student t, "
                      "n - 1 degrees of freedom; none with fewer than 2 such items or when every difference is the "
                      "same)")

ACCURACY_COLUMNS = ["examinee", "name", "type", "language", "n_people", "n_items", "n_answers", "mean", "ci_low",
                    "ci_high", "design_effect", "interval"]
GAP_COLUMNS = ["group", "scope", "type", "language", "n_people", "n_items", "best_model", "best_model_mean",
               "n_items_model", "median_person", "median_person_mean", "n_items_median", "gap_median",
               "gap_median_ci_low", "gap_median_ci_high", "best_person", "best_person_mean", "n_items_best",
               "gap_best", "gap_best_ci_low", "gap_best_ci_high"]


def split(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(model rows, people rows) of a long frame with a ``kind`` column."""
    human = (frame["kind"] == HUMAN_KIND).to_numpy() if "kind" in frame else np.zeros(len(frame), dtype=bool)
    return frame[~human], frame[human]


@dataclass
class Panel:
    """Models and people as dense score matrices over one item index (NaN: not answered)."""

    items: np.ndarray            # item ids
    types: np.ndarray            # format per item
    languages: np.ndarray        # language per item ("all" when unknown)
    models: np.ndarray           # model names
    model_scores: np.ndarray     # models x items
    people: np.ndarray           # pseudonyms
    groups: np.ndarray           # group per person
    people_scores: np.ndarray    # people x items

    def scopes(self) -> list[tuple[str, str, str, np.ndarray]]:
        """(scope, type, language, item mask): each format x language, each format, each language, all."""
        out = []
        kinds = sorted(set(self.types), key=format_rank)
        languages = sorted(set(self.languages))
        for kind in kinds:
            for language in languages:
                mask = (self.types == kind) & (self.languages == language)
                if mask.any():
                    out.append(("cell", kind, language, mask))
        out += [("format", kind, ALL, self.types == kind) for kind in kinds]
        out += [("language", ALL, language, self.languages == language) for language in languages]
        out.append((ALL, ALL, ALL, np.ones(len(self.items), dtype=bool)))
        return out

    def group_rows(self) -> list[tuple[str, np.ndarray]]:
        """(group, row mask of people): each group, then every person pooled when there are two groups."""
        names = sorted(set(self.groups))
        out = [(g, self.groups == g) for g in names]
        if len(names) > 1:
            out.append((ALL_PEOPLE, np.ones(len(self.people), dtype=bool)))
        return out


def panel(frame: pd.DataFrame | Panel, groups: dict[str, str]) -> Panel:
    """The panel of a long frame (models and people in one condition) and each person's group (a
    `Panel` is returned as given, so one panel serves several tables)."""
    if isinstance(frame, Panel):
        return frame
    score = pd.to_numeric(frame["score"], errors="coerce").to_numpy(dtype=float)
    keep = ~np.isnan(score)
    frame, score = frame[keep], score[keep]
    who, names = pd.factorize(frame["model"], sort=True)
    where, items = pd.factorize(frame["item_id"])
    rows = np.arange(len(frame))
    first_item = np.empty(len(items), dtype=np.int64)
    first_item[where[::-1]] = rows[::-1]  # repeated indices: the last write wins, so the first row
    first_who = np.empty(len(names), dtype=np.int64)
    first_who[who[::-1]] = rows[::-1]
    scores = np.full((len(names), len(items)), np.nan)
    scores[who, where] = score
    # one row per examinee and per item is all the per-row columns are read at (a million rows of
    # text turned into Python strings would cost a second)
    kinds = frame["kind"].iloc[first_who].to_numpy(dtype=object) if "kind" in frame else np.full(len(names), None)
    human = np.asarray(kinds == HUMAN_KIND, dtype=bool)
    languages = frame["language"].iloc[first_item].to_numpy(dtype=object)
    languages = np.array([ALL if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in languages], dtype=object)
    names = np.asarray([str(n) for n in names], dtype=object)
    group_of = np.array([groups.get(n) or DEFAULT_HUMAN_GROUP for n in names[human]], dtype=object)
    return Panel(np.asarray([str(i) for i in items], dtype=object),
                 np.asarray([str(t) for t in frame["type"].iloc[first_item].to_numpy(dtype=object)], dtype=object),
                 languages,
                 names[~human], scores[~human], names[human], group_of, scores[human])


# ---------------------------------------------------------------- accuracy

def _cluster_variance(residual: np.ndarray, axis: int, n: int) -> tuple[int, float]:
    """(clusters with an answer, cluster-robust variance of the mean) with rows (axis=1) or columns
    (axis=0) of ``residual`` (NaN: no answer) as clusters."""
    sums = np.nansum(residual, axis=axis)
    present = (~np.isnan(residual)).any(axis=axis)
    clusters = int(present.sum())
    if clusters < 2:
        return clusters, math.nan
    return clusters, float((sums[present] ** 2).sum() * clusters / (clusters - 1) / n ** 2)


def _group_row(scores: np.ndarray) -> dict | None:
    observed = ~np.isnan(scores)
    n = int(observed.sum())
    if not n:
        return None
    mean = float(np.nansum(scores) / n)
    residual = scores - mean
    n_people, by_person = _cluster_variance(residual, 1, n)
    n_items, by_item = _cluster_variance(residual, 0, n)
    variance = (0.0 if math.isnan(by_person) else by_person) + (0.0 if math.isnan(by_item) else by_item)
    independent = mean * (1 - mean) / n
    design = max(1.0, variance / independent) if independent > 0 else 1.0
    low, high = wilson_interval(mean, n / design)
    return {"n_people": n_people, "n_items": n_items, "n_answers": n, "mean": mean, "ci_low": low, "ci_high": high,
            "design_effect": design}


def accuracy_table(frame: pd.DataFrame | Panel, groups: dict[str, str]) -> pd.DataFrame:
    """Models and groups of people side by side in every cell (format x language, format, language,
    all): n, mean and 95% interval (Wilson for a model, two-way for a group)."""
    p = panel(frame, groups)
    rows = []
    for _scope, kind, language, mask in p.scopes():
        block = p.people_scores[:, mask]
        for group, members in p.group_rows():
            found = _group_row(block[members])
            if found:
                rows.append({"examinee": PEOPLE, "name": group, "type": kind, "language": language, **found,
                             "interval": GROUP_INTERVAL_WORDS})
        block = p.model_scores[:, mask]
        counts = (~np.isnan(block)).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.nansum(block, axis=1) / counts
        low, high = wilson_interval(means, counts)
        for k, name in enumerate(p.models):
            if counts[k]:
                rows.append({"examinee": MODELS, "name": name, "type": kind, "language": language, "n_people": np.nan,
                             "n_items": int(counts[k]), "n_answers": int(counts[k]), "mean": float(means[k]),
                             "ci_low": float(low[k]), "ci_high": float(high[k]), "design_effect": 1.0,
                             "interval": MODEL_INTERVAL_WORDS})
    return pd.DataFrame(rows, columns=ACCURACY_COLUMNS)


# ---------------------------------------------------------------- gaps

def _median_index(values: np.ndarray) -> int:
    """Position of the median (the lower middle one for an even count) in ascending order."""
    order = np.argsort(values, kind="stable")
    return int(order[(len(values) - 1) // 2])


def paired_t_interval(differences: np.ndarray) -> tuple[float, float]:
    """95% t interval of the mean of paired differences; (NaN, NaN) when it is not estimable (fewer
    than 2 differences, or all equal: a zero spread would claim certainty that 2-8 items do not give)."""
    d = np.asarray(differences, dtype=float)
    n = len(d)
    if n < 2:
        return math.nan, math.nan
    sd = float(d.std(ddof=1))
    if not sd > 1e-12:
        return math.nan, math.nan
    half = float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    mean = float(d.mean())
    return mean - half, mean + half


def gap_table(frame: pd.DataFrame | Panel, groups: dict[str, str]) -> pd.DataFrame:
    """Per group and scope (all items, each format, each language): the best model against the
    median and the best person, model minus person on the items both answered, with a 95% paired t
    interval (`paired_t_interval`; NaN where the cell is too small to tell)."""
    p = panel(frame, groups)
    if not len(p.models) or not len(p.people):
        return pd.DataFrame(columns=GAP_COLUMNS)
    rows = []
    for scope, kind, language, mask in [s for s in p.scopes() if s[0] != "cell"][::-1]:  # all first
        block = p.model_scores[:, mask]
        counts = (~np.isnan(block)).sum(axis=1)
        if not counts.any():
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            model_means = np.where(counts > 0, np.nansum(block, axis=1) / np.maximum(counts, 1), -np.inf)
        best = int(np.argmax(model_means))
        model = np.where(mask, p.model_scores[best], np.nan)
        columns = np.flatnonzero(mask)
        for group, members in p.group_rows():
            people = np.flatnonzero(members)
            sub = p.people_scores[np.ix_(people, columns)]
            answered = (~np.isnan(sub)).sum(axis=1)
            if not answered.any():
                continue
            keep = answered > 0
            names, people, sub = p.people[people[keep]], people[keep], sub[keep]
            means = np.nansum(sub, axis=1) / answered[keep]
            row = {"group": group, "scope": scope, "type": kind, "language": language, "n_people": int(len(names)),
                   "n_items": int((~np.isnan(sub)).any(axis=0).sum()), "best_model": str(p.models[best]),
                   "best_model_mean": float(model_means[best]), "n_items_model": int(counts[best])}
            for which, k in (("median", _median_index(means)), ("best", int(np.argmax(means)))):
                person = np.where(mask, p.people_scores[people[k]], np.nan)
                both = ~np.isnan(model) & ~np.isnan(person)
                diff = np.where(both, model - person, 0.0)
                low, high = paired_t_interval(diff[both])
                row.update({f"{which}_person": str(names[k]), f"{which}_person_mean": float(means[k]),
                            f"n_items_{which}": int(both.sum()),
                            f"gap_{which}": float(diff[both].mean()) if both.any() else math.nan,
                            f"gap_{which}_ci_low": low, f"gap_{which}_ci_high": high})
            rows.append(row)
    out = pd.DataFrame(rows, columns=GAP_COLUMNS)
    order = {ALL: 0, "format": 1, "language": 2}
    return out.assign(_s=out["scope"].map(order), _t=out["type"].map(lambda t: format_rank(t) if t != ALL else (-1, "")),
                      _g=out["group"].map(lambda g: (g == ALL_PEOPLE, g))).sort_values(
        ["_s", "_t", "language", "_g"], kind="stable").drop(columns=["_s", "_t", "_g"]).reset_index(drop=True)


__all__ = ["ACCURACY_COLUMNS", "ALL", "ALL_PEOPLE", "GAP_COLUMNS", "GAP_INTERVAL_WORDS", "GROUP_INTERVAL_WORDS",
           "MODELS", "MODEL_INTERVAL_WORDS", "PEOPLE", "Panel", "accuracy_table", "gap_table", "paired_t_interval",
           "panel", "split"]

"""Views of the Compare runs section (Runs page): runs against a chosen baseline, in aggregate and per item.

A run here is what the score frame holds for one examinee: a model's latest answers in the selected
condition (repeats averaged), so the numbers equal a direct reading of `show scores`. The runs
compared are the selection's models (every model with answers when none is chosen) other than the
baseline. The baseline is named by its display name, its model key or one of its run ids from
`show runs`. Loading and keying only: the statistics are `analysis.run_diff`'s.
"""
from __future__ import annotations

import pandas as pd

from ..analysis import run_diff as stats
from ..errors import UserError
from ..links import not_found
from ..selection import Selection
from ._base import Source, cached, models, models_with_data, selected_scores

BASELINE_HELP = "a model's display name, its model key, or a run id from `show runs`"


def _runs_table(src: Source, sel: Selection) -> pd.DataFrame:
    """Every run of the dataset (`show runs`), whatever the selection's models and switches."""
    from .runs import runs

    return runs(src, sel.with_(models=(), baselines=True, humans=True), by="run")


def resolve_baseline(src: Source, sel: Selection, baseline: str) -> str:
    """The display name of the baseline the option names (`BASELINE_HELP`); a clear line otherwise."""
    name = str(baseline or "").strip()
    if not name:
        raise UserError(f"choose a baseline: --option baseline=RUN ({BASELINE_HELP})")
    known = models_with_data(src, sel.dataset, baselines=True, humans=True)
    if name in known:
        return name
    table = models(src)
    by_key = dict(zip(table["model"].astype(str), table["display_name"].astype(str)))
    if by_key.get(name) in known:
        return by_key[name]
    runs = _runs_table(src, sel)
    hit = runs[runs["run_id"].astype(str) == name]
    if not hit.empty:
        row = hit.iloc[0]
        if str(row["condition"]) != sel.condition:
            raise UserError(f"run {name!r} is in condition {row['condition']}, not {sel.condition}: "
                            f"choose --condition {row['condition']}")
        return str(row["model"])
    raise UserError(not_found("baseline", name, where=f"dataset {sel.dataset}", available=known))


def compared_runs(src: Source, sel: Selection, baseline: str) -> list[str]:
    """The runs set against the baseline: the selection's models, else every model with answers (the
    selection's baseline and people switches apply), the baseline itself left out."""
    known = models_with_data(src, sel.dataset, baselines=True, humans=True)
    unknown = [n for n in sel.models if n not in known]
    if unknown:
        raise UserError(not_found("model", unknown[0], where=f"dataset {sel.dataset}", available=known))
    names = list(sel.models) or models_with_data(src, sel.dataset, baselines=sel.baselines, humans=sel.humans)
    return [n for n in names if n != baseline]


@cached(maxsize=8)
def _paired(src: Source, sel: Selection, baseline: str) -> tuple[str, list[str], pd.DataFrame, dict[str, pd.DataFrame]]:
    """(baseline's display name, runs compared, their score frame, each run's pairs with the baseline).

    Why cached: the deltas and the per-item changes read the same pairs, and the Runs page asks for
    both on every rerun; the runs are paired once per selection and data version."""
    chosen = resolve_baseline(src, sel, baseline)
    runs = compared_runs(src, sel, chosen)
    if not runs:
        raise UserError(f"nothing to compare with {chosen}: choose at least one other model (--models)")
    frame = selected_scores(src, sel.with_(models=(*runs, chosen), baselines=True, humans=True))
    return chosen, runs, frame, stats.paired_runs(frame, chosen, runs)


@cached()
def run_diff(src: Source, sel: Selection, baseline: str = "") -> pd.DataFrame:
    """Runs against a baseline: overall (macro) and per-format deltas with paired bootstrap 95% intervals.

    One row per run and scope (``overall (macro average)``, then each format): items both answered
    (n_items), the baseline's and the run's mean on them, delta = run minus baseline with ci_low and
    ci_high (`analysis.run_diff.INTERVAL`), items improved and regressed, and ``change`` in words
    (a direction only when the interval excludes 0). Selected condition and profile.
    """
    chosen, runs, frame, pairs = _paired(src, sel, baseline)
    out = stats.run_deltas(frame, chosen, runs, pairs=pairs)
    if out.empty:
        raise UserError(f"no run shares an answered item with {chosen} in this selection")
    out.attrs["caption"] = (f"{len(runs)} run(s) against the baseline {chosen} (condition {sel.condition}, profile "
                            f"{sel.profile}): delta = run minus baseline on the items both answered; intervals: "
                            f"{stats.INTERVAL}; each interval is 95% on its own, not adjusted for the "
                            f"{len(out)} rows.")
    out.attrs.update(baseline=chosen, runs=runs, interval=stats.INTERVAL)
    return out


@cached()
def run_diff_items(src: Source, sel: Selection, baseline: str = "", only: str = "changed") -> pd.DataFrame:
    """Runs against a baseline, per item: the regressions and improvements (option only=regressions).

    One row per run and item whose score changed (both answered): baseline_score, run_score, change
    (run minus baseline) and direction (regression or improvement), the largest drop first.
    """
    chosen, runs, frame, pairs = _paired(src, sel, baseline)
    out = stats.run_item_changes(frame, chosen, runs, only=only, pairs=pairs)
    out.attrs["caption"] = (f"{len(out)} item(s), {stats.ITEM_FILTERS[only]}: {len(runs)} run(s) against the "
                            f"baseline {chosen} (condition {sel.condition}, profile {sel.profile}; change = run "
                            "minus baseline on the items both answered).")
    out.attrs.update(baseline=chosen, runs=runs)
    return out

"""Views of the Runs page: usage of live runs, the batch jobs behind them, reproducibility of repeated runs,
and stability over repeats (`repeat_scores`, `stability`, `item_stability`).

The condition filter of the selection is not applied: a run is one model x condition, and these
tables list every run (one row per condition) so that a batch launch over both conditions reads
as one; the dataset and the models of the selection narrow them like every other view.
"""
from __future__ import annotations

import pandas as pd

from ..errors import UserError
from ..selection import Selection
from ..store import batch as store_batch
from ._base import ItemLevelUnavailable, Source, cached, dataset_flags, human_models, items


@cached()
def runs(src: Source, sel: Selection, by: str = "run") -> pd.DataFrame:
    """Runs and their usage: answers, batch and online answers, tokens, cost (by=run, by=model, by=job).

    ``by="model"`` sums the runs per model and condition; ``by="job"`` lists the batch jobs of the
    dataset's launches with their states and counts. Costs are what each response recorded (batch
    answers at the batch price) at the registry's prices.
    """
    if by == "job":
        return batch_jobs(src, sel)
    if by not in ("run", "model"):
        raise UserError(f"runs: by must be run, model or job, not {by!r}")
    frame = _usage(src, sel.dataset, by)
    if not sel.humans:  # people's sittings are runs too; they are listed only when people are switched in
        frame = frame[~frame["model"].isin(human_models(src, sel.dataset))]
    return sel.apply(frame, all_conditions=True).reset_index(drop=True)


@cached(maxsize=8)
def _usage(src: Source, dataset: str, by: str) -> pd.DataFrame:
    """The store's usage rows of a dataset, read once per data version: a change of the sidebar's
    models or profile then only picks rows (the read does not depend on them)."""
    return store_batch.run_usage(src.store, dataset=dataset, by=by)


@cached()
def batch_jobs(src: Source, sel: Selection) -> pd.DataFrame:
    """Batch jobs of the launches over the dataset: provider, job id, state, counts, estimated and actual cost."""
    return _batch_jobs(src, sel.dataset)


@cached(maxsize=4)
def _batch_jobs(src: Source, dataset: str) -> pd.DataFrame:
    return store_batch.load_batch_jobs(src.store, dataset=dataset)


def launch_progress(src: Source, sel: Selection, launch: str | None = None, by: str = "model") -> pd.DataFrame:
    """Runs: a launch's progress per model (requests done of planned) or per provider (rate, limits).

    ``launch`` defaults to the launch running now, else the latest one; ``by="provider"`` gives
    each provider's requests done, its rate per minute over the last 3 minutes of the session and
    the limits it runs under. Read from the launch file and the journals (not cached: it changes
    while the launch runs); no launch, an empty table.
    """
    from ..runner import background, launchfile, pace

    if by not in ("model", "provider"):
        raise UserError(f"launch_progress: by must be model or provider, not {by!r}")
    states = background.list_launches(src.store)
    if launch is not None:
        states = [s for s in states if s["launch_id"] == launch]
        if not states:
            raise UserError(f"no launch {launch!r} next to {src.path}")
    live = [s for s in states if s["status"] in launchfile.LIVE_STATUSES]
    state = next(iter(live or states), None)
    if state is None:
        return pd.DataFrame(columns=["launch_id", "model", "provider", "requests", "done", "answered", "failed"]
                            if by == "model" else ["launch_id", "provider", "models", "requests", "done",
                                                   "per_minute", "limits"])
    by_model, by_provider = pace.launch_breakdown(state)
    if by == "model":
        return pd.DataFrame([{"launch_id": state["launch_id"], "model": r.model, "provider": r.provider,
                              "requests": r.jobs, "done": r.done, "answered": r.answered, "failed": r.failed}
                             for r in by_model],
                            columns=["launch_id", "model", "provider", "requests", "done", "answered", "failed"])
    return pd.DataFrame([{"launch_id": state["launch_id"], "provider": r.provider, "models": ", ".join(r.models),
                          "requests": r.jobs, "done": r.done,
                          "per_minute": None if r.per_minute is None else round(r.per_minute, 1), "limits": r.limits}
                         for r in by_provider],
                        columns=["launch_id", "provider", "models", "requests", "done", "per_minute", "limits"])


def reproducibility(src: Source, sel: Selection, all_datasets: bool = True) -> pd.DataFrame:
    """Repeated runs per model and condition: identical answers, per-item score spread, run-mean range.

    ``all_datasets`` (the Runs page): the repeated runs of every dataset; off: the selection's dataset."""
    return _reproducibility(src, None if all_datasets else sel.dataset)


@cached(maxsize=8)
def _reproducibility(src: Source, dataset: str | None) -> pd.DataFrame:
    """`reproducibility` of one dataset (None: every one), once per data version: it reads the strict
    profile's scores whatever the selection, so no filter or profile change computes it again."""
    from ..runner.repro import reproducibility as summarise
    from ..store import journal

    return summarise(journal.load_repetition_answers(src.store, dataset))


@cached()
def repeat_scores(src: Source, sel: Selection) -> pd.DataFrame:
    """The per-repeat score frame of the selection: one row per model x condition x item x repetition,
    only for the examinees with repeats (every condition; the other filters of the selection apply).

    Every other view reads the frame averaged over repeats (`selected_scores`); this one keeps each
    repeat so that stability can compare them. Empty when no examinee has repeats.
    """
    if dataset_flags(src, sel.dataset).aggregate_only:
        raise ItemLevelUnavailable(f"Dataset '{sel.dataset}' holds only the published aggregates: "
                                   "item-level data (and repeats) are not available for it.")
    frame = _repeat_rows(src, sel.profile, sel.dataset, sel.reviewed)
    return sel.apply(frame, all_conditions=True).reset_index(drop=True)


@cached(maxsize=8)
def _repeat_examinees(src: Source, dataset: str) -> tuple[tuple[str, str], ...]:
    """The examinees with repeats (model key, condition), read once per data version: they are the
    same under every profile, so a profile switch on a store without repeats reads nothing."""
    from ..store import scores as store_scores

    return tuple(store_scores.repeat_examinees(src.store, dataset))


@cached(maxsize=8)
def _repeat_rows(src: Source, profile: str, dataset: str, reviewed: bool) -> pd.DataFrame:
    """Every repeat's score row of a dataset under a profile, read once per data version: the
    Overview's findings ask on every filter change, and a filter only picks rows."""
    from ..store import scores as store_scores

    return store_scores.load_repeat_scores(src.store, profile, dataset, overrides=reviewed,
                                           examinees=_repeat_examinees(src, dataset))


@cached()
def stability(src: Source, sel: Selection) -> pd.DataFrame:
    """Stability over repeats per model and condition: agreeing items, flip rate (Wilson), run-to-run SD.

    Columns: items (answered in at least two repeats), repeats (most repeats of an item), agree_share
    (repeats all scored the same), flips, flip_rate with flip_low/flip_high (95% Wilson), macro_sd
    (SD across repeats of each repeat's macro average on the items answered in every repeat), macro_min,
    macro_max, and the variance of the repeat-averaged macro average split into var_items and
    var_repeats (repeat_share = var_repeats / their sum); formulas in `analysis.stability`.
    """
    from ..analysis.stability import stability as summarise

    return summarise(repeat_scores(src, sel))


@cached()
def item_stability(src: Source, sel: Selection, top: int = 20) -> pd.DataFrame:
    """Items that flip most between repeats: examinees that flipped of those with repeats, most first.

    ``top`` keeps the first rows (0: every item with repeats). ``flipped`` names the examinees
    (model and condition) whose answer was right in some repeats and wrong in others.
    """
    from ..analysis.stability import item_stability as per_item

    if top < 0:
        raise UserError(f"item_stability: top must be 0 (every item) or more, not {top}")
    return per_item(repeat_scores(src, sel), top=top or None)


def unstable_model(src: Source, sel: Selection) -> dict | None:
    """The model of the selected condition whose answers flip more than every rival's, when an exact
    McNemar test (Holm over rivals) says so (`analysis.stability.unstable_model`); None otherwise."""
    from ..analysis.stability import unstable_model as test

    frame = repeat_scores(src, sel)
    return test(frame, sel.condition) if not frame.empty else None


def run_history(src: Source) -> pd.DataFrame:
    """The runs launched from this tool with the status a user should see (`runner.background.run_history`).

    The store's run list is read once per data version (it counts every run's responses: on a
    large store the Runs page's heaviest read, asked on every rerun); whether a launch process is
    still alive is checked on every call."""
    from ..runner import background

    return background.run_history(src.store, runs=_run_list(src))


@cached(maxsize=4)
def _run_list(src: Source) -> pd.DataFrame:
    from ..store.runs import list_runs

    return list_runs(src.store)


def launch_items(src: Source, dataset: str) -> pd.DataFrame:
    """A dataset's current items as a launch plans them (`runner.launch.plan_launch`'s ``items_of``):
    the cached frame of the store's item read, so the Runs page re-plans without reading the items."""
    return items(src, dataset)


def runnable_datasets(src: Source) -> list[str]:
    """Datasets that hold items (the ones a run can ask), sorted."""
    return list(_runnable(src))


@cached(maxsize=4)
def _runnable(src: Source) -> tuple[str, ...]:
    """`runnable_datasets`, read once per data version (the Runs page asks on every rerun)."""
    from ..store import journal

    return tuple(journal.dataset_names(src.store))

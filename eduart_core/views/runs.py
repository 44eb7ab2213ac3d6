"""Views of the Runs page: usage of live runs, the batch jobs behind them, reproducibility of repeated runs.

The condition filter of the selection is not applied: a run is one model x condition, and these
tables list every run (one row per condition) so that a batch launch over both conditions reads
as one; the dataset and the models of the selection narrow them like every other view.
"""
from __future__ import annotations

import pandas as pd

from ..errors import UserError
from ..selection import Selection
from ..store import batch as store_batch
from ._base import Source, cached, human_models


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
    frame = store_batch.run_usage(src.store, dataset=sel.dataset, by=by)
    if not sel.humans:  # people's sittings are runs too; they are listed only when people are switched in
        frame = frame[~frame["model"].isin(human_models(src, sel.dataset))]
    return sel.apply(frame, all_conditions=True).reset_index(drop=True)


@cached()
def batch_jobs(src: Source, sel: Selection) -> pd.DataFrame:
    """Batch jobs of the launches over the dataset: provider, job id, state, counts, estimated and actual cost."""
    return store_batch.load_batch_jobs(src.store, dataset=sel.dataset)


@cached()
def reproducibility(src: Source, sel: Selection, all_datasets: bool = True) -> pd.DataFrame:
    """Repeated runs per model and condition: identical answers, per-item score spread, run-mean range.

    ``all_datasets`` (the Runs page): the repeated runs of every dataset; off: the selection's dataset."""
    from ..runner.repro import reproducibility as summarise
    from ..store import journal

    return summarise(journal.load_repetition_answers(src.store, None if all_datasets else sel.dataset))


def runnable_datasets(src: Source) -> list[str]:
    """Datasets that hold items (the ones a run can ask), sorted."""
    from ..store import journal

    return journal.dataset_names(src.store)

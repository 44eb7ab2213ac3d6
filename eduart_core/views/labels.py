"""The data label of a selection: which kinds of model (simulated, real, baseline) its numbers come from.

The rule is `labels.label_models`; this view only gathers the selection's examinees (the models
with data in the dataset, narrowed by the model filter; baselines only when the selection counts
them) and the baselines drawn as references, with each model's kind from the catalog.
"""
from __future__ import annotations

from ..labels import DataLabel, label_models
from ..selection import Selection
from ._base import Source, baseline_models, cached, dataset_flags, models, models_with_data


@cached(maxsize=32)
def data_label(src: Source, sel: Selection) -> DataLabel:
    """Simulated, real and baseline models behind the selection's numbers (published aggregates: none)."""
    if dataset_flags(src, sel.dataset).aggregate_only:
        return DataLabel(aggregate=True)
    names = models_with_data(src, sel.dataset, baselines=sel.baselines)
    if sel.models:
        wanted = set(sel.models)
        names = [n for n in names if n in wanted]
    table = models(src)
    kinds = dict(zip(table["display_name"].astype(str), table["kind"])) if "kind" in table else {}
    references = [] if sel.baselines else baseline_models(src, sel.dataset)
    return label_models(names, kinds, references)

"""Views of the contamination probes: per model the probe hit share and accuracy on hits vs misses,
per item which models hit, and accuracy before vs after a model's training cutoff.

Why beside the robustness views: both read linked items (``variant_of``) next to their sources
under the same selection; the statistics live in `analysis.contamination`, the probe items are
made by `eduart_core.probes` and asked by an ordinary run.
"""
from __future__ import annotations

import pandas as pd

from ..analysis import contamination as con
from ..analysis.intervals import WILSON_WORDS
from ..probes import PROBE_KINDS, PROBE_REFERENCE
from ..selection import Selection
from ._base import EmptySelection, Source, cached, items, scores

HIT_WORDS = ("probe hit: the probe (a hidden wrong option, or the second half of the question) answered with the "
             "hidden text, scored by the studio's fuzzy text matching (completion_open, strict profile)")


def _probe_links(src: Source, dataset: str) -> pd.DataFrame:
    catalogue = items(src, dataset)
    if "variant" not in catalogue or not catalogue["variant"].isin(PROBE_KINDS).any():
        raise EmptySelection(f"Dataset '{dataset}' has no contamination probes: make them with python -m eduart_core "
                             f"probe --dataset {dataset} --kind mask_option, and run them (run --items "
                             "variant=mask_option).")
    return catalogue


def _pairs(src: Source, sel: Selection) -> pd.DataFrame:
    links = _probe_links(src, sel.dataset)
    frame = sel.apply(scores(src, sel.profile, sel.dataset, sel.reviewed, True))
    pairs = con.probe_pairs(frame, links, PROBE_KINDS)
    if pairs.empty:
        raise EmptySelection("No model answered a probe in this selection: run the probes (run --items "
                             "variant=mask_option).")
    return pairs


@cached(maxsize=16)
def contamination(src: Source, sel: Selection) -> pd.DataFrame:
    """Per model, condition and probe kind: share of items whose contamination probe hits, and accuracy on the probe-hit vs probe-miss items (Wilson 95%)."""
    table = con.probe_summary(_pairs(src, sel))
    table.attrs["caption"] = (f"{HIT_WORDS}. Probes: {PROBE_REFERENCE}. Accuracy on the source items whose probe hit "
                              f"and on those whose probe missed (over the items whose source the model was asked too; "
                              f"blank where none). Intervals: {WILSON_WORDS}, over items. A model that "
                              f"never saw the items should hit almost none.")
    return table


@cached(maxsize=16)
def contamination_items(src: Source, sel: Selection) -> pd.DataFrame:
    """Per source item and probe kind: how many models were probed and which of them hit, named."""
    table = con.probe_items(_pairs(src, sel))
    table.attrs["caption"] = f"Items most often hit first. {HIT_WORDS}."
    return table


def _published(catalogue: pd.DataFrame) -> dict[str, str]:
    """Item -> its publication date (``tags.published``), for the items that carry one."""
    out = {}
    for item_id, record in zip(catalogue["item_id"], catalogue["record"]):
        tags = record.get("tags") if isinstance(record, dict) else None
        if isinstance(tags, dict) and str(tags.get("published") or "").strip():
            out[str(item_id)] = str(tags["published"]).strip()
    return out


def _cutoffs(models: list[str], cutoff: str) -> dict[str, str]:
    """Model key -> training cutoff: the registry's, else ``cutoff`` (the option) for every model."""
    from ..providers.registry import check_cutoff, load_registry

    known = {key: str(spec.cutoff) for key, spec in load_registry().items() if spec.cutoff}
    if cutoff:
        check_cutoff(cutoff, "option cutoff")
        known.update({m: cutoff for m in models if m not in known})
    return known


@cached(maxsize=16)
def contamination_period(src: Source, sel: Selection, cutoff: str = "") -> pd.DataFrame:
    """Per model with a training cutoff (models.toml cutoff, else option cutoff=DATE for the others): accuracy on items published before vs after it (item tags.published; Wilson 95%)."""
    published = _published(items(src, sel.dataset))
    if not published:
        raise EmptySelection(f"No item of dataset '{sel.dataset}' carries a publication date (tags.published).")
    frame = sel.apply(scores(src, sel.profile, sel.dataset, sel.reviewed))
    cutoffs = _cutoffs(sorted(frame["model_key"].astype(str).unique()) if "model_key" in frame else [], cutoff)
    if not cutoffs:
        raise EmptySelection("No model has a training cutoff: set cutoff in models.toml, or give one for every model "
                             "(option cutoff=2024-06).")
    table = con.period_accuracy(frame, published, cutoffs)
    if table.empty:
        raise EmptySelection("No model with a training cutoff answered an item with a publication date here.")
    table.attrs["caption"] = (f"Accuracy on the items published up to each model's training cutoff and after it (an "
                              f"item of the cutoff's own period counts as before). Intervals: {WILSON_WORDS}, over "
                              f"items. Higher accuracy before the cutoff is a contamination signal only where the "
                              f"intervals do not overlap; the two periods may differ in difficulty as well.")
    return table


__all__ = ["contamination", "contamination_items", "contamination_period"]

"""Views of the Robustness page: invariance under option and image variants, position bias, image reliance.

Why their own frames: every other view reads only the source items (variants stay out of the
leaderboard and item statistics); these read the variants beside their sources, so the same
selection (models, condition, profile) says whether a model knows the answer or the layout, and
whether it looked at the image. Statistics live in `analysis.invariance`.
"""
from __future__ import annotations

import pandas as pd

from .. import findings
from ..analysis import invariance as inv
from ..analysis.intervals import WILSON_WORDS
from ..errors import UserError
from ..findings import Finding
from ..probes import PROBE_KINDS
from ..selection import Selection
from ..variants import IMAGE_KINDS
from ..vocab import OPTION_FORMATS
from ._base import EmptySelection, Source, cached, items, scores

CIRCULAR_WORDS = ("consistency-adjusted accuracy: right on the source and on every variant of the kind, as "
                  "CircularEval (VLMEvalKit) counts a multiple-choice item right only when every rotation is")
FLIP_WORDS = ("flip rate: share of source items on which the answer to at least one variant of the kind is scored "
              "differently (right vs wrong) from the answer to the source")


def _links(src: Source, dataset: str) -> pd.DataFrame:
    catalogue = items(src, dataset)
    if "variant" in catalogue:  # contamination probes are other questions, not variants of the same one
        catalogue = catalogue[~catalogue["variant"].isin(PROBE_KINDS)]
    if "variant_of" not in catalogue or not catalogue["variant_of"].notna().any():
        raise EmptySelection(f"Dataset '{dataset}' has no variant items: make some with "
                             f"python -m eduart_core variants --dataset {dataset} --kind rotate, and run them "
                             "(run --items variant=rotate).")
    return catalogue


def _rows(src: Source, sel: Selection) -> pd.DataFrame:
    """Scores of the sources and their variants under the selection (variants included)."""
    frame = sel.apply(scores(src, sel.profile, sel.dataset, sel.reviewed, True))
    if frame.empty:
        raise EmptySelection("No scores match the current selection: widen the filters.")
    return frame


@cached(maxsize=16)
def invariance(src: Source, sel: Selection) -> pd.DataFrame:
    """Per model, condition and variant kind: flip rate and consistency-adjusted accuracy (CircularEval, VLMEvalKit) with 95% Wilson intervals, and the position bias on option items."""
    links = _links(src, sel.dataset)
    table = inv.invariance(_rows(src, sel), links)
    if table.empty:
        raise EmptySelection("No model answered both a source item and one of its variants in this selection: run "
                             "the variants (run --items variant=KIND).")
    bias = position_bias(src, sel)
    top = bias.sort_values(["model", "condition", "chosen_share"], ascending=[True, True, False]) \
        .groupby(["model", "condition"], sort=False).head(1)
    top = top.rename(columns={"position": "top_position", "chosen_share": "top_position_share",
                              "key_share": "key_share_at_top"})[["model", "condition", "top_position",
                                                                  "top_position_share", "key_share_at_top"]]
    table = table.merge(top, on=["model", "condition"], how="left")
    table.attrs["caption"] = (f"{FLIP_WORDS}; {CIRCULAR_WORDS}; position bias: the option position each model chose "
                              f"most often, its share of the model's answers and the share of items keyed there. "
                              f"Intervals: {WILSON_WORDS}, over source items.")
    return table


@cached(maxsize=16)
def item_invariance(src: Source, sel: Selection) -> pd.DataFrame:
    """Per source item and variant kind: how many models flip (right on the source, wrong on a variant or the other way), named."""
    table = inv.item_invariance(_rows(src, sel), _links(src, sel.dataset))
    if table.empty:
        raise EmptySelection("No model answered both a source item and one of its variants in this selection.")
    table.attrs["caption"] = ("Fragile items first: models (x conditions) whose answer to a variant of the kind is "
                              "scored differently from their answer to the source item.")
    return table


@cached(maxsize=16)
def position_bias(src: Source, sel: Selection) -> pd.DataFrame:
    """Per model and option position: share of the answers that chose it (Wilson 95%) against the share of items keyed there (source items and their rotations)."""
    from ..store.choices import load_choices

    catalogue = _links(src, sel.dataset)
    kinds = catalogue["variant"].astype(object)
    keep = catalogue["type"].isin(OPTION_FORMATS) & (catalogue["variant_of"].isna() | (kinds == "rotate"))
    options, keys = {}, {}
    for item_id, record in zip(catalogue.loc[keep, "item_id"], catalogue.loc[keep, "record"]):
        if isinstance(record, dict) and isinstance(record.get("choices"), list):
            options[str(item_id)] = [str(c.get("id")) for c in record["choices"] if isinstance(c, dict)]
            keys[str(item_id)] = {str(a.get("id")) for a in record.get("answers") or [] if isinstance(a, dict)}
    choices = load_choices(src.store, sel.dataset, OPTION_FORMATS)
    choices = sel.apply(choices.assign(kind=None)) if not choices.empty else choices
    table = inv.position_bias(choices, options, keys)
    if table.empty:
        raise EmptySelection("No single-answer option items were answered in this selection.")
    table.attrs["caption"] = (f"Share of each model's answers that chose the option in each position (1 = first), "
                              f"with its {WILSON_WORDS}, against the share of the same items whose key is there; "
                              f"source items and every rotation of their options.")
    return table


@cached(maxsize=16)
def image_reliance(src: Source, sel: Selection, margin: float = inv.SAME_MARGIN) -> pd.DataFrame:
    """Per model and image kind: accuracy drop from the source to the variant without or with a changed image (Newcombe paired 95% interval); same = interval within +/- margin."""
    if not 0 < margin < 1:
        raise UserError(f"option margin takes a number between 0 and 1, not {margin}")
    rows = _rows(src, sel)
    table = inv.image_reliance(rows, _links(src, sel.dataset), IMAGE_KINDS, margin)
    if table.empty:
        raise EmptySelection("No model answered both an image item and its no_image or perturbed-image variant.")
    table.attrs["caption"] = (f"Accuracy on the items with an image minus accuracy on their variant (no_image: the "
                              f"question without its image; grayscale, crop, downscale, mirror: the image changed), "
                              f"on the same items; 95% interval by Newcombe's paired method 10. 'Same' only when the "
                              f"whole interval lies within ±{margin * 100:.0f} percentage points.")
    return table


@cached(maxsize=32)
def item_variants(src: Source, sel: Selection, item: str = "") -> pd.DataFrame:
    """The variants of one source item (option item=<id>): id, kind, parameter, image file, and per model whether its answer flips against the source."""
    from ..store import items as store_items
    from ..store.errors import StoreError

    if not item:
        raise UserError("item_variants needs --option item=<item id>")
    catalogue = items(src, sel.dataset)
    found = catalogue[(catalogue["variant_of"] == item) & ~catalogue["variant"].isin(PROBE_KINDS)]
    rows = []
    for item_id, kind, record, image_hash in zip(found["item_id"], found["variant"], found["record"],
                                                 found["image_hash"]):
        variant = (record or {}).get("variant") or {}
        path = None
        if image_hash:
            try:
                path = str(store_items.image_path(src.store, image_hash))
            except (StoreError, UserError, OSError):
                path = None
        rows.append({"item_id": item_id, "kind": kind or "unnamed",
                     "parameter": ", ".join(f"{k}={v}" for k, v in variant.items() if k != "kind"),
                     "has_image": bool((record or {}).get("has_image")), "image_path": path})
    table = pd.DataFrame(rows, columns=["item_id", "kind", "parameter", "has_image", "image_path"])
    if table.empty:
        return table
    try:
        answered = _rows(src, sel)
    except UserError:
        return table
    answered = answered[answered["item_id"].astype(str).isin([item, *table["item_id"]])]
    right = answered.pivot_table(index="item_id", columns="model", values="correct", aggfunc="first", observed=True)
    if item in right.index:
        for model in right.columns:
            source = right.at[item, model]
            table[f"flips: {model}"] = [None if pd.isna(source) or v not in right.index or pd.isna(right.at[v, model])
                                        else bool(right.at[v, model]) != bool(source) for v in table["item_id"]]
    return table


def robustness_findings(src: Source, sel: Selection) -> pd.DataFrame:
    """Robustness findings as rows (headline, detail, test, n): the strongest position bias and the models that score the same without the image, each only where its interval carries it."""
    return findings.as_frame(robustness_finding_list(src, sel))


def robustness_finding_list(src: Source, sel: Selection) -> list[Finding]:
    """Plain sentences carried by the intervals: the strongest position bias, and models that score the
    same without the image (both only where the numbers say so); simulated respondents are labelled."""
    from .labels import data_label

    found = []
    try:
        bias = position_bias(src, sel)
    except UserError:
        bias = pd.DataFrame()
    if not bias.empty:
        over = bias[bias["chosen_low"] > bias["key_share"]]
        if not over.empty:
            r = over.assign(excess=over["chosen_share"] - over["key_share"]).sort_values("excess").iloc[-1]
            found.append(Finding(
                f"{r['model']} picks the option in position {int(r['position'])} {r['chosen_share']:.0%} of the time, "
                f"where the key is in that position {r['key_share']:.0%} of the time.",
                f"{int(r['chosen'])} of its {int(r['n_answers'])} single-answer option answers chose position "
                f"{int(r['position'])} ({WILSON_WORDS}: {r['chosen_low']:.0%} to {r['chosen_high']:.0%}), above the "
                f"{r['key_share']:.0%} of those items keyed there.",
                "share of chosen option positions with a Wilson interval, against the key's share", int(r["n_answers"]),
                "answers"))
    try:
        reliance = image_reliance(src, sel)
    except UserError:
        reliance = pd.DataFrame()
    if not reliance.empty:
        same = reliance[(reliance["kind"] == "no_image") & reliance["same"]]
        for r in same.itertuples():
            found.append(Finding(
                f"{r.model} scores the same without the image as with it on the items that have one.",
                f"Accuracy {r.source_accuracy:.0%} with the image and {r.variant_accuracy:.0%} without it on the same "
                f"{r.n_items} items: drop {r.drop * 100:+.1f} points (95% interval {r.drop_low * 100:+.1f} to "
                f"{r.drop_high * 100:+.1f}), within ±{inv.SAME_MARGIN * 100:.0f} points.",
                "paired difference of proportions, Newcombe's method 10", int(r.n_items), "items with an image"))
    return findings.labelled(found, data_label(src, sel).finding_prefix())


__all__ = ["image_reliance", "invariance", "item_invariance", "item_variants", "position_bias", "robustness_finding_list",
           "robustness_findings"]

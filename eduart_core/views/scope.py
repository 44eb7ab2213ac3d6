"""Which datasets the analysis pages offer, and which sidebar filters apply to a dataset.

Why in the library: the sidebar, the navigation and `show` must agree on what a dataset can
answer. A dataset of extracted items under review has no answers to analyse (it lives on the
review page); the published reference has no items, so languages, images and the scoring
profile do not apply to it and the item-level pages are hidden; a filter with a single possible
value (one language, no image anywhere) filters nothing. Each verdict comes with the one line
the sidebar shows under the disabled control.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..vocab import ALL_ITEMS, CONDITIONS, REVIEW_ONLY_KINDS, language_label
from ._base import Source, cached, dataset_flags, datasets, item_keys, published_type_means


@dataclass(frozen=True)
class FilterState:
    """Whether one selection field can be changed for a dataset, why not, and the value it takes."""

    applies: bool = True
    reason: str | None = None
    #: The value the field must take while it does not apply (None: its neutral value).
    value: object = None


def analysable_datasets(src: Source) -> list[str]:
    """Datasets the analysis pages can draw: answers to score, or published aggregates.

    Datasets of a review-only kind (extraction) and datasets whose items nobody has answered yet
    are left out; when no dataset qualifies every dataset is offered, so a fresh import still
    opens (and its pages say what is missing).
    """
    frame = datasets(src)
    keep = [str(r.dataset) for r in frame.itertuples()
            if r.kind not in REVIEW_ONLY_KINDS and (bool(r.aggregate_only) or bool(r.has_answers))]
    if keep:
        return keep
    return [str(d) for d, k in zip(frame["dataset"], frame["kind"]) if k not in REVIEW_ONLY_KINDS] \
        or [str(d) for d in frame["dataset"]]


def item_level(src: Source, dataset: str) -> bool:
    """True when the dataset has item-level data (item pages apply); False for published aggregates."""
    return not dataset_flags(src, dataset).aggregate_only


@cached(maxsize=8)
def _conditions(src: Source, dataset: str) -> tuple[str, ...]:
    from ..store import catalog

    if dataset_flags(src, dataset).aggregate_only:
        return tuple(sorted(published_type_means(src, dataset)["condition"].unique()))
    return tuple(catalog.answered_conditions(src.store, dataset))


def dataset_filters(src: Source, dataset: str) -> dict[str, FilterState]:
    """Per selection field (profile, condition, languages, image): does it apply, and if not, why.

    Fields not listed always apply (models, types).
    """
    out: dict[str, FilterState] = {}
    if dataset_flags(src, dataset).aggregate_only:
        out["profile"] = FilterState(False, "Published scores: the scoring profile does not apply.")
        out["languages"] = FilterState(False, "Published aggregates have no item languages to filter on.")
        out["image"] = FilterState(False, "Published aggregates have no item images to filter on.", ALL_ITEMS)
    else:
        keys = item_keys(src, dataset)
        langs = sorted(keys["language"].dropna().unique())
        if len(langs) <= 1:
            words = f"All items are in {language_label(langs[0])}." if langs else "The items have no language."
            out["languages"] = FilterState(False, words)
        n_with = int(keys["has_image"].sum())
        if n_with == 0 or n_with == len(keys):
            words = "No item has an image." if n_with == 0 else "Every item has an image."
            out["image"] = FilterState(False, words, ALL_ITEMS)
    answered = [c for c in _conditions(src, dataset) if c in CONDITIONS]
    if len(answered) == 1:
        out["condition"] = FilterState(False, f"Only answers in the {answered[0]} condition.", answered[0])
    return out



#: When a page does not apply to a dataset, and the one line that says why (None: it applies): the
#: rules below, each named by the pages it governs in the app's page registry. The menu hides such a
#: page; a link to it opens this line instead of an empty page. A page without a rule always applies.
#: A study dataset (tasks or dimensions) keeps the formats, motivation and
#: images pages only where it has several formats, two prompt conditions, or images to compare.
_ITEM_LEVEL_WHY = ("Dataset {d} holds only published aggregates: item-level data are not available for it. "
                   "Choose a dataset with item-level answers in the sidebar.")
_REFERENCE_WHY = ("Dataset {d} is a published per-task table: its scores, marks and consistency checks are on the "
                  "Tasks and dimensions page.")


def tasks_rule(f) -> str | None:
    """Tasks and dimensions: only a dataset with tasks or reasoning dimensions has them to show."""
    if f.groupings:
        return None
    return ("Dataset {d} has no tasks or reasoning dimensions. Choose a VQArt-Bench- or MUSE-style dataset "
            "(for example demo-vqa or demo-muse) in the sidebar.")


def formats_rule(f) -> str | None:
    """Formats: a published per-task table, or a study with one format, has no comparison across formats."""
    if f.reference:
        return _REFERENCE_WHY
    if f.groupings and f.formats <= 1:
        return "Every item of dataset {d} has the same answer format, so there is no comparison across formats."
    return None


def motivation_rule(f) -> str | None:
    """Motivation: the effect of asking for a justification needs both prompt conditions."""
    if f.reference:
        return _REFERENCE_WHY
    if f.groupings and f.conditions <= 1:
        return ("Dataset {d} was answered in one prompt condition only, so there is no effect of asking for a "
                "justification to show.")
    return None


def images_rule(f) -> str | None:
    """Images: needs item-level data and items with and without an image (or image attributes) to compare."""
    if f.aggregate_only:
        return _ITEM_LEVEL_WHY
    if f.groupings and not (f.image_attributes or f.with_and_without_image):
        return ("Every item of dataset {d} has an image (or none has) and its images carry no attributes, so "
                "there is nothing to compare.")
    return None


def robustness_rule(f) -> str | None:
    """Robustness: needs item-level data and variant items to compare with their originals."""
    if f.aggregate_only:
        return _ITEM_LEVEL_WHY
    if not f.variants:
        return ("Dataset {d} has no variant items (rotated options, changed or missing images). Make them with "
                "python -m eduart_core variants, or choose demo-robust in the sidebar.")
    return None


def item_level_rule(f) -> str | None:
    """The item and statistics pages: published aggregates have no items to show."""
    return _ITEM_LEVEL_WHY if f.aggregate_only else None


def why_not(rule, features) -> str | None:
    """Why a page with ``rule`` (one of the rules above, named by the app's page registry) does not
    apply to the dataset of ``features`` (a `StudyFeatures`), or None (no rule: it always applies)."""
    why = rule(features) if rule else None
    return why.format(d=repr(features.dataset)) if why else None

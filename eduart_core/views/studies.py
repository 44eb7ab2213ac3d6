"""Views of the "Tasks and dimensions" page (VQArt-Bench- and MUSE-style studies) and image attributes.

Each view loads the rows of a selection (item-level scores of a dataset whose items carry a task or
a dimension, or a published per-task table of an aggregate-only study reference) and hands them to
one analysis function. The grouping (task or dimension) and the overall's aggregation are options,
resolved here once so the page, the report and `show` state the same rule.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import analysis
from ..errors import UserError
from ..selection import Selection
from ..vocab import (
    AGGREGATIONS,
    AS_PRINTED_AGGREGATION,
    DIMENSION_COLUMN,
    MICRO_AGGREGATION,
    OVERALL_COLUMN,
    STUDY_GROUPINGS,
    TASK_COLUMN,
    ordered_formats,
)
from ._base import (
    EmptySelection,
    ItemLevelUnavailable,
    Source,
    cached,
    dataset_flags,
    family_map,
    items,
    models,
    study_reference,
)

logger = logging.getLogger(__name__)

# ---------------------------------------------------------------- what a dataset offers


@dataclass(frozen=True)
class StudyFeatures:
    """What the study views can draw for a dataset (pages hide what does not apply)."""

    dataset: str
    grouping: str | None          # 'task' | 'dimension' | None (no study view applies)
    groupings: tuple[str, ...]    # every grouping the items (or the printed table) support
    reference: bool               # a printed per-task table (aggregate only)
    distractors: bool             # choices labelled with a distractor type
    image_attributes: bool        # images described by attributes
    conditions: int               # prompt conditions with answers
    formats: int                  # answer formats among the items
    aggregate_only: bool = False  # published aggregates only (no item-level data)
    with_and_without_image: bool = False  # items with and items without an image (the image comparison)
    types: tuple[str, ...] = ()   # the answer formats of the items
    variants: bool = False        # variant items (rotations, changed images: `eduart_core.variants`)


@cached(maxsize=8)
def study_features(src: Source, dataset: str) -> StudyFeatures:
    """Which study views and page parts apply to a dataset."""
    flags = dataset_flags(src, dataset)
    ref = study_reference(src, dataset)
    if ref is not None:
        kinds = tuple(k for k in STUDY_GROUPINGS if k in set(ref[1]["kind"]))
        return StudyFeatures(dataset, kinds[0] if kinds else None, tuple(kinds), True, False, False, 0, 0, True)
    if flags.aggregate_only or not flags.exists:
        return StudyFeatures(dataset, None, (), False, False, False, 0, 0, flags.aggregate_only)
    it = items(src, dataset)
    kinds = tuple(k for k in STUDY_GROUPINGS if k in it and it[k].notna().any())
    records = [r for r in it["record"] if isinstance(r, dict)] if "record" in it else []
    distractors = any(isinstance(c, dict) and c.get("distractor_type") for r in records for c in r.get("choices") or []
                      if isinstance(r.get("choices"), list))
    attributes = any(r.get("image_attributes") for r in records)
    from ..store import studies as store_studies

    conditions = store_studies.dataset_conditions(src.store, dataset)
    variants = "variant_of" in it and bool(it["variant_of"].notna().any())
    sources = it[it["variant_of"].isna()] if variants else it  # a no_image variant is no item without an image
    images = set(sources["has_image"].astype(bool)) if "has_image" in sources else set()
    types = tuple(ordered_formats(it["type"].dropna())) if "type" in it else ()
    return StudyFeatures(dataset, kinds[0] if kinds else None, kinds, False, distractors, attributes,
                         len(conditions), len(types), False, len(images) == 2, types, variants)


def _grouping(src: Source, dataset: str, by: str) -> str:
    features = study_features(src, dataset)
    if by and by not in STUDY_GROUPINGS:
        raise UserError(f"option by={by!r}? use {' or '.join(STUDY_GROUPINGS)}")
    if not features.groupings:
        raise EmptySelection(f"Dataset '{dataset}' has no tasks or dimensions: this view does not apply to it.")
    if by and by not in features.groupings:
        raise EmptySelection(f"Dataset '{dataset}' reports no {by}; it has: {', '.join(features.groupings)}.")
    return by or str(features.grouping)


# ---------------------------------------------------------------- the rows behind the views

@cached(maxsize=8)
def _item_scores(src: Source, dataset: str, profile: str, reviewed: bool = True) -> pd.DataFrame:
    """Every model's score per item with the item's format, language, image, task, dimension and chance
    (``reviewed``: a reviewer's score override replaces the computed score)."""
    from ..store import studies as store_studies
    from ..studies.chance import item_chance

    it = items(src, dataset)
    meta = it[[c for c in ("type", "language", "has_image", TASK_COLUMN, DIMENSION_COLUMN, "image_hash")
               if c in it]].rename(columns={"image_hash": "cluster"})
    meta = meta.assign(chance=np.array([item_chance(r) for r in it["record"]], dtype=float))
    frame = store_studies.load_item_scores(src.store, dataset, profile, overrides=reviewed)
    at = pd.Index(it["item_id"]).get_indexer(frame["item_id"])  # one lookup instead of a string merge
    frame = frame.loc[at >= 0].reset_index(drop=True)
    at = at[at >= 0]
    for column in meta.columns:
        frame[column] = meta[column].to_numpy()[at]
    return frame


@cached(maxsize=16)
def _item_rows(src: Source, sel: Selection) -> pd.DataFrame:
    """The selected item scores, with the picture each item shows (`cluster`) and its chance level."""
    if dataset_flags(src, sel.dataset).aggregate_only:
        raise ItemLevelUnavailable(f"Dataset '{sel.dataset}' holds only the published aggregates: "
                                   "item-level data are not available for it.")
    frame = sel.apply(_item_scores(src, sel.dataset, sel.profile, sel.reviewed))
    if frame.empty:
        raise EmptySelection("No scores match the current selection: widen the filters.")
    return frame


def _column_order(src: Source, dataset: str, by: str) -> list[str]:
    """Columns in the order the dataset lists its items (first appearance), which keeps tasks grouped."""
    it = items(src, dataset)
    return [str(v) for v in dict.fromkeys(it[by].dropna())] if by in it else []


@cached()
def dimension_scores(src: Source, sel: Selection, by: str = "", aggregation: str = "") -> pd.DataFrame:
    """Score per model and task (or dimension) with 95% intervals clustered by image, chance, best/second marks.

    Options: ``by`` (task | dimension; default: what the dataset has, tasks first) and ``aggregation``
    of the overall column (micro | task_macro | dimension_macro; default micro, stated in every row).
    A published table keeps its printed overall (aggregation "as printed").
    """
    by = _grouping(src, sel.dataset, by)
    ref = study_reference(src, sel.dataset)
    if ref is not None:
        if aggregation and aggregation != AS_PRINTED_AGGREGATION:
            raise UserError(f"the published table of '{sel.dataset}' has its printed overall only "
                            f"(aggregation={AS_PRINTED_AGGREGATION})")
        cells, columns, _ = ref
        cells = sel.apply(cells)
        if cells.empty:
            raise EmptySelection("No published scores match the current selection.")
        return analysis.published_dimension_scores(cells, columns)
    if aggregation and aggregation not in AGGREGATIONS:
        raise UserError(f"option aggregation={aggregation!r}? use one of {', '.join(AGGREGATIONS)}")
    return analysis.dimension_scores(_item_rows(src, sel), by=by, aggregation=aggregation or MICRO_AGGREGATION,
                                     order=_column_order(src, sel.dataset, by))


def _grid(src: Source, sel: Selection, by: str, include_overall: bool = False) -> pd.DataFrame:
    return analysis.score_grid(dimension_scores(src, sel, by=by), include_overall=include_overall)


@cached()
def task_correlations(src: Source, sel: Selection, by: str = "") -> pd.DataFrame:
    """Spearman rho between tasks (or dimensions) across models, with n and p per cell (pairwise-complete)."""
    return analysis.task_correlations(_grid(src, sel, by))


def access_map(src: Source) -> dict[str, str | None]:
    """Display name -> 'open' | 'closed' | None."""
    table = models(src)
    if "access" not in table:
        return {}
    return {str(m): (a if isinstance(a, str) else None) for m, a in zip(table["display_name"], table["access"])}


@cached()
def family_best(src: Source, sel: Selection, by: str = "") -> pd.DataFrame:
    """Best model per family per task (or dimension) and the "best available" envelopes (all, open, closed)."""
    return analysis.family_best(dimension_scores(src, sel, by=by), family_map(src), access_map(src))


@cached(maxsize=8)
def _answers(src: Source, dataset: str, profile: str | None) -> pd.DataFrame:
    """The answer rows with their items' format, language and image flag (``profile=None``: without scores)."""
    from ..store import studies as store_studies

    frame = store_studies.load_answer_rows(src.store, dataset, profile)
    meta = items(src, dataset)[["item_id", "type", "language", "has_image"]]
    return frame.merge(meta, on="item_id", how="left")


def _answer_rows(src: Source, sel: Selection) -> tuple[pd.DataFrame, pd.DataFrame]:
    if dataset_flags(src, sel.dataset).aggregate_only:
        raise ItemLevelUnavailable(f"Dataset '{sel.dataset}' holds only the published aggregates: "
                                   "the models' answers are not available for it.")
    frame = sel.apply(_answers(src, sel.dataset, sel.profile))
    if frame.empty:
        raise EmptySelection("No answers match the current selection: widen the filters.")
    return frame, items(src, sel.dataset)


@cached(maxsize=8)
def _statuses(src: Source, sel: Selection, by: str) -> pd.DataFrame:
    """Every answer's status and chosen option (read once for the distractor and invalid-answer views)."""
    answers, it = _answer_rows(src, sel)
    return analysis.answer_statuses(answers, it, by=by)


@cached()
def distractor_choices(src: Source, sel: Selection, by: str = "") -> pd.DataFrame:
    """Among wrong option choices, the share per distractor type, per model and task (and all models pooled)."""
    by = _grouping(src, sel.dataset, by)
    answers, it = _answer_rows(src, sel)
    out = analysis.distractor_choices(answers, it, by=by, statuses=_statuses(src, sel, by))
    if out.empty:
        raise EmptySelection("No wrong option choices on items with labelled distractors in this selection.")
    return out


@cached()
def invalid_rates(src: Source, sel: Selection, by: str = "") -> pd.DataFrame:
    """Share of refused, unparseable and not-an-option answers per model and task (Wilson 95%)."""
    by = _grouping(src, sel.dataset, by)
    answers, it = _answer_rows(src, sel)
    return analysis.invalid_rates(answers, it, by=by, statuses=_statuses(src, sel, by))


@cached()
def invalid_answers(src: Source, sel: Selection, all_conditions: bool = False) -> pd.DataFrame:
    """Per model: answers that name no option, do not parse or refuse, of all its answers; the warning and IRT leave-out flags.

    The one count behind the Overview's, the inspector's and `show`'s warnings and the IRT fit's
    leave-out rule (`analysis.answer_quality.INVALID_RULE`); ``all_conditions`` counts every prompt
    condition (the IRT fit of model x condition pairs), else the selected one.
    """
    if dataset_flags(src, sel.dataset).aggregate_only:
        raise ItemLevelUnavailable(f"Dataset '{sel.dataset}' holds only the published aggregates: "
                                   "the models' answers are not available for it.")
    counts = _status_counts(src, sel.dataset, None if all_conditions else sel.condition)
    return analysis.invalid_by_model(sel.apply(counts, all_conditions=all_conditions))


@cached(maxsize=4)
def _status_counts(src: Source, dataset: str, condition: str | None) -> pd.DataFrame:
    """How many answers of each examinee have each status (`analysis.answer_statuses`), per value
    of the columns a selection filters on: model, kind, condition, type, language, has_image,
    status, n.

    Why: a status depends on the answer and its item only, not on the filters or the scoring profile
    (the profile's score is not read), so the answers are read and classified once per data
    version and a change of filter or profile only picks rows of this small table. Each distinct
    answer is classified once (`store.studies.load_distinct_answers`: a large panel repeats most
    answers). One prompt condition (None: every one), so a first render classifies only the
    answers it shows.
    """
    from ..store import studies as store_studies

    got = store_studies.load_distinct_answers(src.store, dataset, condition)
    catalogue = items(src, dataset)
    position = pd.Index(catalogue["item_id"]).get_indexer(got.answers["item_id"])
    known = position >= 0  # an answer to an item no longer current counts nowhere, as in every view
    status = analysis.answer_statuses(got.answers[known].assign(model=""), catalogue)["status"].to_numpy(dtype=object)
    status_code, status_names = pd.factorize(status)
    # the item columns a selection filters on, one code per distinct combination of the items' values
    filtered = [c for c in ("type", "language", "has_image") if c in catalogue]
    item_combo, combos = analysis.group_codes(catalogue, filtered)
    # every answer given: its examinee, its items' combination, its status
    counts = got.counts[known]
    examinee = got.given_by[np.repeat(known, got.counts)]
    combo = np.repeat(item_combo[position[known]], counts)
    per_status = np.repeat(status_code, counts)
    n_combos, n_status = max(len(combos), 1), max(len(status_names), 1)
    keys, n = np.unique((examinee * n_combos + combo) * n_status + per_status, return_counts=True)
    who, rest = np.divmod(keys, n_combos * n_status)
    which, state = np.divmod(rest, n_status)
    out = got.examinees.iloc[who].reset_index(drop=True)
    for column in filtered:
        out[column] = combos[column].to_numpy(dtype=object)[which]
    out["status"] = np.asarray(status_names, dtype=object)[state] if len(keys) else np.empty(0, dtype=object)
    out["n"] = n
    return out


def invalid_warnings(src: Source, sel: Selection) -> list[str]:
    """One line per model above the warning share (empty for an aggregate-only dataset or no answers)."""
    try:
        table = invalid_answers(src, sel)
    except (ItemLevelUnavailable, EmptySelection):
        return []
    return [row.sentence + ("; left out of the IRT fit by default" if row.irt_left_out else "")
            for row in table[table["warning"]].itertuples()]


@cached()
def external_correlations(src: Source, sel: Selection, by: str = "") -> pd.DataFrame:
    """Spearman rho between each task (and the overall) and each imported external benchmark, n per cell."""
    from ..store import studies as store_studies

    external = store_studies.read_external_scores(src.store)
    grid = _grid(src, sel, by, include_overall=True)
    table = models(src)
    aliases = dict(zip(table["model"], table["display_name"])) if "model" in table else {}
    return analysis.external_correlations(grid, external, aliases)


def _table_parts(src: Source, sel: Selection, by: str, aggregation: str
                 ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, str]:
    """(cells, columns, statements, declared aggregation) of the table the checks read."""
    ref = study_reference(src, sel.dataset)
    if ref is not None:
        _grouping(src, sel.dataset, by)
        cells, columns, statements = ref
        cells = sel.apply(cells)
        if cells.empty:
            raise EmptySelection("No published scores match the current selection.")
        return cells.rename(columns={"column_name": "column"}), columns, statements, AS_PRINTED_AGGREGATION
    scores = dimension_scores(src, sel, by=by, aggregation=aggregation)
    rows = scores.loc[~scores["is_median"]]
    cells = rows[["model", "column", "score", "n"]]
    cols = rows.drop_duplicates("column")[["column", "kind", "dimension", "chance"]].rename(
        columns={"column": "column_name"})
    return cells, cols, pd.DataFrame(columns=["statement", "subject", "value", "source"]), \
        scores.attrs.get("aggregation", MICRO_AGGREGATION)


@cached()
def consistency_checks(src: Source, sel: Selection, by: str = "", aggregation: str = "") -> pd.DataFrame:
    """Does the table add up? Overall vs means, stated order vs average, below chance, names (one row per check)."""
    cells, columns, statements, declared = _table_parts(src, sel, by, aggregation)
    return analysis.consistency_checks(cells, columns, statements, declared=declared)


# ---------------------------------------------------------------- image attributes (Images page)

@cached(maxsize=8)
def _attributes(src: Source, dataset: str) -> pd.DataFrame:
    it = items(src, dataset)
    rows = [(i, str(k), v) for i, r in zip(it["item_id"], it["record"]) if isinstance(r, dict)
            for k, v in (r.get("image_attributes") or {}).items()]
    return pd.DataFrame(rows, columns=["item_id", "attribute", "value"])


@cached()
def image_attributes(src: Source, sel: Selection) -> pd.DataFrame:
    """Mean score per image attribute value (genre, figures, indoor/outdoor, warm/cool) and model, Wilson 95%."""
    frame = _item_rows(src, sel)
    attributes = _attributes(src, sel.dataset)
    if attributes.empty:
        raise EmptySelection(f"The images of dataset '{sel.dataset}' carry no attributes.")
    return analysis.attribute_scores(frame, attributes)


__all__ = ["OVERALL_COLUMN", "StudyFeatures", "TASK_COLUMN", "DIMENSION_COLUMN", "access_map", "consistency_checks",
           "dimension_scores", "distractor_choices", "external_correlations", "family_best", "image_attributes",
           "invalid_answers", "invalid_rates", "invalid_warnings", "study_features", "study_reference", "task_correlations"]


# ---------------------------------------------------------------- the inspector's pictures and dialogues

@dataclass(frozen=True)
class ItemPicture:
    """What the inspector draws for an item: its image (boxes and regions drawn on it) and image options."""

    image: object | None                       # a PIL image with boxes drawn, a file path, or None
    boxes: bool                                 # True when option boxes or regions were drawn
    option_images: tuple[tuple[str, str], ...]  # (option id, image file) in option order


@cached(maxsize=16)
def item_picture(src: Source, dataset: str, item_id: str) -> ItemPicture:
    """The item image as a model saw it plus what the question points at (boxes, regions), and image options
    (read and drawn once per data version: the inspector asks on every rerun)."""
    from ..formats import draw_boxes
    from ..store import StoreError
    from ..store import items as store_items

    try:
        row = store_items.get_item(src.store, dataset, item_id)
    except UserError:
        return ItemPicture(None, False, ())
    record = row.get("record")
    if not isinstance(record, dict):
        record = {}
    path = None
    if row.get("image_hash"):
        try:
            path = str(store_items.image_path(src.store, row["image_hash"]))
        except (StoreError, OSError, KeyError) as exc:
            logger.warning("item %s/%s: image not found (%s)", dataset, item_id, exc)
    stored = row.get("option_images") or {}
    options = []
    for choice in record.get("choices") or []:
        if isinstance(choice, dict) and str(choice.get("id")) in stored:
            try:
                options.append((str(choice["id"]), str(store_items.image_path(src.store, stored[str(choice["id"])]))))
            except (StoreError, OSError, KeyError) as exc:
                logger.warning("item %s/%s: option image %s not found (%s)", dataset, item_id, choice["id"], exc)
    has_boxes = any(isinstance(c, dict) and c.get("bbox") is not None for c in record.get("choices") or []) \
        or bool(record.get("regions"))
    if path and has_boxes:
        gold = {str(a.get("id")) for a in record.get("answers") or [] if isinstance(a, dict)}
        try:
            with open(path, "rb") as handle:
                return ItemPicture(draw_boxes(handle.read(), record, gold_ids=gold), True, tuple(options))
        except OSError as exc:
            logger.warning("item %s/%s: boxes not drawn (%s)", dataset, item_id, exc)
    return ItemPicture(path, False, tuple(options))


@cached()
def dialogue(src: Source, sel: Selection, item: str = "") -> pd.DataFrame:
    """A dialogue turn by turn: the questions and every model's answers and scores (option item=<id> of a turn).

    Without ``item`` the dataset's first dialogue. The selection's models and condition apply (a turn
    nobody answered keeps its question row).
    """
    from ..dialogues import dialogue_of, dialogue_turns, turn_order

    it = items(src, sel.dataset)
    if it.empty:
        raise EmptySelection(f"Dataset '{sel.dataset}' has no items.")
    found = dialogue_of(it, item) if item else next(iter(turn_order(it)), None)
    if not found:
        raise EmptySelection(f"{'Item ' + item + ' is not part of a dialogue' if item else 'No dialogue'} "
                             f"in dataset '{sel.dataset}'.")
    frame = dialogue_turns(src.store, sel.dataset, found)
    keep = frame["model"].isna() | (frame["condition"] == sel.condition)
    if sel.models:
        keep &= frame["model"].isna() | frame["model"].isin(sel.models)
    return frame[keep].reset_index(drop=True)

"""Data access for the dashboard pages: store path + data version + filters in, frames out.

Pages stay thin: they read the sidebar into a ``Filters`` value and call one function here.
Every function is a pure function of ``(store_path, data_version, filters, options)``, so the
page can wrap it in ``st.cache_data`` and a cache entry is invalidated exactly when the store
changes (every store transaction bumps ``data_version``). The library stays Streamlit-free.

Aggregate-only datasets (the published reference) have no item-level rows: ``type_means``,
``leaderboard`` and ``motivation`` fall back to the stored aggregates; the item-level views
raise ``ItemLevelUnavailable`` so the page can say so in one line.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from . import analysis
from .store import Store
from .vocab import (
    ALL_ITEMS,
    DEFAULT_CONDITION,
    DEFAULT_DATASET,
    DEFAULT_PROFILE,
    MCQ_TYPE,
    MOTIVATION_CONDITION,
    PAPER_PROFILE,
    STRICT_PROFILE,
    image_wanted,
)


class ItemLevelUnavailable(Exception):
    """The dataset holds only published aggregates; item-level views cannot be drawn."""


class EmptySelection(Exception):
    """The filters leave no rows to analyse."""


@dataclass(frozen=True)
class Filters:
    """What the sidebar selects; hashable so it can key a cache."""

    dataset: str = DEFAULT_DATASET
    profile: str = DEFAULT_PROFILE
    condition: str = DEFAULT_CONDITION
    models: tuple[str, ...] = ()          # empty = all models
    types: tuple[str, ...] = ()           # empty = all formats
    languages: tuple[str, ...] = ()       # empty = both languages
    image: str = ALL_ITEMS                # vocab.IMAGE_FILTERS

    def with_(self, **changes) -> Filters:
        return replace(self, **changes)


# ---------------------------------------------------------------- store reads (memoised)

@lru_cache(maxsize=16)
def datasets(store_path: str, version: int) -> pd.DataFrame:
    """Datasets in the store with their flags (simulated, aggregate_only)."""
    from .store import scores as store_scores

    frame = store_scores.list_datasets(Store(store_path))
    for col, default in (("simulated", False), ("aggregate_only", False), ("title", None), ("kind", None)):
        if col not in frame:
            frame[col] = default
    return frame


@lru_cache(maxsize=16)
def models(store_path: str, version: int) -> pd.DataFrame:
    """Models with display name, family and simulated flag."""
    from .store import scores as store_scores

    return store_scores.list_models(Store(store_path))


def dataset_flags(store_path: str, version: int, dataset: str) -> dict:
    """{'simulated': bool, 'aggregate_only': bool, 'title': str} of one dataset."""
    frame = datasets(store_path, version)
    row = frame[frame["dataset"] == dataset]
    if row.empty:
        return {"simulated": False, "aggregate_only": False, "title": dataset, "exists": False}
    r = row.iloc[0]
    return {"simulated": bool(r.get("simulated") or False), "aggregate_only": bool(r.get("aggregate_only") or False),
            "title": r.get("title") or dataset, "exists": True}


@lru_cache(maxsize=8)
def scores(store_path: str, version: int, profile: str, dataset: str) -> pd.DataFrame:
    """The long score frame of one dataset and profile (all models, both conditions)."""
    from .store import scores as store_scores

    return store_scores.load_scores(Store(store_path), profile=profile, dataset=dataset)


@lru_cache(maxsize=8)
def items(store_path: str, version: int, dataset: str) -> pd.DataFrame:
    """Current item versions of a dataset (one row per item)."""
    from .store import items as store_items

    return store_items.load_items(Store(store_path), dataset)


@lru_cache(maxsize=4)
def reference_type_means(store_path: str, version: int, dataset: str) -> pd.DataFrame:
    """Published per-model per-type means as the analysis ``type_scores`` frame (fractions)."""
    from .store import reference

    return analysis.published_type_means(reference.read_reference_type_scores(Store(store_path), dataset))


@lru_cache(maxsize=4)
def reference_motivation(store_path: str, version: int, dataset: str) -> pd.DataFrame:
    """Published pooled paired motivation comparison (fractions)."""
    from .store import reference

    return analysis.pooled_motivation_fractions(reference.read_reference_motivation(Store(store_path), dataset))


# ---------------------------------------------------------------- filtering

def apply_filters(frame: pd.DataFrame, filters: Filters, *, condition: bool = False) -> pd.DataFrame:
    """Rows matching models/types/languages/image (and the condition when asked)."""
    mask = np.ones(len(frame), dtype=bool)
    if filters.models:
        mask &= frame["model"].isin(filters.models).to_numpy()
    if filters.types and "type" in frame:
        mask &= frame["type"].isin(filters.types).to_numpy()
    if filters.languages and "language" in frame:
        mask &= frame["language"].isin(filters.languages).to_numpy()
    wanted = image_wanted(filters.image)
    if wanted is not None and "has_image" in frame:
        mask &= (frame["has_image"].astype(bool) == wanted).to_numpy()
    if condition and "condition" in frame:
        mask &= (frame["condition"] == filters.condition).to_numpy()
    return frame[mask]


def family_map(store_path: str, version: int) -> dict[str, str]:
    """Display name -> family, with simulated models grouped as 'Simulated' when no family is set."""
    frame = models(store_path, version)
    name_col = "display_name" if "display_name" in frame else "model"
    out = {}
    for _, r in frame.iterrows():
        fam = r.get("family") or ("Simulated" if r.get("simulated") else "Other")
        out[str(r[name_col])] = str(fam)
    return out


def filtered_scores(store_path: str, version: int, filters: Filters, *, condition: bool = False) -> pd.DataFrame:
    """The filtered long frame; raises ItemLevelUnavailable / EmptySelection with a clear message."""
    flags = dataset_flags(store_path, version, filters.dataset)
    if flags["aggregate_only"]:
        raise ItemLevelUnavailable(
            f"Dataset '{filters.dataset}' holds only the published aggregates: item-level data are not available for it.")
    frame = apply_filters(scores(store_path, version, filters.profile, filters.dataset), filters, condition=condition)
    if frame.empty:
        raise EmptySelection("No scores match the current selection: widen the filters in the sidebar.")
    return frame


# ---------------------------------------------------------------- analysis views

def type_means(store_path: str, version: int, filters: Filters) -> pd.DataFrame:
    """``type_scores`` for the selection, from item rows or from published aggregates."""
    if dataset_flags(store_path, version, filters.dataset)["aggregate_only"]:
        frame = reference_type_means(store_path, version, filters.dataset)
        frame = apply_filters(frame, filters.with_(languages=(), image=ALL_ITEMS))
        if frame.empty:
            raise EmptySelection("No published scores match the current selection.")
        return frame.reset_index(drop=True)
    return analysis.type_scores(filtered_scores(store_path, version, filters))


def leaderboard(store_path: str, version: int, filters: Filters) -> pd.DataFrame:
    """Macro, micro and MCQ (Wilson 95%) per model in the selected condition, ranked by macro."""
    if dataset_flags(store_path, version, filters.dataset)["aggregate_only"]:
        tm = type_means(store_path, version, filters)
        macro = analysis.macro_from_type_means(tm)
    else:
        macro = analysis.macro_scores(filtered_scores(store_path, version, filters))
    macro = macro[macro["condition"] == filters.condition].sort_values("macro", ascending=False).reset_index(drop=True)
    if macro.empty:
        raise EmptySelection(f"No scores in condition '{filters.condition}' for the current selection.")
    macro["rank"] = macro["macro"].rank(ascending=False, method="min").astype(int)
    return macro


def motivation(store_path: str, version: int, filters: Filters) -> pd.DataFrame:
    """Per model default vs motivation (macro and micro) with the paired tests."""
    if dataset_flags(store_path, version, filters.dataset)["aggregate_only"]:
        macro = analysis.macro_from_type_means(type_means(store_path, version, filters))
        return analysis.published_motivation(macro, reference_motivation(store_path, version, filters.dataset))
    frame = filtered_scores(store_path, version, filters)
    return analysis.motivation_effect(frame)


def motivation_types(store_path: str, version: int, filters: Filters):
    """(per-type Table 9 frame, per model x type delta frame)."""
    if dataset_flags(store_path, version, filters.dataset)["aggregate_only"]:
        return analysis.published_motivation_by_type(type_means(store_path, version, filters))
    frame = filtered_scores(store_path, version, filters)
    return analysis.motivation_by_type(frame), analysis.motivation_by_model_type(frame)


def item_stats(store_path: str, version: int, filters: Filters, *, examinees: str = "models_conditions",
               corrected: bool = True) -> pd.DataFrame:
    """CTT p and r_pb per item for the selection (examinees: 'models' = selected condition only)."""
    frame = filtered_scores(store_path, version, filters)
    conds = [filters.condition] if examinees == "models" else None
    return analysis.item_statistics(frame, conditions=conds, corrected=corrected)


def item_stats_summary(store_path: str, version: int, filters: Filters, *, examinees: str = "models_conditions",
                       corrected: bool = True):
    """Published Tables 6 and 7, reliability and non-estimable counts for the selection."""
    frame = filtered_scores(store_path, version, filters)
    conds = [filters.condition] if examinees == "models" else None
    stats = analysis.item_statistics(frame, conditions=conds, corrected=corrected)
    return analysis.item_statistics_summary(frame, conditions=conds, corrected=corrected, stats_frame=stats)


def psychometrics(store_path: str, version: int, filters: Filters, *, examinees: str = "models_conditions",
                  corrected: bool = True) -> tuple[pd.DataFrame, dict]:
    """Item statistics and their summary (Tables 6-7, reliability) computed once for the page."""
    frame = filtered_scores(store_path, version, filters)
    conds = [filters.condition] if examinees == "models" else None
    stats = analysis.item_statistics(frame, conditions=conds, corrected=corrected)
    return stats, analysis.item_statistics_summary(frame, conditions=conds, corrected=corrected, stats_frame=stats)


def item_texts(store_path: str, version: int, dataset: str) -> dict[str, str]:
    """item_id -> readable text (title, instructions, stem) for hovers and search."""
    try:
        it = items(store_path, version, dataset)
    except Exception:
        return {}
    return {r.item_id: _item_text(r.record) for r in it.itertuples()}


def regression(store_path: str, version: int, filters: Filters, *, clustered: bool = True) -> pd.DataFrame:
    """Logistic regression of correctness on format, image, language and model."""
    frame = filtered_scores(store_path, version, filters)
    return analysis.logistic_regression(frame, condition=filters.condition, cluster="item" if clustered else None)


def image_effect(store_path: str, version: int, filters: Filters) -> pd.DataFrame:
    """Per model accuracy with vs without an image, in the selected condition."""
    frame = filtered_scores(store_path, version, filters.with_(image=ALL_ITEMS))
    return analysis.image_effect(frame, condition=filters.condition)


def spread(store_path: str, version: int, filters: Filters) -> pd.DataFrame:
    """Best and worst format per model in the selected condition."""
    if dataset_flags(store_path, version, filters.dataset)["aggregate_only"]:
        spread = analysis.published_format_spread(type_means(store_path, version, filters))
        return spread[spread["condition"] == filters.condition].reset_index(drop=True)
    frame = filtered_scores(store_path, version, filters, condition=True)
    return analysis.format_spread(frame)


def mcq_by_language(store_path: str, version: int, filters: Filters) -> pd.DataFrame:
    """Multiple-choice (single answer) accuracy per model and language, with Wilson intervals."""
    frame = filtered_scores(store_path, version, filters.with_(types=(), languages=()), condition=True)
    frame = frame[frame["type"] == MCQ_TYPE]
    if frame.empty:
        raise EmptySelection("No multiple-choice items in the current selection.")
    out = []
    for lang, sub in frame.groupby("language"):
        ts = analysis.type_scores(sub)
        ts["language"] = lang
        out.append(ts)
    return pd.concat(out, ignore_index=True)


def profile_impact(store_path: str, version: int, filters: Filters) -> pd.DataFrame:
    """Per model and format: paper minus strict mean (the published scorer's quirks made visible)."""
    strict = filtered_scores(store_path, version, filters.with_(profile=STRICT_PROFILE), condition=True)
    paper = filtered_scores(store_path, version, filters.with_(profile=PAPER_PROFILE), condition=True)
    return analysis.profile_impact(strict, paper)


def profile_examples(store_path: str, version: int, filters: Filters, limit: int = 3) -> pd.DataFrame:
    """Responses whose score differs between profiles, a few per format (the rules that differ)."""
    strict = filtered_scores(store_path, version, filters.with_(profile=STRICT_PROFILE), condition=True)
    paper = filtered_scores(store_path, version, filters.with_(profile=PAPER_PROFILE), condition=True)
    keys = ["model", "condition", "item_id"]
    both = strict[keys + ["type", "score"]].merge(paper[keys + ["score"]], on=keys, suffixes=("_strict", "_paper"))
    both["difference"] = both["score_paper"] - both["score_strict"]
    both = both[both["difference"].abs() > 1e-9]
    both = both.reindex(both["difference"].abs().sort_values(ascending=False).index)
    return both.groupby("type", sort=False).head(limit).reset_index(drop=True)


def item_table(store_path: str, version: int, filters: Filters) -> pd.DataFrame:
    """One row per item: format, language, image, p, r_pb, mean score, models right (selected condition)."""
    frame = filtered_scores(store_path, version, filters, condition=True)
    stats = analysis.item_statistics(frame, conditions=[filters.condition], corrected=True)
    agg = frame.groupby("item_id").agg(type=("type", "first"), language=("language", "first"),
                                       has_image=("has_image", "first"), mean_score=("score", "mean"),
                                       models_right=("correct", "sum"), n_models=("model", "nunique"))
    table = agg.join(stats.set_index("item_id")[["p", "r_pb"]], how="left").reset_index()
    # Top models fail while weak ones pass: correct among the weaker half but not the stronger half.
    ability = frame.groupby("model")["score"].mean().sort_values(ascending=False)
    top = set(ability.index[: max(1, len(ability) // 2)])
    by = frame.assign(top=frame["model"].isin(top)).groupby(["item_id", "top"])["score"].mean().unstack()
    if True in by and False in by:
        table["top_minus_weak"] = table["item_id"].map(by[True] - by[False])
    else:
        table["top_minus_weak"] = np.nan
    texts = {}
    try:
        it = items(store_path, version, filters.dataset)
        texts = {r.item_id: _item_text(r.record) for r in it.itertuples()}
    except Exception:
        pass
    table["text"] = table["item_id"].map(texts).fillna("")
    return table.sort_values("item_id").reset_index(drop=True)


def _item_text(record) -> str:
    if not isinstance(record, dict):
        return ""
    parts = [record.get("question_title"), record.get("instructions"), record.get("question_text")]
    return " ".join(str(p) for p in parts if p)


def item_filter(table: pd.DataFrame, kind: str, search: str = "") -> pd.DataFrame:
    """Inspector quick filters: all wrong, disagree, negative discrimination, top fail / weak pass."""
    out = table
    if kind == "all_wrong":
        out = out[out["models_right"] == 0]
    elif kind == "disagree":
        out = out[(out["models_right"] > 0) & (out["models_right"] < out["n_models"])]
    elif kind == "negative_rpb":
        out = out[out["r_pb"] < 0]
    elif kind == "top_fail":
        out = out[out["top_minus_weak"] < 0]
    if search:
        s = search.lower()
        out = out[out["item_id"].str.lower().str.contains(s, regex=False)
                  | out["text"].str.lower().str.contains(s, regex=False)]
    return out


def item_detail(store_path: str, version: int, dataset: str, item_id: str) -> dict:
    """The item record (current version) with its image path, or {} when unknown."""
    from .store import items as store_items

    store = Store(store_path)
    record = store_items.get_item(store, dataset, item_id)
    if not record:
        return {}
    record = dict(record)
    img = record.get("image_hash")
    if img:
        try:
            record["_image_path"] = str(store_items.image_path(store, img))
        except Exception:
            record["_image_path"] = None
    return record


def item_responses(store_path: str, version: int, dataset: str, item_id: str) -> pd.DataFrame:
    """Every model x condition response to one item, with scores under both profiles."""
    from .store import scores as store_scores

    return store_scores.load_responses(Store(store_path), dataset, item_id)


def item_changes(store_path: str, version: int, filters: Filters, model: str, limit: int = 15) -> pd.DataFrame:
    """Items whose score changed most between default and motivation for one model."""
    frame = filtered_scores(store_path, version, filters.with_(models=(model,)))
    wide = frame.pivot_table(index=["item_id", "type"], columns="condition", values="score").reset_index()
    if not {DEFAULT_CONDITION, MOTIVATION_CONDITION} <= set(wide.columns):
        return pd.DataFrame(columns=["item_id", "type", DEFAULT_CONDITION, MOTIVATION_CONDITION, "delta"])
    wide["delta"] = wide[MOTIVATION_CONDITION] - wide[DEFAULT_CONDITION]
    wide = wide[wide["delta"].abs() > 1e-9]
    return wide.reindex(wide["delta"].abs().sort_values(ascending=False).index).head(limit).reset_index(drop=True)


def overview_items(store_path: str, version: int, dataset: str) -> dict:
    """Dataset at a glance (published Tables 2 and 3): counts by format/language/image, lengths, images."""
    it = items(store_path, version, dataset)
    out: dict = {"n_items": len(it)}
    out["by_type"] = it.groupby("type").size().rename("items").reset_index()
    out["by_language"] = it.groupby("language").size().rename("items").reset_index()
    out["by_image"] = it.groupby("has_image").size().rename("items").reset_index()
    words = it["text_words"] if "text_words" in it else it["record"].map(lambda r: len(_item_text(r).split()))
    out["words"] = pd.Series(words, dtype=float).describe()[["mean", "std", "min", "50%", "max"]]
    out["tokens"], out["token_method"] = _token_lengths(it["record"])
    hashes = it["image_hash"].dropna().unique() if "image_hash" in it else []
    out["distinct_images"] = len(hashes)
    out["images"] = _image_sizes(store_path, hashes)
    out["image_summary"] = _summary_rows(out["images"], ["width", "height", "kb"])
    return out


def _summary_rows(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Mean, min, median and max of some columns, one row per statistic (published Table 3)."""
    if frame.empty:
        return pd.DataFrame(columns=["statistic", *columns])
    desc = frame[columns].describe().loc[["mean", "min", "50%", "max"]].round(0)
    desc.index = ["mean", "min", "median", "max"]
    return desc.reset_index(names="statistic")


def reference_items_by_format(type_means: pd.DataFrame, condition: str) -> tuple[pd.Series, int]:
    """Items per format of an aggregate-only dataset (the n behind its type means), and its model count."""
    return analysis.published_items_by_format(type_means, condition)


def _token_lengths(records) -> tuple[pd.Series, str]:
    """Tokens of each item's model-ready text (published Table 2), with the counter used."""
    from .items import render_prompt_text
    from .runner.estimate import token_counter

    counter = token_counter()
    counts = []
    for record in records:
        try:
            counts.append(counter.count(render_prompt_text(record)) if isinstance(record, dict) else np.nan)
        except Exception:  # a defective imported record: no length rather than no page
            counts.append(np.nan)
    return pd.Series(counts, dtype=float).describe()[["mean", "std", "min", "50%", "max"]], counter.method


def _image_sizes(store_path: str, hashes) -> pd.DataFrame:
    from PIL import Image

    from .store import items as store_items

    rows = []
    store = Store(store_path)
    for h in hashes:
        try:
            path = Path(store_items.image_path(store, h))
            with Image.open(path) as im:
                w, hgt = im.size
            rows.append({"image_hash": h, "width": w, "height": hgt, "kb": path.stat().st_size / 1024})
        except Exception:
            continue
    return pd.DataFrame(rows, columns=["image_hash", "width", "height", "kb"])


def answer_rows(details: list | None, labels: dict[str, str] | None = None) -> pd.DataFrame:
    """Per-element marks of one scored response (element, expected, given, right) for the item card.

    ``labels`` maps option ids to their text, so "B" reads "B. De prospectiva pingendi".
    """
    labels = {str(k).upper(): str(v) for k, v in (labels or {}).items()}
    if not details:
        return pd.DataFrame(columns=["element", "expected", "given", "right"])
    frame = pd.DataFrame([d for d in details if isinstance(d, dict)])
    for col in ("element", "expected", "given", "right"):
        if col not in frame:
            frame[col] = None
    frame["mark"] = frame["right"].map(lambda r: "right" if r is True else ("wrong" if r is False else ""))

    def show(value) -> str:
        if value is True or value is False:
            return "selected" if value else "not selected"
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return "—"
        if isinstance(value, (list, tuple)):
            return ", ".join(show(v) for v in value) or "—"
        text = str(value)
        return f"{text}. {labels[text.upper()]}" if text.upper() in labels else text

    for col in ("expected", "given"):
        frame[col] = frame[col].astype(object).map(show)
    frame["element"] = frame["element"].astype(object).map(
        lambda e: f"{e}. {labels[str(e).upper()]}" if str(e).upper() in labels else ("" if e is None else str(e)))
    return frame[["mark", "element", "expected", "given"]]


def neighbours(ids: list[str], current: str) -> tuple[str | None, str | None]:
    """Previous and next id around ``current`` in the filtered order (None at the ends)."""
    if current not in ids:
        return None, (ids[0] if ids else None)
    i = ids.index(current)
    return (ids[i - 1] if i > 0 else None), (ids[i + 1] if i + 1 < len(ids) else None)

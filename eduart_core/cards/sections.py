"""The parts of an exam card, each read through the views (or the store's card read) and turned into
plain JSON values: numbers stay numbers (no rounding, so a card's results re-import exactly), and every
table carries ``what``: the words saying what its numbers are.
"""
from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import pandas as pd

from .. import views
from ..analysis.intervals import WILSON_WORDS
from ..analysis.ranking import AGGREGATE_WORDS, INTERVAL_WORDS, JUDGE_WORDS
from ..errors import UserError
from ..selection import Selection
from ..vocab import HUMAN_KIND, format_label, is_judge_profile, language_label, ordered_formats

SCORE_WORDS = ("mean item score (fraction 0-1) per model, condition and format; n = items answered (a model's "
               f"repeats averaged per item first); interval: {WILSON_WORDS} on n")
PUBLISHED_SCORE_WORDS = ("published mean score (fraction 0-1) per model, condition and format; n = items behind the "
                         f"mean; interval: as published, else the {WILSON_WORDS} on n")
OVERALL_WORDS = "macro = unweighted mean of the format means (fraction 0-1); micro = mean over all items; interval: "
HASH_WORDS = ("sha256 of the sorted lines '<item_id> <content sha256>' of the dataset's current source items (the "
              "items the scores rest on; variant items are counted apart and left out, as every statistic does)")


def plain(value: Any) -> Any:
    """A JSON value from a frame cell: NaN and NA become null, numpy scalars Python numbers, times ISO text."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
        return None if isinstance(value, float) and math.isnan(value) else value
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return value


def records(frame: pd.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
    """The frame's rows as JSON objects over ``columns`` (those the frame has)."""
    keep = [c for c in columns if c in frame.columns]
    return [{c: plain(v) for c, v in zip(keep, row)} for row in frame[keep].itertuples(index=False, name=None)]


def _current_items(src: views.Source, dataset: str, variants: bool = False) -> pd.DataFrame:
    """The dataset's current items: the source items the scores rest on, or (``variants``) the variant items
    (`eduart_core.variants`), which every statistic leaves out."""
    from ..views._base import items as current_items

    rows = current_items(src, dataset)
    if "variant" not in rows.columns:
        return rows if not variants else rows.iloc[0:0]
    return rows[rows["variant"].notna() == variants]


def item_bank(src: views.Source, sel: Selection, aggregate_only: bool) -> dict[str, Any]:
    """Size and content hash of the item bank, with the frozen bank versions (IRT calibrations) if any."""
    if aggregate_only:
        return {"size": None, "sha256": None, "hash_of": "published aggregates: no items in the store",
                "variants": {}, "frozen_versions": []}
    rows = _current_items(src, sel.dataset)
    lines = sorted(f"{i} {h}" for i, h in zip(rows["item_id"].astype(str), rows["content_hash"].astype(str)))
    digest = hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()
    banks = views.VIEWS["banks"].fn(src, sel)
    variants = _current_items(src, sel.dataset, variants=True)["variant"].astype(str).value_counts().sort_index()
    return {"size": len(lines), "sha256": digest, "hash_of": HASH_WORDS,
            "variants": {str(k): int(v) for k, v in variants.items()},
            "frozen_versions": records(banks, ["version", "irt_model", "n_items", "n_examinees", "fitted_at"])}


def formats(src: views.Source, sel: Selection, aggregate_only: bool) -> list[dict[str, Any]]:
    """Items per format, in the vocabulary's order (for published aggregates: the n behind the means, from
    the `items_by_format` view; for items, counted from the current items without the Overview's token
    lengths, which a card does not need)."""
    if aggregate_only:
        frame = views.VIEWS["items_by_format"].fn(src, sel)
        counts = dict(zip(frame["type"].astype(str), frame["items"]))
    else:
        counts = _current_items(src, sel.dataset)["type"].astype(str).value_counts().to_dict()
    return [{"type": t, "label": format_label(t), "items": plain(counts[t])} for t in ordered_formats(counts)]


def languages(src: views.Source, sel: Selection, aggregate_only: bool) -> list[dict[str, Any]]:
    """Items per language (none for published aggregates)."""
    if aggregate_only:
        return []
    counts = _current_items(src, sel.dataset)["language"].astype(object).fillna("").value_counts().sort_index()
    return [{"language": code or None, "label": language_label(code) if code else "not set", "items": plain(n)}
            for code, n in counts.items()]


def _params(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def models(src: views.Source, sel: Selection, shown: set[str]) -> list[dict[str, Any]]:
    """Per model with scores on the card: provider, API id, dates asked, sampling settings, repeats,
    prompt hashes and conditions, from its runs (published models: the model row only)."""
    from ..store.cards import run_settings

    runs = run_settings(src.store, sel.dataset)
    catalog = views.models(src)
    out = []
    for name in sorted(shown):
        mine = runs[runs["model"] == name]
        row = catalog[catalog["display_name"] == name]
        first = row.iloc[0] if len(row) else None
        settings = sorted({json.dumps(_params(p), sort_keys=True) for p in mine["params"]})
        out.append({
            "model": name,
            "model_key": plain(mine["model_key"].iloc[0]) if len(mine) else plain(first["model"]) if first is not None else name,
            "family": plain(first["family"]) if first is not None else None,
            "kind": plain(first["kind"]) if first is not None and "kind" in row else None,
            "simulated": bool(first["simulated"]) if first is not None else False,
            "provider": plain(first["provider"]) if first is not None and "provider" in row else None,
            "api_model_id": plain(first["api_model_id"]) if first is not None and "api_model_id" in row else None,
            "access": plain(first["access"]) if first is not None and "access" in row else None,
            "asked_first": plain(mine["started_at"].min()) if len(mine) else None,
            "asked_last": plain(mine["finished_at"].max()) if len(mine) else None,
            "origins": sorted({str(o) for o in mine["origin"].dropna()}),
            "conditions": sorted({str(c) for c in mine["condition"]}),
            "repeats": int(mine["repetition"].nunique()) if len(mine) else None,
            "runs": len(mine),
            "prompt_hashes": sorted({str(h) for h in mine["prompt_hash"].dropna()}),
            "sampling": [json.loads(s) for s in settings],
        })
    return out


def scores(src: views.Source, sel: Selection, aggregate_only: bool) -> tuple[dict[str, Any], set[str]]:
    """Per model, condition and format: n, mean and its 95% interval (every condition); the models shown."""
    frame = views.type_means(src, sel, all_conditions=True)
    rows = records(frame, ["model", "condition", "type", "n", "mean", "ci_low", "ci_high"])
    what = PUBLISHED_SCORE_WORDS if aggregate_only else SCORE_WORDS
    if is_judge_profile(sel.profile):
        what += "; under a judge profile these are the judge's own marks (the overall macro carries the correction)"
    return ({"what": what, "rows": rows},
            {str(m) for m in frame["model"]})


def overall(src: views.Source, sel: Selection, conditions: list[str], aggregate_only: bool) -> dict[str, Any]:
    """Per model and condition: macro with its 95% interval and micro (the leaderboard's numbers)."""
    rows = []
    for condition in conditions:
        try:
            board = views.leaderboard(src, sel.with_(condition=condition))
        except UserError:
            continue
        rows += records(board, ["model", "condition", "macro", "macro_ci_low", "macro_ci_high", "micro", "n_items",
                                "n_types", "rank_best", "rank_worst", "judge_graded"])
    what = OVERALL_WORDS + (AGGREGATE_WORDS if aggregate_only else INTERVAL_WORDS)
    if is_judge_profile(sel.profile):
        what += (f"; judge-corrected where judge_graded (the human-graded answers the correction rests on) is above "
                 f"0: {JUDGE_WORDS}")
    return {"what": what, "rows": rows}


def scoring(src: views.Source, sel: Selection, aggregate_only: bool) -> dict[str, Any]:
    """The scoring profile, its version (judges) and the scorer version (code fingerprint, rule sets)."""
    facts = views.VIEWS["provenance"].fn(src, sel)
    scoring_rows = facts[facts["part"] == "scoring"]
    version = facts.loc[facts["name"] == "profile version", "value"]
    rules = scoring_rows.loc[scoring_rows["name"] == f"rule sets ({sel.profile})", "value"]
    return {"profile": "published scores" if aggregate_only else sel.profile,
            "profile_version": plain(version.iloc[0]) if len(version) else None,
            "scorer_version": views.scorer_fingerprint(),
            "rule_sets": [r for r in str(rules.iloc[0]).split(", ") if r and r != "—"] if len(rules) else [],
            "warning": views.profile_warning(src, sel)}


def judge(src: views.Source, sel: Selection) -> dict[str, Any] | None:
    """The judge's calibration against blind human grades (None outside a judge profile)."""
    info = next((p for p in views.profile_choices(src, sel.dataset) if p.name == sel.profile), None)
    if info is None or not info.is_judge:
        return None
    try:
        frame = views.VIEWS["judge_calibration"].fn(src, sel)
    except UserError as exc:
        return {"profile": sel.profile, "version": info.version, "calibration": [], "note": str(exc)}
    mine = frame[frame["judge"] == sel.profile] if "judge" in frame.columns else frame
    return {"profile": sel.profile, "judge": info.judge_name, "version": info.version, "simulated": info.simulated,
            "what": "agreement with the adjudicated blind human grades (Krippendorff's ordinal alpha, quadratic "
                    "weighted kappa), MFRM severity in logits, each with its 95% interval; passes: under the "
                    "dataset's gate",
            "calibration": records(mine, list(mine.columns))}


def human_baseline(src: views.Source, sel: Selection, aggregate_only: bool) -> dict[str, Any] | None:
    """People's accuracy per format beside the models' (None without people)."""
    if aggregate_only:
        return None
    frame = views.VIEWS["human_accuracy"].fn(src, sel)
    if frame.empty or "examinee" not in frame.columns:
        return None
    people = frame[(frame["examinee"] == "people") & (frame["language"] == "all")]
    if people.empty:
        return None
    return {"what": f"people's mean score (fraction 0-1) per format (type all: every item) in the answer-only "
                    f"condition, all languages; 95% interval as each row's `interval` names; "
                    f"{frame.attrs.get('n_people', 0)} people "
                    f"({'simulated' if frame.attrs.get('simulated') else 'real'}), kind {HUMAN_KIND}",
            "rows": records(people, ["name", "type", "n_people", "n_items", "n_answers", "mean", "ci_low", "ci_high",
                                     "interval"])}


def errata(src: views.Source, sel: Selection) -> dict[str, Any]:
    """The errata release the scores are computed under, and every release of the dataset."""
    frame = views.VIEWS["errata"].fn(src, sel)
    return {"current": views.errata_label(src, sel), "releases": records(frame, list(frame.columns))}


def canary(src: views.Source, sel: Selection) -> dict[str, Any] | None:
    """The store's canary line once an export made one (the card itself carries no item text)."""
    row = views.VIEWS["canary"].fn(src, sel).iloc[0]
    if not bool(row["made"]):
        return None
    return {"line": str(row["canary_line"]), "created_at": plain(row["created_at"])}

"""Reproducibility of repeated runs (``run --repeat K --sample N``).

Per model and condition: the share of items whose parsed answer was identical in every
repetition, and the spread of the item score across repetitions (mean per-item standard
deviation and range), plus the spread of the run-level mean score. Pure pandas over the frame of
``store.journal.load_repetition_answers``.
"""
from __future__ import annotations

import json

import pandas as pd

COLUMNS = ["model", "condition", "repetitions", "items", "identical_share", "item_score_sd",
           "item_score_range", "run_mean_min", "run_mean_max"]


def _canonical(parsed: str | None, raw: str | None) -> str:
    """Answers compared after JSON canonicalisation (order of keys, spacing); raw text otherwise."""
    if isinstance(parsed, str) and parsed:  # a missing parse reads as NULL/NaN: compare the raw text then
        try:
            value = json.loads(parsed)
            if isinstance(value, list):
                value = sorted(json.dumps(v, sort_keys=True, ensure_ascii=False).casefold() for v in value)
            return json.dumps(value, sort_keys=True, ensure_ascii=False)
        except ValueError:
            pass
    return raw.strip() if isinstance(raw, str) else ""


def reproducibility(answers: pd.DataFrame) -> pd.DataFrame:
    """One row per model x condition; items with an error in any repetition are left out."""
    if answers.empty:
        return pd.DataFrame(columns=COLUMNS)
    frame = answers.copy()
    frame = frame[frame["error"].isna()]
    # Keep the latest response per repetition (a retried item may have an earlier error row).
    frame = frame.drop_duplicates(["model", "condition", "item_id", "repetition"], keep="last")
    frame["answer_key"] = [_canonical(p, r) for p, r in zip(frame["parsed_answers"], frame["raw_text"])]
    rows = []
    for (model, condition), group in frame.groupby(["model", "condition"], sort=True):
        n_reps = group["repetition"].nunique()
        per_item = group.groupby("item_id")
        complete = per_item.filter(lambda g, n=n_reps: g["repetition"].nunique() == n)
        if complete.empty:
            continue
        by_item = complete.groupby("item_id")
        identical = by_item["answer_key"].nunique().eq(1).mean()
        sd = by_item["score"].std(ddof=0).mean()
        spread = (by_item["score"].max() - by_item["score"].min()).mean()
        run_means = complete.groupby("repetition")["score"].mean()
        rows.append({"model": model, "condition": condition, "repetitions": int(n_reps),
                     "items": int(complete["item_id"].nunique()), "identical_share": float(identical),
                     "item_score_sd": float(sd), "item_score_range": float(spread),
                     "run_mean_min": float(run_means.min()), "run_mean_max": float(run_means.max())})
    return pd.DataFrame(rows, columns=COLUMNS)

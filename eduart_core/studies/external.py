"""External benchmark scores (`import-external FILE.csv`): what other leaderboards say of the same models.

Why: a task that ranks models like a general benchmark (MMMU, a chart-reading test) measures
general ability, and one that ranks them differently measures something of its own. The file is
plain CSV with the columns `model, benchmark, score`; every row is checked, bad rows are named by
number and skipped, and the good ones are kept (a later import of the same pair replaces it).
"""
from __future__ import annotations

import csv
import math
from pathlib import Path

import pandas as pd

from ..errors import UserError
from ..store import Store

REQUIRED = ("model", "benchmark", "score")
MAX_NAME = 200


def read_external_csv(path: str | Path) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """(good rows as model, benchmark, score; skipped rows as ("<file> row N", reason))."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"no file {path}")
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            header = [h.strip().lower() for h in reader.fieldnames or []]
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise UserError(f"{path}: the header lacks {', '.join(missing)} (need model, benchmark, score)")
            rows, skipped = [], []
            for number, raw in enumerate(reader, start=2):
                row = {str(k).strip().lower(): (v or "").strip() for k, v in raw.items() if k is not None}
                where = f"{path.name} row {number}"
                model, bench, text = row.get("model", ""), row.get("benchmark", ""), row.get("score", "")
                if not model or not bench:
                    skipped.append((where, "model and benchmark must not be empty"))
                    continue
                if len(model) > MAX_NAME or len(bench) > MAX_NAME:
                    skipped.append((where, f"model or benchmark name longer than {MAX_NAME} characters"))
                    continue
                try:
                    score = float(text.rstrip("%"))
                except ValueError:
                    skipped.append((where, f"score {text[:40]!r} is not a number"))
                    continue
                if not math.isfinite(score):
                    skipped.append((where, f"score {text[:40]!r} is not a finite number"))
                    continue
                rows.append({"model": model, "benchmark": bench, "score": score})
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    frame = pd.DataFrame(rows, columns=list(REQUIRED)).drop_duplicates(["model", "benchmark"], keep="last")
    return frame, skipped


def import_external(store: Store, path: str | Path) -> dict:
    """Store the good rows of an external-scores CSV; returns counts and the skipped rows."""
    frame, skipped = read_external_csv(path)
    counts = {"added": 0, "replaced": 0}
    if len(frame):
        from ..store.studies import write_external_scores

        counts = write_external_scores(store, frame, Path(path).name)
    return {**counts, "benchmarks": int(frame["benchmark"].nunique()) if len(frame) else 0, "skipped": skipped}

"""The published EduArt results as an aggregate-only dataset in the store.

Why a dataset of its own: the publication gives per-model per-format means and a pooled
motivation comparison, but no item-level answers. Loading those aggregates next to the user's own
runs lets the heatmap, leaderboard and motivation chart compare against the paper, while pages
that need items can see ``aggregate_only`` and say the data is not available.

The shipped CSVs (``data/reference/``) hold percentages as printed; the store keeps fractions.
"""
from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

from ..vocab import REFERENCE_DATASET, REFERENCE_KIND
from .core import PROJECT_ROOT, Store

REFERENCE_DIR = PROJECT_ROOT / "data" / "reference"
REFERENCE_TITLE = "EduArt 2026 published results (aggregates only)"


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _pct(value: str) -> float | None:
    value = (value or "").strip()
    return None if value == "" else float(value) / 100.0


def load_reference(store: Store, dataset: str = REFERENCE_DATASET,
                   reference_dir: Path | None = None) -> dict[str, int]:
    """Register the reference dataset and its 12 models and (re)fill the aggregate tables.

    Idempotent: the dataset's rows are replaced in one transaction, so loading twice leaves the
    same content. Returns counts of what was written.
    """
    from .runs import ensure_dataset_con, ensure_model_con

    folder = Path(reference_dir) if reference_dir else REFERENCE_DIR
    models = _read_csv(folder / "models.csv")
    type_rows = _read_csv(folder / "type_scores.csv")
    motivation_rows = _read_csv(folder / "motivation_overall.csv")

    type_values = []
    for row in type_rows:
        n = int(row["n"])
        mean = _pct(row["mean_pct"])
        # The publication prints intervals for the default condition only; the others stay NULL
        # here and the analysis fills them with its Wilson interval when it reads them.
        low, high = _pct(row["ci_low_pct"]), _pct(row["ci_high_pct"])
        type_values.append([dataset, row["model"], row["condition"], row["type"], n, mean, low, high])

    motivation_values = []
    for row in motivation_rows:
        motivation_values.append([
            dataset, row["model"], int(row["n_paired"]),
            _pct(row["default_micro_pct"]), _pct(row["motivation_micro_pct"]), _pct(row["diff_pp"]),
            _pct(row["diff_ci_low_pp"]), _pct(row["diff_ci_high_pp"]), float(row["paired_t_p"]),
            int(row["improved"]), int(row["same"]), int(row["degraded"]),
        ])

    with store.transaction() as con:
        ensure_dataset_con(con, dataset, REFERENCE_TITLE, REFERENCE_KIND, simulated=False, aggregate_only=True,
                           description="Published per-model per-format means and the pooled motivation "
                                       "comparison; no item-level answers.")
        for row in models:
            ensure_model_con(con, row["model"], row["display_name"], row["family"], row["access"],
                             row["api_model_id"], simulated=False)
        con.lock(f"reference:{dataset}")  # two loads at once: the second replaces the first's rows
        con.execute("DELETE FROM reference_type_scores WHERE dataset = ?", [dataset])
        con.execute("DELETE FROM reference_motivation WHERE dataset = ?", [dataset])
        con.executemany("INSERT INTO reference_type_scores VALUES (?, ?, ?, ?, ?, ?, ?, ?)", type_values)
        con.executemany(
            "INSERT INTO reference_motivation VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            motivation_values,
        )
    return {"models": len(models), "type_scores": len(type_values), "motivation": len(motivation_values)}


def read_reference_type_scores(store: Store, dataset: str = REFERENCE_DATASET) -> pd.DataFrame:
    """Published type means: model (display name), family, condition, type, n, mean, ci_low, ci_high."""
    with store.connect(read_only=True) as con:
        return con.frame(
            """SELECT m.display_name AS model, m.family, r.condition, r.type, r.n,
                      r.mean, r.ci_low, r.ci_high
               FROM reference_type_scores r JOIN models m ON m.model = r.model
               WHERE r.dataset = ?
               ORDER BY m.display_name, r.condition, r.type""",
            [dataset],
        )


def read_reference_motivation(store: Store, dataset: str = REFERENCE_DATASET) -> pd.DataFrame:
    """Published pooled paired motivation comparison, one row per model (display name)."""
    with store.connect(read_only=True) as con:
        return con.frame(
            """SELECT m.display_name AS model, r.n_paired, r.default_micro, r.motivation_micro,
                      r.delta_micro, r.delta_micro_ci_low, r.delta_micro_ci_high, r.p_ttest,
                      r.n_improved, r.n_same, r.n_degraded
               FROM reference_motivation r JOIN models m ON m.model = r.model
               WHERE r.dataset = ?
               ORDER BY m.display_name""",
            [dataset],
        )

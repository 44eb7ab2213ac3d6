"""Adaptive runs in the store: one header row per run (bank version, rules, final ability) and its trajectory.

Why replaced whole: a trajectory is derived from the run's journal (the answers, in the order asked)
and the frozen bank version, so writing it again after a resumed session gives the same rows for
the steps it already had; header and steps go in one transaction, so a reader never sees a
trajectory without its header. The bank version is never changed (`store.banks`), so a run's
reported abilities never move when the bank is refitted.
"""
from __future__ import annotations

import pandas as pd

from .core import Store

RUN_COLUMNS = ["run_id", "dataset", "bank_version", "target_se", "max_items", "balance", "rules", "n_bank", "n_items",
               "n_skipped", "ability", "ability_se", "stop_reason", "updated_at"]
STEP_COLUMNS = ["run_id", "step", "item_id", "type", "difficulty", "level", "information", "ability", "ability_se"]


def save_trajectory(store: Store, header: dict, steps: list[dict]) -> None:
    """Replace run ``header["run_id"]``'s header and steps (``steps``: dicts with `STEP_COLUMNS` but run_id)."""
    run_id = header["run_id"]
    with store.transaction() as con:
        con.execute("DELETE FROM adaptive_steps WHERE run_id = ?", [run_id])
        con.execute("DELETE FROM adaptive_runs WHERE run_id = ?", [run_id])
        con.execute("INSERT INTO adaptive_runs (run_id, dataset, bank_version, target_se, max_items, balance, rules, "
                    "n_bank, n_items, n_skipped, ability, ability_se, stop_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
                    "?, ?, ?, ?)", [header[c] for c in RUN_COLUMNS[:-1]])
        if steps:
            con.executemany("INSERT INTO adaptive_steps (run_id, step, item_id, type, difficulty, level, information, "
                            "ability, ability_se) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [[run_id, *[s[c] for c in STEP_COLUMNS[1:]]] for s in steps])


def load_adaptive_runs(store: Store, dataset: str | None = None) -> pd.DataFrame:
    """Every adaptive run's header (of one dataset, or all), by run id."""
    with store.connect(read_only=True) as con:
        if not con.has_table("adaptive_runs"):
            return pd.DataFrame(columns=RUN_COLUMNS)
        where, params = ("WHERE dataset = ?", [dataset]) if dataset else ("", [])
        return con.frame(f"SELECT {', '.join(RUN_COLUMNS)} FROM adaptive_runs {where} ORDER BY run_id", params)


def load_trajectory(store: Store, run_id: str) -> pd.DataFrame:
    """One adaptive run's steps, in the order asked."""
    with store.connect(read_only=True) as con:
        if not con.has_table("adaptive_steps"):
            return pd.DataFrame(columns=STEP_COLUMNS)
        return con.frame(f"SELECT {', '.join(STEP_COLUMNS)} FROM adaptive_steps WHERE run_id = ? ORDER BY step",
                         [run_id])


__all__ = ["RUN_COLUMNS", "STEP_COLUMNS", "load_adaptive_runs", "load_trajectory", "save_trajectory"]

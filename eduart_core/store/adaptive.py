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
    with store.transaction() as con:
        save_trajectory_con(con, header, steps)


def save_trajectory_con(con, header: dict, steps: list[dict]) -> None:
    """`save_trajectory` inside the caller's transaction (an exam answer and its trajectory together)."""
    run_id = header["run_id"]
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


SESSION_COLUMNS = ["session_id", "bank_version", "target_se", "max_items", "balance", "show_result"]


def add_adaptive_session_con(con, row: dict) -> None:
    """Mark an exam session adaptive (in the transaction that creates it)."""
    con.execute("INSERT INTO adaptive_sessions (session_id, bank_version, target_se, max_items, balance, show_result) "
                "VALUES (?, ?, ?, ?, ?, ?)", [row[c] for c in SESSION_COLUMNS])


def adaptive_session(store: Store, session_id: str) -> dict | None:
    """The adaptive settings of an exam session (None: a sampled form, not adaptive)."""
    with store.connect(read_only=True) as con:
        if not con.has_table("adaptive_sessions"):
            return None
        found = con.frame(f"SELECT {', '.join(SESSION_COLUMNS)} FROM adaptive_sessions WHERE session_id = ?",
                          [session_id])
    return found.iloc[0].to_dict() if len(found) else None


def append_form_item_con(con, session_id: str, respondent: str, position: int, item_id: str,
                         clock_from: float | None) -> None:
    """One more item at the end of an adaptive form, its clock running from ``clock_from``."""
    con.execute("INSERT INTO exam_forms (session_id, respondent, position, item_id, clock_from) VALUES (?, ?, ?, ?, ?)",
                [session_id, respondent, int(position), str(item_id), clock_from])


def answered_raw_con(con, session_id: str, respondent: str) -> list[tuple[str, str]]:
    """(item, raw answer) of a form's answered items, in the order asked."""
    rows = con.execute("SELECT f.item_id, r.raw_text FROM exam_forms f JOIN responses r ON r.response_id = f.response_id "
                       "WHERE f.session_id = ? AND f.respondent = ? AND f.answered ORDER BY f.position",
                       [session_id, respondent]).fetchall()
    return [(str(i), str(t or "")) for i, t in rows]


__all__ = ["RUN_COLUMNS", "SESSION_COLUMNS", "STEP_COLUMNS", "add_adaptive_session_con", "adaptive_session",
           "answered_raw_con", "append_form_item_con", "load_adaptive_runs", "load_trajectory", "save_trajectory",
           "save_trajectory_con"]

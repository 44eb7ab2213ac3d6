"""Seeded gold answers of grading rounds: which tokens of a round are seeded, and what rate the round set.

Why a table of its own and not a column of ``grading_answers``: the answers a round serves must look
alike wherever a grader could see them (token, position, the task), so what tells a seeded answer
apart lives only here, read by the grading functions and the gold checks, never by a page.
"""
from __future__ import annotations

import pandas as pd

from .connection import Connection
from .core import Store
from .judges import has_table

SEED_COLUMNS = ["token", "dataset", "rubric", "round", "source_token"]
ROUND_COLUMNS = ["dataset", "rubric", "round", "rate", "pool", "seeded", "set_by", "set_at"]


def save_gold_round_con(con: Connection, dataset: str, rubric: str, round_: int, rate: float, pool: int,
                        seeds: list[tuple[str, str | None]], actor: dict) -> None:
    """The rate a new round set and its seeded tokens (token, the settled answer's token it copies)."""
    con.execute("INSERT INTO gold_rounds (dataset, rubric, round, rate, pool, seeded, set_by, actor_subject, "
                "actor_provider, actor_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [dataset, rubric, int(round_), float(rate), int(pool), len(seeds), actor["actor_subject"],
                 actor["actor_subject"], actor["actor_provider"], actor["actor_name"]])
    if seeds:
        con.executemany("INSERT INTO gold_seeds (token, dataset, rubric, round, source_token) VALUES (?, ?, ?, ?, ?)",
                        [[token, dataset, rubric, int(round_), source] for token, source in seeds])


def seeds_con(con: Connection, dataset: str | None = None, rubric: str | None = None,
              round_: int | None = None) -> pd.DataFrame:
    """Seeded tokens (SEED_COLUMNS), optionally of one dataset, rubric and round."""
    if not has_table(con, "gold_seeds"):
        return pd.DataFrame(columns=SEED_COLUMNS)
    return con.frame(f"SELECT {', '.join(SEED_COLUMNS)} FROM gold_seeds WHERE (? IS NULL OR dataset = ?) "
                     "AND (? IS NULL OR rubric = ?) AND (? IS NULL OR round = ?) ORDER BY dataset, rubric, round, token",
                     [dataset, dataset, rubric, rubric, round_, round_])[SEED_COLUMNS]


def load_seeds(store: Store) -> pd.DataFrame:
    with store.connect(read_only=True) as con:
        return seeds_con(con)


def gold_rounds(store: Store) -> pd.DataFrame:
    """Every round's seeding (ROUND_COLUMNS), oldest first."""
    with store.connect(read_only=True) as con:
        if not has_table(con, "gold_rounds"):
            return pd.DataFrame(columns=ROUND_COLUMNS)
        return con.frame(f"SELECT {', '.join(ROUND_COLUMNS)} FROM gold_rounds ORDER BY set_at, dataset, rubric, round")

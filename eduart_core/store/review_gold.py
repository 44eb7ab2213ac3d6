"""Seeded gold pages of review rounds: which (page, round) re-serve an adjudicated page, and its gold.

Why a table of its own: a seeded page is served exactly like the round's other pages (its own page
id, its comparison copied into the round), so what tells it apart lives only here, read by the
promotion (which skips it), the statistics and exports (which leave it out) and the gold checks,
never by a page a reviewer sees.
"""
from __future__ import annotations

import json

import pandas as pd

from .connection import Connection
from .core import Store
from .judges import has_table

SEED_COLUMNS = ["page_id", "round", "dataset", "source_round", "gold_version", "gold", "excluded"]
ROUND_COLUMNS = ["dataset", "round", "rate", "pool", "seeded", "set_by", "set_at"]


def seeds_con(con: Connection) -> pd.DataFrame:
    """Every seeded (page, round) (SEED_COLUMNS; ``gold`` a dict path -> value, ``excluded`` a list)."""
    if not has_table(con, "review_gold_seeds"):
        return pd.DataFrame(columns=SEED_COLUMNS)
    cur = con.execute(f"SELECT {', '.join(SEED_COLUMNS)} FROM review_gold_seeds ORDER BY round, page_id")
    frame = pd.DataFrame(cur.fetchall(), columns=SEED_COLUMNS, dtype=object)
    if not frame.empty:
        frame["gold"] = frame["gold"].map(json.loads)
        frame["excluded"] = frame["excluded"].map(json.loads)
        frame["round"] = frame["round"].astype(int)
    return frame


def seeded_keys_con(con: Connection) -> set[tuple[str, int]]:
    """(page, round) of every seeded page (the promotion's check, on the decision's write path)."""
    if not has_table(con, "review_gold_seeds"):
        return set()
    return {(str(p), int(r)) for p, r in con.execute("SELECT page_id, round FROM review_gold_seeds").fetchall()}


def load_seeds(store: Store) -> pd.DataFrame:
    with store.connect(read_only=True) as con:
        return seeds_con(con)


def round_seeded_con(con: Connection, dataset: str, round_: int) -> bool:
    if not has_table(con, "review_gold_rounds"):
        return False
    return bool(con.execute("SELECT count(*) FROM review_gold_rounds WHERE dataset = ? AND round = ?",
                            [dataset, int(round_)]).fetchone()[0])


def save_seeded_round_con(con: Connection, dataset: str, round_: int, rate: float, pool: int,
                          seeds: list[dict], actor: dict) -> None:
    """The rate a round set and its seeds (page_id, source_round, gold_version, gold, excluded), and
    each seed's comparison copied from its source round into the seeded round (outcome without its
    promotion, queued discrepancies, the two extractions)."""
    con.execute("INSERT INTO review_gold_rounds (dataset, round, rate, pool, seeded, set_by, actor_subject, "
                "actor_provider, actor_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [dataset, int(round_), float(rate), int(pool), len(seeds), actor.get("actor_name") or "",
                 actor.get("actor_subject"), actor.get("actor_provider"), actor.get("actor_name")])
    for seed in seeds:
        page, source = seed["page_id"], int(seed["source_round"])
        con.execute("INSERT INTO review_gold_seeds (page_id, round, dataset, source_round, gold_version, gold, "
                    "excluded) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [page, int(round_), dataset, source, int(seed["gold_version"]),
                     json.dumps(seed["gold"], ensure_ascii=False), json.dumps(sorted(seed["excluded"]))])
        con.execute("INSERT INTO extraction_outcomes (page_id, round, merge_status, format, base_record, merged_record) "
                    "SELECT page_id, ?, merge_status, format, base_record, merged_record FROM extraction_outcomes "
                    "WHERE page_id = ? AND round = ?", [int(round_), page, source])
        con.execute("INSERT INTO discrepancies (page_id, round, path, field, category, value_a, value_b, queued) "
                    "SELECT page_id, ?, path, field, category, value_a, value_b, queued FROM discrepancies "
                    "WHERE page_id = ? AND round = ?", [int(round_), page, source])
        # the extractor's model and prompt of the seeded round (its other pages'), so the copy names
        # the same ones as every page of the round; the source's when the round has none of that extractor
        con.execute("INSERT INTO extractions (page_id, round, extractor, model, prompt_hash, raw_response, record, "
                    "validation_errors, error, input_tokens, output_tokens) SELECT e.page_id, ?, e.extractor, "
                    "COALESCE(r.model, e.model), COALESCE(r.prompt_hash, e.prompt_hash), e.raw_response, e.record, "
                    "e.validation_errors, e.error, e.input_tokens, e.output_tokens FROM extractions e LEFT JOIN "
                    "(SELECT x.extractor, max(x.model) AS model, max(x.prompt_hash) AS prompt_hash FROM extractions x "
                    "JOIN extraction_pages p ON p.page_id = x.page_id WHERE x.round = ? AND p.dataset = ? "
                    "GROUP BY x.extractor) r ON r.extractor = e.extractor WHERE e.page_id = ? AND e.round = ?",
                    [int(round_), int(round_), dataset, page, source])


def seeded_rounds(store: Store) -> pd.DataFrame:
    """Every review round's seeding (ROUND_COLUMNS), oldest first."""
    with store.connect(read_only=True) as con:
        if not has_table(con, "review_gold_rounds"):
            return pd.DataFrame(columns=ROUND_COLUMNS)
        return con.frame(f"SELECT {', '.join(ROUND_COLUMNS)} FROM review_gold_rounds ORDER BY set_at, dataset, round")

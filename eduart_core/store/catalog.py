"""The store's catalogue for pickers and page routing: datasets, models and item keys, read light.

Why a module apart from `scores.list_datasets`/`list_models`: those count every response (the
`stats` command wants the numbers), which at 50 models x 5,000 items x 2 conditions costs a scan
and a group-by over a million rows on every cold page. The sidebar needs only names, flags and
whether a dataset has answers to analyse, and the item keys without the item records.
"""
from __future__ import annotations

import pandas as pd

from .core import Store
from .runs import latest_clause
from .scores import model_access_sql, model_kind_sql


def dataset_catalog(store: Store) -> pd.DataFrame:
    """Datasets with flags, item/run/model counts and ``has_answers`` (at least one scored answer)."""
    with store.connect(read_only=True) as con:
        frame = con.frame(
            f"""WITH answered AS (SELECT DISTINCT u.dataset FROM runs u
                                 WHERE EXISTS (SELECT 1 FROM responses r WHERE r.run_id = u.run_id
                                               AND {latest_clause(con)})),
                    counts AS (SELECT dataset, count(*) AS n_runs, count(DISTINCT model) AS n_models
                               FROM runs GROUP BY dataset),
                    item_counts AS (SELECT dataset, count(*) AS n_items FROM items WHERE is_current GROUP BY dataset)
               SELECT d.dataset, d.title, d.kind, d.simulated, d.aggregate_only, d.description, d.created_at,
                      coalesce(i.n_items, 0) AS n_items, coalesce(c.n_runs, 0) AS n_runs,
                      coalesce(c.n_models, 0) AS n_models, a.dataset IS NOT NULL AS has_answers
               FROM datasets d LEFT JOIN counts c USING (dataset) LEFT JOIN item_counts i USING (dataset)
               LEFT JOIN answered a USING (dataset)
               ORDER BY d.dataset""")
    for column in ("simulated", "aggregate_only", "has_answers"):
        frame[column] = frame[column].astype(bool)
    return frame


def model_catalog(store: Store) -> pd.DataFrame:
    """Models (key, display name, family, provider, API id, simulated, kind, access) with the datasets
    they ran on. The kind keeps baselines out of model pickers unless the selection switches them in."""
    with store.connect(read_only=True) as con:
        frame = con.frame(
            f"""SELECT m.model, m.display_name, m.family, m.provider, m.api_model_id, m.simulated,
                      {model_kind_sql(con)} AS kind, {model_access_sql(con)} AS access, d.datasets
               FROM models m LEFT JOIN (SELECT model, array_agg(DISTINCT dataset ORDER BY dataset) AS datasets
                                        FROM runs GROUP BY model) d USING (model)
               ORDER BY m.display_name""")
    frame["simulated"] = frame["simulated"].astype(bool)
    return frame


def item_keys(store: Store, dataset: str) -> pd.DataFrame:
    """Current items of a dataset without their records: item_id, type, language, has_image, image_hash, and
    variant_of (the source of a variant item, `eduart_core.variants`; None for a source item)."""
    with store.connect(read_only=True) as con:
        frame = con.frame(
            "SELECT item_id, type, language, has_image, image_hash, record->>'variant_of' AS variant_of "
            "FROM items WHERE dataset = ? AND is_current "
            "ORDER BY item_id", [dataset])
    frame["has_image"] = frame["has_image"].astype(bool)
    return frame


def answered_conditions(store: Store, dataset: str) -> list[str]:
    """Prompt conditions in which some model answered an item of ``dataset`` (sorted)."""
    with store.connect(read_only=True) as con:
        rows = con.execute(
            f"""SELECT DISTINCT u.condition FROM runs u
                WHERE u.dataset = ? AND EXISTS (SELECT 1 FROM responses r WHERE r.run_id = u.run_id
                                                AND {latest_clause(con)})
                ORDER BY 1""", [dataset]).fetchall()
    return [r[0] for r in rows]


def store_versions(store: Store) -> dict:
    """Schema version (last migration applied) and data version of the store."""
    with store.connect(read_only=True) as con:
        schema = con.execute("SELECT max(version) FROM schema_version").fetchone()[0]
        data = con.execute("SELECT value FROM meta WHERE key = 'data_version'").fetchone()
    return {"schema_version": int(schema or 0), "data_version": int(data[0]) if data else -1}


def run_provenance(store: Store, dataset: str) -> pd.DataFrame:
    """Per model and condition of a dataset: display name, provider, API model id, origin, runs and
    the prompt hashes they were asked with (what a reader needs to reproduce the numbers)."""
    with store.connect(read_only=True) as con:
        frame = con.frame(
            """SELECT m.display_name AS model, m.provider, m.api_model_id, u.condition,
                      string_agg(DISTINCT u.origin, ', ' ORDER BY u.origin) AS origin, count(*) AS runs,
                      string_agg(DISTINCT coalesce(u.prompt_hash, '—'), ', ' ORDER BY coalesce(u.prompt_hash, '—'))
                          AS prompt_hashes
               FROM runs u JOIN models m ON m.model = u.model
               WHERE u.dataset = ?
               GROUP BY m.display_name, m.provider, m.api_model_id, u.condition
               ORDER BY m.display_name, u.condition""", [dataset])
    return frame


def scorer_rule_sets(store: Store, dataset: str) -> dict[str, list[str]]:
    """Per profile, the rule sets (``<format>/<version>``, open text with its embedding model) that
    scored the dataset's answers; empty lists for a store whose scores do not record them."""
    with store.connect(read_only=True) as con:
        if not con.has_column("scores", "scorer"):
            return {}
        rows = con.execute(
            """SELECT s.profile, array_agg(DISTINCT s.scorer ORDER BY s.scorer) FILTER (WHERE s.scorer IS NOT NULL)
               FROM scores s JOIN responses r USING (response_id) JOIN runs u USING (run_id)
               WHERE u.dataset = ? GROUP BY s.profile ORDER BY s.profile""", [dataset]).fetchall()
    return {profile: list(rules or []) for profile, rules in rows}

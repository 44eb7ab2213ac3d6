"""A DuckDB store's large frames read text through Arrow, with the dtypes and values DuckDB's own ``df()`` gives."""
from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from eduart_core.store.duckdb_file import DuckConnection

QUERIES = [
    # text with and without NULLs, an all-NULL text column, numbers with and without NULLs
    "SELECT * FROM (VALUES ('a', NULL::VARCHAR, NULL::VARCHAR, 1, 1.5, NULL::INT, true, [1, 2], "
    "TIMESTAMP '2020-01-01', 2::DECIMAL(5, 2)), ('b', 'x', NULL, 2, NULL, 3, NULL, NULL, NULL, NULL)) "
    "t(a, b, c, d, e, f, g, h, i, j)",
    "SELECT 'x' AS a, 1 AS b WHERE false",  # no rows
    "SELECT 'x' AS a, 'y' AS a",  # a repeated name
    "SELECT CAST(range AS VARCHAR) AS t, range AS n, range / 3 AS f FROM range(10000)",  # many batches
]


@pytest.mark.parametrize("sql", QUERIES)
def test_a_frame_is_what_df_gives(sql):
    raw = duckdb.connect()
    got = DuckConnection(raw).frame(sql, large=True)
    pd.testing.assert_frame_equal(got, raw.execute(sql).df())


def test_a_frame_takes_parameters():
    raw = duckdb.connect()
    got = DuckConnection(raw).frame("SELECT ? AS a, ? AS b", ["x", 2], large=True)
    assert got["a"].tolist() == ["x"] and got["b"].tolist() == [2]

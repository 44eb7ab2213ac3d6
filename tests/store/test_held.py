"""`Store.held`: a build that owns its DuckDB file opens it once, and leaves it whole and free."""
from __future__ import annotations

import subprocess
import sys

import pytest

from eduart_core.store import Store, duckdb_file
from eduart_core.store.errors import StoreError


def _opens(monkeypatch) -> list[bool]:
    """Every real open of a DuckDB file by the store, recorded (the open itself still happens)."""
    calls: list[bool] = []
    real = duckdb_file.DuckDBStore._open

    def counting(self, read_only):
        calls.append(read_only)
        return real(self, read_only)

    monkeypatch.setattr(duckdb_file.DuckDBStore, "_open", counting)
    return calls


def _write(store: Store, n: int) -> None:
    with store.transaction() as con:
        con.execute("CREATE TABLE IF NOT EXISTS t (k INTEGER)")
        con.execute("INSERT INTO t VALUES (?)", [n])


def _count(store: Store) -> int:
    with store.connect(read_only=True) as con:
        return int(con.execute("SELECT count(*) FROM t").fetchone()[0])


def test_many_transactions_inside_a_hold_open_the_file_once(store_path, monkeypatch):
    store = Store(store_path)
    opens = _opens(monkeypatch)
    with store.held():
        for n in range(20):
            _write(store, n)
            assert _count(store) == n + 1  # a read inside the hold sees every commit
    assert opens == [False]
    _write(store, 99)  # after the hold: a short transaction of its own again
    assert len(opens) == 2


def test_after_a_hold_the_file_is_whole_and_another_process_opens_it(store_path):
    store = Store(store_path)
    with store.held():
        for n in range(5):
            _write(store, n)
    assert not store_path.with_name(store_path.name + ".wal").exists()  # checkpointed at the end
    code = f"import duckdb; print(duckdb.connect({str(store_path)!r}, read_only=True).execute('SELECT count(*) FROM t').fetchone()[0])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "5"


def test_a_failed_transaction_inside_a_hold_changes_nothing_and_the_hold_goes_on(store_path):
    store = Store(store_path)
    with store.held():
        _write(store, 1)
        with pytest.raises(StoreError, match="nothing of this change was saved"), store.transaction() as con:
            con.execute("INSERT INTO t VALUES (2)")
            con.execute("INSERT INTO no_such_table VALUES (3)")
        _write(store, 3)
        assert _count(store) == 2
    assert _count(store) == 2


def test_an_error_in_the_block_still_closes_the_held_connection(store_path, monkeypatch):
    store = Store(store_path)
    with pytest.raises(RuntimeError), store.held():
        _write(store, 1)
        raise RuntimeError("the build failed")
    assert str(store_path) not in duckdb_file._HELD
    opens = _opens(monkeypatch)
    assert _count(store) == 1  # committed work kept, and the file opens anew
    assert opens == [True]


def test_a_nested_hold_is_the_same_hold(store_path, monkeypatch):
    store = Store(store_path)
    opens = _opens(monkeypatch)
    with store.held():
        with Store(store_path).held():  # another handle on the same file, as a builder makes
            _write(store, 1)
        _write(store, 2)  # the outer hold is still open
    assert opens == [False]
    assert _count(store) == 2

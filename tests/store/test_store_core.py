"""The store's transactions are all-or-nothing and migrations are recorded."""
import pg_kit
import pytest

from eduart_core.store import Store
from eduart_core.store.core import schema_version
from eduart_core.store.schema import MIGRATIONS

backend, store = pg_kit.backend, pg_kit.store  # every test here runs on DuckDB and PostgreSQL


def test_failed_transaction_leaves_store_unchanged(store: Store):
    with store.transaction() as con:
        con.execute("INSERT INTO datasets(dataset, title, kind) VALUES ('a', 'A', 'demo')")
    before = store.data_version()
    with pytest.raises(RuntimeError):
        with store.transaction() as con:
            con.execute("INSERT INTO datasets(dataset, title, kind) VALUES ('b', 'B', 'demo')")
            raise RuntimeError("import failed half-way")
    with store.connect(read_only=True) as con:
        assert con.execute("SELECT array_agg(dataset) FROM datasets").fetchone()[0] == ["a"]
    assert store.data_version() == before


def test_migrations_recorded_once(store: Store):
    with store.connect() as con:
        assert schema_version(con) == MIGRATIONS[-1][0]
    with store.connect() as con:  # reopening applies nothing twice
        assert con.execute("SELECT count(*) FROM schema_version").fetchone()[0] == len(MIGRATIONS)


def test_reader_and_writer_in_one_process_do_not_clash(store: Store):
    """Two app sessions in one server process: one reads while another writes."""
    with store.transaction() as con:
        con.execute("INSERT INTO datasets(dataset, title, kind) VALUES ('a', 'A', 'demo')")
        with store.connect(read_only=True) as reader:
            assert reader.execute("SELECT count(*) FROM datasets").fetchone()[0] >= 0
    with store.connect(read_only=True) as reader:  # a session still reading when another one writes:
        store.lock_timeout_s = 0.5                    # the writer waits for it, then writes alongside it
        with store.transaction() as con:
            con.execute("INSERT INTO datasets(dataset, title, kind) VALUES ('b', 'B', 'demo')")
        assert reader.execute("SELECT count(*) FROM schema_version").fetchone()[0] == len(MIGRATIONS)
    with store.connect(read_only=True) as con:  # the next read sees both writes
        assert {r[0] for r in con.execute("SELECT dataset FROM datasets").fetchall()} >= {"a", "b"}


def test_a_transaction_lock_holds_off_a_second_writer_until_commit(store: Store, backend: str):
    """A lock taken at the start of a transaction (sent with its first statement on PostgreSQL)
    makes a second writer of the same key wait until the first commits: the second sees the first's row."""
    import threading
    import time

    seen: list[list[str]] = []
    first_locked = threading.Event()

    def second() -> None:
        first_locked.wait(10)
        with store.transaction() as con:
            con.lock("datasets:x")
            seen.append(sorted(r[0] for r in con.execute("SELECT dataset FROM datasets").fetchall()))
            con.execute("INSERT INTO datasets(dataset, title, kind) VALUES ('second', 'S', 'demo')")

    if backend == pg_kit.DUCKDB:
        pytest.skip("one DuckDB writer at a time: the file lock, not an advisory lock, orders writers")
    worker = threading.Thread(target=second)
    worker.start()
    with store.transaction() as con:
        con.lock("datasets:x")
        con.execute("INSERT INTO datasets(dataset, title, kind) VALUES ('first', 'F', 'demo')")
        first_locked.set()
        time.sleep(0.5)  # the second writer is waiting on the lock meanwhile
    worker.join(20)
    assert seen == [["first"]]


def test_a_transaction_that_fails_before_its_first_statement_changes_nothing(store: Store):
    with store.transaction() as con:
        con.execute("INSERT INTO datasets(dataset, title, kind) VALUES ('a', 'A', 'demo')")
    before = store.data_version()
    with pytest.raises(RuntimeError):
        with store.transaction() as con:
            con.lock("datasets:y")
            raise RuntimeError("refused before writing")
    with store.transaction() as con:  # the connection is usable: nothing was left open
        con.execute("INSERT INTO datasets(dataset, title, kind) VALUES ('c', 'C', 'demo')")
    assert store.data_version() == before + 1


def test_rows_given_column_by_column_arrive_typed_with_missing_values_as_null(store: Store):
    with store.transaction() as con:
        con.execute("CREATE TABLE bulk_probe (n BIGINT, x DOUBLE, flag BOOLEAN, label TEXT, doc JSON)")
        con.insert_columns("bulk_probe", {"n": [1, None, 2**40], "x": [0.5, float("nan"), None],
                                          "flag": [True, None, False], "label": ["è", None, "=1+1"],
                                          "doc": ['{"Answers": [{"id": "A"}]}', None, "[]"]},
                           {"n": "BIGINT", "x": "DOUBLE", "flag": "BOOLEAN"}, json_columns=("doc",))
        con.insert_columns("bulk_probe", {"n": [], "x": [], "flag": [], "label": [], "doc": []})  # nothing to do
    with store.connect(read_only=True) as con:
        rows = con.execute("SELECT n, x, flag, label, CAST(doc AS TEXT) FROM bulk_probe ORDER BY n NULLS LAST"
                           ).fetchall()
    assert [tuple(r) for r in rows] == [(1, 0.5, True, "è", '{"Answers": [{"id": "A"}]}'),
                                        (2**40, None, False, "=1+1", "[]"), (None, None, None, None, None)]

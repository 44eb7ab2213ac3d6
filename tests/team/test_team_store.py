"""Team mode on a real PostgreSQL server: the demo and every view as on the DuckDB file, many writers at
once, store-copy both ways, images in S3 or a shared folder, and the faults a team meets (a killed
writer, a server restart, a wrong password)."""
from __future__ import annotations

import io
import json
import math
import os
import signal
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from pg_kit import POSTGRES, build_once, require_or_skip

from eduart_core import views
from eduart_core.cli import main
from eduart_core.store import Store, StoreError, StoreUnavailableError
from eduart_core.store import extraction as db
from eduart_core.team.identity import local

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]
DATASET = "demo-extraction"


def _env(**extra: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **extra}
    return env


def records(db_location: str, *args: str) -> list[dict]:
    """`show ... --format json` through the CLI's entry point in this process."""
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        code = main(["show", *args, "--db", str(db_location)])
    assert code == 0
    return json.loads(buffer.getvalue())


def comparable(rows: list[dict]) -> list[dict]:
    """Rows without what differs between two stores built at different moments: write times
    (``*_at``) and the store's own location."""
    return [{k: v for k, v in r.items() if not (k.endswith("_at") or k == "at")} for r in rows
            if not (r.get("part") == "store" and r.get("name") == "name")]


def same(a, b) -> bool:
    """Equal records, floats to 1e-9 (the engines may sum in another order)."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.fixture(scope="session")
def pg_demo(request, tmp_path_factory):
    """The demo built by `python -m eduart_core demo` into a PostgreSQL database, once per session."""
    from eduart_core.demo import build_demo

    return build_once(request, tmp_path_factory, POSTGRES, lambda store: build_demo(store), "pg-demo")


@pytest.fixture
def pg_demo_url(request, pg_demo, tmp_path) -> str:
    return pg_demo.copy(request, tmp_path / "demo")


# ---------------------------------------------------------------- the demo and the views

def test_the_demo_builds_in_postgres_with_the_leaderboard_of_the_duckdb_file(demo_db, pg_demo_url, capsys):
    ours, theirs = records(str(demo_db), "leaderboard"), records(pg_demo_url, "leaderboard")
    assert ours and ours == theirs  # the same JSON, number for number
    assert main(["stats", "--json", "--db", pg_demo_url]) == 0
    pg_stats = json.loads(capsys.readouterr().out)
    assert main(["stats", "--json", "--db", str(demo_db)]) == 0
    duck_stats = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in pg_stats.items() if k != "store"} == {k: v for k, v in duck_stats.items() if k != "store"}


#: Views that need a baseline run (not part of the demo): checked elsewhere on the DuckDB file.
BASELINE_VIEWS = {"baselines", "baseline_type_scores"}


def _shown(db_location: str, *args: str) -> tuple[int, list | None]:
    """(exit code, parsed rows or None) of `show ...` in this process."""
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        code = main(["show", *args, "--db", str(db_location)])
    return code, json.loads(buffer.getvalue()) if code == 0 else None


@pytest.mark.parametrize("name", [n for n in views.VIEWS if n not in BASELINE_VIEWS])
def test_every_view_gives_the_same_rows_on_both_backends(demo_db, pg_demo_url, name):
    from tests.views.test_show import NEEDS, _dataset_with_rows

    dataset = _dataset_with_rows(demo_db, name) or "demo"  # the demo dataset the view has rows on
    args = [name, "--dataset", dataset, *NEEDS.get(name, [])]
    views.clear_caches()
    code, ours = _shown(str(demo_db), *args)
    views.clear_caches()
    pg_code, theirs = _shown(pg_demo_url, *args)
    assert pg_code == code, name  # a view with nothing to show on the demo refuses alike on both
    ours, theirs = comparable(ours or []), comparable(theirs or [])
    assert same(ours, theirs), (name, [(a, b) for a, b in zip(ours, theirs) if not same(a, b)][:2])


# ---------------------------------------------------------------- store-copy

def test_store_copy_round_trips_the_demo_with_equal_counts_and_hashes(demo_db, pg_url, tmp_path, capsys):
    assert main(["store-copy", "--from", str(demo_db), "--to", pg_url]) == 0
    out = capsys.readouterr().out
    assert "counts and hashes equal" in out and "responses" in out and "review_decisions" in out
    back = tmp_path / "back.duckdb"
    assert main(["store-copy", "--from", pg_url, "--to", str(back)]) == 0
    assert "counts and hashes equal" in capsys.readouterr().out
    assert records(str(back), "leaderboard") == records(str(demo_db), "leaderboard")
    # a store that holds rows is never overwritten silently
    assert main(["store-copy", "--from", str(demo_db), "--to", pg_url]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not empty" in err[0] and "--replace" in err[0]
    assert main(["store-copy", "--from", str(back), "--to", pg_url, "--replace", "--quiet"]) == 0
    # ids continue after the copied ones: a new decision or response never collides
    store = Store(pg_url)
    with store.transaction() as con:
        top = con.execute("SELECT max(response_id) FROM responses").fetchone()[0]
        assert con.next_ids("response_seq", 1)[0] > top


# ---------------------------------------------------------------- many writers at once

@pytest.fixture(scope="module")
def extraction_pg(request, tmp_path_factory):
    from eduart_core.extraction.simulated import build_extraction_demo

    return build_once(request, tmp_path_factory, POSTGRES, build_extraction_demo, "team-review")


def _reviewer_lines(store: Store, reviewer: str) -> list[str]:
    queued = db.load_discrepancies(store, round=1, queued_only=True)
    return [json.dumps({"dataset": DATASET, "page": r["page_id"], "round": 1, "field": r["path"],
                        "reviewer": reviewer, "decision": "A" if (i + len(reviewer)) % 3 else "B"})
            for i, r in enumerate(queued.to_dict("records"))]


def test_twenty_review_imports_started_at_once_all_land(request, extraction_pg, tmp_path):
    url = extraction_pg.copy(request, tmp_path / "imports")
    store = Store(url)
    files = []
    for k in range(20):
        path = tmp_path / f"reviewer-{k:02d}.jsonl"
        path.write_text("\n".join(_reviewer_lines(store, f"reviewer-{k:02d}")) + "\n", encoding="utf-8")
        files.append(path)
    per_file = len(_reviewer_lines(store, "x"))
    procs = [subprocess.Popen([sys.executable, "-m", "eduart_core", "review-import", str(f), "--db", url],
                              cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for f in files]
    outcomes = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0] * 20, [o[1] for o in outcomes if o[1]]
    assert all(f"imported {per_file} decision(s)" in o[0] for o in outcomes)
    out = tmp_path / "export.jsonl"
    assert main(["review-export", "--out", str(out), "--db", url]) == 0
    exported = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.startswith("{")]
    mine = [r for r in exported if r["reviewer"].startswith("reviewer-")]
    assert len(mine) == 20 * per_file
    assert {r["reviewer"] for r in mine} == {f"reviewer-{k:02d}" for k in range(20)}
    # a duplicate import changes nothing
    version = store.data_version()
    again = subprocess.run([sys.executable, "-m", "eduart_core", "review-import", str(files[3]), "--db", url],
                           cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "imported 0 decision(s)" in again.stdout
    assert len(db.load_decisions(store)) == 20 * per_file and store.data_version() == version


_DECIDER = """
import sys
from eduart_core.store import Store
from eduart_core.store import extraction as db
store, reviewer = Store(sys.argv[1]), sys.argv[2]
for k in range(10_000):
    decision = db.append_decision(store, "ex01/q01", 1, "question_text", "accept_a", reviewer, None, k, None, None,
                                  check=lambda decisions: {}, role="review", source="cli")
    print(decision, flush=True)
"""


def test_kill_9_of_a_deciding_process_loses_no_committed_decision(request, extraction_pg, tmp_path):
    url = extraction_pg.copy(request, tmp_path / "kill")
    writers = [subprocess.Popen([sys.executable, "-c", _DECIDER, url, f"writer-{k}"], cwd=ROOT, env=_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in range(3)]
    committed: dict[int, list[int]] = {k: [] for k in range(3)}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and min(len(v) for v in committed.values()) < 15:
        for k, proc in enumerate(writers):
            line = proc.stdout.readline()
            if line.strip().isdigit():
                committed[k].append(int(line))
    for proc in writers:
        os.kill(proc.pid, signal.SIGKILL)
    for k, proc in enumerate(writers):
        rest = proc.stdout.read()  # lines printed before the kill (through the same buffered reader)
        proc.stderr.read()
        proc.wait(30)
        committed[k] += [int(x) for x in rest.split() if x.isdigit()]
    log = db.load_decisions(Store(url))
    stored = set(int(i) for i in log.loc[log["reviewer"].astype(str).str.startswith("writer-"), "decision_id"])
    printed = {i for ids in committed.values() for i in ids}
    assert min(len(v) for v in committed.values()) >= 15
    assert printed <= stored  # every decision a process was told was committed is in the store
    assert len(stored - printed) <= 3  # at most the one in flight per killed process


def test_kill_9_of_an_import_keeps_all_or_nothing_and_the_next_import_lands_everything(request, extraction_pg,
                                                                                      tmp_path):
    """A review-import killed at any moment leaves its decisions all stored or none (one transaction),
    holds no lock after it is gone, and the same file imported again lands every decision once."""
    url = extraction_pg.copy(request, tmp_path / "kill-import")
    store = Store(url)
    lines = [line for k in range(6) for line in _reviewer_lines(store, f"killed-{k}")]
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    mine = lambda: int(db.load_decisions(store)["reviewer"].astype(str).str.startswith("killed-").sum())  # noqa: E731
    for delay in (1.0, 2.0, 3.0):
        proc = subprocess.Popen([sys.executable, "-m", "eduart_core", "review-import", str(path), "--db", url],
                                cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        assert mine() in (0, len(lines))
    done = subprocess.run([sys.executable, "-m", "eduart_core", "review-import", str(path), "--db", url],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert mine() == len(lines)


def test_simultaneous_decisions_from_two_processes_keep_the_conflict_rule(request, extraction_pg, tmp_path):
    """Two reviewers in two processes decide one field at the same moment, both having seen it
    undecided: one decision is saved, the other is refused as a conflict (never a lost decision)."""
    url = extraction_pg.copy(request, tmp_path / "race")
    script = """
import sys, time
from eduart_core.extraction.review import ReviewConflict
from eduart_core.store import Store
from eduart_core.store import extraction as db
store = Store(sys.argv[1])
store.data_version()
start = float(sys.argv[3])
while time.time() < start:
    time.sleep(0.0005)
try:
    db.append_decision(store, "ex01/q01", 1, "question_text", "accept_a", sys.argv[2], None, 1, None, based_on=None)
    print("saved")
except ReviewConflict:
    print("conflict")
"""
    start = str(time.time() + 6)
    procs = [subprocess.Popen([sys.executable, "-c", script, url, name, start], cwd=ROOT, env=_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for name in ("Anna", "Bruno")]
    outs = [p.communicate(timeout=120) for p in procs]
    assert sorted(o[0].strip() for o in outs) == ["conflict", "saved"], [o[1] for o in outs]
    assert len(db.load_decisions(Store(url), "ex01/q01", 1)) == 1


# ---------------------------------------------------------------- two app servers, one store

_REVIEWER_SESSION = """
import json, sys
from streamlit.testing.v1 import AppTest
page_file, name, page, round_, path = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
other = sys.argv[6]
at = AppTest.from_file(page_file, default_timeout=180)
at.run()
at.text_input(key="review_name").input(name).run()
at.session_state["review_round"] = round_
at.session_state["review_current"] = (page, round_)
at.run()
seen_before = " ".join(str(m.value) for m in at.markdown)
at.button(key=f"accept_a::{page}|{round_}|{path}").click().run()
seen_after = " ".join(str(m.value) for m in at.markdown) + " ".join(str(t.value) for t in at.toast)
print(json.dumps({"exceptions": [str(e.value) for e in at.exception], "saw_other": other in seen_before + seen_after}))
"""


def test_two_app_servers_on_one_postgres_store_serve_a_blind_double_review(request, extraction_pg, tmp_path):
    """Two processes, each running the review page (AppTest: one app server each) on one PostgreSQL
    store, serve one blind double-review round to two reviewers who decide the same field at once."""
    from eduart_core.extraction import review

    url = extraction_pg.copy(request, tmp_path / "servers")
    store = Store(url)
    review.set_reviewers(store, DATASET, 2, 2, set_by=local("lead"))
    field = "question_text"
    page_file = str(ROOT / "pages" / "11_review.py")
    env = _env(EDUART_DB=url)
    procs = [subprocess.Popen([sys.executable, "-c", _REVIEWER_SESSION, page_file, name, "ex01/q01", "2", field, other],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name, other in (("Anna", "Bruno"), ("Bruno", "Anna"))]
    outs = [p.communicate(timeout=600) for p in procs]
    results = [json.loads(o[0].strip().splitlines()[-1]) for o in outs]
    assert all(not r["exceptions"] for r in results), results
    assert not any(r["saw_other"] for r in results)  # blind: neither server showed the other reviewer
    log = db.load_decisions(store, "ex01/q01", 2)
    assert sorted(log["reviewer"]) == ["Anna", "Bruno"] and set(log["role"]) == {"review"}
    assert list(log["shown_order"]) == [review.shown_order("ex01/q01", 2, r, 2) for r in log["reviewer"]]
    state = review.load_state(store, 2).state("ex01/q01", 2, field)
    assert state.state in ("agreed", "adjudication", "resolved") or state.resolved


# ---------------------------------------------------------------- images

def test_images_in_s3_are_content_addressed_and_read_by_every_server(pg_url, s3_url, tmp_path, monkeypatch):
    from batch_env import BUCKET

    from eduart_core.store.items import add_image, image_path
    from tests.importers.test_ingest import png_bytes

    prefix = f"images-{os.getpid()}-{time.time_ns()}"
    monkeypatch.setenv("EDUART_IMAGES", f"s3://{BUCKET}/{prefix}")
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3_url)
    for key, value in (("AWS_ACCESS_KEY_ID", "stub"), ("AWS_SECRET_ACCESS_KEY", "stub"),
                       ("AWS_DEFAULT_REGION", "us-east-1")):
        monkeypatch.setenv(key, value)
    data = png_bytes("red", (12, 9))
    store = Store(pg_url)
    digest = add_image(store, data, "plate.png")
    assert add_image(store, data, "again.png") == digest  # the same bytes are stored once
    import boto3

    s3 = boto3.client("s3", endpoint_url=s3_url, region_name="us-east-1")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])]
    assert keys == [f"{prefix}/{digest[:2]}/{digest}.png"]
    # another server: its own local folders, the same bucket
    monkeypatch.setenv("EDUART_WORK_DIR", str(tmp_path / "server-b"))
    other = Store(pg_url)
    path = image_path(other, digest)
    assert str(path).startswith(str(tmp_path / "server-b")) and path.read_bytes() == data


def test_a_shared_image_folder_serves_two_servers(pg_url, tmp_path, monkeypatch):
    from eduart_core.store.items import add_image, image_path
    from tests.importers.test_ingest import png_bytes

    monkeypatch.setenv("EDUART_IMAGES", str(tmp_path / "share"))
    monkeypatch.setenv("EDUART_WORK_DIR", str(tmp_path / "server-a"))
    digest = add_image(Store(pg_url), png_bytes("blue"), "p.png")
    monkeypatch.setenv("EDUART_WORK_DIR", str(tmp_path / "server-b"))
    path = image_path(Store(pg_url), digest)
    assert path.parent.parent == tmp_path / "share" and path.read_bytes() == png_bytes("blue")


# ---------------------------------------------------------------- faults

def test_a_server_restart_mid_session_gives_one_line_and_the_next_action_works(monkeypatch, tmp_path):
    from eduart_core.bench.pgserver import TempPostgres, missing_reason
    from eduart_core.store import release_readers
    from eduart_core.store.runs import ensure_dataset, ensure_model, list_runs

    if missing_reason():
        require_or_skip(missing_reason())
    monkeypatch.setenv("EDUART_WORK_DIR", str(tmp_path / "work"))
    with TempPostgres(durable=False) as server:
        url = server.create_database("restart")
        store = Store(url, lock_timeout_s=3)
        ensure_dataset(store, "ds", "DS", "benchmark")
        assert list_runs(store).empty
        server.stop()
        with pytest.raises(StoreUnavailableError) as down:
            ensure_model(store, "m", "M", None, None, None)
        line = str(down.value)
        assert "\n" not in line and f"127.0.0.1:{server.port}/restart" in line and server.password not in line
        server._pg_ctl("start", "-o", f"-p {server.port} -k {server.root} -c listen_addresses=127.0.0.1")
        assert ensure_model(store, "m", "M", None, None, None) == "M"  # the next action works
        server.restart()  # with connections in the pool: dropped by the server, replaced by the pool
        try:
            list_runs(store)
        except StoreUnavailableError as exc:  # at most the first action after the restart says so
            assert "\n" not in str(exc)
        assert list_runs(store).empty and ensure_model(store, "m2", "M2", None, None, None) == "M2"
        release_readers(url)


def test_a_wrong_password_or_url_is_one_line_naming_host_and_database(pg_server, pg_url, capsys):
    from eduart_core.store.postgres import DatabaseURL

    good = DatabaseURL(pg_url)
    assert Store(pg_url).exists()  # this process holds a pool for the right password: it must not serve the wrong one
    wrong = good.with_database(good.database).replace(f":{pg_server.password}@", ":not-the-password@")
    cases = [(wrong, "password authentication failed"),
             (good.with_database("nosuchdb"), "does not exist"),
             (pg_url.replace(f":{good.port}/", f":{_closed_port()}/"), "cannot reach PostgreSQL"),
             ("postgresql://u:secret@[::1/x", "malformed")]
    for url, words in cases:
        code = main(["stats", "--db", url])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and words in err[0], (url, err)
        assert "not-the-password" not in err[0] and pg_server.password not in err[0] and "secret" not in err[0]
        if words != "malformed":
            assert "127.0.0.1" in err[0] and (good.database in err[0] or "nosuchdb" in err[0])


def _closed_port() -> int:
    from eduart_core.bench.pgserver import free_port

    return free_port()


def test_a_database_without_a_store_says_so_and_the_password_never_shows(pg_server, pg_empty_url):
    store = Store(pg_empty_url)
    assert not store.exists() and pg_server.password not in str(store.path) and pg_server.password not in repr(store)
    with pytest.raises(StoreError, match="no store at"):
        with store.connect(read_only=True):
            pass


def test_every_page_renders_on_the_postgres_demo(pg_demo_url, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from benchmarks.pages import page_files

    monkeypatch.setenv("EDUART_DB", pg_demo_url)
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    assert not at.exception, at.exception
    for page in page_files()[1:]:
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        assert not at.error or all("Cannot read the store" not in str(e.value) for e in at.error), page


# ---------------------------------------------------------------- schema versions on a shared database

def _cli(url: str, *args: str) -> subprocess.CompletedProcess:
    """A fresh process (no pool, no remembered schema) running one command against ``url``."""
    return subprocess.run([sys.executable, "-m", "eduart_core", *args, "--db", url], env=_env(), cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def _as_owner(url: str, *statements: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:
        for statement in statements:
            con.execute(statement)


def test_a_store_older_than_the_code_is_upgraded_once_and_a_user_without_rights_gets_one_line(
        pg_server, pg_empty_url, monkeypatch):
    from eduart_core.store import core, release_readers
    from eduart_core.store.core import latest_schema_version, migrate, pending_migrations
    from eduart_core.store.postgres import DatabaseURL
    from eduart_core.store.postgres import PostgresStore as PgStore

    latest = latest_schema_version()
    with monkeypatch.context() as older_code:  # the store as an earlier EduArt Studio left it
        older_code.setattr(core, "MIGRATIONS", core.MIGRATIONS[:-1])
        with PgStore(pg_empty_url)._raw() as raw:
            from eduart_core.store.pg_connection import PgConnection

            migrate(PgConnection(raw))
    release_readers(pg_empty_url)
    older = max(number for number, _, _ in core.MIGRATIONS[:-1])
    dropped = core.MIGRATIONS[-1][0]
    database = DatabaseURL(pg_empty_url).database
    _as_owner(pg_empty_url, "CREATE ROLE clerk LOGIN PASSWORD 'clerk-pw'",
              "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO clerk",
              "GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO clerk")
    clerk = f"postgresql://clerk:clerk-pw@127.0.0.1:{pg_server.port}/{database}"
    try:
        for command in (["stats"], ["review-status"]):  # a read and a read of the review tables
            done = _cli(clerk, *command)
            err = done.stderr.strip().splitlines()
            assert done.returncode == 2 and len(err) == 1, (command, done.stderr)
            assert f"schema version {older}" in err[0] and f"migration(s) {dropped} " in err[0] and "store-migrate" in err[0]
            assert f"schema version {latest}" in err[0]
            assert "clerk-pw" not in err[0] and f"127.0.0.1:{pg_server.port}/{database}" in err[0]
        done = _cli(pg_empty_url, "store-migrate")  # the owner upgrades it
        assert done.returncode == 0 and f"schema version {latest}" in done.stdout, done.stderr
        assert pg_server.password not in done.stdout + done.stderr
        assert _cli(clerk, "stats").returncode == 0  # and the clerk works again
    finally:
        _as_owner(pg_empty_url, "DROP OWNED BY clerk", "DROP ROLE clerk")
    with PgStore(pg_empty_url)._raw() as raw:
        assert pending_migrations(PgConnection(raw)) == []
    release_readers(pg_empty_url)


def test_an_older_store_is_upgraded_by_the_first_read_of_a_user_who_may(pg_empty_url, monkeypatch):
    from eduart_core.store import core, release_readers
    from eduart_core.store.core import latest_schema_version, migrate
    from eduart_core.store.pg_connection import PgConnection
    from eduart_core.store.postgres import PostgresStore as PgStore

    with monkeypatch.context() as older_code:
        older_code.setattr(core, "MIGRATIONS", core.MIGRATIONS[:-1])
        with PgStore(pg_empty_url)._raw() as raw:
            migrate(PgConnection(raw))
    release_readers(pg_empty_url)
    done = _cli(pg_empty_url, "stats")  # a page or a report reading first: no missing-table errors
    assert done.returncode == 0, done.stderr
    assert _cli(pg_empty_url, "store-migrate").stdout.strip().endswith("this EduArt Studio's latest")
    assert f"schema version {latest_schema_version()}" in _cli(pg_empty_url, "store-migrate").stdout
    release_readers(pg_empty_url)


def test_a_store_newer_than_the_code_is_refused_in_one_line_before_any_write(pg_url):
    _as_owner(pg_url, "INSERT INTO schema_version (version, name) VALUES (9999, 'from the future')")
    for command in (["stats"], ["store-migrate"]):
        done = _cli(pg_url, *command)
        err = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(err) == 1 and "newer EduArt Studio" in err[0], (command, done.stderr)
        assert "schema version 9999" in err[0]


# ---------------------------------------------------------------- team tables on PostgreSQL

def test_roles_audit_log_and_an_exam_sitting_work_on_postgres(pg_demo_url, capsys):
    from eduart_core import team
    from eduart_core.humans import sessions

    for argv in (["roles", "grant", "anna", "reviewer"], ["roles", "grant", "bruno", "adjudicator"],
                 ["roles", "revoke", "anna", "reviewer"]):
        assert main([*argv, "--db", pg_demo_url]) == 0
    capsys.readouterr()
    assert main(["roles", "list", "--json", "--db", pg_demo_url]) == 0
    granted = json.loads(capsys.readouterr().out)
    assert [(r["subject"], r["role"]) for r in granted] == [("bruno", "adjudicator")]
    audit = records(pg_demo_url, "audit_log", "--format", "json")
    assert [r["act"] for r in audit if str(r["act"]).startswith("role")] == ["role granted", "role granted", "role revoked"]
    assert all(r["subject"] and r["name"] for r in audit if str(r["act"]).startswith("role"))  # who did it

    sid = sessions.create_session(pg_demo_url, "demo", group="student", per_cell=1, actor=team.operator(),
                                  title="PostgreSQL session")
    who = team.Identity("ada", "https://idp.test", "Ada", None, frozenset({team.RESPONDENT}), signed_in=True)
    sitting = sessions.begin(pg_demo_url, sid, who)
    question = sessions.current_question(pg_demo_url, sid, sitting.respondent)
    sessions.answer(pg_demo_url, sid, sitting.respondent, question.item_id, None, who)
    after = sessions.sitting(pg_demo_url, sid, sitting.respondent)
    assert after.answered == 1 and after.n_items == sitting.n_items and after.respondent.startswith("P-")
    assert sessions.begin(pg_demo_url, sid, who).resumed  # the same person finds the same sitting again

"""Shared fixtures, and the rules that keep the suite fast and its tests independent.

Fixture rules (read before adding a fixture or a test that needs a store):

- Every test store lives in its own tmp folder: ``store_path`` / ``store`` give an empty store
  for one test. ``_isolate_env`` (automatic) points ``EDUART_DB`` into the test's tmp folder and
  removes provider keys, so no test reads the user's store or real credentials.
- The demo store is built by the demo builder once per test process (``demo_kit``) and copied:
  ``demo_db`` is one copy shared by the whole session and is **read-only** (never write to it,
  never run a command that writes to it); a test that writes takes ``demo_copy`` (its own copy,
  a file copy in well under a second). ``chance_db`` is the demo after
  ``run --model chance --condition both``, also shared and read-only. A module that needs its own
  demo store (a browser server, a report with changed data) calls ``build_dashboard_store(path)``,
  which copies too: never call ``build_demo`` on a full store in a test unless the test is about
  the builder itself.
- Heavy fixtures are shared at the widest scope that stays read-only (session for stores, module
  for servers and browsers); a fixture that yields something writable is function-scoped.
- With pytest-xdist (the default command runs one worker per core, ``-n auto --dist loadfile``),
  a session fixture is built once per worker and a whole test file runs in one worker, so module
  fixtures are never built twice. Nothing may depend on another test having run first.
- Markers: ``slow`` (a few seconds or more each: AppTest pages, subprocess CLIs, real kills, reference
  integrals and walks over every demo dataset; a fixture's one-off build does not count),
  ``browser`` (real Chromium) and ``postgres`` (a real PostgreSQL server) are left out of the
  everyday command and run by CI's second stage; see the README.
- No benchmark runs inside a test (benchmarks are `python -m eduart_core bench ...`), and test
  modules import heavy libraries (the app, SDKs, plotly) inside the tests that need them, so that
  collecting the suite stays cheap.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from demo_kit import build_dashboard_store, copy_store
from pg_kit import pg_empty_url, pg_server, pg_store, pg_url  # noqa: F401  (the PostgreSQL server and databases, tests/pg_kit.py)

__all__ = ["build_dashboard_store", "copy_store"]

#: Markers the everyday command (a bare ``pytest``, the README's) leaves out; CI runs them next.
EVERYDAY_LEAVES_OUT = ("slow", "browser", "postgres")


def pytest_configure(config):
    """Text columns held as the app and the CLI hold them (`eduart_core.pandas_mode`): the suite
    checks the numbers those entry points compute."""
    from eduart_core.pandas_mode import use_python_strings

    use_python_strings()


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true",
                     help="run every test, slow, browser and postgres ones included (what CI runs, in two stages)")


def _everyday(config) -> bool:
    """A bare ``pytest`` (no file, no -m, no -k, no --full) runs the everyday subset; naming a file,
    a test, a marker expression or a keyword runs what was named, slow tests included."""
    return (config.args_source == pytest.Config.ArgsSource.TESTPATHS and not config.option.markexpr
            and not config.option.keyword and not config.getoption("full"))


def pytest_collection_modifyitems(config, items):
    """The everyday subset: every test but those marked slow, browser or postgres (CI's second stage)."""
    if not _everyday(config):
        return
    kept, left = [], []
    for item in items:
        (left if any(item.get_closest_marker(name) for name in EVERYDAY_LEAVES_OUT) else kept).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


def pytest_report_header(config):
    if _everyday(config):
        return [f"everyday subset: tests marked {', '.join(EVERYDAY_LEAVES_OUT)} are left out "
                "(pytest --full runs everything; CI runs them in its second stage)"]
    return []


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store" / "eduart.duckdb"


@pytest.fixture
def store(store_path: Path):
    from eduart_core.store import Store

    return Store(store_path)


@pytest.fixture(autouse=True)
def _isolate_env(monkeypatch, tmp_path):
    """No test may read or write the user's store or real provider keys."""
    monkeypatch.setenv("EDUART_DB", str(tmp_path / "default-store" / "eduart.duckdb"))
    for key in ("EDUART_DATABASE_URL", "EDUART_IMAGES", "EDUART_WORK_DIR"):
        monkeypatch.delenv(key, raising=False)
    for key in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "AWS_ACCESS_KEY_ID",
                "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)


@pytest.fixture(scope="module")
def s3_url():
    """moto's S3 server with the batch bucket, one per test module that asks for it (batch tests)."""
    from batch_env import moto_s3

    with moto_s3() as url:
        yield url


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory) -> Path:
    """The demo store, shared by the session: read-only (a test that writes takes ``demo_copy``)."""
    return build_dashboard_store(tmp_path_factory.mktemp("dashboard") / "eduart.duckdb")


@pytest.fixture
def demo_copy(tmp_path) -> Path:
    """A demo store of this test's own, to write to (a copy: no build)."""
    return build_dashboard_store(tmp_path / "demo" / "eduart.duckdb")


@pytest.fixture(scope="session")
def chance_db(demo_db, tmp_path_factory) -> Path:
    """A copy of the demo store after `run --model chance --condition both` (a baseline run) and one exam
    session with one person who answered a question; read-only."""
    from eduart_core.cli import main
    from eduart_core.store import Store
    from eduart_core.store.runs import list_runs

    path = copy_store(demo_db, tmp_path_factory.mktemp("chance") / "eduart.duckdb")
    assert main(["run", "--db", str(path), "--model", "chance", "--condition", "both", "--quiet"]) == 0
    runs = list_runs(Store(path))
    assert runs.loc[runs["model"] == "chance", "n_error_responses"].sum() == 0
    _sit_one_question(path)
    return path


def _sit_one_question(path: Path) -> None:
    """An exam session on the demo with one person who answered its first question (acts by people)."""
    from eduart_core import team
    from eduart_core.humans import sessions

    sid = sessions.create_session(str(path), "demo", group="student", per_cell=1, actor=team.operator(),
                                  title="Fixture session")
    who = team.Identity("ada", "https://idp.test", "Ada", None, frozenset({team.RESPONDENT}), signed_in=True)
    sitting = sessions.begin(str(path), sid, who)
    question = sessions.current_question(str(path), sid, sitting.respondent)
    sessions.answer(str(path), sid, sitting.respondent, question.item_id, None, who)

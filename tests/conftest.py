"""Shared fixtures: every test store lives in its own tmp folder."""
from __future__ import annotations

from pathlib import Path

import pytest
from pg_kit import pg_empty_url, pg_server, pg_store, pg_url  # noqa: F401  (the PostgreSQL server and databases, tests/pg_kit.py)


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


def build_dashboard_store(path: Path) -> Path:
    """The demo store, built by the demo builder itself: a broken builder fails the tests that use it."""
    from eduart_core.demo import build_demo
    from eduart_core.store import Store

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    build_demo(Store(path), force=True)
    return path


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory) -> Path:
    """One demo store per test session (read-only for the tests that share it)."""
    return build_dashboard_store(tmp_path_factory.mktemp("dashboard") / "eduart.duckdb")


@pytest.fixture(scope="session")
def chance_db(demo_db, tmp_path_factory) -> Path:
    """A copy of the demo store after `run --model chance --condition both` (a baseline run) and one exam
    session with one person who answered a question."""
    import shutil

    from eduart_core.cli import main
    from eduart_core.store import Store
    from eduart_core.store.runs import list_runs

    path = tmp_path_factory.mktemp("chance") / "eduart.duckdb"
    shutil.copy(demo_db, path)
    shutil.copytree(Store(demo_db).images_dir, Store(path).images_dir)  # image items are sent with their image
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

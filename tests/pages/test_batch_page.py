"""Runs page in batch mode (AppTest): the batch choice, the side-by-side estimate, a background batch
launch against the loopback stubs, live job states and counts, and usage summed per run and model."""
from __future__ import annotations

from pathlib import Path

import pytest
from batch_env import item_answer, moto_s3, use_registry, wait_until
from batch_stubs import BatchStub
from runner_items import fill_store
from streamlit.testing.v1 import AppTest

from eduart_core.runner import background
from tests.reading import as_read

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "10_runs.py")


@pytest.fixture
def batch_page(store, monkeypatch, tmp_path):
    with moto_s3() as s3_url, BatchStub(s3_endpoint=s3_url, answer=item_answer) as stub:
        use_registry(monkeypatch, tmp_path, stub.url, s3_url)
        monkeypatch.setenv("EDUART_DB", str(store.path))
        monkeypatch.setenv("EDUART_BATCH_POLL_S", "0.1")
        monkeypatch.chdir(ROOT)
        fill_store(store, 1)
        yield store, stub


def _page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _frame_with(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


@pytest.mark.slow  # an AppTest page
def test_batch_launch_from_the_page_shows_job_states_counts_and_usage(batch_page):
    store, stub = batch_page
    stub.hold = True
    at = _page()
    at.multiselect(key="runs_models").set_value(["stub-gpt"]).run()
    at.radio(key="runs_mode").set_value("batch").run()
    est = _frame_with(at, "Batch (USD)")
    row = est.iloc[0]
    assert float(row["Batch (USD)"]) == pytest.approx(row["Online (USD)"] * 0.5, abs=1e-6)
    assert row["Batch mode"] == "yes" and row["Batch discount"] == "50%"
    at.button(key="runs_launch").click().run()
    launch_id = as_read(at.success[0].value).split()[1]
    wait_until(lambda: stub.submissions and stub.polls >= 2, 90, step=0.1)
    at = _page()
    live = _frame_with(at, "job_id")
    assert live.iloc[0]["state"] == "in_progress" and live.iloc[0]["n_requests"] == 7
    stub.hold = False

    def finished():
        state = next((s for s in background.list_launches(store) if s["launch_id"] == launch_id), None)
        return state and state["status"] == "completed" and not state["alive"]

    wait_until(finished, 90, step=0.1)
    at = _page()
    usage = _frame_with(at, "batch_answers")
    assert list(usage["mode"]) == ["batch"] and usage.iloc[0]["batch_answers"] == 7
    assert usage.iloc[0]["cost_usd"] == pytest.approx(7 * (120 * 2.0 + 30 * 8.0) / 1e6 * 0.5)
    jobs = _frame_with(at, "n_answered")
    assert jobs.iloc[0]["state"] == "completed" and jobs.iloc[0]["n_answered"] == 7
    at.radio(key="runs_usage_by").set_value("model").run()
    per_model = _frame_with(at, "batch_answers")
    assert list(per_model.columns[:4]) == ["model", "model_key", "condition", "runs"]
    assert len(stub.submissions) == 1

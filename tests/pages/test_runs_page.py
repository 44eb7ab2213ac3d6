"""Runs page (AppTest): estimate, launch in the background, live progress, cancel, resume, history,
credentials and reproducibility, against a real store in tmp_path and a stub model server."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from runner_items import fill_store
from streamlit.testing.v1 import AppTest
from stubs import StubServer

from eduart_core.runner import background
from eduart_core.store import Store
from eduart_core.text import plain

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "10_runs.py")


@pytest.fixture
def page_store(store, monkeypatch):
    monkeypatch.setenv("EDUART_DB", str(store.path))
    monkeypatch.chdir(ROOT)
    fill_store(store, 2)
    return store


def _page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _wait(store: Store, launch_id: str, statuses=("completed",), timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = next((s for s in background.list_launches(store) if s["launch_id"] == launch_id), None)
        if state and state["status"] in statuses and not state["alive"]:
            return state
        time.sleep(0.2)
    raise AssertionError(f"launch {launch_id} did not reach {statuses}")


def _texts(at: AppTest) -> str:
    return "\n".join(str(x.value) for x in [*at.markdown, *at.caption, *at.success, *at.warning, *at.info])


def test_chance_launch_from_the_page_runs_in_background_and_shows_history(page_store):
    at = _page()
    assert "Estimate" in _texts(at) and "14 items, 14 requests" in _texts(at)
    at.button(key="runs_launch").click().run()
    success = [s.value for s in at.success]
    assert success and "started in the background" in success[0]
    launch_id = success[0].split()[1].replace("\\", "")  # names are shown as text (markdown escaped)
    state = _wait(page_store, launch_id)
    assert state["status"] == "completed"
    at = _page()
    frames = [d.value for d in at.dataframe]
    hist = next(f for f in frames if "run_id" in f.columns)
    row = hist.iloc[0]
    assert row["status"] == "completed" and row["n_responses"] == 14 and row["n_errors"] == 0


def _refusal(at: AppTest) -> str:
    """The warning and error lines as read (shown as text: markdown escapes removed here)."""
    return "\n".join(str(x.value) for x in [*at.warning, *at.error]).replace("\\", "")


def test_numbers_a_launch_cannot_mean_are_named_and_the_estimate_follows_the_values(page_store):
    """99999999999 in the sample size or the repetitions used to be dropped without a word (the
    estimate kept saying 14 requests); now one line says what the field takes and no launch is offered,
    and values in range change the estimate."""
    at = _page()
    at.number_input(key="runs_sample").set_value(99999999999).run()
    assert not at.exception
    said = _refusal(at)
    assert "stratified sample size" in said and "more than the 14 items" in said, said
    assert "14 requests" not in _texts(at) and not [b for b in at.button if b.key == "runs_launch"]
    at.number_input(key="runs_sample").set_value(7).run()
    assert "7 items, 7 requests" in _texts(at)
    at.number_input(key="runs_repeat").set_value(99999999999).run()
    said = _refusal(at)
    assert "repetitions" in said and "1 to 20" in said and "EDUART_MAX_REPETITIONS" in said, said
    at.number_input(key="runs_repeat").set_value(3).run()
    assert "7 items, 21 requests" in _texts(at)
    at.number_input(key="runs_rpm").set_value(-5).run()
    assert "requests per minute" in _refusal(at) and "above zero" in _refusal(at)


def test_the_repetition_limit_follows_its_variable(page_store, monkeypatch):
    monkeypatch.setenv("EDUART_MAX_REPETITIONS", "2")
    at = _page()
    at.number_input(key="runs_repeat").set_value(3).run()
    assert "1 to 2" in _refusal(at) and "EDUART_MAX_REPETITIONS" in _refusal(at)
    at.number_input(key="runs_repeat").set_value(2).run()
    assert "14 items, 28 requests" in _texts(at)


@pytest.mark.skipif(any((ROOT / f).exists() for f in (".env", ".streamlit/secrets.toml")),
                    reason="a local .env or Streamlit secrets file provides keys on this machine")
def test_missing_credentials_are_shown_and_block_the_launch(page_store):
    at = _page()
    at.multiselect(key="runs_models").set_value(["gpt-5.5"]).run()
    assert any(f"No credentials for {plain('gpt-5.5')}" in w.value for w in at.warning)
    assert at.button(key="runs_launch").disabled
    creds = next(d.value for d in at.dataframe if "provider" in d.value.columns)
    openai_row = creds[creds["provider"] == "openai"].iloc[0]
    assert not openai_row["ready"] and openai_row["to use it, set"] == "OPENAI_API_KEY"


def test_cancel_then_resume_from_the_page(page_store, tmp_path, monkeypatch):
    with StubServer(latency_s=0.4) as stub:
        registry = tmp_path / "models.toml"
        registry.write_text('[models."slow-stub"]\ndisplay_name = "Slow stub"\nfamily = "Test"\n'
                            'provider = "openai_compatible"\napi_model_id = "slow"\n'
                            f'base_url = "{stub.url}/v1"\n')
        monkeypatch.setenv("EDUART_MODELS", str(registry))
        at = _page()
        at.multiselect(key="runs_models").set_value(["slow-stub"]).run()
        at.slider(key="runs_concurrency").set_value(1).run()
        at.button(key="runs_launch").click().run()
        launch_id = at.success[0].value.split()[1].replace("\\", "")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(stub.requests) < 2:
            time.sleep(0.1)
        at = _page()
        assert any(plain(launch_id) in m.value for m in at.markdown)  # live progress section shows it
        at.button(key=f"cancel_{launch_id}").click().run()
        _wait(page_store, launch_id, ("cancelled",))
        asked = len(stub.requests)
        assert asked < 14
        at = _page()
        hist = next(d.value for d in at.dataframe if "run_id" in d.value.columns)
        assert hist.iloc[0]["status"] == "cancelled"
        at.selectbox(key="runs_resume_choice").set_value(launch_id).run()
        at.button(key="runs_resume").click().run()
        _wait(page_store, launch_id, ("completed",), timeout=90)
        assert len(stub.requests) <= 14 + 1  # at most the one request in flight at the cancel is asked again
    at = _page()
    hist = next(d.value for d in at.dataframe if "run_id" in d.value.columns)
    assert hist.iloc[0]["status"] == "completed" and hist.iloc[0]["n_responses"] == 14


def test_reproducibility_table_after_repeated_runs(page_store):
    from eduart_core.cli import main

    assert main(["run", "--db", str(page_store.path), "--model", "chance", "--repeat", "2", "--sample", "6",
                 "--quiet"]) == 0
    at = _page()
    repro = next(d.value for d in at.dataframe if "identical_share" in d.value.columns)
    assert list(repro["model"]) == ["Chance baseline"] and repro.iloc[0]["items"] == 6


def test_a_sweep_shows_a_bar_per_model_and_a_rate_per_provider(page_store, tmp_path, monkeypatch):
    with StubServer(latency_s=0.4) as one, StubServer(latency_s=0.4) as two:
        registry = tmp_path / "models.toml"
        registry.write_text("".join(
            f'[models."stub-{n}"]\ndisplay_name = "Stub {n}"\nfamily = "Test"\nprovider = "openai_compatible"\n'
            f'api_model_id = "slow-{n}"\nbase_url = "{stub.url}/v1"\n\n' for n, stub in ((1, one), (2, two)))
            + "[online.openai_compatible]\nconcurrency = 1\n")
        monkeypatch.setenv("EDUART_MODELS", str(registry))
        at = _page()
        at.multiselect(key="runs_models").set_value(["stub-1", "stub-2"]).run()
        assert any("every provider at once" in c.value and "1 at a time" in c.value for c in at.caption)
        at.button(key="runs_launch").click().run()
        launch_id = at.success[0].value.split()[1].replace("\\", "")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (len(one.requests) < 3 or len(two.requests) < 3):
            time.sleep(0.1)
        assert len(one.requests) >= 3 and len(two.requests) >= 3  # both providers asked at once
        at = _page()
        bars = [p.proto.text for p in at.get("progress")]  # model names are shown as text (escaped)
        for model in ("stub-1", "stub-2"):
            assert any(t.startswith(plain(f"{model}: ")) and t.endswith(plain("of 14 requests")) for t in bars), bars
        rates = next(d.value for d in at.dataframe if "per minute" in d.value.columns)
        assert len(rates) == 2 and set(rates["limits"]) == {"1 at a time"}
        assert set(rates["models"]) == {"stub-1", "stub-2"}
        at.button(key=f"cancel_{launch_id}").click().run()
        _wait(page_store, launch_id, ("cancelled",))

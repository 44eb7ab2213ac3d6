"""A model on an OpenAI-compatible server without a models.toml entry: named on the Runs page (base
URL, model id, display name), estimated without a batch promise, launched against a loopback stub;
and a models.toml edit shows on the next run of the page."""
from __future__ import annotations

import time

import pytest
from runner_items import fill_store
from streamlit.testing.v1 import AppTest
from stubs import StubServer

from eduart_core.cli import main
from eduart_core.errors import UserError
from eduart_core.providers.registry import adhoc_spec, check_base_url
from eduart_core.runner import background
from eduart_core.runner.batch.estimate import side_by_side
from eduart_core.runner.launch import LaunchOptions, plan_launch
from eduart_core.store.runs import list_runs
from eduart_core.text import plain
from tests.pages.test_runs_page import ROOT, _page  # the Runs page under AppTest, as its own tests open it

LLAVA = {"provider": "openai_compatible", "model_id": "llava", "base_url": "http://127.0.0.1:8000/v1"}


@pytest.fixture
def page_store(store, monkeypatch):
    monkeypatch.setenv("EDUART_DB", str(store.path))
    monkeypatch.chdir(ROOT)
    fill_store(store, 1)
    return store


def _adhoc(at: AppTest, url: str, model_id: str, name: str = "") -> AppTest:
    at.multiselect(key="runs_models").set_value([])
    at.text_input(key="runs_adhoc_url").input(url)
    at.text_input(key="runs_adhoc_model").input(model_id)
    at.text_input(key="runs_adhoc_name").input(name)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _estimate(at: AppTest):
    return next(d.value for d in at.dataframe if "Online (USD)" in d.value.columns)


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/v1", "127.0.0.1:8000/v1", "http://", "http://host:port/v1",
                                 "http://user:secret@127.0.0.1:8000/v1"])
def test_a_base_url_is_http_or_https_with_a_host_and_no_password(url):
    with pytest.raises(UserError) as caught:
        check_base_url(url)
    assert "\n" not in str(caught.value) and "secret" not in str(caught.value)
    assert check_base_url(" https://example.org/v1 ") == "https://example.org/v1"
    spec = adhoc_spec("openai_compatible", "llava", "http://127.0.0.1:8000/v1", display_name="LLaVA here")
    assert (spec.key, spec.display_name, spec.batch_api) == ("openai_compatible:llava", "LLaVA here", None)


def test_the_estimate_of_an_adhoc_compatible_model_promises_no_batch(page_store, capsys):
    plan = plan_launch(page_store, LaunchOptions(adhoc=dict(LLAVA)))
    table, _ = side_by_side(page_store, plan)
    row = table.iloc[0]
    assert row["model"] == "openai_compatible:llava" and row["requests"] == len(plan.jobs) > 0
    assert row["cost_batch_usd"] is None and row["batch_discount"] is None
    assert row["batch"].startswith("not available (the server declares no batch API")
    assert main(["run", "--db", str(page_store.path), "--provider", "openai_compatible", "--base-url",
                 LLAVA["base_url"], "--model-id", "llava", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "openai_compatible:llava: batch not available (the server declares no batch API" in out


def test_a_compatible_model_whose_entry_declares_a_batch_api_is_estimated_in_batch(page_store, tmp_path,
                                                                                  monkeypatch):
    registry = tmp_path / "models.toml"
    registry.write_text('[models."ours"]\ndisplay_name = "Ours"\nprovider = "openai_compatible"\n'
                        'api_model_id = "ours"\nbase_url = "http://127.0.0.1:8000/v1"\nbatch_api = true\n'
                        'price_in_per_mtok = 1.0\nprice_out_per_mtok = 1.0\n')
    monkeypatch.setenv("EDUART_MODELS", str(registry))
    table, _ = side_by_side(page_store, plan_launch(page_store, LaunchOptions(models=["ours", "local-llava"])))
    rows = {r["model"]: r for r in table.to_dict("records")}
    assert rows["ours"]["batch"] == "yes" and rows["ours"]["cost_batch_usd"] == pytest.approx(
        rows["ours"]["cost_online_usd"] * 0.5)
    assert rows["local-llava"]["batch"].startswith("not available")  # the shipped Ollama example declares none


@pytest.mark.slow
def test_the_runs_page_plans_an_adhoc_model_and_offers_no_batch_for_it(page_store):
    at = _adhoc(_page(), "http://127.0.0.1:8000/v1", "llava", "LLaVA here")
    est = _estimate(at)
    assert list(est["Model"].unique()) == ["openai_compatible:llava"]
    assert (est["Batch (USD)"] == "not offered").all() and est["Batch mode"].str.startswith("not available").all()
    assert any("Estimate" in m.value for m in at.markdown)
    assert not [r for r in at.radio if r.key == "runs_mode"]  # no batch mode to choose
    assert any("Mode: online. Batch is not available" in c.value.replace("\\", "") for c in at.caption)
    assert not at.error


@pytest.mark.slow
def test_a_bad_base_url_on_the_runs_page_gives_one_line(page_store):
    at = _adhoc(_page(), "ftp://127.0.0.1/v1", "llava")
    assert len(at.error) == 1 and "\n" not in at.error[0].value
    assert "http://" in at.error[0].value.replace("\\", "") or plain("http://") in at.error[0].value
    assert not [d for d in at.dataframe if "Online (USD)" in d.value.columns]  # nothing planned


@pytest.mark.slow
def test_an_adhoc_model_launched_from_the_page_is_asked_on_its_server(page_store):
    with StubServer() as stub:
        at = _adhoc(_page(), f"{stub.url}/v1", "stub-llava", "Stub LLaVA")
        requests = int(_estimate(at)["Requests to send"].sum())
        at.button(key="runs_launch").click().run()
        assert not at.exception, [e.value for e in at.exception]
        launch_id = at.success[0].value.split()[1].replace("\\", "")
        deadline = time.monotonic() + 60
        state = None
        while time.monotonic() < deadline:
            state = next(s for s in background.list_launches(page_store) if s["launch_id"] == launch_id)
            if state["status"] == "completed" and not state["alive"]:
                break
            time.sleep(0.2)
        assert state is not None and state["status"] == "completed", state
        assert len(stub.requests) == requests and {r.model for r in stub.requests} == {"stub-llava"}
    runs = list_runs(page_store)
    assert list(runs["model"].unique()) == ["openai_compatible:stub-llava"]


@pytest.mark.slow
def test_an_edit_to_the_models_file_shows_on_the_next_run_of_the_page(page_store, tmp_path, monkeypatch):
    registry = tmp_path / "models.toml"
    registry.write_text('[models."first"]\ndisplay_name = "First"\nprovider = "openai_compatible"\n'
                        'api_model_id = "first"\nbase_url = "http://127.0.0.1:8000/v1"\n')
    monkeypatch.setenv("EDUART_MODELS", str(registry))
    at = _page()
    shown = " ".join(at.multiselect(key="runs_models").options)
    assert "(first)" in shown and "(second)" not in shown
    registry.write_text(registry.read_text() + '[models."second"]\ndisplay_name = "Second"\n'
                        'provider = "openai_compatible"\napi_model_id = "second"\n'
                        'base_url = "http://127.0.0.1:8000/v1"\n')
    at.run()  # the same session, no restart
    assert "(second)" in " ".join(at.multiselect(key="runs_models").options)

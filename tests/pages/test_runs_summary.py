"""Runs page: live rate and ETA from the journals, and the summary that stays after a launch ends
with buttons that open the overview and the failure explorer filtered to the launched models."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner_items import fill_store
from streamlit.testing.v1 import AppTest

from eduart_core.runner import pace

ROOT = Path(__file__).resolve().parents[2]


def _journal(path: Path, stamps: list[float], status: str = "ok") -> None:
    with path.open("w", encoding="utf-8") as out:
        for i, ts in enumerate(stamps):
            out.write(json.dumps({"request_key": f"k{i}", "status": status, "ts": ts}) + "\n")


def test_rate_and_eta_come_from_this_sessions_recent_requests(tmp_path):
    now = 10_000.0
    _journal(tmp_path / "a.jsonl", [now - 500] * 10 + [now - 60 + i for i in range(30)])  # 10 before the session
    state = {"process_started_at": now - 120, "members": [{"journal": str(tmp_path / "a.jsonl"), "jobs": 100}]}
    got = pace.launch_pace(state, now=now)
    assert got.done == 40 and got.total == 100
    assert got.per_minute == pytest.approx(30 / 120 * 60)  # 30 requests in the 120 s of this session
    assert got.eta_s == pytest.approx(60 / (30 / 120))
    assert "40 of 100 requests" in got.describe() and "per minute" in got.describe() and "left" in got.describe()


def test_no_rate_before_two_requests_and_durations_read_naturally(tmp_path):
    _journal(tmp_path / "a.jsonl", [5.0])
    state = {"process_started_at": 1.0, "members": [{"journal": str(tmp_path / "a.jsonl"), "jobs": 3}]}
    got = pace.launch_pace(state, now=10.0)
    assert got.per_minute is None and "measuring the rate" in got.describe()
    assert pace.duration(42) == "42 s" and pace.duration(600) == "10 min" and pace.duration(7500) == "2 h 05 min"


def test_a_sweep_reads_per_model_and_per_provider(tmp_path):
    now = 10_000.0
    _journal(tmp_path / "a-default.jsonl", [now - 50 + i for i in range(6)])
    _journal(tmp_path / "a-motivation.jsonl", [now - 40 + i for i in range(4)], status="error")
    _journal(tmp_path / "b.jsonl", [now - 400, now - 30])  # one request before this session began
    openai = [{"name": "provider openai", "concurrency": 4, "rpm": 600.0}]
    state = {"process_started_at": now - 100, "members": [
        {"journal": str(tmp_path / "a-default.jsonl"), "jobs": 10, "model": "a", "provider": "openai",
         "limits": openai},
        {"journal": str(tmp_path / "a-motivation.jsonl"), "jobs": 10, "model": "a", "provider": "openai",
         "limits": openai},
        {"journal": str(tmp_path / "b.jsonl"), "jobs": 5, "model": "b", "provider": "gemini",
         "limits": [{"name": "provider gemini", "concurrency": 8, "rpm": None},
                    {"name": "model b", "concurrency": 2, "rpm": None}]}]}
    models, providers = pace.launch_breakdown(state, now=now)
    by_model = {m.model: m for m in models}
    assert (by_model["a"].jobs, by_model["a"].answered, by_model["a"].failed) == (20, 6, 4)
    assert by_model["a"].describe() == "a: 10 of 20 requests (4 failed)" and by_model["a"].share == 0.5
    assert by_model["b"].done == 2 and by_model["b"].provider == "gemini"
    rates = {p.provider: p for p in providers}
    assert rates["openai"].per_minute == pytest.approx(10 / 100 * 60) and rates["openai"].models == ("a",)
    assert rates["openai"].limits == "4 at a time, 600 rpm" and rates["gemini"].limits == "8 at a time"
    assert rates["gemini"].per_minute is None  # one request in this session: no rate yet


def test_summary_of_the_latest_finished_launch(tmp_path):
    _journal(tmp_path / "ok.jsonl", [1.0, 2.0, 3.0])
    _journal(tmp_path / "bad.jsonl", [1.0], status="error")
    states = [
        {"launch_id": "old", "status": "completed", "finished_at": 50.0, "started_at": 1.0, "members": []},
        {"launch_id": "new", "status": "completed", "finished_at": 90.0, "started_at": 30.0, "dataset": "demo",
         "members": [{"journal": str(tmp_path / "ok.jsonl"), "jobs": 3, "model": "chance", "condition": "default"},
                     {"journal": str(tmp_path / "bad.jsonl"), "jobs": 1, "model": "chance",
                      "condition": "motivation"}]},
        {"launch_id": "busy", "status": "running", "started_at": 95.0, "members": []},
    ]
    latest = pace.latest_finished(states)
    assert latest["launch_id"] == "new"
    summary = pace.launch_summary(latest)
    assert (summary.answered, summary.failed, summary.total) == (3, 1, 4)
    assert summary.models == ("chance",) and summary.conditions == ("default", "motivation")
    assert summary.seconds == pytest.approx(60.0)
    assert pace.launch_summary(states[2]) is None


@pytest.mark.slow
def test_a_finished_launch_stays_summarised_and_opens_its_results(store, monkeypatch):
    from eduart_core.cli import main

    monkeypatch.setenv("EDUART_DB", str(store.path))
    monkeypatch.chdir(ROOT)
    fill_store(store, 1)
    assert main(["run", "--db", str(store.path), "--model", "chance", "--condition", "both", "--quiet"]) == 0
    from eduart_core import views

    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/10_runs.py").run()
    assert not at.exception, at.exception[0].value
    done = " ".join(s.value for s in at.success)
    assert "completed" in done and "Chance baseline" in done and "answers" in done
    at.run()  # still there on the next run: the summary persists
    assert any("completed" in s.value for s in at.success)
    at.button(key="runs_to_explorer").click().run()
    assert not at.exception, at.exception[0].value
    assert at.session_state["f_models"] == ["Chance baseline"]
    assert any("Item inspector" in t.value or "inspector" in t.value.lower() for t in at.title)
    at.switch_page("pages/10_runs.py").run()
    at.button(key="runs_to_overview").click().run()
    assert not at.exception, at.exception[0].value
    assert any("Overview" in t.value for t in at.title)
    assert at.session_state["f_models"] == ["Chance baseline"]
    at.switch_page("pages/10_runs.py").run()
    at.button(key="runs_dismiss").click().run()
    assert not any("completed" in s.value and "answers" in s.value for s in at.success)

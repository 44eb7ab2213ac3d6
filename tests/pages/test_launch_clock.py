"""A launch's clock and size as the user sees them: time counts from the click on the Runs page
(the spawn file), not from when the run process got going, and the requests planned show from the
click, before the run process has written its launch file."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from eduart_core.runner import background, launchfile, pace


def _spawn(store, launch_id: str, pid: int, clicked_at: float, planned: int | None) -> None:
    folder = store.runs_dir / "_launches"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{launch_id}.spawn.json").write_text(json.dumps(
        {"launch_id": launch_id, "pid": pid, "started_at": clicked_at, "planned_requests": planned,
         "argv": ["run"]}), encoding="utf-8")


def _journal(path, n: int, ts: float) -> None:
    path.write_text("".join(json.dumps({"request_key": f"k{i}", "status": "ok", "ts": ts + i}) + "\n"
                            for i in range(n)), encoding="utf-8")


@pytest.fixture
def sleeper():
    """A live process whose command line names eduart_core (what `pid_alive` follows), ended by pid."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "eduart_core"])
    yield proc.pid
    proc.kill()
    proc.wait()


def _state(store, launch_id: str) -> dict:
    return next(s for s in background.list_launches(store) if s["launch_id"] == launch_id)


def test_completed_in_counts_from_the_click_not_from_the_process_start(store, tmp_path):
    t0 = 1_000_000.0
    _spawn(store, "L", 4_000_000, t0, 14)  # a pid no process has: the launch is over
    _journal(tmp_path / "a.jsonl", 14, t0 + 21)
    launchfile.write_launch(store, "L", {
        "launch_id": "L", "pid": 4_000_000, "status": launchfile.COMPLETED, "process_started_at": t0 + 20,
        "finished_at": t0 + 28, "total_jobs": 14,
        "members": [{"journal": str(tmp_path / "a.jsonl"), "jobs": 14, "model": "chance", "condition": "default"}]})
    state = _state(store, "L")
    assert state["started_at"] == t0 and state["process_started_at"] == t0 + 20
    summary = pace.launch_summary(state)
    assert summary.seconds == pytest.approx(28.0)  # the user waited 28 s, of which the process ran 8
    assert pace.duration(summary.seconds) == "28 s"


def test_before_the_run_writes_anything_the_planned_requests_show(store, sleeper):
    t0 = 2_000_000.0
    _spawn(store, "L", sleeper, t0, 14)
    state = _state(store, "L")
    assert state["status"] == launchfile.STARTING and state["started_at"] == t0
    now = pace.launch_pace(state, now=t0 + 3)
    assert (now.done, now.total, now.share) == (0, 14, 0.0)
    assert now.describe() == "0 of 14 requests planned (starting...) · 3 s since the launch"
    assert "0 of 0" not in now.describe()


def test_a_resume_click_restarts_the_clock_and_shows_starting_until_its_process_writes(store, sleeper, tmp_path):
    t0 = 3_000_000.0
    _journal(tmp_path / "a.jsonl", 5, t0 + 21)
    launchfile.write_launch(store, "L", {
        "launch_id": "L", "pid": 4_000_001, "status": launchfile.CANCELLED, "process_started_at": t0 + 20,
        "finished_at": t0 + 30, "total_jobs": 14,
        "members": [{"journal": str(tmp_path / "a.jsonl"), "jobs": 14, "model": "chance", "condition": "default"}]})
    _spawn(store, "L", sleeper, t0 + 100, None)  # the resume click; its process has not written yet
    state = _state(store, "L")
    assert state["status"] == launchfile.STARTING and state["pid"] == sleeper and state["started_at"] == t0 + 100
    assert pace.launch_pace(state, now=t0 + 102).describe() == \
        "5 of 14 requests planned (starting...) · 2 s since the launch"


def test_a_command_line_run_counts_from_its_own_start(store, tmp_path):
    """An older spawn file (an earlier click) does not date a later launch from the command line."""
    t0 = 4_000_000.0
    _spawn(store, "L", 4_000_002, t0, 14)
    launchfile.write_launch(store, "L", {"launch_id": "L", "pid": 4_000_003, "status": launchfile.COMPLETED,
                                         "process_started_at": t0 + 500, "finished_at": t0 + 510, "members": []})
    state = _state(store, "L")
    assert state["started_at"] == t0 + 500
    assert pace.launch_summary(state).seconds == pytest.approx(10.0)


def test_the_rate_window_starts_with_the_process_and_the_elapsed_time_with_the_click(tmp_path):
    t0 = 5_000_000.0
    _journal(tmp_path / "a.jsonl", 30, t0 + 30)  # 30 requests in the 60 s after the process started at t0+20
    state = {"status": launchfile.RUNNING, "started_at": t0, "process_started_at": t0 + 20,
             "members": [{"journal": str(tmp_path / "a.jsonl"), "jobs": 60}]}
    now = pace.launch_pace(state, now=t0 + 80)
    assert now.per_minute == pytest.approx(30.0)  # 30 in the 60 s since the process started, not 80 s
    assert now.describe().endswith("· 80 s since the launch") and now.describe().startswith("30 of 60 requests ·")

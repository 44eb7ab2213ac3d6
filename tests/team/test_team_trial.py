"""`team-trial` without a browser: it starts PostgreSQL, the local sign-in provider and the studio,
answers on 127.0.0.1, grants the people's roles in the store, stops everything on SIGTERM and on
SIGINT (nothing left running, by PID, ports free), keeps no secret in its lines or logs, and a
second start reuses the folder (the store as it was left). Killed with SIGKILL, it takes the studio
and the provider with it, and the next start stops the PostgreSQL it left. Refusals come before
anything starts.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests import trial_kit
from tests.browser_kit import free_port
from tests.trial_kit import (
    ROOT,
    alive,
    assert_no_secret_in_lines_or_logs,
    assert_nothing_left,
    descendants,
    require_postgres,
    start,
    stop,
    trial_processes,
)

trial_dir = trial_kit.trial_dir  # a folder the postgres user may enter


def _get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.status


def _cli(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eduart_core", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120)


@pytest.mark.slow
@pytest.mark.postgres
def test_the_trial_starts_stops_on_a_signal_and_starts_again_from_its_folder(trial_dir):
    require_postgres()
    folder = trial_dir
    running = start(folder, free_port())
    try:
        assert "a new cluster" in running.output and "the demo is loaded" in running.output
        assert f"EduArt Studio (team mode) at {running.url}" in running.output
        for subject in ("ada", "bruno", "clara", "dora", "emil"):
            assert any(line.split()[:1] == [subject] for line in running.lines), subject
        provider = running.port_of("sign-in provider")
        pg_port = running.port_of("PostgreSQL")
        assert _get(f"{running.url}/_stcore/health") == 200
        assert _get(f"http://127.0.0.1:{provider}/.well-known/openid-configuration") == 200
        # the documented way to reach the trial store from a shell: `. trial.env`
        listed = _cli(["roles", "list", "--json"], env=running.env())
        assert listed.returncode == 0, listed.stderr
        granted = {(r["subject"], r["role"]) for r in json.loads(listed.stdout)}
        assert granted == {("ada", "admin"), ("ada", "researcher"), ("bruno", "reviewer"), ("clara", "reviewer"),
                           ("dora", "adjudicator"), ("emil", "presenter")}
        pids = trial_processes(running)
        assert len(pids) >= 4  # the studio, the provider, the postmaster and its helpers
    finally:
        code = stop(running, signal.SIGTERM)
    assert code == 0, running.output
    assert "stopped: studio, sign-in provider, PostgreSQL" in running.output
    assert_nothing_left(running, pids, [running.port, provider, pg_port])
    assert_no_secret_in_lines_or_logs(running)

    again = start(folder, running.port)  # the same port at once, as a person restarting with the default does
    try:
        assert "the cluster of the earlier start" in again.output and "kept from the earlier start" in again.output
        assert "loading the demo" not in again.output
        listed = _cli(["roles", "list", "--json"], env=again.env())
        assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 6, listed.stderr
        killed_pids = trial_processes(again)
        postmaster = int((folder / "pg" / "data" / "postmaster.pid").read_text().split()[0])
    finally:
        code = stop(again, signal.SIGKILL)  # no chance to stop anything itself
    assert code == -signal.SIGKILL
    # the studio and the provider end with it (parent-death signal); PostgreSQL runs on as a daemon ...
    assert_nothing_left(again, killed_pids - {postmaster} - descendants(postmaster), [], folder_too=False)
    assert alive(postmaster)

    third = start(folder, free_port())  # ... until the next start stops it
    try:
        assert "stopped the server an earlier trial left running in this folder" in third.output
        assert not alive(postmaster)
        pids = trial_processes(third)
        ports = [third.port, third.port_of("sign-in provider"), third.port_of("PostgreSQL")]
    finally:
        code = stop(third, signal.SIGINT)
    assert code == 0, third.output
    assert_nothing_left(third, pids | killed_pids, ports)
    assert_no_secret_in_lines_or_logs(third)


def test_a_folder_that_is_not_a_trial_is_refused_and_left_alone(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    done = _cli(["team-trial", "--dir", str(folder), "--port", str(free_port()), "--fresh"])
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {folder} holds files but no trial (team-trial.json is missing): choose an empty or new folder "
        "with --dir"]
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_a_port_in_use_is_named_before_anything_starts(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _cli(["team-trial", "--dir", str(tmp_path / "trial"), "--port", str(port)])
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: port {port} on 127.0.0.1 is in use: choose another with --port"]
    assert not Path(tmp_path / "trial").exists()


@pytest.mark.postgres
@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands the cluster to the postgres user")
def test_as_root_a_folder_the_postgres_user_cannot_enter_is_named(tmp_path):
    require_postgres()
    tmp_path.chmod(0o700)  # pytest's own folders are private: the postgres user cannot enter them
    folder = tmp_path / "trial"
    done = _cli(["team-trial", "--dir", str(folder), "--port", str(free_port())])
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: PostgreSQL did not start: the postgres user (the server runs as it, because this runs as root) "
        f"cannot enter {folder / 'pg'}: choose a folder whose parents every user may enter "
        f"(log: {folder / 'pg' / 'server.log'})"]


def test_fresh_empties_a_trial_folder_and_keeps_it_a_trial_folder(tmp_path):
    from eduart_core.team_trial import MARKER, TeamTrial

    folder = tmp_path / "trial"
    (folder / "work").mkdir(parents=True)
    (folder / MARKER).write_text("{}")
    (folder / "work" / "prepared").write_text("demo, roles and rounds prepared\n")
    said = []
    TeamTrial(folder, free_port(), say=said.append, fresh=True).prepare_folder()
    assert said == [f"removed the earlier trial in {folder} (--fresh)"]
    assert sorted(p.name for p in folder.iterdir()) == ["logs", "secrets", MARKER]
    assert (folder / "secrets").stat().st_mode & 0o777 == 0o700

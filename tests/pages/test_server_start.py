"""The terminal warns at server start, before anyone connects, when the studio listens beyond this
machine without sign-in.

What an operator relies on: `streamlit run app.py --server.address 0.0.0.0` without an [auth] section
says so in the terminal as the server starts, not at the first browser visit (which may be a
stranger's). Real `streamlit run app.py` processes on free ports, stopped by PID; no HTTP request is
made before the warning is read.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WARNING = "without sign-in: anyone who reaches it can review"


def _free_port(address: str) -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def _start(address: str, tmp_path: Path) -> tuple[subprocess.Popen, Path, int]:
    port = _free_port(address)
    log = tmp_path / f"streamlit-{port}.log"
    env = {**os.environ, "EDUART_DB": str(tmp_path / "none.duckdb"), "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
           "EDUART_SECRETS": str(tmp_path / "no-secrets.toml")}
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port",
               str(port), "--server.address", address, "--browser.gatherUsageStats", "false"]
    with open(log, "w") as out:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    return proc, log, port


def _stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)


def _wait_for(log: Path, words: str, proc: subprocess.Popen, seconds: float = 90) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        if words in text or proc.poll() is not None:
            return text
        time.sleep(0.3)
    return log.read_text(errors="replace")


def _healthy(port: int) -> bool:
    deadline = time.monotonic() + 60  # a loaded machine: the first answer may take a while
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10) as response:
                return response.status == 200
        except OSError:
            time.sleep(0.5)
    return False


@pytest.mark.slow  # real servers
def test_a_server_on_every_interface_without_sign_in_warns_in_the_terminal_at_start(tmp_path):
    exposed, exposed_log, exposed_port = _start("0.0.0.0", tmp_path)
    try:
        text = _wait_for(exposed_log, WARNING, exposed)  # no request has been made to this server yet
        assert exposed.poll() is None, text
        assert f"warning: the studio listens on 0.0.0.0 {WARNING}" in text, text
        assert _healthy(exposed_port)  # and it serves as usual
    finally:
        _stop(exposed)
    local, local_log, local_port = _start("127.0.0.1", tmp_path)
    try:
        text = _wait_for(local_log, "URL:", local)
        assert _healthy(local_port)
        time.sleep(1)
        assert WARNING not in local_log.read_text(errors="replace")  # loopback only: no warning
    finally:
        _stop(local)

"""`team-trial` as a real process, for the tests that start it: read its lines, find every process it
started (by PID, through /proc), stop it with a signal and check that nothing of it is left.

Nothing here is mocked: the trial starts Debian's PostgreSQL, the local OIDC provider and
`streamlit run app.py`; these helpers only watch it from outside, as a person's shell would.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
READY_LINE = "Stop with Ctrl-C."
START_S = 420  # the first start loads the demo into PostgreSQL: about a minute, several on a loaded machine


@pytest.fixture
def trial_dir() -> Iterator[Path]:
    """A folder for a trial whose parents every user may enter (as root the cluster runs as ``postgres``,
    which cannot enter pytest's private tmp folders); removed afterwards."""
    parent = Path(tempfile.mkdtemp(prefix="eduart-trial-"))
    parent.chmod(0o755)
    try:
        yield parent / "trial"
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def require_postgres() -> None:
    from eduart_core.bench.pgserver import missing_reason
    from tests.pg_kit import require_or_skip

    reason = missing_reason()
    if reason:
        require_or_skip(reason)


@dataclass
class Running:
    """A started trial: its process, folder, the lines it printed and the ports it named."""

    proc: subprocess.Popen
    folder: Path
    port: int
    lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def port_of(self, what: str) -> int:
        """The port a printed line names: 'PostgreSQL' or 'sign-in provider'."""
        pattern = {"PostgreSQL": r"PostgreSQL \S+ on 127\.0\.0\.1:(\d+)",
                   "sign-in provider": r"sign-in provider on http://127\.0\.0\.1:(\d+)"}[what]
        return int(re.search(pattern, self.output).group(1))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """The variables `trial.env` sets (what `. trial.env` gives a shell)."""
        lines = (self.folder / "trial.env").read_text(encoding="utf-8").splitlines()
        return dict(shlex.split(line.removeprefix("export "))[0].split("=", 1) for line in lines if line.strip())


def start(folder: Path, port: int, *extra: str) -> Running:
    """`python -m eduart_core team-trial --dir folder --port port` until it says how to stop it."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for name in ("EDUART_DATABASE_URL", "EDUART_DB", "EDUART_SECRETS", "PGPASSWORD"):
        env.pop(name, None)
    proc = subprocess.Popen([sys.executable, "-m", "eduart_core", "team-trial", "--dir", str(folder),
                             "--port", str(port), *extra], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    running = Running(proc, folder, port)
    running.reader = threading.Thread(target=_read_lines, args=(proc, running.lines), daemon=True)
    running.reader.start()
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if any(READY_LINE in line for line in list(running.lines)):
            return running
        if proc.poll() is not None:
            running.reader.join(timeout=10)
            pytest.fail(f"team-trial ended before it was ready (exit {proc.returncode}):\n{running.output}")
        time.sleep(0.2)
    stop(running)
    pytest.fail(f"team-trial was not ready within {START_S} s:\n{running.output}")


def _read_lines(proc: subprocess.Popen, lines: list[str]) -> None:
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))


def stop(running: Running, sig: int = signal.SIGINT, timeout: float = 120) -> int:
    """Send ``sig`` to the trial and wait for it; returns its exit code (the rest of its lines are kept)."""
    if running.proc.poll() is None:
        running.proc.send_signal(sig)
    try:
        running.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        running.proc.kill()
        running.proc.wait(timeout=10)
        pytest.fail(f"team-trial did not end within {timeout} s of {signal.Signals(sig).name}")
    finally:
        if running.reader is not None:
            running.reader.join(timeout=10)
    return running.proc.returncode


# ---------------------------------------------------------------- processes, by PID

def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent PID) of a process, None when there is none."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie waiting to be reaped has ended)."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def _all_pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (children, their children, ...)."""
    parents = {p: s[1] for p in _all_pids() if (s := _stat(p)) is not None}
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def mentioning(folder: Path) -> set[int]:
    """Processes whose command line or environment names ``folder`` (what the trial started there)."""
    needle = str(folder).encode()
    hits = set()
    for pid in _all_pids():
        if pid == os.getpid():
            continue
        for part in ("cmdline", "environ"):
            try:
                if needle in Path(f"/proc/{pid}/{part}").read_bytes():
                    hits.add(pid)
                    break
            except OSError:
                continue
    return {pid for pid in hits if alive(pid)}


def trial_processes(running: Running) -> set[int]:
    """The trial's children and the PostgreSQL server it runs (the postmaster and its backends)."""
    pids = descendants(running.proc.pid)
    postmaster = running.folder / "pg" / "data" / "postmaster.pid"
    if postmaster.is_file():
        pid = int(postmaster.read_text().split()[0])
        pids |= {pid} | descendants(pid)
    return pids


def port_free(port: int) -> bool:
    """Nobody listens on ``port`` and a server could listen there again (with SO_REUSEADDR, as servers
    do: connections the trial closed may linger in TIME_WAIT for a minute, which is no process)."""
    with socket.socket() as probe:
        probe.settimeout(2)
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            return False
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen()
        except OSError:
            return False
    return True


def assert_nothing_left(running: Running, pids: set[int], ports: list[int], folder_too: bool = True) -> None:
    """Every process the trial ran has ended, its ports are free, no process names its folder (unless
    ``folder_too`` is False)."""
    deadline = time.monotonic() + 15  # the kernel may take a moment to reap
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.2)
    assert [p for p in pids if alive(p)] == [], "processes of the trial still running"
    assert [p for p in ports if not port_free(p)] == [], "ports of the trial still taken"
    if folder_too:
        assert mentioning(running.folder) == set(), "a process still names the trial's folder"


def secrets_of(folder: Path) -> list[str]:
    """The trial's secrets: the database password and the [auth] section's cookie and client secrets."""
    found = [(folder / "secrets" / "db-password").read_text().strip()]
    auth = (folder / "secrets" / "auth.toml").read_text()
    found += re.findall(r'^(?:cookie_secret|client_secret) = "([^"]+)"$', auth, flags=re.MULTILINE)
    assert len(found) == 3 and all(len(s) >= 32 for s in found)
    return found


def assert_no_secret_in_lines_or_logs(running: Running) -> None:
    """No secret in what the trial printed or in a log file of its folder (the files holding them aside)."""
    logs = [p for p in [*(running.folder / "logs").glob("*"), running.folder / "pg" / "server.log"] if p.is_file()]
    assert logs, "the trial wrote no log"
    texts = {"printed lines": running.output, **{str(p): p.read_text(errors="replace") for p in logs}}
    for secret in secrets_of(running.folder):
        assert [where for where, text in texts.items() if secret in text] == []

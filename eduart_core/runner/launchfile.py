"""The launch file: what a launch asked, who runs it, and how it ended.

``<runs_dir>/_launches/<launch_id>.json`` keeps the options and item ids (so a resume asks exactly
the same questions), the pid of the process running it (so the Runs page can follow or cancel
it), and at the end the status, the exit code of the ``run`` command and its one-line outcome.
It lives next to the store rather than in it because the store may be busy exactly when the
outcome has to be written (that is the "waiting for ingest" case).

A leaf module (no providers, no store SQL), so the page, recovery and the launcher share it.
"""
from __future__ import annotations

import json
import logging
import os
import shlex
from pathlib import Path

from ..fileio import atomic_write
from ..store import Store

logger = logging.getLogger(__name__)

# Launch and run statuses. The store's runs table holds the first five; WAITING_INGEST exists
# only in launch files (the store could not be written, so it cannot say so itself).
RUNNING = "running"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"
INTERRUPTED = "interrupted"
WAITING_INGEST = "waiting_ingest"
#: a background launch whose process is alive but has not written its status yet (never stored)
STARTING = "starting"
FINISHED_STATUSES = (COMPLETED, FAILED, CANCELLED, INTERRUPTED)
LIVE_STATUSES = (RUNNING, STARTING)

# Exit codes of the `run` command (documented in `run --help` and the README).
EXIT_OK = 0            # every request answered, everything stored
EXIT_INCOMPLETE = 1    # some requests failed, or answers wait for ingest: resume fixes it
EXIT_SETUP = 2         # usage or setup error (bad flags, no store, locked at start, disk full)
EXIT_CANCELLED = 130   # cancelled (Ctrl-C, or Cancel on the Runs page)

EXIT_MEANING = {
    EXIT_OK: "all requests answered and stored",
    EXIT_INCOMPLETE: "some requests failed or answers wait for ingest (resume to finish)",
    EXIT_SETUP: "usage or setup error (nothing or not everything could run)",
    EXIT_CANCELLED: "cancelled",
}


def launch_file(store: Store, launch_id: str) -> Path:
    return store.runs_dir / "_launches" / f"{launch_id}.json"


def launch_ids(store: Store) -> list[str]:
    """Ids of every launch with a launch or spawn file next to the store."""
    folder = store.runs_dir / "_launches"
    if not folder.exists():
        return []
    return sorted({p.name[:-len(".spawn.json")] if p.name.endswith(".spawn.json") else p.stem
                   for p in folder.glob("*.json")})


def read_launch(store: Store, launch_id: str) -> dict | None:
    try:
        return json.loads(launch_file(store, launch_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_launch(store: Store, launch_id: str, data: dict) -> None:
    """Write the launch file atomically; ``UserError`` naming path and cause when the disk says no."""
    path = launch_file(store, launch_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, indent=1, default=str))


def process_alive(pid: int | None) -> bool:
    """True while ``pid`` is a live, non-zombie eduart_core process."""
    if not pid:
        return False
    try:
        os.kill(int(pid), 0)
    except (OSError, ValueError):
        return False
    proc = Path(f"/proc/{int(pid)}")
    if proc.exists():
        try:
            if proc.joinpath("stat").read_text().split(")")[-1].split()[0] == "Z":
                return False
            cmdline = proc.joinpath("cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return False
        return "eduart_core" in cmdline
    return True


def resume_command(store: Store, launch_id: str, retry_errors: bool = False) -> str:
    """The exact command line that resumes (and finishes ingesting) a launch."""
    command = f"python -m eduart_core run --db {shlex.quote(str(store.path))} --resume {shlex.quote(launch_id)}"
    return command + (" --retry-errors" if retry_errors else "")


def outcome(store: Store, launch_id: str, *, cancelled: bool, n_errors: int, jobs: int,
            waiting: int | None = None, ingest_error: str | None = None, journal_error: str | None = None,
            lost: int = 0) -> tuple[int, str, str]:
    """(exit code, launch status, one-line outcome) of a finished session of a launch.

    ``waiting`` is the number of journaled answers not yet in the store (None when all are).
    """
    resume = resume_command(store, launch_id)
    if journal_error:
        lost_text = f"; {lost} answer(s) received could not be recorded" if lost else ""
        return (EXIT_SETUP, FAILED, f"{journal_error}{lost_text}; the launch stopped. Free space, then resume "
                                    f"with: {resume}")
    if waiting is not None:
        what = (f"{waiting} journaled answer(s) are not in the store yet" if waiting
                else "the answers are stored but the runs could not be closed")
        return (EXIT_INCOMPLETE, WAITING_INGEST,
                f"waiting for ingest: {what} ({ingest_error}); nothing is lost: the next run, resume or "
                f"dashboard start finishes it, or now: {resume}")
    if cancelled:
        return EXIT_CANCELLED, CANCELLED, f"cancelled; resume with: {resume}"
    if n_errors:
        status = FAILED if n_errors >= jobs else COMPLETED
        return (EXIT_INCOMPLETE, status, f"{n_errors} of {jobs} request(s) failed; ask them again with: "
                                         f"{resume_command(store, launch_id, retry_errors=True)}")
    return EXIT_OK, COMPLETED, f"all {jobs} request(s) answered and stored"

"""Launches as background processes, for the Runs page: start, follow, cancel, resume.

Why a separate process: a run takes hours and must survive page reloads and closing the
browser; the page only reads the launch file, the journals and the store. The process is
``python -m eduart_core run ... --run-id ID`` started in its own session; its pid is in the
launch file (written by the child) and in a spawn file (written here, before the child starts),
so the page can cancel it with SIGTERM, which the run command turns into a clean "cancelled".

Time and size of a launch as the user sees them: the spawn file holds the moment of the click
(``started_at``) and the requests the page planned (``planned_requests``), so progress reads "0 of
N requests planned" and the clock runs from the click, before the run process has written
anything; the run process's own start is ``process_started_at`` (its rate window).

Reading never writes: the status shown for a run whose process is gone ("interrupted") or whose
answers wait for the store ("waiting_ingest") is derived here at read time; the store is updated
only by the explicit recovery step (``runner.recovery``).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd

from ..store import Store
from ..store import team as audit
from ..store.runs import list_runs
from ..team import LAUNCH_RUN, Identity, as_identity
from ..team.identity import LAUNCHED_BY_ENV
from ..vocab import DEFAULT_CONDITION
from . import launchfile
from .journal import latest_by_key, read_records
from .launchfile import process_alive, read_launch

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def build_argv(db: str | os.PathLike, *, models: list[str], condition: str = DEFAULT_CONDITION, items: str | None = None,
               limit: int | None = None, sample: int | None = None, repeat: int | None = None,
               concurrency: int = 8, rpm: float | None = None, launch_id: str | None = None,
               text_only: bool = False, refuse_images: bool = False, dataset: str | None = None,
               batch: bool = False, adhoc: dict | None = None, until_separated: list[str] | None = None) -> list[str]:
    """The ``run`` command line for a new launch (no secrets: keys come from the environment).

    ``adhoc``: a model outside the registry (``LaunchOptions.adhoc``: provider, model id, base URL,
    display name), passed as ``--provider --model-id --base-url --display-name``. ``until_separated``:
    the two model keys of ``--until-separated A,B`` (stop once they are told apart)."""
    argv = ["run", "--db", str(db), "--condition", condition, "--concurrency", str(int(concurrency))]
    for model in models:
        argv += ["--model", model]
    for flag in ("provider", "model_id", "base_url", "display_name"):
        if (adhoc or {}).get(flag):  # typed text: one token, so a value starting with '-' stays a value
            argv.append(f"--{flag.replace('_', '-')}={(adhoc or {})[flag]}")
    for flag, value in (("--items", items), ("--limit", limit), ("--sample", sample), ("--repeat", repeat),
                        ("--rpm", rpm), ("--run-id", launch_id), ("--dataset", dataset)):
        if value not in (None, "", 0):
            argv += [flag, str(value)]
    if text_only:
        argv.append("--text-only")
    if refuse_images:
        argv.append("--refuse-images")
    if batch:
        argv.append("--batch")
    if until_separated:
        argv.append(f"--until-separated={','.join(until_separated)}")
    return argv


def resume_argv(db: str | os.PathLike, launch_id: str, *, retry_errors: bool = False,
                concurrency: int | None = None) -> list[str]:
    argv = ["run", "--db", str(db), "--resume", launch_id]
    if retry_errors:
        argv.append("--retry-errors")
    if concurrency:
        argv += ["--concurrency", str(int(concurrency))]
    return argv


def _spawn_file(store: Store, launch_id: str) -> Path:
    return store.runs_dir / "_launches" / f"{launch_id}.spawn.json"


def log_file(store: Store, launch_id: str) -> Path:
    return store.runs_dir / "_launches" / f"{launch_id}.log"


def start_launch(store: Store, argv: list[str], launch_id: str, actor: Identity,
                 planned_requests: int | None = None) -> int:
    """Start ``python -m eduart_core <argv>`` detached, as ``actor``; returns its pid.

    Launching spends the machine's API keys, so the actor's roles must allow it (one line
    otherwise, and nothing starts). The launch is recorded in the audit log with who started
    it, and the run process is told who that was (it records nothing twice). The spawn file keeps
    the time of this call and ``planned_requests`` (the page's plan) for the progress shown
    before the run process writes its launch file."""
    as_identity(actor).require(LAUNCH_RUN)
    clicked_at = time.time()
    resume = "--resume" in argv
    audit.add_event(store, "resume" if resume else "launch", launch_id, {"argv": argv}, actor.columns())
    spawn = _spawn_file(store, launch_id)
    spawn.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_file(store, launch_id), "ab")
    env = {**os.environ, **store.child_env()}
    env["PYTHONPATH"] = os.pathsep.join([str(PROJECT_ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env[LAUNCHED_BY_ENV] = actor.to_json()
    proc = subprocess.Popen([sys.executable, "-m", "eduart_core", *argv, "--quiet"], stdout=log, stderr=log,
                            stdin=subprocess.DEVNULL, cwd=str(PROJECT_ROOT), env=env, start_new_session=True)
    log.close()
    threading.Thread(target=proc.wait, daemon=True).start()  # reap it, so it never lingers as a zombie
    spawn.write_text(json.dumps({"launch_id": launch_id, "pid": proc.pid, "started_at": clicked_at,
                                 "planned_requests": planned_requests, "argv": argv}), encoding="utf-8")
    return proc.pid


def pid_alive(pid: int | None, launch_id: str | None = None) -> bool:
    """True while ``pid`` is a live (not zombie) eduart_core process."""
    return process_alive(pid)


def _launch_state(store: Store, launch_id: str) -> dict:
    info = read_launch(store, launch_id) or {}
    try:
        spawn = json.loads(_spawn_file(store, launch_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        spawn = {}
    process_started = process_started_at(info)
    spawned = float(spawn.get("started_at") or 0.0)
    pid = info.get("pid") or spawn.get("pid")
    # The spawn belongs to the launch file's session when the process it started wrote it; a spawn
    # newer than that session is a launch (or resume) whose process has not written yet.
    own_session = bool(spawn) and spawn.get("pid") == info.get("pid")
    waiting_for_process = bool(spawn) and not own_session and spawned > (process_started or 0.0)
    if waiting_for_process:
        pid = spawn.get("pid")
    alive = pid_alive(pid)
    status = info.get("status") or (launchfile.STARTING if alive else launchfile.INTERRUPTED)
    if status == launchfile.RUNNING and not alive:
        status = launchfile.INTERRUPTED
    if waiting_for_process and alive:
        status = launchfile.STARTING  # spawned, the run process has not written its session yet
    elif status in (*launchfile.FINISHED_STATUSES, launchfile.WAITING_INGEST) and alive:
        status = launchfile.RUNNING  # a resume is starting up
    started = spawned if own_session or waiting_for_process else process_started
    state = {**info, "launch_id": launch_id, "pid": pid, "alive": alive, "status": status,
             "started_at": started or None, "process_started_at": None if waiting_for_process else process_started}
    if waiting_for_process and spawn.get("planned_requests") is not None:
        state["planned_requests"] = int(spawn["planned_requests"])
    return state


def process_started_at(info: dict) -> float | None:
    """When the run process of the launch file's session started (launch files that predate the
    field carry it as ``started_at``)."""
    value = info.get("process_started_at") or info.get("started_at")
    return float(value) if value else None


def list_launches(store: Store) -> list[dict]:
    """Every launch known next to the store, newest first, with its live status, its last exit
    code and one-line outcome (``exit_code``, ``outcome``; None while it runs)."""
    states = [_launch_state(store, launch_id) for launch_id in launchfile.launch_ids(store)]
    return sorted(states, key=lambda s: -(s.get("started_at") or 0))


def launch_progress(state: dict, max_errors: int = 5) -> list[dict]:
    """Per member run: jobs, answered, failed, and the latest error messages, from the journals."""
    rows = []
    for member in state.get("members") or []:
        records = list(read_records(Path(member["journal"])))
        latest = latest_by_key(iter(records))
        ok = sum(1 for r in latest.values() if r.get("status") == "ok")
        errors = [r for r in latest.values() if r.get("status") != "ok"]
        rows.append({"run_id": member["run_id"], "model": member["model"], "condition": member["condition"],
                     "repetition": member.get("repetition", 0), "jobs": member.get("jobs", 0), "answered": ok,
                     "failed": len(errors), "refused_images": member.get("refused", 0),
                     "recent_errors": [f"{r.get('item_id')}: {r.get('error')}" for r in errors[-max_errors:]]})
    return rows


def cancel_launch(store: Store, launch_id: str, actor: Identity) -> bool:
    """Ask a running launch to stop (SIGTERM: the run records 'cancelled'), as ``actor`` (whose
    roles must allow launching runs; recorded in the audit log); False when not running."""
    as_identity(actor).require(LAUNCH_RUN)
    state = _launch_state(store, launch_id)
    if not state["alive"]:
        return False
    audit.add_event(store, "cancel", launch_id, None, actor.columns())
    os.kill(int(state["pid"]), signal.SIGTERM)
    return True


def run_history(store: Store, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Runs started from this tool (origin 'live') with the status a user should see.

    Derived at read time, never written: a run the store calls running whose launch process is
    gone shows as interrupted; a run of a launch waiting for ingest shows as waiting_ingest
    (its answers are safe in the journal; recovery stores them). ``runs``: `store.runs.list_runs`
    of the store when already read (the page's copy of this data version); the launches' states
    are read here every time, because a launch process can end without a write.
    """
    if not store.exists():
        return pd.DataFrame()
    runs = list_runs(store) if runs is None else runs
    if runs.empty:
        return runs
    runs = runs[runs["origin"] == "live"].copy()
    states = {s["launch_id"]: s for s in list_launches(store)}
    shown = []
    for row in runs.itertuples(index=False):
        state = states.get(row.launch_id)
        status = row.status
        if status == launchfile.RUNNING and (state is None or not state["alive"]):
            waiting = state is not None and state["status"] == launchfile.WAITING_INGEST
            status = launchfile.WAITING_INGEST if waiting else launchfile.INTERRUPTED
        shown.append(status)
    runs["status"] = shown
    return runs

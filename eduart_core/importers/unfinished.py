"""Imports in progress: which ``import-eduart``, ``import-responses`` or ``import-inspect`` left runs
unfinished, and how to finish it.

Why: both imports commit their answers in batches, so a kill half-way leaves runs holding part
of their answers. Those runs stay marked ``running`` until the import's last batch is committed
(``importers.records``, ``importers.responses``), and the start of the import is an audit event
(action ``IMPORT_ACTION`` or ``RESPONSES_ACTION``, target the launch id) that records the folder or
file, the process and the host. From the two, this module
tells an import still running in another process from one that was interrupted, and gives the
command that finishes it (running the import again adds exactly what is missing). The command line
prints ``notices`` at the start of every command; every page shows ``page_notices``; ``stats``
lists ``open_imports``.
"""
from __future__ import annotations

import os
import shlex
import socket
from dataclasses import dataclass
from pathlib import Path

from ..store import Store
from ..store.runs import open_runs
from ..store.team import latest_event

ORIGIN = "import-eduart"
IMPORT_ACTION = "import-eduart"
RESPONSES_ORIGIN = "import-responses"
RESPONSES_ACTION = "import-responses"
INSPECT_ORIGIN = "import-inspect"   # an Inspect AI log (importers.inspect_import): one launch per log
INSPECT_ACTION = "import-inspect"
#: origin of the runs -> the audit action its start writes
ACTIONS = {ORIGIN: IMPORT_ACTION, RESPONSES_ORIGIN: RESPONSES_ACTION, INSPECT_ORIGIN: INSPECT_ACTION}
#: origins whose import reads one file (named by it)
FILE_ORIGINS = (RESPONSES_ORIGIN, INSPECT_ORIGIN)


def launch_id(dataset: str) -> str:
    """The launch id every run of one dataset's published-layout import shares."""
    return f"{ORIGIN}:{dataset}"


def responses_launch_id(path: Path | str) -> str:
    """The launch id of the runs one answer file's import writes (by the file's name, as before)."""
    return f"{RESPONSES_ORIGIN}:{Path(path).name}"


def started(folder: Path | str, dataset: str) -> dict:
    """The detail of the audit event an import writes as it starts (``folder``: its folder or file)."""
    return {"folder": str(Path(folder).resolve()), "dataset": dataset, "pid": os.getpid(),
            "host": socket.gethostname()}


@dataclass(frozen=True)
class OpenImport:
    """An import whose runs are not all complete: still running elsewhere, or interrupted."""

    origin: str
    dataset: str
    runs: int
    responses: int
    folder: str | None
    pid: int | None
    host: str | None

    @property
    def running(self) -> bool:
        """True while the process that started it is alive on this host."""
        if not self.pid or self.host != socket.gethostname():
            return False
        from ..runner.launchfile import process_alive

        return process_alive(self.pid)

    def command(self, folder_name_only: bool = False) -> str:
        """The command that finishes it (the same import again)."""
        folder = self.folder or ("FILE" if self.origin in FILE_ORIGINS else "FOLDER")
        if folder_name_only and self.folder:
            folder = Path(self.folder).name
        if self.origin in FILE_ORIGINS:  # the same command on the same file
            return f"python -m eduart_core {self.origin} {shlex.quote(folder)}"
        return f"python -m eduart_core import-eduart {shlex.quote(folder)} --dataset {shlex.quote(self.dataset)}"

    def state(self) -> str:
        """``in progress`` or ``interrupted`` (another host's process cannot be checked: both named)."""
        if self.running:
            return "in progress"
        if self.host and self.host != socket.gethostname():
            return f"interrupted, or still running on {self.host}"
        return "interrupted"

    def line(self, folder_name_only: bool = False) -> str:
        """One line: which import, how far it got, and what to do."""
        what = (f"the import of {Path(self.folder).name} into dataset {self.dataset}"
                if self.origin in FILE_ORIGINS and self.folder else f"the import of dataset {self.dataset}")
        head = (f"{what} is {self.state()}: {self.runs} run(s) hold "
                f"{self.responses:,} answer(s) so far and are marked in progress")
        if self.running:
            return f"{head} (process {self.pid}); its numbers are incomplete until it ends"
        return f"{head}; finish it by running the same import again: {self.command(folder_name_only)}"


def open_imports(store: Store) -> list[OpenImport]:
    """Every import (published layout or answer file) with runs still marked running."""
    out = []
    for origin, action in ACTIONS.items():
        for launch, dataset, runs, responses in open_runs(store, origin):
            event = latest_event(store, action, launch) or {"detail": {}}
            detail = event["detail"]
            pid = detail.get("pid")
            out.append(OpenImport(origin, dataset, runs, responses, detail.get("folder"),
                                  int(pid) if isinstance(pid, int) else None, detail.get("host")))
    return out


def notices(store: Store) -> list[str]:
    """The lines a command prints at its start (none when every import finished)."""
    if not store.exists():
        return []
    return [f"notice: {found.line()}" for found in open_imports(store)]


def page_notices(store: Store) -> list[str]:
    """The one-line notices of every page (the folder by its name: no machine path on a page)."""
    if not store.exists():
        return []
    lines = [found.line(folder_name_only=True) for found in open_imports(store)]
    return [line[0].upper() + line[1:] for line in lines]

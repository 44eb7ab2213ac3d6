"""`capture`: walk a list of exercise pages, one at a time by default, skipping those already captured.

Why one at a time with a pause: the pages belong to someone else's platform, and a signed-in
account that hammers it risks being locked out; `--delay` sets the pause between one browser's page
visits, and `--parallel N` (at most `MAX_PARALLEL`) opens N browsers only when the owner allows it.
"""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import UserError
from . import journal
from .browser import browser_context, check_state
from .config import CaptureConfig
from .page import PageFailed, capture_page
from .urls import PageEntry, read_urls

MAX_PARALLEL = 4


@dataclass
class CaptureSummary:
    captured: int = 0
    questions: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)


class _Shared:
    """What the browsers share: the summary, the log and the output, one writer at a time."""

    def __init__(self, out_dir: Path, summary: CaptureSummary, say: Callable[[str], None]) -> None:
        self.out_dir, self.summary, self._say, self.lock = out_dir, summary, say, threading.Lock()

    def failed(self, entry: PageEntry, done: list[str], reason: str) -> None:
        with self.lock:
            journal.append(self.out_dir, url=entry.url, exercise=entry.exercise, status="failed",
                           questions=done, reason=reason)
            self.summary.failures.append(f"could not capture {entry.url}: {reason}")
            self._say(self.summary.failures[-1])

    def captured(self, entry: PageEntry, done: list[str]) -> None:
        with self.lock:
            journal.append(self.out_dir, url=entry.url, exercise=entry.exercise, status="captured", questions=done)
            self.summary.captured += 1
            self.summary.questions += len(done)
            self._say(f"captured {entry.exercise}: {len(done)} question{'' if len(done) == 1 else 's'} ({entry.url})")


def _browse(todo: queue.Queue, shared: _Shared, config: CaptureConfig, state: Path | None, delay: float,
            browser: str | None, errors: list[BaseException]) -> None:
    """One browser taking pages from `todo` until it is empty, pausing `delay` between its visits."""
    try:
        with browser_context(state=state, width=config.viewport_width, height=config.viewport_height,
                             executable=browser) as context:
            first = True
            while True:
                try:
                    entry = todo.get_nowait()
                except queue.Empty:
                    return
                if not first:
                    time.sleep(delay)
                first = False
                done: list[str] = []
                try:
                    capture_page(context, entry.url, entry.exercise, shared.out_dir, config, done)
                except PageFailed as exc:
                    shared.failed(entry, done, str(exc))
                else:
                    shared.captured(entry, done)
    except BaseException as exc:  # handed to the calling thread, which raises it there
        errors.append(exc)


def capture_pages(urls_file: Path, out_dir: Path, config: CaptureConfig, *, state: Path | None = None,
                  delay_s: float | None = None, timeout_s: float | None = None, browser: str | None = None,
                  parallel: int = 1, say: Callable[[str], None] = print) -> CaptureSummary:
    """Capture every page of `urls_file` not yet captured into `out_dir`; every failure is one line in
    the summary (and said at once), the other pages are captured all the same."""
    if not 1 <= parallel <= MAX_PARALLEL:
        raise UserError(f"--parallel must be between 1 and {MAX_PARALLEL}")
    if timeout_s is not None:
        config = replace(config, timeout_s=timeout_s)
    delay = config.delay_s if delay_s is None else delay_s
    entries, problems = read_urls(urls_file)
    if state is not None:
        check_state(state)
    summary = CaptureSummary(failures=list(problems))
    for line in problems:
        say(line)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    last = journal.latest(out_dir)
    todo: queue.Queue = queue.Queue()
    for entry in entries:
        if not journal.is_captured(out_dir, last.get(entry.url), entry.exercise):
            todo.put(entry)
    summary.skipped = len(entries) - todo.qsize()
    shared, errors = _Shared(out_dir, summary, say), list[BaseException]()
    workers = min(parallel, todo.qsize())
    if workers == 1:
        _browse(todo, shared, config, state, delay, browser, errors)
    else:
        threads = [threading.Thread(target=_browse, args=(todo, shared, config, state, delay, browser, errors),
                                    name=f"capture-{k}", daemon=True) for k in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:  # daemons: Ctrl-C ends the command; the log keeps what was captured
            thread.join()
    if errors:
        raise errors[0]
    return summary

"""`capture`: walk a list of exercise pages one at a time, skipping those already captured.

Why one at a time with a pause: the pages belong to someone else's platform, and a signed-in
account that hammers it risks being locked out; `--delay` sets the pause between page visits.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import journal
from .browser import browser_context, check_state
from .config import CaptureConfig
from .page import PageFailed, capture_page
from .urls import read_urls


@dataclass
class CaptureSummary:
    captured: int = 0
    questions: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)


def capture_pages(urls_file: Path, out_dir: Path, config: CaptureConfig, *, state: Path | None = None,
                  delay_s: float | None = None, timeout_s: float | None = None, browser: str | None = None,
                  say: Callable[[str], None] = print) -> CaptureSummary:
    """Capture every page of `urls_file` not yet captured into `out_dir`; every failure is one line in
    the summary (and said at once), the other pages are captured all the same."""
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
    todo = [e for e in entries if not journal.is_captured(out_dir, last.get(e.url), e.exercise)]
    summary.skipped = len(entries) - len(todo)
    if not todo:
        return summary
    with browser_context(state=state, width=config.viewport_width, height=config.viewport_height,
                         executable=browser) as context:
        for number, entry in enumerate(todo):
            if number:
                time.sleep(delay)
            done: list[str] = []
            try:
                capture_page(context, entry.url, entry.exercise, out_dir, config, done)
            except PageFailed as exc:
                journal.append(out_dir, url=entry.url, exercise=entry.exercise, status="failed",
                               questions=done, reason=str(exc))
                summary.failures.append(f"could not capture {entry.url}: {exc}")
                say(summary.failures[-1])
                continue
            journal.append(out_dir, url=entry.url, exercise=entry.exercise, status="captured", questions=done)
            summary.captured += 1
            summary.questions += len(done)
            say(f"captured {entry.exercise}: {len(done)} questions ({entry.url})")
    return summary

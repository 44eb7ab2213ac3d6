"""How fast a launch goes and what it produced: the Runs page's live rate, ETA and end summary,
and, for a sweep over several providers, the progress of each model and the rate of each provider.

Why from the journals: a launch runs in another process; its journals (one JSONL line per
finished request, with a ``ts``) are the only live record the page can read without touching
the store. The rate is measured over the last few minutes of this session, so a resumed launch
or a slow start does not distort the estimate; the end summary adds up the same journals.

Two clocks, one name each: ``started_at`` is when the launch was asked for (the click on the Runs
page, or the start of a ``run`` command), so elapsed time and "completed in" count from it;
``process_started_at`` is when the run process of this session began, the start of its rate window.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from .journal import latest_by_key, read_records
from .launchfile import FINISHED_STATUSES, STARTING, WAITING_INGEST

#: Rates are measured over the requests finished in this window (seconds).
RATE_WINDOW_S = 180.0
#: A launch has ended in these states (answers waiting for ingest included: the run is over).
FINISHED = (*FINISHED_STATUSES, WAITING_INGEST)


@dataclass(frozen=True)
class Pace:
    """Progress of a running launch: requests done of total, requests per minute, seconds left,
    seconds since the launch was asked for, and whether its run process has yet to write."""

    done: int
    total: int
    per_minute: float | None
    eta_s: float | None
    elapsed_s: float | None = None
    starting: bool = False

    @property
    def share(self) -> float:
        """Done as a fraction of the total, for a progress bar (0 when nothing is known yet)."""
        return min(1.0, self.done / self.total) if self.total else 0.0

    def describe(self) -> str:
        """One line for the page: "120 of 400 requests · 35.2 per minute · about 8 min left · 4 min
        since the launch", or "0 of 400 requests planned (starting...) · 3 s since the launch"."""
        since = [f"{duration(self.elapsed_s)} since the launch"] if self.elapsed_s is not None else []
        if self.starting:
            planned = f"{self.done} of {self.total} requests planned (starting...)" if self.total else "starting..."
            return " · ".join([planned, *since])
        parts = [f"{self.done} of {self.total} requests"]
        if self.per_minute is None:
            parts.append("measuring the rate")
        else:
            parts.append(f"{self.per_minute:.1f} per minute")
            if self.eta_s is not None and self.done < self.total:
                parts.append(f"about {duration(self.eta_s)} left")
        return " · ".join([*parts, *since])


def duration(seconds: float) -> str:
    """Seconds in words a person reads at a glance: 45 s, 8 min, 2 h 05 min."""
    seconds = max(0.0, float(seconds))
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = seconds / 60
    if minutes < 90:
        return f"{minutes:.0f} min"
    return f"{int(minutes // 60)} h {int(minutes % 60):02d} min"


def _member_records(state: dict) -> list[list[dict]]:
    return [list(read_records(Path(m["journal"]))) for m in state.get("members") or [] if m.get("journal")]


def _planned(state: dict) -> int:
    """Requests of the launch: its members' (the run process's plan), else the page's plan."""
    return (sum(int(m.get("jobs") or 0) for m in state.get("members") or []) or int(state.get("total_jobs") or 0)
            or int(state.get("planned_requests") or 0))


def launch_pace(state: dict, now: float | None = None, window_s: float = RATE_WINDOW_S) -> Pace:
    """Requests done (answered or failed for good) of planned, the rate over the last ``window_s``
    seconds of this session's process (requests finished before it started do not count), the ETA,
    and the time since the launch was asked for."""
    now = time.time() if now is None else now
    clicked = state.get("started_at")
    elapsed = now - float(clicked) if clicked else None
    started = float(state.get("process_started_at") or 0.0)
    total = _planned(state)
    starting = state.get("status") == STARTING
    done = 0
    stamps: list[float] = []
    for records in _member_records(state):
        done += len(latest_by_key(iter(records)))
        stamps += [float(r["ts"]) for r in records if isinstance(r.get("ts"), int | float) and r["ts"] >= started]
    since = max(started, now - window_s) if started else now - window_s
    recent = [t for t in stamps if t >= since]
    span = now - since
    if starting or len(recent) < 2 or span <= 1.0:
        return Pace(done, total, None, None, elapsed, starting)
    per_second = len(recent) / span
    eta = (total - done) / per_second if total > done else 0.0
    return Pace(done, total, per_second * 60.0, eta, elapsed)


@dataclass(frozen=True)
class LaunchSummary:
    """What a finished launch produced, for the summary that stays on the Runs page."""

    launch_id: str
    status: str
    dataset: str | None
    models: tuple[str, ...]
    conditions: tuple[str, ...]
    answered: int
    failed: int
    total: int
    seconds: float | None
    finished_at: float | None


@dataclass(frozen=True)
class ModelProgress:
    """One model of a launch (all its conditions and repetitions): requests done of planned."""

    model: str
    provider: str
    jobs: int
    answered: int
    failed: int

    @property
    def done(self) -> int:
        return self.answered + self.failed

    @property
    def share(self) -> float:
        """Done as a fraction of planned, for a progress bar (0 when nothing is planned)."""
        return min(1.0, self.done / self.jobs) if self.jobs else 0.0

    def describe(self) -> str:
        """``gpt-5.5: 120 of 400 requests (3 failed)``."""
        failed = f" ({self.failed} failed)" if self.failed else ""
        return f"{self.model}: {self.done} of {self.jobs} requests{failed}"


@dataclass(frozen=True)
class ProviderRate:
    """One provider of a launch: its models, requests done, its rate now and the limits it runs under."""

    provider: str
    models: tuple[str, ...]
    jobs: int
    done: int
    per_minute: float | None
    limits: str


def _limit_words(limits: list[dict]) -> str:
    """``16 at a time, 600 rpm`` (a launch file's limits of a provider)."""
    return "; ".join(f"{item.get('concurrency')} at a time" + (f", {item['rpm']:g} rpm" if item.get("rpm") else "")
                     for item in limits)


def launch_breakdown(state: dict, now: float | None = None,
                     window_s: float = RATE_WINDOW_S) -> tuple[list[ModelProgress], list[ProviderRate]]:
    """Per model: requests done of planned; per provider: requests done, the rate over the last
    ``window_s`` seconds of this session (None before two requests) and its limits. Each journal is
    read once."""
    now = time.time() if now is None else now
    started = float(state.get("process_started_at") or 0.0)
    since = max(started, now - window_s) if started else now - window_s
    models: dict[str, dict] = {}
    providers: dict[str, dict] = {}
    for member in state.get("members") or []:
        records = list(read_records(Path(member["journal"]))) if member.get("journal") else []
        latest = latest_by_key(iter(records))
        answered = sum(1 for r in latest.values() if r.get("status") == "ok")
        provider = str(member.get("provider") or "provider")
        model = models.setdefault(str(member.get("model")), {"provider": provider, "jobs": 0, "answered": 0,
                                                             "failed": 0})
        model["jobs"] += int(member.get("jobs") or 0)
        model["answered"] += answered
        model["failed"] += len(latest) - answered
        group = providers.setdefault(provider, {"models": {}, "jobs": 0, "done": 0, "recent": 0,
                                                "limits": [item for item in member.get("limits") or []
                                                           if str(item.get("name", "")).startswith("provider")]})
        group["models"][str(member.get("model"))] = None
        group["jobs"] += int(member.get("jobs") or 0)
        group["done"] += len(latest)
        group["recent"] += sum(1 for r in records if isinstance(r.get("ts"), int | float) and r["ts"] >= since)
    span = now - since
    progress = [ModelProgress(name, m["provider"], m["jobs"], m["answered"], m["failed"]) for name, m in models.items()]
    rates = [ProviderRate(name, tuple(g["models"]), g["jobs"], g["done"],
                          g["recent"] / span * 60.0 if g["recent"] >= 2 and span > 1.0 else None,
                          _limit_words(g["limits"]))
             for name, g in providers.items()]
    return progress, rates


def launch_summary(state: dict) -> LaunchSummary | None:
    """The summary of a finished launch (None while it runs); its time counts from ``started_at``,
    the moment the launch was asked for."""
    if state.get("status") not in FINISHED:
        return None
    answered = failed = 0
    for records in _member_records(state):
        latest = latest_by_key(iter(records))
        answered += sum(1 for r in latest.values() if r.get("status") == "ok")
        failed += sum(1 for r in latest.values() if r.get("status") != "ok")
    members = state.get("members") or []
    started, finished = state.get("started_at"), state.get("finished_at")
    seconds = float(finished) - float(started) if started and finished else None
    return LaunchSummary(
        launch_id=str(state.get("launch_id")), status=str(state.get("status")), dataset=state.get("dataset"),
        models=tuple(dict.fromkeys(str(m.get("model")) for m in members)),
        conditions=tuple(dict.fromkeys(str(m.get("condition")) for m in members)),
        answered=answered, failed=failed, total=sum(int(m.get("jobs") or 0) for m in members),
        seconds=seconds, finished_at=float(finished) if finished else None)


def latest_finished(states: list[dict]) -> dict | None:
    """The most recently finished launch among ``states`` (newest first or in any order)."""
    done = [s for s in states if s.get("status") in FINISHED and s.get("finished_at")]
    return max(done, key=lambda s: float(s["finished_at"])) if done else None

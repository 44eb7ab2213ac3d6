"""A platform's capture configuration: where the questions are, how to answer each kind, what
"answered" looks like. Read from one JSON or TOML file, checked before any browser starts.

Why a file and not code: every platform differs only in selectors and in which of a few answering
actions each question kind needs; a researcher adapts a copy of `data/capture/local_site.json`
instead of writing a script.
"""
from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..store.core import PROJECT_ROOT

LOCAL_SITE_CONFIG = PROJECT_ROOT / "data" / "capture" / "local_site.json"
#: The answering actions a strategy's steps may use (`steps.perform` carries them out).
ACTIONS = {
    "check_first": "tick the first input that matches `target` (a radio button or a checkbox)",
    "check_first_in_each": "in each element matching `groups`, tick the first input matching `target` (mark each statement)",
    "select_in_each": "in every <select> matching `target`, choose the option at `option` (default 1: the first real choice)",
    "type_in_each": "type `text` into every input matching `target` (a word into each blank)",
    "click_first": "click the first element matching `target`",
}
_TOP = {"platform", "question", "question_name", "submit", "revealed", "signed_out", "context", "strategies",
        "timeout_s", "delay_s", "viewport_width", "viewport_height", "about"}
_STEP_KEYS = {"do", "target", "groups", "option", "text"}


@dataclass(frozen=True)
class Strategy:
    """How to answer a question that matches `when`: the steps, in order."""

    name: str
    when: str
    steps: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class CaptureConfig:
    platform: str
    question: str
    question_name: str | None
    submit: str
    revealed: str
    signed_out: str | None
    context: tuple[str, ...]
    strategies: tuple[Strategy, ...]
    timeout_s: float = 15.0
    delay_s: float = 2.0
    viewport_width: int = 1280
    viewport_height: int = 900


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"--config {path}: cannot read it ({exc.strerror})") from None
    try:
        data = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"--config {path}: not valid {'TOML' if path.suffix.lower() == '.toml' else 'JSON'} ({exc})") from None
    if not isinstance(data, dict):
        raise UserError(f"--config {path}: expected an object at the top")
    return data


def _step(path: Path, where: str, step: Any) -> dict[str, Any]:
    if not isinstance(step, dict) or step.get("do") not in ACTIONS:
        raise UserError(f"--config {path}: {where}: each step needs \"do\" one of {', '.join(ACTIONS)}")
    unknown = set(step) - _STEP_KEYS
    if unknown:
        raise UserError(f"--config {path}: {where}: unknown key {sorted(unknown)[0]!r}")
    if not isinstance(step.get("target"), str) or not step["target"].strip():
        raise UserError(f"--config {path}: {where}: step {step['do']!r} needs a \"target\" selector")
    if step["do"] == "check_first_in_each" and not isinstance(step.get("groups"), str):
        raise UserError(f"--config {path}: {where}: check_first_in_each needs a \"groups\" selector")
    if step["do"] == "type_in_each" and not isinstance(step.get("text"), str):
        raise UserError(f"--config {path}: {where}: type_in_each needs the \"text\" to type")
    return dict(step)


def _strategies(path: Path, raw: Any) -> tuple[Strategy, ...]:
    if not isinstance(raw, list) or not raw:
        raise UserError(f"--config {path}: \"strategies\" must be a non-empty list")
    found = []
    for index, entry in enumerate(raw, start=1):
        where = f"strategy {index}"
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("name", "when")):
            raise UserError(f"--config {path}: {where}: needs \"name\" and \"when\" (a selector)")
        steps = entry.get("steps")
        if not isinstance(steps, list) or not steps:
            raise UserError(f"--config {path}: {where} ({entry['name']}): needs a non-empty \"steps\" list")
        found.append(Strategy(entry["name"], entry["when"], tuple(_step(path, f"{where} ({entry['name']})", s)
                                                                   for s in steps)))
    return tuple(found)


def load_config(path: Path | None = None) -> CaptureConfig:
    """The configuration at `path` (default: the local exercise site's), checked; UserError naming the problem."""
    path = Path(path) if path else LOCAL_SITE_CONFIG
    data = _read(path)
    unknown = set(data) - _TOP
    if unknown:
        raise UserError(f"--config {path}: unknown key {sorted(unknown)[0]!r}")
    for key in ("question", "submit", "revealed"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise UserError(f"--config {path}: \"{key}\" (a CSS selector) is required")
    context = data.get("context") or []
    if isinstance(context, str):
        context = [context]
    try:
        timeout_s, delay_s = float(data.get("timeout_s", 15.0)), float(data.get("delay_s", 2.0))
        width, height = int(data.get("viewport_width", 1280)), int(data.get("viewport_height", 900))
    except (TypeError, ValueError):
        raise UserError(f"--config {path}: timeout_s, delay_s and the viewport sizes must be numbers") from None
    if min(timeout_s, delay_s) < 0 or min(width, height) < 200:
        raise UserError(f"--config {path}: timeouts and delays must be >= 0, viewport sizes >= 200")
    return CaptureConfig(platform=str(data.get("platform") or path.stem), question=data["question"],
                         question_name=data.get("question_name"), submit=data["submit"], revealed=data["revealed"],
                         signed_out=data.get("signed_out"), context=tuple(str(c) for c in context),
                         strategies=_strategies(path, data.get("strategies")), timeout_s=timeout_s, delay_s=delay_s,
                         viewport_width=width, viewport_height=height)

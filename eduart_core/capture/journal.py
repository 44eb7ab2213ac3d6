"""The capture log: one JSON line per page visited, kept at the top of the output folder.

Why a log beside the files: a page counts as captured only when its last visit succeeded and every
question file it wrote is still there, so an interrupted or failed page is visited again and a
finished one never is. It sits at the folder's top level, where `extract` looks for no pages.
"""
from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

LOG_NAME = "capture-log.jsonl"


def latest(out_dir: Path) -> dict[str, dict[str, Any]]:
    """The last log line of each URL."""
    found: dict[str, dict[str, Any]] = {}
    path = Path(out_dir) / LOG_NAME
    if not path.exists():
        return found
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut by an interruption: that page is visited again
        if isinstance(entry, dict) and isinstance(entry.get("url"), str):
            found[entry["url"]] = entry
    return found


def is_captured(out_dir: Path, entry: dict[str, Any] | None, exercise: str) -> bool:
    """True when the page's last visit captured it into `exercise` and all its files exist."""
    if not entry or entry.get("status") != "captured" or entry.get("exercise") != exercise:
        return False
    folder = Path(out_dir) / exercise
    questions = entry.get("questions") or []
    return bool(questions) and all((folder / f"{q}{suffix}").is_file() for q in questions for suffix in (".png", ".html"))


def append(out_dir: Path, **fields: Any) -> None:
    """One line for one visit (written and flushed at once)."""
    fields["at"] = datetime.now(UTC).isoformat(timespec="seconds")
    with open(Path(out_dir) / LOG_NAME, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(fields, ensure_ascii=False) + "\n")

"""The list of pages to capture: one `URL [NAME]` per line; NAME (else the URL's last path part)
names the exercise folder. Blank lines and `#` comments are skipped."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import UserError

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class PageEntry:
    line: int
    url: str
    exercise: str


def folder_name(text: str) -> str:
    """`text` as a safe folder name (letters, digits, dot, dash, underscore)."""
    return _UNSAFE.sub("-", text).strip("-.") or "page"


def read_urls(path: Path) -> tuple[list[PageEntry], list[str]]:
    """(the pages, one line per unusable line). A missing or empty file is a UserError."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UserError(f"--urls {path}: cannot read it ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise UserError(f"--urls {path}: not a text file") from None
    entries: list[PageEntry] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        url, _, name = text.partition(" ")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            problems.append(f"--urls line {number}: {url!r} is not an http(s) URL")
            continue
        exercise = folder_name(name.strip() or parts.path.rstrip("/").rsplit("/", 1)[-1] or parts.netloc)
        if exercise in seen:
            problems.append(f"--urls line {number}: exercise name {exercise!r} is already used on line "
                            f"{seen[exercise]} (add a NAME after the URL)")
            continue
        seen[exercise] = number
        entries.append(PageEntry(number, url, exercise))
    if not entries and not problems:
        raise UserError(f"--urls {path}: no URLs (one URL per line, optionally followed by a folder name)")
    return entries, problems

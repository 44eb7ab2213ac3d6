"""Rubrics: criteria with points, each marked by a deterministic check or by a judge's prompt.

Why files: an examiner writes and revises a rubric as text (``prompts/rubrics/<name>.toml``), like
the answering prompts; its content hash goes into every score it produces, so two scores are
comparable only when they come from the same rubric text. A rubric attaches to formats, tasks or
single items (the most specific attachment wins), and per-item values (the accepted names of the
artist, the date) sit in the same file under ``[items."<item id>"]``.

An item's score under a rubric is its points over the maximum of the criteria that apply to it:
a fraction in [0, 1], like every other score.

File layout::

    name = "open-v1"                 # the file's stem; rubric names are versioned by hand (-v1, -v2)
    title = "..."
    [attach]                         # at least one of formats, tasks, items
    formats = ["open_text"]
    [[criteria]]
    id = "date"; label = "..."; points = 1
    check = "date_within"; years = 50    # a check (see judges.checks.CHECKS) ...
    [[criteria]]
    id = "evidence"; label = "..."; points = 1
    judge = "What the judge decides"     # ... or a judge prompt
    levels = { "0" = "...", "1" = "..." }  # what each number of points means (judge criteria)
    [items."demo-open-01"]
    date = 1305                      # per-item values of the checks, by criterion id
"""
from __future__ import annotations

import hashlib
import os
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..vocab import CHECK_METHOD, JUDGE_METHOD

RUBRICS_DIR = Path(__file__).resolve().parents[2] / "prompts" / "rubrics"
#: A folder of the user's own rubrics instead of the shipped ones (like EDUART_MODELS for models).
RUBRICS_ENV = "EDUART_RUBRICS"


def rubrics_dir(directory: Path | None = None) -> Path:
    """The folder rubrics are read from: ``directory``, else ``$EDUART_RUBRICS``, else ``prompts/rubrics``."""
    if directory:
        return Path(directory)
    env = os.environ.get(RUBRICS_ENV)
    return Path(env).expanduser() if env else RUBRICS_DIR
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_TOP_FIELDS = {"name", "title", "description", "attach", "criteria", "items"}
_CRITERION_FIELDS = {"id", "label", "points", "check", "judge", "levels", "expected", "years", "match", "description"}


@dataclass(frozen=True)
class Criterion:
    """One row of a rubric: what earns its points, and who decides (a check or a judge)."""

    id: str
    label: str
    points: int
    method: str                      # vocab.CHECK_METHOD | vocab.JUDGE_METHOD
    check: str | None = None         # name in judges.checks.CHECKS
    prompt: str | None = None        # what the judge decides (judge criteria)
    levels: dict[int, str] = field(default_factory=dict)   # points -> what they mean
    params: dict[str, Any] = field(default_factory=dict)   # years, match, expected (a default value)
    description: str = ""

    @property
    def allowed(self) -> tuple[int, ...]:
        """The points a grader or judge may give: 0, 1, ..., points."""
        return tuple(range(self.points + 1))

    def level_text(self, points: int) -> str:
        return self.levels.get(points) or (f"{points} point{'s' if points != 1 else ''}")


@dataclass(frozen=True)
class Rubric:
    """A parsed rubric file; ``hash`` is the sha256 of its bytes."""

    name: str
    title: str
    description: str
    criteria: tuple[Criterion, ...]
    formats: tuple[str, ...]
    tasks: tuple[str, ...]
    items: tuple[str, ...]
    values: dict[str, dict[str, Any]]    # item id -> criterion id -> expected value
    hash: str
    path: str

    def criterion(self, criterion_id: str) -> Criterion:
        for c in self.criteria:
            if c.id == criterion_id:
                return c
        raise UserError(f"rubric {self.name} has no criterion {criterion_id!r} "
                        f"(criteria: {', '.join(c.id for c in self.criteria)})")

    @property
    def judged(self) -> tuple[Criterion, ...]:
        """The criteria a judge model marks."""
        return tuple(c for c in self.criteria if c.method == JUDGE_METHOD)

    @property
    def checked(self) -> tuple[Criterion, ...]:
        return tuple(c for c in self.criteria if c.method == CHECK_METHOD)

    def expected(self, criterion: Criterion, item_id: str) -> Any:
        """The value a check compares the answer with for this item (None: the check does not apply)."""
        per_item = self.values.get(str(item_id), {})
        if criterion.id in per_item:
            return per_item[criterion.id]
        return criterion.params.get("expected")

    def applies(self, criterion: Criterion, item_id: str) -> bool:
        """Judge criteria apply to every attached item; a check only where it has a value to compare with."""
        return criterion.method == JUDGE_METHOD or self.expected(criterion, item_id) is not None

    def attachment(self, record: dict) -> int:
        """How specifically the rubric attaches to an item: 3 by id, 2 by task, 1 by format, 0 not at all."""
        if str(record.get("item_id")) in self.items:
            return 3
        if record.get("task") is not None and str(record.get("task")) in self.tasks:
            return 2
        if str(record.get("type")) in self.formats:
            return 1
        return 0

    def max_points(self, item_id: str) -> int:
        return sum(c.points for c in self.criteria if self.applies(c, item_id))

    @property
    def short_hash(self) -> str:
        return self.hash[:8]


def _fail(path: Path, message: str) -> UserError:
    return UserError(f"rubric {path}: {message}")


def _strings(value: Any, path: Path, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(path, f"{where} must be a list of names")
    return tuple(v.strip() for v in value)


def _criterion(entry: Any, path: Path, index: int) -> Criterion:
    from .checks import CHECKS

    where = f"criteria[{index}]"
    if not isinstance(entry, dict):
        raise _fail(path, f"{where} is not a table")
    unknown = set(entry) - _CRITERION_FIELDS
    if unknown:
        raise _fail(path, f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    ident = entry.get("id")
    if not isinstance(ident, str) or not _NAME.match(ident):
        raise _fail(path, f"{where}: id must be a short lower-case name (letters, digits, . _ -)")
    points = entry.get("points")
    if not isinstance(points, int) or isinstance(points, bool) or not 1 <= points <= 10:
        raise _fail(path, f"criterion {ident}: points must be a whole number from 1 to 10")
    check, judge = entry.get("check"), entry.get("judge")
    if (check is None) == (judge is None):
        raise _fail(path, f"criterion {ident}: give either check = \"...\" or judge = \"...\"")
    if check is not None and check not in CHECKS:
        raise _fail(path, f"criterion {ident}: unknown check {check!r} (checks: {', '.join(CHECKS)})")
    if judge is not None and (not isinstance(judge, str) or not judge.strip()):
        raise _fail(path, f"criterion {ident}: judge must be the text the judge decides on")
    levels: dict[int, str] = {}
    for key, text in (entry.get("levels") or {}).items():
        try:
            level = int(key)
        except (TypeError, ValueError):
            raise _fail(path, f"criterion {ident}: level {key!r} is not a number of points") from None
        if not 0 <= level <= points or not isinstance(text, str):
            raise _fail(path, f"criterion {ident}: level {key!r} must be 0..{points} with a text")
        levels[level] = text.strip()
    params = {k: entry[k] for k in ("years", "match", "expected") if k in entry}
    return Criterion(id=ident, label=str(entry.get("label") or ident), points=points,
                     method=CHECK_METHOD if check is not None else JUDGE_METHOD, check=check,
                     prompt=judge.strip() if isinstance(judge, str) else None, levels=levels, params=params,
                     description=str(entry.get("description") or ""))


def parse_rubric(path: Path) -> Rubric:
    """Read and validate one rubric file; every problem is a one-line ``UserError`` naming the file."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"rubric {path} not found") from None
    except OSError as exc:
        raise _fail(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise _fail(path, "is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise _fail(path, f"invalid TOML: {exc}") from None
    unknown = set(data) - _TOP_FIELDS
    if unknown:
        raise _fail(path, f"unknown field(s) {', '.join(sorted(unknown))}")
    name = data.get("name")
    if name != path.stem or not _NAME.match(str(name)):
        raise _fail(path, f"name must be the file's stem ({path.stem!r}), in lower case")
    attach = data.get("attach") or {}
    if not isinstance(attach, dict) or set(attach) - {"formats", "tasks", "items"}:
        raise _fail(path, "[attach] takes formats, tasks and items")
    formats = _strings(attach.get("formats"), path, "attach.formats")
    tasks = _strings(attach.get("tasks"), path, "attach.tasks")
    items = _strings(attach.get("items"), path, "attach.items")
    if not (formats or tasks or items):
        raise _fail(path, "[attach] names no format, task or item")
    from ..vocab import format_names

    bad = [f for f in formats if f not in format_names()]
    if bad:
        raise _fail(path, f"unknown format(s) {', '.join(bad)}")
    entries = data.get("criteria")
    if not isinstance(entries, list) or not entries:
        raise _fail(path, "has no [[criteria]]")
    criteria = tuple(_criterion(entry, path, k) for k, entry in enumerate(entries))
    ids = [c.id for c in criteria]
    if len(set(ids)) != len(ids):
        raise _fail(path, "two criteria share an id")
    values: dict[str, dict[str, Any]] = {}
    for item_id, table in (data.get("items") or {}).items():
        if not isinstance(table, dict):
            raise _fail(path, f"items.{item_id} is not a table")
        stray = set(table) - set(ids)
        if stray:
            raise _fail(path, f"items.{item_id}: no criterion {', '.join(sorted(stray))}")
        values[str(item_id)] = dict(table)
    return Rubric(name=str(name), title=str(data.get("title") or name), description=str(data.get("description") or ""),
                  criteria=criteria, formats=formats, tasks=tasks, items=items, values=values,
                  hash=hashlib.sha256(raw).hexdigest(), path=str(path))


@lru_cache(maxsize=64)
def _cached(path: str, mtime_ns: int, size: int) -> Rubric:
    return parse_rubric(Path(path))


def rubric_files(directory: Path | None = None) -> list[Path]:
    base = rubrics_dir(directory)
    return sorted(base.glob("*.toml")) if base.is_dir() else []


def load_rubric(name: str, directory: Path | None = None) -> Rubric:
    """The rubric ``name`` (``<rubrics folder>/<name>.toml``, see `rubrics_dir`); a path to a file works too."""
    candidate = Path(name)
    if candidate.suffix == ".toml" and candidate.exists():
        path = candidate
    else:
        if not _NAME.match(str(name)):
            raise UserError(f"rubric name {name!r}: use lower-case letters, digits, '.', '_' and '-'")
        path = rubrics_dir(directory) / f"{name}.toml"
        if not path.exists():
            known = ", ".join(p.stem for p in rubric_files(directory)) or "none"
            raise UserError(f"no rubric {name!r} in {path.parent} (rubrics: {known})")
    stat = path.stat()
    return _cached(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


def load_rubrics(directory: Path | None = None) -> list[Rubric]:
    return [load_rubric(str(p)) for p in rubric_files(directory)]


def applicable_rubric(record: dict, rubrics: list[Rubric]) -> Rubric | None:
    """The rubric that applies to an item: the most specific attachment; UserError on a tie."""
    ranked = sorted(((r.attachment(record), r) for r in rubrics), key=lambda x: -x[0])
    if not ranked or ranked[0][0] == 0:
        return None
    best = [r for level, r in ranked if level == ranked[0][0]]
    if len(best) > 1:
        raise UserError(f"item {record.get('item_id')}: rubrics {', '.join(r.name for r in best)} attach equally; "
                        "attach one of them more specifically (by task or item)")
    return best[0]


def items_for(rubric: Rubric, records: list[dict], others: list[Rubric] | None = None) -> list[dict]:
    """The records ``rubric`` applies to (where no other rubric attaches more specifically)."""
    pool = [rubric] + [r for r in (others or []) if r.name != rubric.name]
    out = []
    for record in records:
        chosen = applicable_rubric(record, pool) if rubric.attachment(record) else None
        if chosen is not None and chosen.name == rubric.name:
            out.append(record)
    return out

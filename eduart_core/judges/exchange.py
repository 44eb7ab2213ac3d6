"""Grades in and out as JSON Lines: ``grades-import FILE.jsonl`` and ``grades-export``.

One line per grade: ``{"dataset", "item_id", "model", "condition", "grader", "criterion",
"points"}`` plus, optionally, ``rubric`` (default: the rubric that applies to the item), ``role``
(``grade`` or ``adjudicate``), ``note``, ``graded_at`` (ISO time) and ``simulated``. The model is its
key or display name. A bad line is named (``file:line: reason``) and skipped; the rest is stored in
one transaction.

Why idempotent by state: a line changes nothing when the grader's latest mark of that answer,
criterion and role already equals it, so importing a file twice, or importing an export into the
store it came from, adds no row; a different mark is a new row (the history is kept).

Who: importing needs `team.IMPORT_GRADES` (admin; the command line's operator holds every role) and
every imported row records the importer (``recorded_by`` and the identity columns) beside the
``grader`` the line names. Exporting with a ``viewer`` needs `team.SEE_BLIND`, since an export holds
every grader's marks, also those of answers a blind round has not settled.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import UserError
from ..fileio import atomic_write
from ..jsonsafe import BadInput, loads
from ..store import Store
from ..team import IMPORT_GRADES, SEE_BLIND, Identity, as_identity
from ..vocab import GRADE_ROLES
from .rubric import Rubric, applicable_rubric, load_rubric, load_rubrics

_CONTROL = re.compile(r"[\x00-\x1f]")
REQUIRED = ("dataset", "item_id", "model", "condition", "grader", "criterion", "points")
OPTIONAL = ("rubric", "role", "note", "graded_at", "simulated")
EXPORT_FIELDS = ("dataset", "item_id", "model", "condition", "rubric", "criterion", "grader", "role", "points",
                 "note", "graded_at", "recorded_by", "source", "simulated")


@dataclass
class GradesReport:
    lines: int = 0
    added: int = 0
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (file:line, reason)


class _Context:
    """What validating a line needs, read once per import."""

    def __init__(self, con):
        from ..store.grades import load_grades_con, model_keys_con

        self.con = con
        self.models = model_keys_con(con)
        self.datasets = {r[0] for r in con.execute("SELECT dataset FROM datasets").fetchall()}
        self.items: dict[tuple[str, str], dict | None] = {}
        self.answers: dict[tuple, int] = {}
        self.loaded: set[str] = set()
        self.rubrics: dict[str, Rubric] = {}
        self.all_rubrics = load_rubrics()
        from ..analysis.judges import latest_grades

        latest = latest_grades(load_grades_con(con))
        self.current = {(r.dataset, r.item_id, r.model, r.condition, r.rubric, r.criterion, r.grader, r.role):
                        float(r.points) for r in latest.itertuples(index=False)}

    def _load(self, dataset: str) -> None:
        """Items and latest answers of a dataset, read once (an import names few datasets)."""
        if dataset in self.loaded:
            return
        self.loaded.add(dataset)
        for item_id, record in self.con.execute("SELECT item_id, CAST(record AS TEXT) FROM items WHERE dataset = ? "
                                                "AND is_current", [dataset]).fetchall():
            self.items[(dataset, str(item_id))] = {**json.loads(record), "item_id": str(item_id)}
        for item_id, model, condition, response_id in self.con.execute(
                """SELECT r.item_id, u.model, u.condition, max(r.response_id) FROM responses r
                   JOIN runs u ON u.run_id = r.run_id
                   WHERE u.dataset = ? AND r.error IS NULL AND u.repetition = 0 AND r.repetition = 0
                   GROUP BY r.item_id, u.model, u.condition""", [dataset]).fetchall():
            self.answers[(dataset, str(item_id), str(model), str(condition))] = int(response_id)

    def item(self, dataset: str, item_id: str) -> dict | None:
        self._load(dataset)
        return self.items.get((dataset, item_id))

    def answer(self, dataset: str, item_id: str, model: str, condition: str) -> int | None:
        """The response id of the latest answer (repetition 0) of that model to that item."""
        self._load(dataset)
        return self.answers.get((dataset, item_id, model, condition))

    def rubric(self, name: str) -> Rubric:
        if name not in self.rubrics:
            self.rubrics[name] = load_rubric(name)
        return self.rubrics[name]


def _text(line: dict, name: str) -> str:
    value = line.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string")
    if len(value) > 200 or _CONTROL.search(value):
        raise ValueError(f"{name} must be at most 200 printable characters")
    return value.strip()


def _row(line: object, ctx: _Context, actor: Identity, source: str) -> dict:
    """The grade row of one import line; ValueError with the reason when it is bad."""
    if not isinstance(line, dict):
        raise ValueError("not a JSON object")
    missing = [k for k in REQUIRED if k not in line]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    unknown = set(line) - set(REQUIRED) - set(OPTIONAL) - {"recorded_by", "source"}
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(sorted(unknown))}")
    dataset, item_id = _text(line, "dataset"), _text(line, "item_id")
    model, condition, grader = _text(line, "model"), _text(line, "condition"), _text(line, "grader")
    criterion = _text(line, "criterion")
    if dataset not in ctx.datasets:
        raise ValueError(f"no dataset {dataset!r}")
    record = ctx.item(dataset, item_id)
    if record is None:
        raise ValueError(f"no item {item_id!r} in dataset {dataset}")
    if model not in ctx.models:
        raise ValueError(f"unknown model {model!r}")
    model = ctx.models[model]
    response_id = ctx.answer(dataset, item_id, model, condition)
    if response_id is None:
        raise ValueError(f"model {model} has no answer to item {item_id} in condition {condition!r}")
    rubric: Rubric | None
    if line.get("rubric") is not None:
        try:
            rubric = ctx.rubric(_text(line, "rubric"))
        except UserError as exc:
            raise ValueError(str(exc)) from None
    else:
        try:
            rubric = applicable_rubric(record, ctx.all_rubrics)
        except UserError as exc:
            raise ValueError(str(exc)) from None
        if rubric is None:
            raise ValueError(f"no rubric applies to item {item_id}: name one in \"rubric\"")
    try:
        c = rubric.criterion(criterion)
    except UserError:
        raise ValueError(f"rubric {rubric.name} has no criterion {criterion!r}") from None
    if not rubric.applies(c, item_id):
        raise ValueError(f"criterion {criterion} of rubric {rubric.name} does not apply to item {item_id}")
    points = line["points"]
    if isinstance(points, bool) or not isinstance(points, int | float) or float(points) not in c.allowed:
        raise ValueError(f"points {points!r} is not one of {', '.join(map(str, c.allowed))} for criterion {criterion}")
    role = line.get("role") or "grade"
    if role not in GRADE_ROLES:
        raise ValueError(f"role must be one of {', '.join(GRADE_ROLES)}")
    note = line.get("note")
    if note is not None and not isinstance(note, str):
        raise ValueError("note must be a string")
    graded_at = line.get("graded_at")
    if graded_at is not None:
        try:
            graded_at = pd.Timestamp(str(graded_at))
        except (ValueError, TypeError):
            raise ValueError(f"graded_at {graded_at!r} is not a date and time") from None
        if pd.isna(graded_at):
            raise ValueError("graded_at is not a date and time")
    simulated = line.get("simulated", False)
    if not isinstance(simulated, bool):
        raise ValueError("simulated must be true or false")
    return {"dataset": dataset, "item_id": item_id, "model": model, "condition": condition, "rubric": rubric.name,
            "rubric_hash": rubric.hash, "criterion": criterion, "grader": grader, "role": role,
            "points": float(points), "response_id": response_id, "round": None, "source": source,
            "simulated": simulated, "note": note, "recorded_by": actor.key, "graded_at": graded_at,
            **actor.columns()}


def import_lines(store: Store, lines: Sequence[tuple[str, object]], recorded_by: Identity, source: str = "import",
                 report: GradesReport | None = None) -> GradesReport:
    """Validate and store ``(spot, parsed line)`` pairs in one transaction (bad ones named and skipped);
    ``recorded_by`` is who imports (an ``Identity``; ``team.local(name)`` in single-machine mode)."""
    from ..store.grades import add_grades_con

    report = report or GradesReport()
    actor = as_identity(recorded_by)
    actor.require(IMPORT_GRADES)
    rows: list[dict] = []
    with store.transaction() as con:
        ctx = _Context(con)
        for spot, line in lines:
            report.lines += 1
            try:
                row = _row(line, ctx, actor, source)
            except ValueError as exc:
                report.skipped.append((spot, str(exc)))
                continue
            state = (row["dataset"], row["item_id"], row["model"], row["condition"], row["rubric"], row["criterion"],
                     row["grader"], row["role"])
            if ctx.current.get(state) == row["points"]:
                report.unchanged += 1
                continue
            ctx.current[state] = row["points"]
            row["grade_key"] = hashlib.sha256(json.dumps([*state, row["points"], str(row["graded_at"]), spot,
                                                          len(rows)], default=str).encode()).hexdigest()
            rows.append(row)
        report.added = add_grades_con(con, rows)
    return report


def import_grades(store: Store, path: str | Path, recorded_by: Identity) -> GradesReport:
    """``grades-import FILE.jsonl``: every good line stored, every bad one named in ``skipped``."""
    from ..jsonsafe import read_lines

    as_identity(recorded_by).require(IMPORT_GRADES)  # refused before the file is read
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    report = GradesReport()
    lines = []
    for number, raw in read_lines(path):  # a line that is not UTF-8 is one bad line, like any other
        spot = f"{path.name}:{number}"
        try:
            lines.append((spot, loads(raw)))
        except BadInput as exc:
            report.lines += 1
            report.skipped.append((spot, str(exc)))
    if not lines and not report.skipped:
        raise UserError(f"{path}: no grades in the file")
    return import_lines(store, lines, recorded_by, report=report)


def export_grades(store: Store, out: str | Path | None = None, dataset: str | None = None,
                  rubric: str | None = None, viewer: Identity | None = None) -> tuple[str, int]:
    """The current grades (latest per answer, criterion, grader and role) as JSON Lines; written to
    ``out`` when given (atomically). Returns (text, lines). A ``viewer`` must hold `team.SEE_BLIND`."""
    from ..analysis.judges import latest_grades
    from ..store.grades import load_grades

    if viewer is not None:
        as_identity(viewer).require(SEE_BLIND)
    latest = latest_grades(load_grades(store, dataset, rubric))
    lines = []
    for row in latest.sort_values(["dataset", "rubric", "item_id", "model", "condition", "criterion", "role",
                                   "grader"]).to_dict("records"):
        entry = {k: row.get(k) for k in EXPORT_FIELDS}
        entry["points"] = float(entry["points"])
        entry["graded_at"] = pd.Timestamp(entry["graded_at"]).isoformat() if entry["graded_at"] is not None else None
        entry["simulated"] = bool(entry["simulated"])
        entry = {k: v for k, v in entry.items() if v is not None and not (isinstance(v, float) and math.isnan(v))}
        lines.append(json.dumps(entry, ensure_ascii=False))
    text = "\n".join(lines) + ("\n" if lines else "")
    if out is not None:
        atomic_write(Path(out), text)
    return text, len(lines)

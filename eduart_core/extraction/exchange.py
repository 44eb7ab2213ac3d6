"""Review decisions as JSONL: import (bulk, offline, scripted review) and export (provenance).

One decision per line::

    {"dataset": "...", "page": "ex03/q01", "round": 1, "field": "answers", "reviewer": "Anna",
     "decision": "A" | "B" | "edit" | "flag", "value": <required for edit>, "note": "..."}

plus, optionally, ``role`` ("review" | "adjudicate") and ``decided_at`` (ISO time; an export
writes it, with ``shown_order``, ``source``, ``conflict`` and ``decision_id`` for provenance).
"A"/"B" name the extractors themselves, not the side a blind reviewer was shown.

Why the rules: a file is validated line by line, and a bad line is reported with its number and
skipped while the good ones are imported. Importing the same file twice changes nothing (each
decision has a content key). A decision that contradicts a field already settled is recorded
as a conflict that sends the field to adjudication; it never silently replaces the gold.
"""
from __future__ import annotations

import functools
import json
import logging
import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import jsonsafe
from ..errors import UserError
from ..store import Store
from ..store import extraction as db
from ..team import ADMIN, IMPORT_DECISIONS, SEE_BLIND, Identity, as_identity, operator
from .consensus import ADJUDICATE_ROLE, FLAG, REVIEW_ROLE, ROLES, contradicts, walk
from .review import (
    ACCEPT_A,
    ACCEPT_B,
    EDIT,
    EditRejected,
    check_edit,
    decision_key,
    load_state,
    now_utc,
    promote_resolved,
    working_record,
)

logger = logging.getLogger(__name__)

DECISIONS = {"A": ACCEPT_A, "B": ACCEPT_B, "edit": EDIT, "flag": FLAG}
LABELS = {action: label for label, action in DECISIONS.items()}
REQUIRED = ("dataset", "page", "round", "field", "reviewer", "decision")
OPTIONAL = ("value", "note", "role", "decided_at", "shown_order", "source", "conflict", "decision_id",
            "subject", "provider", "reviewer_name")  # provenance an export writes; an import records its own


@dataclass
class ImportResult:
    imported: int = 0
    duplicates: int = 0
    conflicts: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)   # (line number, problem)
    promoted: list[str] = field(default_factory=list)

    def summary(self) -> str:
        text = (f"imported {self.imported} decision(s), {self.duplicates} already present, "
                f"{self.conflicts} recorded as conflicts for adjudication, {len(self.errors)} bad line(s) skipped")
        return text + (f"; promoted {len(self.promoted)} page(s)" if self.promoted else "")


def _timestamp(value: Any) -> datetime:
    if isinstance(value, datetime):
        stamp = value
    else:
        try:
            stamp = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"decided_at {value!r} is not an ISO date and time") from None
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone(UTC).replace(tzinfo=None)
    return stamp


def _parse(line: str | bytes) -> dict:
    """One line as a checked dict, or ValueError naming the problem.

    ``jsonsafe.loads`` turns what would abort the whole file (a line nested deeper than the parser's
    recursion limit, a lone surrogate the store cannot encode, a text over EDUART_MAX_TEXT_CHARS,
    bytes that are not UTF-8) into the reason this line is skipped.
    """
    try:
        data = jsonsafe.loads(line)
    except jsonsafe.BadInput as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    missing = [k for k in REQUIRED if data.get(k) in (None, "")]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    unknown = [k for k in data if k not in REQUIRED + OPTIONAL]
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r}")
    for key in ("dataset", "page", "field", "reviewer"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise ValueError(f"{key} must be a non-empty string")
    if isinstance(data["round"], bool) or not isinstance(data["round"], int | str) or not str(data["round"]).isdigit():
        raise ValueError(f"round must be a whole number, not {data['round']!r}")
    if data["decision"] not in DECISIONS:
        raise ValueError(f"decision must be A, B, edit or flag, not {data['decision']!r}")
    if data["decision"] == EDIT and "value" not in data:
        raise ValueError("an edit needs a value")
    note = data.get("note")
    if note is not None and not isinstance(note, str):
        raise ValueError("note must be a string")
    if data["decision"] == FLAG and not (note or "").strip():
        raise ValueError("a flag needs a note")
    role = data.get("role") or REVIEW_ROLE
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    return {"dataset": data["dataset"].strip(), "page": data["page"].strip(), "round": int(data["round"]),
            "path": data["field"].strip(), "reviewer": data["reviewer"].strip(),
            "action": DECISIONS[data["decision"]], "value": data.get("value"), "note": (note or None),
            "role": role, "decided_at": _timestamp(data["decided_at"]) if data.get("decided_at") else None,
            "shown_order": data.get("shown_order") if data.get("shown_order") in ("AB", "BA") else None}


def _stamped_keys(state, log) -> set[str]:
    """The content keys of every decision in the audit log ``log`` with its own time (an export read back in)."""
    datasets = dict(zip(state.pages["page_id"], state.pages["dataset"]))
    keys = set()
    for d in log.to_dict("records"):
        stamp = d["decided_at"]
        if not hasattr(stamp, "isoformat"):
            continue
        keys.add(decision_key(datasets.get(d["page_id"], ""), d["page_id"], int(d["round"]), d["path"], d["reviewer"],
                              d.get("role") or REVIEW_ROLE, d["action"], d["new_value"], d["note"],
                              stamp.isoformat(timespec="microseconds")))
    return keys


def _one_import_at_a_time(fn):
    """Imports into one store take turns (on PostgreSQL several can start at once): each one reads
    the stored decisions, flags contradictions and writes, so it must see the imports before it."""
    @functools.wraps(fn)
    def wrapper(store: Store, *args, **kwargs):
        with store.exclusive("eduart:review-import"):
            return fn(store, *args, **kwargs)
    return wrapper


def import_lines(store: Store, lines: list[str] | list[bytes], source_name: str = "import",
                 actor: Identity | None = None) -> ImportResult:
    """Validate and import decisions; see the module docstring for the rules.

    ``actor`` is who imports (an admin; None: the machine's operator): the decisions keep the
    reviewer named in each line, and record the importer as the identity that wrote them."""
    return _import_numbered(store, list(enumerate(lines, start=1)), source_name, actor)


@_one_import_at_a_time
def _import_numbered(store: Store, lines: list[tuple[int, str | bytes]], source_name: str,
                     actor: Identity | None) -> ImportResult:
    """``import_lines`` over (line number, line) pairs (a file's reader skips blank lines)."""
    who = operator() if actor is None else as_identity(actor)
    who.require(IMPORT_DECISIONS)
    db.ensure_schema(store)
    state = load_state(store)
    known = db.decision_keys(store) | _stamped_keys(state, db.load_decisions(store))
    result = ImportResult()
    pending: list[dict] = []
    touched: set[tuple[str, int]] = set()
    seen_content: Counter = Counter()
    latest: dict[tuple, tuple[tuple, int]] = {}  # (field, reviewer, role) -> (content, line) of its last line here
    provisional = 10**15  # ids for not-yet-written decisions, above any stored id
    extra: dict[tuple[str, int, str], list[dict]] = {}
    for number, line in lines:
        if not line.strip():
            continue
        try:
            d = _parse(line)
            match = state.fields(d["page"], d["round"])
            if match.empty:
                raise ValueError(f"page {d['page']} has no queued field in round {d['round']}")
            if str(match["dataset"].iloc[0]) != d["dataset"]:
                raise ValueError(f"page {d['page']} belongs to dataset {match['dataset'].iloc[0]}, not {d['dataset']}")
            row = match[match["path"] == d["path"]]
            if row.empty:
                raise ValueError(f"page {d['page']} round {d['round']} has no queued field {d['path']!r}")
            row = row.iloc[0]
            value = {ACCEPT_A: row["value_a"], ACCEPT_B: row["value_b"], EDIT: d["value"], FLAG: None}[d["action"]]
            if d["action"] == EDIT:
                try:
                    check_edit(working_record(state, d["page"], d["round"]), d["path"], value)
                except EditRejected as exc:
                    raise ValueError("; ".join(exc.problems)) from None
        except ValueError as exc:
            result.errors.append((number, str(exc)))
            continue
        stamp = d["decided_at"].isoformat(timespec="microseconds") if d["decided_at"] else None
        content = (d["dataset"], d["page"], d["round"], d["path"], d["reviewer"], d["role"], d["action"],
                   json.dumps(value, sort_keys=True), d["note"], stamp)
        voter = content[:6]
        if voter in latest and latest[voter][0] == content:  # a repeated line is one decision, and said
            result.errors.append((number, f"same decision as line {latest[voter][1]}: stored once"))
            continue
        latest[voter] = (content, number)
        occurrence = seen_content[content] if stamp is None else 0  # a change of mind back (A, edit, A) is kept
        seen_content[content] += 1
        key = decision_key(d["dataset"], d["page"], d["round"], d["path"], d["reviewer"], d["role"], d["action"],
                           value, d["note"], stamp, occurrence)
        if key in known:
            result.duplicates += 1
            continue
        known.add(key)
        unit = (d["page"], d["round"], d["path"])
        needed = state.reviewers_needed(d["dataset"], d["round"])
        stored = state.decisions
        history = [r for r in stored[(stored["page_id"] == unit[0]) & (stored["round"] == unit[1])
                                     & (stored["path"] == unit[2])].to_dict("records")] + extra.get(unit, [])
        conflict = (d["role"] == REVIEW_ROLE and d["action"] != FLAG
                    and contradicts(walk(history, needed), value, d["reviewer"], needed))
        provisional += 1
        decision = {"decision_id": provisional, "page_id": unit[0], "round": unit[1], "path": unit[2],
                    "action": d["action"], "reviewer": d["reviewer"], "role": d["role"], "new_value": value,
                    "conflict": conflict}
        extra.setdefault(unit, []).append(decision)
        pending.append({"page_id": unit[0], "round": unit[1], "path": unit[2], "action": d["action"],
                        "reviewer": d["reviewer"], "previous_value": None, "new_value": value, "note": d["note"],
                        "based_on": None, "role": d["role"], "shown_order": d["shown_order"], "source": source_name,
                        "conflict": conflict, "decision_key": key, "decided_at": d["decided_at"] or now_utc(),
                        **who.columns()})
        result.conflicts += int(conflict)
        touched.add((unit[0], unit[1]))
    if pending:
        db.append_decisions(store, pending)
        result.imported = len(pending)
        after = load_state(store)
        result.promoted = promote_resolved(store, after, sorted(touched), f"review import ({source_name})")
    for number, problem in result.errors:
        logger.info("review import: line %d skipped: %s", number, problem)
    return result


def import_file(store: Store, path: str | Path, actor: Identity | None = None) -> ImportResult:
    """Import a JSONL file of decisions (see ``import_lines``).

    The file is refused at once over EDUART_MAX_FILE_MB and when it holds no line at all; lines
    are read and decoded one by one (``jsonsafe.read_lines``, the reader of every JSON Lines
    import), so a line that is not UTF-8 is skipped like any other bad line.
    """
    path = Path(path)
    if not path.is_file():
        raise UserError(f"no file {path}")
    lines = list(jsonsafe.read_lines(path))
    if not lines:
        raise UserError(f"{path}: no decision to import (the file is empty)")
    return _import_numbered(store, lines, f"import:{path.name}", actor)


def visible_decisions(store: Store, viewer: Identity | None = None, role: str = REVIEW_ROLE) -> list[dict]:
    """Every stored decision ``viewer`` may see in ``role``, oldest first, with ``dataset``,
    ``format`` and ``own_blind`` (the viewer's own decision in a blind round) added.

    ``viewer`` None: everything (the machine's operator). A viewer in the reviewer role sees, of
    the blind rounds, only their own decisions: a blind reviewer learns nothing of the others'.
    A viewer in the adjudicator role needs the right to see blind decisions (adjudicator or
    admin); in a round with blind adjudication an adjudicator who is not an admin sees the
    reviewers of unsettled fields as "reviewer 1", "reviewer 2" (no subject, no name).
    """
    db.ensure_schema(store)
    decisions = db.load_decisions(store)
    if decisions.empty:
        return []
    who = None if viewer is None else as_identity(viewer)
    if who is not None and role == ADJUDICATE_ROLE:
        who.require(SEE_BLIND)
    state = load_state(store)
    datasets = dict(zip(state.pages["page_id"], state.pages["dataset"]))
    formats = {(r["page_id"], int(r["round"])): r["format"] for r in state.outcomes.to_dict("records")}
    blind_own = who is not None and role == REVIEW_ROLE
    masked = who is not None and role == ADJUDICATE_ROLE and ADMIN not in who.roles
    aliases: dict[tuple[str, int, str], dict[str, str]] = {}
    out = []
    for d in decisions.to_dict("records"):
        unit = (d["page_id"], int(d["round"]), d["path"])
        if state.is_seeded(*unit[:2]):
            continue  # seeded gold: gold checks, never exported with the round's decisions
        dataset = datasets.get(d["page_id"])
        blind_round = state.reviewers_needed(dataset or "", unit[1]) > 1
        if blind_own and blind_round and who is not None and d["reviewer"] != who.key:
            continue
        d = dict(d, dataset=dataset, format=formats.get(unit[:2]), own_blind=blind_own and blind_round)
        if (masked and state.blind_adjudication(dataset or "", unit[1]) and not state.state(*unit).resolved
                and (d.get("role") or REVIEW_ROLE) == REVIEW_ROLE):
            names = aliases.setdefault(unit, {})
            d.update(reviewer=names.setdefault(d["reviewer"], f"reviewer {len(names) + 1}"), actor_subject=None,
                     actor_name=None)
        out.append(d)
    return out


def export_records(store: Store, viewer: Identity | None = None, role: str = REVIEW_ROLE) -> list[dict]:
    """Every decision ``viewer`` may see (``visible_decisions``), oldest first, in the import
    format plus provenance fields (the acting identity's ``subject``, ``provider`` and
    ``reviewer_name`` among them)."""
    out = []
    for d in visible_decisions(store, viewer, role):
        record = {"dataset": d["dataset"], "page": d["page_id"], "round": int(d["round"]),
                  "field": d["path"], "reviewer": d["reviewer"], "decision": LABELS.get(d["action"], d["action"])}
        value = None if isinstance(d["new_value"], float) and math.isnan(d["new_value"]) else d["new_value"]
        if d["action"] == EDIT or value is not None:  # a flag has no value (NaN in the frame): no NaN in JSON
            record["value"] = value
        record["note"] = d["note"]
        stamp = d["decided_at"]
        record["decided_at"] = stamp.isoformat(timespec="microseconds") if hasattr(stamp, "isoformat") else stamp
        record.update(role=d.get("role") or REVIEW_ROLE, shown_order=d.get("shown_order"),
                      source=d.get("source") or "page", conflict=bool(d.get("conflict")),
                      decision_id=int(d["decision_id"]), subject=d.get("actor_subject"),
                      provider=d.get("actor_provider"), reviewer_name=d.get("actor_name"))
        out.append(record)
    return out


def unsettled_blind_rounds(store: Store) -> list[tuple[str, int]]:
    """(dataset, round) of the blind rounds with a queued field not yet settled."""
    from .stats import unsettled_blind_rounds as unsettled

    return unsettled(load_state(store))


def blind_notice(rounds: list[tuple[str, int]]) -> str | None:
    """The first line of an export that holds decisions of unsettled blind rounds."""
    if not rounds:
        return None
    named = ", ".join(f"{d} round {r}" for d, r in rounds)
    return (f"this export contains blind decisions of unsettled rounds ({named}): keep it from their reviewers "
            "until the rounds are settled")


@dataclass
class ExportResult:
    written: int = 0
    withheld: dict[tuple[str, int], int] = field(default_factory=dict)  # unsettled blind round -> decisions left out
    included: list[tuple[str, int]] = field(default_factory=list)     # unsettled blind rounds exported anyway


def export_file(store: Store, out: str | Path, include_unsettled_blind: bool = False,
                actor: Identity | None = None) -> ExportResult:
    """Write the decisions as JSONL (every version, oldest first: the audit log); returns what was written.

    The decisions of blind rounds not yet settled name every reviewer's choice, so they are left
    out unless ``include_unsettled_blind``: then ``actor`` (None: the machine's operator) must be
    allowed to see blind decisions, and the export is recorded in the audit log with who made it.
    """
    from ..store import team as audit

    who = operator() if actor is None else as_identity(actor)
    unsettled = set(unsettled_blind_rounds(store))
    result = ExportResult()
    records = []
    for record in export_records(store):
        key = (str(record["dataset"]), int(record["round"]))
        if key in unsettled and not include_unsettled_blind:
            result.withheld[key] = result.withheld.get(key, 0) + 1
        else:
            if key in unsettled and key not in result.included:
                result.included.append(key)
            records.append(record)
    if result.included:
        who.require(SEE_BLIND)
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    result.written = len(records)
    if result.included:
        audit.add_event(store, "review export of unsettled blind rounds",
                        ", ".join(f"{d} round {r}" for d, r in sorted(result.included)),
                        {"file": target.name, "decisions": result.written}, who.columns())
    return result


__all__ = ["ImportResult", "ExportResult", "import_lines", "import_file", "export_records", "visible_decisions", "export_file",
           "ADJUDICATE_ROLE", "unsettled_blind_rounds", "blind_notice"]

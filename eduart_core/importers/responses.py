"""Model outputs produced elsewhere (another harness, a provider's batch console, a colleague's
script), one JSON object per line, stored and scored exactly like the answers of our own runs.

A line: ``{"dataset", "item_id", "model", "condition", "raw_response"}`` plus optional
``run_id``, ``input_tokens``, ``output_tokens``, ``motivation`` and ``repeat`` (the repeat index of the
answer: a whole number >= 0, default 0 = the main answer; see `parse_repeat`); other keys are ignored.

Why line by line: such files are long and assembled by hand or by other tools, so one bad line
must not cost the thousands of good ones. A bad line is skipped and named by its number (the
first ``MAX_NAMED`` of them; the rest are counted), the good ones are parsed and scored under
every profile by ``scoring.responses.add_responses_con`` (the same path as a live run) and committed in
batches of ``BATCH_LINES``. The file is streamed: memory stays bounded at a million lines, and
progress is reported after each batch and every ``PROGRESS_LINES`` lines read. A file over ``EDUART_MAX_FILE_MB`` is refused at
once, a text field over ``EDUART_MAX_TEXT_CHARS`` skips its line; both messages name the variable.
Each response's request key is a hash of its content, so importing the same file twice changes
nothing, an import stopped half-way keeps its committed batches and the next run adds the rest,
and a corrected line becomes the item's newer response. The runs it writes stay marked ``running``
until its last batch is in, so a killed import is named at the next command and on every page
(`importers.unfinished`) rather than passing for complete.

Models are global: a model key the store does not know is registered, with its display name and
family from ``--models FILE.csv`` (columns ``model, display_name, family[, provider,
api_model_id, kind, group]``) when given, else from the model registry (``providers/models.toml``,
``EDUART_MODELS``) when the key is there, else as itself with an unknown family. Importing again
with ``--models`` updates the display name and family of the models it lists. A row of kind
``human`` is a person (exam results gathered elsewhere, one line per person and item): it is
registered under a pseudonym in its ``group`` (``eduart_core.humans.imports``), and the file's
identifier and display name stay in the respondents table.
"""
from __future__ import annotations

import csv
import hashlib
import json
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..jsonsafe import has_lone_surrogate, read_lines
from ..limits import describe, int_limit
from ..scoring.responses import add_responses_con
from ..store import Store
from ..store.items import current_item_ids
from ..store.runs import (
    complete_if_running_con,
    create_run_con,
    current_items_con,
    ensure_model_con,
    list_runs,
    refresh_run_totals_con,
)
from ..store.scores import list_models
from ..store.team import add_event_con
from ..team import operator
from ..vocab import CONDITIONS, MODEL_KINDS
from . import unfinished

logger = logging.getLogger(__name__)

ORIGIN = unfinished.RESPONSES_ORIGIN
REQUIRED_FIELDS: tuple[str, ...] = ("dataset", "item_id", "model", "condition", "raw_response")
OPTIONAL_FIELDS: tuple[str, ...] = ("run_id", "input_tokens", "output_tokens", "motivation", "repeat")
#: Skipped lines named one by one; the rest are counted.
MAX_NAMED = 20
#: Lines committed per transaction (bounded memory; a kill keeps the committed batches).
BATCH_LINES = 50_000
#: A progress line every so many lines read.
PROGRESS_LINES = 100_000
#: Longest key (dataset, item, model, run id).
MAX_KEY_CHARS = 200
#: Token counts are stored as 32-bit integers.
MAX_TOKENS = 2**31 - 1


class LineProblem(ValueError):
    """Why one line cannot be imported, in a few words."""


@dataclass(frozen=True)
class ModelIdentity:
    """How an imported model key is shown: display name, family and where it runs."""

    display_name: str
    family: str | None = None
    provider: str | None = None
    api_model_id: str | None = None
    kind: str | None = None        # one of vocab.MODEL_KINDS; None: a model
    group: str | None = None       # a person's group (kind human): student, expert, ...


@dataclass
class ResponsesReport:
    """What an import of outside responses did."""

    path: str
    lines: int = 0                                             # non-blank lines read
    added: int = 0                                             # new responses stored and scored
    unchanged: int = 0                                         # already in the store
    runs: list[str] = field(default_factory=list)             # runs that received lines
    models: list[str] = field(default_factory=list)           # display names of their models
    unknown_family: list[str] = field(default_factory=list)   # model keys registered with no family
    skipped: list[tuple[str, str]] = field(default_factory=list)  # ("file:line", reason): the first MAX_NAMED
    n_skipped: int = 0                                         # every skipped line

    def skip(self, spot: str, reason: str) -> None:
        """Count a skipped line; name it while fewer than MAX_NAMED are named."""
        self.n_skipped += 1
        if len(self.skipped) < MAX_NAMED:
            self.skipped.append((spot, reason))


# ---------------------------------------------------------------- one line

def _key(value: Any, name: str) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and name == "item_id":
        value = str(int(value)) if float(value).is_integer() else str(value)
    if not isinstance(value, str) or not value.strip():
        raise LineProblem(f"{name} must be a non-empty string")
    value = value.strip()
    if len(value) > MAX_KEY_CHARS:
        raise LineProblem(f"{name} is longer than {MAX_KEY_CHARS} characters")
    if any(ord(ch) < 32 for ch in value):
        raise LineProblem(f"{name} contains control characters")
    return value


def _tokens(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LineProblem(f"{name} must be a whole number, got {type(value).__name__}")
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        raise LineProblem(f"{name} must be a whole number, got {value}")
    if not 0 <= value <= MAX_TOKENS:
        raise LineProblem(f"{name} must be between 0 and {MAX_TOKENS}, got {value:.0f}")
    return int(value)


def parse_repeat(value: Any) -> int:
    """The repeat index of a line: a whole number >= 0 (``1.0`` is 1); missing or null is 0.

    Why strict: a repeat index decides which answers are averaged as one examinee's repeats, so a
    string, a fraction or a negative number is a bad line rather than a guess.
    """
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LineProblem(f"repeat must be a whole number >= 0, got {type(value).__name__} {value!r}")
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        raise LineProblem(f"repeat must be a whole number >= 0, got {value}")
    if not 0 <= value <= MAX_TOKENS:
        raise LineProblem(f"repeat must be a whole number >= 0, got {value:.0f}")
    return int(value)


def _text(value: Any, name: str, required: bool, max_text: int) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise LineProblem(f"{name} must be a string, got {type(value).__name__}")
    if len(value) > max_text:
        raise LineProblem(f"{name} of {len(value):,} characters exceeds the limit of {describe('max_text_chars')}")
    return value


def parse_line(text: str, max_text: int | None = None) -> dict:
    """One line as a checked response dict (keys of REQUIRED_FIELDS and OPTIONAL_FIELDS); text
    fields up to ``max_text`` characters (default EDUART_MAX_TEXT_CHARS)."""
    max_text = int_limit("max_text_chars") if max_text is None else max_text
    try:
        value = json.loads(text)
    except RecursionError:
        raise LineProblem("JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise LineProblem(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(value, dict):
        raise LineProblem(f"expected a JSON object, got {type(value).__name__}")
    missing = [name for name in REQUIRED_FIELDS if name not in value]
    if missing:
        raise LineProblem(f"missing field(s) {', '.join(missing)}")
    line: dict[str, Any] = {name: _key(value[name], name) for name in ("dataset", "item_id", "model")}
    condition = value["condition"]
    if condition not in CONDITIONS:
        raise LineProblem(f"condition must be {' or '.join(CONDITIONS)}, got {condition!r}")
    line["condition"] = condition
    line["run_id"] = _key(value["run_id"], "run_id") if value.get("run_id") is not None else None
    line["raw_response"] = _text(value["raw_response"], "raw_response", True, max_text)
    line["motivation"] = _text(value.get("motivation"), "motivation", False, max_text)
    line["input_tokens"] = _tokens(value.get("input_tokens"), "input_tokens")
    line["output_tokens"] = _tokens(value.get("output_tokens"), "output_tokens")
    line["repeat"] = parse_repeat(value.get("repeat"))
    for name, field_value in line.items():
        if isinstance(field_value, str) and has_lone_surrogate(field_value):
            raise LineProblem(f"{name} contains an unpaired surrogate (not valid Unicode)")
    return line


def request_key(line: dict) -> str:
    """Content key of a response within its run: the same line is the same response. A repeat
    index above 0 joins the key (the same text at another repeat is another answer); repeat 0
    keeps the key it had before repeats existed, so re-importing an old file changes nothing."""
    content = {k: line[k] for k in ("raw_response", "motivation", "input_tokens", "output_tokens")}
    if line.get("repeat"):
        content["repeat"] = int(line["repeat"])
    digest = hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]
    return f"{line['item_id']}:import:{digest}"


def default_run_id(dataset: str, model: str, condition: str) -> str:
    return f"import:{dataset}:{model}:{condition}"


# ---------------------------------------------------------------- models

def read_model_table(path: Path | str) -> dict[str, ModelIdentity]:
    """``--models FILE.csv``: model key -> display name and family (and provider, api_model_id)."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UserError(f"{path}: cannot read the models table ({type(exc).__name__}: {exc})") from None
    if rows and "model" not in rows[0]:
        raise UserError(f"{path}: the models table needs a 'model' column (and display_name, family)")
    table = {}
    for row in rows:
        key = (row.get("model") or "").strip()
        if key:
            clean = {k: (row.get(k) or "").strip() or None for k in ("display_name", "family", "provider",
                                                                    "api_model_id", "kind", "group")}
            kind = clean["kind"].lower() if clean["kind"] else None
            if kind is not None and kind not in MODEL_KINDS:
                raise UserError(f"{path}: model {key}: unknown kind {clean['kind']!r}; use one of {', '.join(MODEL_KINDS)}")
            table[key] = ModelIdentity(clean["display_name"] or key, clean["family"], clean["provider"],
                                       clean["api_model_id"], kind, clean["group"])
    return table


def _registry_identity(model: str) -> ModelIdentity | None:
    from ..providers.registry import load_registry

    try:
        spec = load_registry().get(model)
    except UserError as exc:  # a broken EDUART_MODELS file must not block an import
        logger.warning("model registry not read: %s", exc)
        return None
    if spec is None:
        return None
    return ModelIdentity(spec.display_name, spec.family, spec.provider, spec.api_model_id)


# ---------------------------------------------------------------- the file

Progress = Callable[[ResponsesReport], None]


class _Batches:
    """Good lines waiting for the store, written one transaction per ``BATCH_LINES``."""

    def __init__(self, store: Store, path: Path, runs: dict[str, tuple[str, str, str]],
                 identities: dict[str, ModelIdentity], stored_models: set[str], report: ResponsesReport,
                 batch_lines: int, progress: Progress | None, aliases: dict[str, str] | None = None):
        self.store, self.path, self.runs, self.report = store, path, runs, report
        self.aliases = aliases or {}  # people: file identifier -> pseudonym (registered as respondents)
        self.progress = progress
        self.identities, self.stored_models = identities, stored_models
        self.batch_lines = max(1, batch_lines)
        self.rows: dict[str, list[dict]] = {}
        self.size = 0
        self.registered: set[str] = set()
        self.items: dict[str, dict] = {}
        self.memo: dict = {}
        self.touched: set[str] = set()
        self.started = False  # the audit event of the import's start is written (with its first answers)
        self.used: set[str] = set()

    def add(self, run_id: str, row: dict) -> None:
        self.rows.setdefault(run_id, []).append(row)
        self.size += 1
        if self.size >= self.batch_lines:
            self.flush()
            if self.progress is not None:
                self.progress(self.report)

    def _models_con(self, con, used: set[str]) -> None:
        """Register the models and people this batch uses that no earlier batch registered."""
        from ..humans.imports import register_con_all

        first = not self.registered  # the first batch also updates the listed models the store knows
        people = {key: p for key, p in self.aliases.items() if p in used and p not in self.registered}
        register_con_all(con, people, self.identities)
        self.registered |= set(people.values())
        wanted = used | (set(self.identities) & self.stored_models) if first else set(used)
        wanted -= set(self.aliases.values()) | set(self.aliases)
        for model in sorted(wanted - self.registered):
            self.registered.add(model)
            identity = self.identities.get(model)
            if identity is None and model in self.stored_models:
                continue  # known model, nothing to change
            identity = identity or _registry_identity(model)
            if identity is None:
                identity = ModelIdentity(model)
                self.report.unknown_family.append(model)
            ensure_model_con(con, model, identity.display_name, identity.family, identity.provider,
                             identity.api_model_id, kind=identity.kind)

    def flush(self) -> None:
        """Register models and runs, then add (parse + score) the responses: one transaction."""
        if not self.rows:
            return
        used = {self.runs[run_id][1] for run_id in self.rows}
        added_here = 0
        with self.store.transaction() as con:
            self._models_con(con, used)
            for run_id, rows in self.rows.items():
                dataset, model, condition = self.runs[run_id]
                # running until the file's last batch is in: a kill leaves it marked so (`finish`)
                create_run_con(con, run_id, dataset, model, condition, ORIGIN, status="running",
                               launch_id=unfinished.responses_launch_id(self.path), exist_ok=True)
                if dataset not in self.items:
                    self.items[dataset] = current_items_con(con, dataset)
                added = add_responses_con(con, run_id, rows, self.items[dataset], self.memo)
                if added:
                    refresh_run_totals_con(con, run_id, status="running")
                self.report.added += added
                added_here += added
            if added_here and not self.started:  # the import's start, so a kill is named later (`unfinished`)
                add_event_con(con, unfinished.RESPONSES_ACTION, unfinished.responses_launch_id(self.path),
                              unfinished.started(self.path, ""), operator().columns())
                self.started = True
        self.touched |= set(self.rows)
        self.used |= used
        self.rows.clear()
        self.size = 0

    def finish(self) -> None:
        """The last batch is in: every run this import left running is complete (totals recounted);
        a file imported again that adds nothing changes nothing."""
        if not self.touched:
            return
        with self.store.transaction() as con:
            for run_id in sorted(self.touched):
                complete_if_running_con(con, run_id)


def import_responses(store: Store, path: Path | str, models_csv: Path | str | None = None,
                     progress: Progress | None = None, batch_lines: int = BATCH_LINES) -> ResponsesReport:
    """Stream ``path`` line by line, check each, store the good ones in batches of ``batch_lines``
    (module doc). ``progress(report)`` is called after each batch but the last and every
    ``PROGRESS_LINES`` lines read (the CLI prints a line).
    """
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    if not store.exists():
        raise UserError(f"no store at {store.path}; import the items of the dataset first")
    from ..humans.imports import pseudonyms

    max_bytes, max_text = int_limit("max_file_bytes"), int_limit("max_text_chars")  # read once
    identities = read_model_table(models_csv) if models_csv else {}
    aliases = pseudonyms(store, identities)  # people (kind human): file identifier -> pseudonym
    report = ResponsesReport(str(path))
    known_items: dict[str, set[str]] = {}
    runs = {row["run_id"]: (row["dataset"], row["model"], row["condition"])
            for row in list_runs(store).to_dict("records")}
    stored_models = set(list_models(store)["model"])
    batches = _Batches(store, path, runs, identities, stored_models, report, batch_lines, progress, aliases)
    first_seen: dict[int, int] = {}  # hash of (run id, request key) -> line number: 1M lines in ~100 MB
    for number, raw in read_lines(path, max_bytes):
        report.lines += 1
        if progress is not None and report.lines % PROGRESS_LINES == 0:
            progress(report)
        try:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise LineProblem("not UTF-8 text") from None
            line = parse_line(text, max_text)
            line["model"] = aliases.get(line["model"], line["model"])
            dataset = line["dataset"]
            if dataset not in known_items:
                known_items[dataset] = current_item_ids(store, dataset)
            if not known_items[dataset]:
                raise LineProblem(f"no dataset {dataset!r} with items in the store (import its items first)")
            if line["item_id"] not in known_items[dataset]:
                raise LineProblem(f"no item {line['item_id']} in dataset {dataset}")
            run_id = line["run_id"] or default_run_id(dataset, line["model"], line["condition"])
            identity = (dataset, line["model"], line["condition"])
            if runs.setdefault(run_id, identity) != identity:
                other = runs[run_id]
                raise LineProblem(f"run {run_id} is dataset {other[0]}, model {other[1]}, condition {other[2]}; "
                                  f"this line says {dataset}, {line['model']}, {line['condition']}")
            key = request_key(line)
            seen = hash((run_id, key))
            if seen in first_seen:
                raise LineProblem(f"same response as line {first_seen[seen]}")
            first_seen[seen] = number
        except LineProblem as exc:
            report.skip(f"{path.name}:{number}", str(exc))
            continue
        batches.add(run_id, {
            "item_id": line["item_id"], "raw_text": line["raw_response"], "motivation": line["motivation"],
            "input_tokens": line["input_tokens"], "output_tokens": line["output_tokens"],
            "request_key": key, "repetition": line["repeat"], "error": None, "image_sent": None, "latency_s": None,
        })
    if not report.lines:
        raise UserError(f"{path}: no lines to import")
    batches.flush()
    batches.finish()
    report.runs = sorted(batches.touched)
    if batches.used:
        models = list_models(store)
        report.models = sorted(models.loc[models["model"].isin(batches.used), "display_name"])
        logger.info("%s: %d response(s) added in %d run(s)", path, report.added, len(report.runs))
    report.unchanged = report.lines - report.n_skipped - report.added
    return report

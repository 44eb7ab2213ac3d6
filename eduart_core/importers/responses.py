"""Model outputs produced elsewhere (another harness, a provider's batch console, a colleague's
script), one JSON object per line, stored and scored exactly like the answers of our own runs.

A line: ``{"dataset", "item_id", "model", "condition", "raw_response"}`` plus optional
``run_id``, ``input_tokens``, ``output_tokens``, ``motivation``; other keys are ignored.

Why line by line: such files are long and assembled by hand or by other tools, so one bad line
must not cost the thousands of good ones. Every line is checked before anything is written; a bad
line is skipped and named by its number, the good ones go into the store in one transaction,
each parsed and scored under every profile by ``store.runs.add_responses_con`` (the same path as
a live run). Each response's request key is a hash of its content, so importing the same file
twice changes nothing and a corrected line becomes the item's newer response.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..store import Store
from ..store.items import current_item_ids
from ..store.runs import (
    add_responses_con,
    create_run_con,
    current_items_con,
    ensure_model_con,
    list_runs,
    refresh_run_totals_con,
)
from ..store.scores import list_models
from ..vocab import CONDITIONS, MODEL_KINDS

logger = logging.getLogger(__name__)

ORIGIN = "import-responses"
REQUIRED_FIELDS: tuple[str, ...] = ("dataset", "item_id", "model", "condition", "raw_response")
OPTIONAL_FIELDS: tuple[str, ...] = ("run_id", "input_tokens", "output_tokens", "motivation")
#: Longest raw response or motivation accepted (characters); longer lines are skipped.
MAX_TEXT_CHARS = 1_000_000
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
    skipped: list[tuple[str, str]] = field(default_factory=list)  # ("file:line", reason)


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


def _text(value: Any, name: str, required: bool) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise LineProblem(f"{name} must be a string, got {type(value).__name__}")
    if len(value) > MAX_TEXT_CHARS:
        raise LineProblem(f"{name} is longer than {MAX_TEXT_CHARS} characters")
    return value


def parse_line(text: str) -> dict:
    """One line as a checked response dict (keys of REQUIRED_FIELDS and OPTIONAL_FIELDS)."""
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
    line = {name: _key(value[name], name) for name in ("dataset", "item_id", "model")}
    condition = value["condition"]
    if condition not in CONDITIONS:
        raise LineProblem(f"condition must be {' or '.join(CONDITIONS)}, got {condition!r}")
    line["condition"] = condition
    line["run_id"] = _key(value["run_id"], "run_id") if value.get("run_id") is not None else None
    line["raw_response"] = _text(value["raw_response"], "raw_response", required=True)
    line["motivation"] = _text(value.get("motivation"), "motivation", required=False)
    line["input_tokens"] = _tokens(value.get("input_tokens"), "input_tokens")
    line["output_tokens"] = _tokens(value.get("output_tokens"), "output_tokens")
    for name, field_value in line.items():
        if isinstance(field_value, str):
            try:
                field_value.encode("utf-8")
            except UnicodeEncodeError:
                raise LineProblem(f"{name} contains an unpaired surrogate (not valid Unicode)") from None
    return line


def request_key(line: dict) -> str:
    """Content key of a response within its run: the same line is the same response."""
    content = {k: line[k] for k in ("raw_response", "motivation", "input_tokens", "output_tokens")}
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

def _read_lines(path: Path):
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    for number, raw in enumerate(data.split(b"\n"), start=1):
        raw = raw.rstrip(b"\r")
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if raw.strip():
            yield number, raw


def import_responses(store: Store, path: Path | str, models_csv: Path | str | None = None) -> ResponsesReport:
    """Check every line of ``path``, then store the good ones in one transaction (module doc)."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    if not store.exists():
        raise UserError(f"no store at {store.path}; import the items of the dataset first")
    from ..humans.imports import pseudonyms

    identities = read_model_table(models_csv) if models_csv else {}
    aliases = pseudonyms(store, identities)  # people (kind human): file identifier -> pseudonym
    report = ResponsesReport(str(path))
    known_items: dict[str, set[str]] = {}
    runs = {row["run_id"]: (row["dataset"], row["model"], row["condition"])
            for row in list_runs(store).to_dict("records")}
    stored_models = set(list_models(store)["model"])
    rows_by_run: dict[str, list[dict]] = {}
    first_seen: dict[tuple[str, str], int] = {}
    for number, raw in _read_lines(path):
        report.lines += 1
        spot = f"{path.name}:{number}"
        try:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise LineProblem("not UTF-8 text") from None
            line = parse_line(text)
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
            if (run_id, key) in first_seen:
                raise LineProblem(f"same response as line {first_seen[(run_id, key)]}")
            first_seen[(run_id, key)] = number
        except LineProblem as exc:
            report.skipped.append((spot, str(exc)))
            continue
        rows_by_run.setdefault(run_id, []).append({
            "item_id": line["item_id"], "raw_text": line["raw_response"], "motivation": line["motivation"],
            "input_tokens": line["input_tokens"], "output_tokens": line["output_tokens"],
            "request_key": key, "repetition": 0, "error": None, "image_sent": None, "latency_s": None,
        })
    if not report.lines:
        raise UserError(f"{path}: no lines to import")
    if rows_by_run:
        _write(store, path, rows_by_run, runs, identities, stored_models, report, aliases)
    report.unchanged = report.lines - len(report.skipped) - report.added
    return report


def _write(store: Store, path: Path, rows_by_run: dict[str, list[dict]], runs: dict[str, tuple[str, str, str]],
           identities: dict[str, ModelIdentity], stored_models: set[str], report: ResponsesReport,
           aliases: dict[str, str] | None = None) -> None:
    """Register models, people and runs, then add (parse + score) the responses: one transaction."""
    from ..humans.imports import register_con_all

    used = {runs[run_id][1] for run_id in rows_by_run}
    aliases = {key: p for key, p in (aliases or {}).items() if p in used}
    with store.transaction() as con:
        register_con_all(con, aliases, identities)
        for model in sorted((used | (set(identities) & stored_models)) - set(aliases.values()) - set(aliases)):
            identity = identities.get(model)
            if identity is None and model in stored_models:
                continue  # known model, nothing to change
            identity = identity or _registry_identity(model)
            if identity is None:
                identity = ModelIdentity(model)
                report.unknown_family.append(model)
            ensure_model_con(con, model, identity.display_name, identity.family, identity.provider,
                             identity.api_model_id, kind=identity.kind)
        items = {}
        for run_id, rows in rows_by_run.items():
            dataset, model, condition = runs[run_id]
            create_run_con(con, run_id, dataset, model, condition, ORIGIN, status="completed",
                           launch_id=f"{ORIGIN}:{path.name}", exist_ok=True)
            if dataset not in items:
                items[dataset] = current_items_con(con, dataset)
            added = add_responses_con(con, run_id, rows, items[dataset])
            if added:
                refresh_run_totals_con(con, run_id)
            report.added += added
        report.runs = sorted(rows_by_run)
    models = list_models(store)
    report.models = sorted(models.loc[models["model"].isin(used), "display_name"])
    logger.info("%s: %d response(s) added in %d run(s)", path, report.added, len(report.runs))

"""lm-evaluation-harness and lmms-eval logged samples in: items, answers, and the harness's own scores.

Why: researchers who evaluate with those harnesses keep ``--log_samples`` output, one
``samples_<task>_<date>.jsonl`` (lm-eval) or ``<date>_samples_<task>.jsonl`` (lmms-eval) per task
beside a ``results_<date>.json`` / ``<date>_results.json``. Read as they are (plain JSON: neither
``torch`` nor a harness is needed), they become:

- the task -> a dataset named after it (or, with ``dataset``, one dataset holding every task, each
  item's ``task`` field and ``harness_task`` tag saying which, item ids ``<task>/<doc_id>``);
- each ``doc_id`` -> an item (``harness_items``: multiple choice where the options and the gold are
  found, else open text against the target);
- the model named in the results file (``model_name``, else ``pretrained=`` / ``model=`` of its
  ``model_args``; ``model`` overrides) -> a model, its answers one run scored by our formats;
- every numeric metric field of a sample (``acc``, ``exact_match``, ...; the names its ``metrics``
  list gives when it has one) -> a recorded score under ``harness:<metric>`` (with the filter, when
  not ``none``: ``harness:exact_match,strict-match``). A metric with a value outside [0, 1] (perplexity,
  BLEU on 0-100) is not a proportion: it is left out and said once per file.

A line that is not JSON, a sample without ``doc_id`` or without ``doc`` (and no ``input`` prompt),
or one that maps onto no item is skipped and named (``file:line``); the rest is imported. A file
is read in chunks of ``CHUNK_SAMPLES`` samples, each one transaction (bounded memory; a kill keeps
the chunks committed), and importing it again adds nothing (``answer_writer``), so running the
same command after an interruption adds exactly the rest.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..items import check_item
from ..jsonsafe import read_lines
from ..scoring.item_writes import store_prepared
from ..store import Store
from ..store.items import ImportReport, PreparedItem, prepare_items
from ..team import operator
from ..vocab import harness_profile_name, is_language_code
from .answer_writer import OutsideAnswer, OutsideModel, write_answers_con
from .harness_items import SampleItem, SampleProblem, doc_fingerprint, read_sample

ORIGIN = "import-harness"
LM_EVAL, LMMS_EVAL = "lm-eval", "lmms-eval"
_LM_EVAL_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.\-]+)\.jsonl$")
_LMMS_EVAL_NAME = re.compile(r"^(?P<date>.+?)_samples_(?P<task>.+)\.jsonl$")
#: Samples read, stored and scored per transaction (memory stays bounded whatever the file's size).
CHUNK_SAMPLES = 5_000
#: Fields of a logged sample that are not metrics.
BOOKKEEPING = frozenset({"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
                         "doc_hash", "prompt_hash", "target_hash", "input"})


@dataclass(frozen=True)
class SamplesFile:
    """A samples file and what its name and results file say."""

    path: Path
    task: str
    harness: str
    model: OutsideModel


@dataclass
class HarnessReport:
    """What an import of harness samples did."""

    files: int = 0
    samples: int = 0                                             # lines read
    items: ImportReport = field(default_factory=lambda: ImportReport(dataset=""))
    added: int = 0                                               # new responses
    unchanged: int = 0                                           # answers already stored
    recorded: int = 0                                            # harness scores written
    datasets: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # ("file:line", reason)
    warnings: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- files and results

def samples_files(paths: list[Path]) -> list[Path]:
    """The samples files among ``paths`` (folders searched for ``*samples_*.jsonl``)."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out.extend(sorted(p for p in path.rglob("*.jsonl") if "samples_" in p.name))
        elif path.is_file():
            out.append(path)
        else:
            raise UserError(f"{path}: no such file or folder")
    if not out:
        raise UserError(f"no samples_*.jsonl files in {', '.join(str(p) for p in paths)}")
    return out


def _results(path: Path, date: str | None) -> dict | None:
    """The results JSON next to a samples file: the one of the same date, else the only one."""
    named = [path.parent / f"results_{date}.json", path.parent / f"{date}_results.json"] if date else []
    found = [p for p in named if p.is_file()]
    if not found:
        found = sorted({*path.parent.glob("results_*.json"), *path.parent.glob("*_results.json")})
        if len(found) != 1:
            return None
    try:
        data = json.loads(found[0].read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{found[0].name}: not a readable results file ({type(exc).__name__})") from None
    return data if isinstance(data, dict) else None


def _model_args(text: Any) -> dict[str, str]:
    if isinstance(text, dict):
        return {str(k): str(v) for k, v in text.items()}
    if not isinstance(text, str):
        return {}
    return dict(part.split("=", 1) for part in text.split(",") if "=" in part)


def _model(results: dict | None, override: str | None) -> OutsideModel | None:
    config = (results or {}).get("config") or {}
    provider = config.get("model") if isinstance(config.get("model"), str) else None
    args = _model_args(config.get("model_args"))
    name = override or (results or {}).get("model_name") or args.get("pretrained") or args.get("model")
    if not isinstance(name, str) or not name.strip():
        return None
    return OutsideModel(name.strip(), provider, args.get("pretrained") or args.get("model"))


def describe_file(path: Path, model: str | None) -> SamplesFile:
    """Task, harness and model of a samples file, or UserError naming what is missing."""
    match = _LM_EVAL_NAME.match(path.name) or _LMMS_EVAL_NAME.match(path.name)
    if not match:
        raise UserError("not named like a samples file (samples_<task>_<date>.jsonl or <date>_samples_<task>.jsonl)")
    results = _results(path, match.group("date"))
    task = match.group("task")
    harness = LMMS_EVAL if match.re is _LMMS_EVAL_NAME or "lmms_eval_version" in (results or {}) else LM_EVAL
    found = _model(results, model)
    if found is None:
        raise UserError("no results file with the model's name beside it; pass --model NAME")
    return SamplesFile(path, task, harness, found)


# ---------------------------------------------------------------- one sample's metrics

def _metric_value(value: Any) -> float | None:
    if isinstance(value, dict):  # lmms-eval logs some metrics as a dict carrying the score
        value = value.get("score")
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def sample_metrics(sample: dict) -> dict[str, float]:
    """metric -> value of a sample's numeric metric fields."""
    names = sample.get("metrics")
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        names = [k for k in sample if k not in BOOKKEEPING]
    out = {}
    for name in names:
        value = _metric_value(sample.get(name))
        if value is not None:
            out[name] = value
    return out


# ---------------------------------------------------------------- a file

@dataclass
class _FileRead:
    """One chunk of a file: the items and answers of up to ``CHUNK_SAMPLES`` samples."""

    records: dict[str, dict] = field(default_factory=dict)
    answers: list[OutsideAnswer] = field(default_factory=list)
    where: dict[str, str] = field(default_factory=dict)      # item id -> its first line ("file:line")


def _samples(path: Path) -> Iterator[tuple[int, dict | None]]:
    """(line number, sample or None when the line is not a JSON object) of every line."""
    for number, raw in read_lines(path):
        try:
            sample = json.loads(raw)
        except (ValueError, RecursionError):
            sample = None
        yield number, sample if isinstance(sample, dict) else None


def _profile(metric: str, sample: dict) -> str:
    return harness_profile_name(metric, sample.get("filter") if isinstance(sample.get("filter"), str) else None)


def _not_proportions(info: SamplesFile, report: HarnessReport) -> set[str]:
    """The profiles with a value outside [0, 1] anywhere in the file (a first pass), each said once."""
    outside: dict[str, float] = {}
    for _, sample in _samples(info.path):
        for metric, value in sample_metrics(sample or {}).items():
            if not 0.0 <= value <= 1.0:
                outside.setdefault(_profile(metric, sample or {}), value)
    for profile, value in sorted(outside.items()):
        report.warnings.append(f"{info.path.name}: {profile} has a value outside [0, 1] ({value:g}): not a "
                               "proportion, not stored as a score")
    return set(outside)


def _item_of(sample: dict, info: SamplesFile, dataset: str | None, language: str) -> SampleItem:
    if sample.get("doc_id") is None or isinstance(sample["doc_id"], (dict, list, bool)):
        raise SampleProblem("no doc_id")
    item_id = f"{info.task}/{sample['doc_id']}" if dataset else str(sample["doc_id"])
    return read_sample(sample, item_id, info.task, info.harness, language)


def _read_file(info: SamplesFile, dataset: str | None, language: str, report: HarnessReport) -> Iterator[_FileRead]:
    """The file's samples as chunks of items and answers; bad lines go to ``report.skipped``."""
    left_out = _not_proportions(info, report)
    docs: dict[str, tuple[str, int]] = {}  # item id -> (hash of its record, first line)
    out = _FileRead()
    for number, sample in _samples(info.path):
        report.samples += 1
        spot = f"{info.path.name}:{number}"
        try:
            if sample is None:
                raise SampleProblem("not valid JSON (an object per line)")
            read = _item_of(sample, info, dataset, language)
            item_id = read.record["item_id"]
            fingerprint = hashlib.sha256(doc_fingerprint(read.record).encode()).hexdigest()
            if item_id in docs and docs[item_id][0] != fingerprint:
                raise SampleProblem(f"doc_id {sample['doc_id']} was logged at line {docs[item_id][1]} "
                                    "with another document")
            docs.setdefault(item_id, (fingerprint, number))
        except SampleProblem as exc:
            report.skipped.append((spot, str(exc)))
            continue
        recorded = {profile: value for profile, value in
                    ((_profile(metric, sample), value) for metric, value in sample_metrics(sample).items())
                    if profile not in left_out}
        out.records[item_id] = read.record
        out.where.setdefault(item_id, spot)
        out.answers.append(OutsideAnswer(item_id, read.raw_text, read.llm_answer, recorded,
                                         {"file": info.path.name, "line": number}))
        if len(out.answers) >= CHUNK_SAMPLES:
            yield out
            out = _FileRead()
    if out.answers:
        yield out


def _valid(prepared: list[PreparedItem], read: _FileRead, report: HarnessReport) -> list[PreparedItem]:
    """The items that pass validation; each other one is named at its first line, its answers dropped."""
    bad = {item.item_id: item.problems for item in prepared if item.problems}
    for item_id, problems in bad.items():
        report.skipped.append((read.where[item_id], "; ".join(problems)))
    read.answers = [answer for answer in read.answers if answer.item_id not in bad]
    return [item for item in prepared if item.item_id not in bad]


def import_harness(store: Store, paths: list[Path | str], dataset: str | None = None, language: str = "en",
                   model: str | None = None, actor: Any = None) -> HarnessReport:
    """Import samples files (module doc); ``actor``: the identity recorded (default: the operator)."""
    if not is_language_code(language):
        raise UserError(f"--language {language!r} is not an ISO 639-1 code (e.g. en, it, fr)")
    if dataset is not None and not dataset.strip():
        raise UserError("dataset name must not be empty")
    who = (actor or operator()).columns()
    report = HarnessReport()
    for path in samples_files([Path(p) for p in paths]):
        report.files += 1
        try:
            info = describe_file(path, model)
        except UserError as exc:
            report.skipped.append((path.name, str(exc)))
            continue
        for read in _read_file(info, dataset, language, report):
            _write(store, read, dataset or info.task, info, who, report)
    return report


def _write(store: Store, read: _FileRead, target: str, info: SamplesFile, who: dict, report: HarnessReport) -> None:
    """One chunk in one transaction: its valid items, then its answers and recorded scores."""
    with store.transaction() as con:
        prepared = _valid(prepare_items(con, store, list(read.records.values()), None, report.items,
                                        check=check_item), read, report)
        if not read.answers:
            return
        store_prepared(con, prepared, target, ORIGIN, report.items, keep_invalid=False)
        written = write_answers_con(con, target, info.model, ORIGIN, read.answers, who, str(info.path),
                                    recorded_by=info.harness)
    report.added += written.added
    report.unchanged += written.unchanged
    report.recorded += written.recorded
    report.datasets = sorted({*report.datasets, target})
    report.models = sorted({*report.models, info.model.key})
    report.profiles = sorted({*report.profiles, *(p for a in read.answers for p in a.recorded)})

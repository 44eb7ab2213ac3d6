"""Inspect AI logs read with Inspect's own reader, as plain samples the studio can map.

Why the only module that imports ``inspect_ai``: Inspect is an optional dependency (about 320 MB)
that only ``import-inspect`` needs; the rest of the studio must import and run without it. Its
reader (``inspect_ai.log``) knows every log format Inspect has written (``.eval`` zip archives and
``.json`` files) and refuses the ones it cannot read, so we never parse its files ourselves.

Samples of an ``.eval`` archive are streamed in chunks (``read_eval_log_samples_by_id``): a few hundred
in memory however long the log.
Each becomes an `InspectSample` holding only plain values: the input text and images (attachments
resolved to ``data:`` URIs), choices, target, metadata, the answer text, token counts and each
scorer's value turned into a number by Inspect's own rule (``value_to_float``: C=1, I=0, P=0.5,
N=0, yes/no, numbers).
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError

#: File endings Inspect writes its logs with.
LOG_SUFFIXES = (".eval", ".json")
INSTALL_HINT = "import-inspect reads Inspect AI logs with Inspect's own reader: pip install inspect-ai"


class LogProblem(ValueError):
    """A log file Inspect's reader refuses (cut archive, newer format, not a log): one line."""


@dataclass(frozen=True)
class LogHeader:
    """What a log says about its evaluation: the task, the eval id (one run) and the model."""

    path: Path
    task: str
    eval_id: str
    model: str        # as Inspect names it: provider/name
    status: str


@dataclass
class InspectSample:
    """One sample at one epoch, plain values only."""

    sample_id: str
    epoch: int
    text: str
    images: list[str]                     # data: URIs (or whatever the log holds when not embedded)
    choices: list[str] | None
    target: list[str]
    metadata: dict
    completion: str | None
    error: str | None
    input_tokens: int | None = None
    output_tokens: int | None = None
    scores: dict[str, float | None] = field(default_factory=dict)   # scorer -> value as a number
    answers: dict[str, str | None] = field(default_factory=dict)    # scorer -> the answer it read


def require_inspect() -> Any:
    """``inspect_ai.log``, or the one-line install hint (a UserError)."""
    try:
        import inspect_ai.log as log
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    return log


def log_files(paths: list[Path | str]) -> tuple[list[Path], list[tuple[str, str]]]:
    """Log files given directly or found in folders (recursively, sorted); (files, skipped)."""
    files: list[Path] = []
    skipped: list[tuple[str, str]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in LOG_SUFFIXES)
        elif path.is_file():
            if path.suffix.lower() in LOG_SUFFIXES:
                files.append(path)
            else:
                skipped.append((str(path), f"not an Inspect log (expected {' or '.join(LOG_SUFFIXES)})"))
        else:
            skipped.append((str(path), "no such file or folder"))
    return list(dict.fromkeys(files)), skipped


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def read_header(path: Path) -> LogHeader:
    """The log's header through Inspect's reader, or LogProblem naming why it refuses the file."""
    log = require_inspect()
    try:
        header = log.read_eval_log(str(path), header_only=True)
    except Exception as exc:  # Inspect raises many kinds (zip, JSON, validation, version)
        raise LogProblem(f"Inspect's reader refuses the log: {_reason(exc)}") from None
    spec = header.eval
    return LogHeader(path, str(spec.task), str(spec.eval_id or spec.task_id or path.stem), str(spec.model),
                     str(header.status))


def _text_and_images(value: Any) -> tuple[str, list[str]]:
    """The text parts (joined by blank lines) and image sources of a sample's input."""
    if isinstance(value, str):
        return value, []
    texts: list[str] = []
    images: list[str] = []
    for message in value or []:
        if getattr(message, "role", "user") != "user":
            continue  # system prompts are the harness's, not the item's
        content = message.content
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content:
            kind = getattr(part, "type", None)
            if kind == "text":
                texts.append(part.text)
            elif kind == "image":
                images.append(str(part.image))
    return "\n\n".join(t for t in texts if t.strip()), images


def _number(value: Any, to_float: Any) -> float | None:
    if isinstance(value, (dict, list)):
        return None  # several values under one scorer: not one score
    try:
        number = float(to_float(value))
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _plain(value: Any) -> Any:
    """Metadata as JSON values (Inspect allows any Python value there)."""
    return json.loads(json.dumps(value, default=str))


#: Samples read per call of Inspect's reader (.eval): bounded memory, one pass over the archive's index.
CHUNK_SAMPLES = 500
#: Parts of a sample the mapping never reads (transcripts can be large): Inspect skips them.
UNUSED_FIELDS = {"events", "messages", "store"}


def _stored_samples(log: Any, path: Path) -> Iterator[Any]:
    """Inspect's samples of one log, ``CHUNK_SAMPLES`` at a time.

    Why not ``read_eval_log_samples``: it reopens the archive for every sample (quadratic in a
    100,000-sample log); ``read_eval_log_samples_by_id`` reads a chunk through one zip index. A
    ``.json`` log is one JSON document, which Inspect reads whole.
    """
    if path.suffix.lower() == ".json":
        yield from log.read_eval_log(str(path), resolve_attachments=True).samples or []
        return
    header = log.read_eval_log(str(path), header_only=True)
    ids = header.eval.dataset.sample_ids
    if ids is None:
        raise LogProblem("the log does not list its sample ids (Inspect rewrites it when read and written "
                         "whole: inspect log convert)")
    keys = [(sample_id, epoch) for sample_id in ids for epoch in range(1, (header.eval.config.epochs or 1) + 1)]
    for start in range(0, len(keys), CHUNK_SAMPLES):
        chunk = keys[start:start + CHUNK_SAMPLES]
        try:
            yield from log.read_eval_log_samples_by_id(str(path), chunk, resolve_attachments=True,
                                                       exclude_fields=UNUSED_FIELDS)
        except IndexError:  # a log cut short by an error holds fewer samples: read those it has
            for sample_id, epoch in chunk:
                try:
                    yield log.read_eval_log_sample(str(path), id=sample_id, epoch=epoch, resolve_attachments=True,
                                                   exclude_fields=UNUSED_FIELDS)
                except IndexError:
                    continue


def iter_samples(path: Path) -> Iterator[InspectSample]:
    """Every sample x epoch of the log, streamed; LogProblem when the reader stops part-way."""
    log = require_inspect()
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    try:
        for sample in _stored_samples(log, path):
            text, images = _text_and_images(sample.input)
            target = sample.target if isinstance(sample.target, list) else [sample.target]
            output = sample.output
            usage = output.usage if output is not None else None
            yield InspectSample(
                sample_id=str(sample.id), epoch=int(sample.epoch or 1), text=text, images=images,
                choices=[str(c) for c in sample.choices] if sample.choices else None,
                target=[str(t) for t in target], metadata=_plain(sample.metadata or {}),
                completion=output.completion if output is not None and output.choices else None,
                error=_reason(sample.error.message) if sample.error is not None else None,
                input_tokens=usage.input_tokens if usage is not None else None,
                output_tokens=usage.output_tokens if usage is not None else None,
                scores={name: _number(score.value, to_float) for name, score in (sample.scores or {}).items()},
                answers={name: score.answer for name, score in (sample.scores or {}).items()},
            )
    except LogProblem:
        raise
    except Exception as exc:  # a cut archive is found while streaming
        raise LogProblem(f"Inspect's reader stops part-way: {_reason(exc)}") from None

"""``import-inspect``: Inspect AI logs into the store, through the same path as every other answer.

What lands where (mapping rules in ``inspect_map``):
- each log is one run (id ``inspect:<eval id>``, origin ``import-inspect``) of its model (Inspect's
  ``provider/name`` is the model key; provider and name are kept) on a dataset named after the task
  (``--dataset`` overrides);
- each sample is an item of that dataset (its embedded image stored content-addressed, like every
  store image), each epoch a repeat of the answer (epoch 1 is repeat 0);
- each answer is stored and scored by our formats under strict and paper
  (``scoring.responses.add_responses_con``, the path of a live run), and each scorer's value is stored
  under the profile ``inspect:<scorer>`` (``store.harness_scores``), side by side.

Why streamed in batches: a log may hold 100,000 samples; they are read one at a time, written
``BATCH_SAMPLES`` per transaction, and only ids and small keys stay in memory. A re-import adds
nothing (request keys are ``<sample>:inspect:<epoch>`` within the run; an item with the same
content is unchanged). Samples that cannot map, and files Inspect's reader refuses or stops
reading part-way, are named (file and sample) and skipped; everything else is imported.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError
from ..items import check_item
from ..scoring.item_writes import store_prepared
from ..scoring.responses import add_responses_con
from ..store import Store
from ..store.harness_scores import replace_scores_con
from ..store.items import ImportReport, add_images, prepare_items
from ..store.recorded import register_recorded_profiles_con, response_ids_by_key_con
from ..store.runs import complete_if_running_con, create_run_con, ensure_model_con, refresh_run_totals_con
from ..store.team import add_event_con
from ..team import operator
from ..vocab import DEFAULT_CONDITION, inspect_profile_name, is_language_code
from . import unfinished
from .inspect_logs import InspectSample, LogHeader, LogProblem, iter_samples, log_files, read_header
from .inspect_map import SampleProblem, answer_text, decode_image, item_record
from .tables import RowProblem, verify_image

logger = logging.getLogger(__name__)

ORIGIN = unfinished.INSPECT_ORIGIN
#: Samples (x epochs) written per transaction.
BATCH_SAMPLES = 2_000
#: Skipped samples named one by one; the rest are counted.
MAX_NAMED = 50


@dataclass
class InspectReport:
    """What an import of Inspect logs did."""

    files: int = 0
    samples: int = 0                       # sample x epoch entries read
    items: set[tuple[str, str]] = field(default_factory=set)  # (dataset, item id) mapped
    items_added: int = 0
    items_updated: int = 0
    images_added: int = 0
    responses_added: int = 0
    scores_stored: int = 0
    runs: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    profiles: set[str] = field(default_factory=set)
    unusable_scores: dict[str, int] = field(default_factory=dict)  # scorer -> values that are not one number
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (file[: sample S epoch E], reason)
    n_skipped: int = 0

    def skip(self, spot: str, reason: str) -> None:
        self.n_skipped += 1
        if len(self.skipped) < MAX_NAMED:
            self.skipped.append((spot, reason))


Progress = Callable[[InspectReport], None]


def _split_model(model: str) -> tuple[str | None, str]:
    provider, _, name = model.partition("/")
    return (provider, name) if name else (None, model)


class _LogWriter:
    """One log's samples, written ``batch`` at a time (items, images, answers, Inspect's scores)."""

    def __init__(self, store: Store, header: LogHeader, dataset: str, language: str, report: InspectReport,
                 batch: int, progress: Progress | None):
        self.store, self.header, self.dataset, self.language = store, header, dataset, language
        self.report, self.batch, self.progress = report, max(1, batch), progress
        self.run_id = f"inspect:{header.eval_id}"
        self.launch_id = f"{ORIGIN}:{header.eval_id}"
        self.mapped: dict[str, str | None] = {}   # sample id -> None (an item) or why it cannot map
        self.records: list[dict] = []
        self.images: dict[str, bytes] = {}       # item id -> image bytes waiting for the store
        self.rows: list[dict] = []
        self.scores: dict[str, dict[str, float]] = {}  # request key -> scorer -> value
        self.memo: dict = {}
        self.started = False

    def add(self, sample: InspectSample) -> None:
        spot = f"{self.header.path.name}: sample {sample.sample_id} epoch {sample.epoch}"
        if sample.sample_id not in self.mapped:
            self.mapped[sample.sample_id] = self._item(sample)
        problem = self.mapped[sample.sample_id]
        if problem is None and sample.error is not None:
            problem = f"Inspect recorded an error instead of an answer: {sample.error}"
        if problem is None and sample.completion is None:
            problem = "it has no answer"
        if problem is not None:
            self.report.skip(spot, f"not imported: {problem}")
            return
        raw, justification = answer_text(sample.completion)
        key = f"{sample.sample_id}:inspect:{sample.epoch}"
        self.rows.append({"item_id": sample.sample_id, "raw_text": raw, "motivation": justification,
                          "input_tokens": sample.input_tokens, "output_tokens": sample.output_tokens,
                          "request_key": key, "repetition": sample.epoch - 1, "error": None, "image_sent": None,
                          "latency_s": None})
        self.scores[key] = {name: value for name, value in sample.scores.items() if value is not None}
        for name in sample.scores.keys() - self.scores[key].keys():
            self.report.unusable_scores[name] = self.report.unusable_scores.get(name, 0) + 1
        self.report.items.add((self.dataset, sample.sample_id))
        if len(self.rows) >= self.batch:
            self.flush()
            if self.progress is not None:
                self.progress(self.report)

    def _item(self, sample: InspectSample) -> str | None:
        """Map the sample's item (first epoch seen); None when it maps, else why not."""
        try:
            record = item_record(sample.sample_id, sample.text, sample.choices, sample.target, sample.metadata,
                                 len(sample.images), self.language, self.header.task)
            if sample.images:
                data = decode_image(sample.images[0])
                ext = verify_image(data)
                self.images[sample.sample_id] = data
                record["has_image"] = True
                record["image"] = f"inspect/{sample.sample_id}.{ext}"
        except (SampleProblem, RowProblem) as exc:
            return str(exc)
        self.records.append(record)
        return None

    def flush(self) -> None:
        """Write what is waiting in one transaction (images first: content-addressed, harmless alone)."""
        if not self.rows and not self.records:
            return
        hashes = {}
        if self.images:
            stored = add_images(self.store, [(data, f"{self.header.path.name}#{item_id}")
                                             for item_id, data in self.images.items()])
            for item_id, (image_hash, is_new) in zip(self.images, stored):
                hashes[item_id] = image_hash
                self.report.images_added += int(is_new)
        items = ImportReport(dataset=self.dataset)
        with self.store.transaction() as con:
            if self.records:
                prepared = prepare_items(con, self.store, self.records, None, items, image_hashes=hashes,
                                         check=check_item)
                store_prepared(con, prepared, self.dataset, ORIGIN, items, keep_invalid=False,
                               note=f"Inspect log {self.header.path.name}")
            provider, name = _split_model(self.header.model)
            display = ensure_model_con(con, self.header.model, self.header.model, None, provider, name)
            if display not in self.report.models:
                self.report.models.append(display)
            create_run_con(con, self.run_id, self.dataset, self.header.model, DEFAULT_CONDITION, ORIGIN,
                           launch_id=self.launch_id, status="running", exist_ok=True)
            current = _current_items_con(con, self.dataset, sorted({r["item_id"] for r in self.rows}))
            added = add_responses_con(con, self.run_id, self.rows, current, self.memo)
            ids = response_ids_by_key_con(con, self.run_id, list(self.scores))
            rows = [(ids[key], inspect_profile_name(scorer), current[key.split(":inspect:")[0]][0], value,
                     f"inspect/{scorer}")
                    for key, values in self.scores.items() if key in ids for scorer, value in values.items()]
            self.report.scores_stored += replace_scores_con(con, rows)
            register_recorded_profiles_con(con, self.dataset, {r[1] for r in rows}, "inspect")
            self.report.profiles |= {r[1] for r in rows}
            if added:
                refresh_run_totals_con(con, self.run_id, status="running")
            if not self.started:  # the import's start, so a kill is named later (``unfinished``)
                add_event_con(con, unfinished.INSPECT_ACTION, self.launch_id,
                              {**unfinished.started(self.header.path, self.dataset), "model": self.header.model},
                              operator().columns())
                self.started = True
        self.report.responses_added += added
        self.report.items_added += len(items.added)
        self.report.items_updated += len(items.updated)
        if self.run_id not in self.report.runs:
            self.report.runs.append(self.run_id)
        self.records, self.images, self.rows, self.scores = [], {}, [], {}

    def finish(self) -> None:
        self.flush()
        if self.started:
            with self.store.transaction() as con:
                complete_if_running_con(con, self.run_id)


def _current_items_con(con, dataset: str, item_ids: list[str]) -> dict[str, tuple[int, dict]]:
    """item id -> (current version, record) of the given items only (a batch, not the dataset)."""
    rows = con.execute("SELECT item_id, version, CAST(record AS TEXT) FROM items WHERE dataset = ? AND is_current "
                       "AND item_id = ANY(?)", [dataset, item_ids]).fetchall()
    return {str(item_id): (int(version), json.loads(record)) for item_id, version, record in rows}


def import_inspect(store: Store, paths: list[Path | str], dataset: str | None = None, language: str = "en",
                   progress: Progress | None = None, batch: int = BATCH_SAMPLES) -> InspectReport:
    """Import Inspect logs (files or folders of ``.eval`` / ``.json``); see the module doc."""
    if not is_language_code(language):
        raise UserError(f"--language {language!r} is not an ISO 639-1 code (e.g. en, it, fr)")
    if dataset is not None and not dataset.strip():
        raise UserError("dataset name must not be empty")
    files, skipped = log_files(paths)
    report = InspectReport()
    for spot, reason in skipped:
        report.skip(spot, reason)
    if not files and not skipped:
        raise UserError(f"no Inspect logs (.eval, .json) in {', '.join(str(p) for p in paths)}")
    for path in files:
        try:
            header = read_header(path)
        except LogProblem as exc:
            report.skip(str(path), str(exc))
            continue
        report.files += 1
        writer = _LogWriter(store, header, dataset or header.task, language, report, batch, progress)
        try:
            for sample in iter_samples(path):
                report.samples += 1
                writer.add(sample)
        except LogProblem as exc:
            report.skip(str(path), f"{exc} (the samples read before are imported)")
        writer.finish()
        logger.info("%s: %d sample(s) read", path, report.samples)
    return report

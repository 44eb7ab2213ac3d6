"""The answer files of the published layout: found, read, checked, and parsed and scored in worker processes.

Why worker processes: importing the published layout is CPU-bound in Python. Each answer file
costs a read, a JSON parse and check, the answer's lenient parse and its two scores, and all of
that is a pure function of the file and the items. ``answer_chunks`` therefore hands chunks of
files to a pool of worker processes and yields their rows in file order, while this process
only writes (``importers.records``' batches). The store ends up exactly as a single-process import
leaves it: the same rows in the same order, hence the same ids, and the same skipped list.
Small imports stay in this process, where starting workers would cost more than it saves; so do
open-text answers, whose scores need the store's embedding vectors (``store.runs.score_rows``).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import os
import pickle
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from .. import jsonsafe
from ..errors import UserError
from ..jsonsafe import BadInput
from ..store.runs import score_rows
from ..vocab import CONDITIONS

#: Files that may sit in the published answer folders and are not answers (formats doc section 2):
#: skipped without a word. Anything else that is not ``<item id>.json`` is listed as skipped.
BOOKKEEPING_SUFFIXES = (".log",)
BOOKKEEPING_FOLDERS = ("reproducibility",)
#: Answer files per job sent to a worker: small enough to keep every worker busy to the end and the
#: rows in flight to a few tens of MB, large enough that sending a job costs little beside it.
CHUNK_FILES = 2_000
#: Below this many answer files an import reads in this process (a worker takes about a second to start).
POOL_MIN_FILES = 10_000
#: Most worker processes an import starts by default.
MAX_WORKERS = 4

#: A folder's entries as (name, is a folder), in name order.
Listing = list[tuple[str, bool]]


def entries(folder: Path | str) -> list[os.DirEntry]:
    """The entries of a folder, sorted by name (one ``scandir``: no ``stat`` per file)."""
    with os.scandir(folder) as found:
        return sorted(found, key=lambda entry: entry.name)


def is_bookkeeping(name: str, is_dir: bool) -> bool:
    """Files and folders the published layout keeps next to the answers (not answers)."""
    if name.startswith(("_", ".")):
        return True
    if is_dir:
        return name in BOOKKEEPING_FOLDERS
    return name.lower().endswith(BOOKKEEPING_SUFFIXES)


def read_json_object(path: Path | str, skipped: list[tuple[str, str]], max_bytes: int | None = None,
                     max_text: int | None = None) -> tuple[dict, bytes] | None:
    """The checked JSON object in ``path`` and its bytes, or None with the reason in ``skipped``."""
    try:
        value, data = jsonsafe.read_json(path, max_bytes=max_bytes, max_text=max_text)
    except BadInput as exc:
        skipped.append((str(path), str(exc)))
        return None
    if not isinstance(value, dict):
        skipped.append((str(path), "not a JSON object"))
        return None
    return value, data


def answer_folders(answers_root: Path, skipped: list[tuple[str, str]]) -> list[tuple[str, str, Path]]:
    """(model_dir, condition, folder) of every answer folder; unknown condition folders are named."""
    folders: list[tuple[str, str, Path]] = []
    if not answers_root.is_dir():
        return folders
    for model_entry in entries(answers_root):
        if not model_entry.is_dir():
            continue
        found = {}
        for entry in entries(model_entry.path):
            if not entry.is_dir():
                continue
            if entry.name in CONDITIONS:
                found[entry.name] = Path(entry.path)
            elif not is_bookkeeping(entry.name, True):
                skipped.append((entry.path, f"unknown condition folder (expected {' or '.join(CONDITIONS)})"))
        folders += [(model_entry.name, condition, found[condition]) for condition in CONDITIONS if condition in found]
    return folders


def _float_or_none(value: Any) -> float | None:
    try:
        return None if value is None or isinstance(value, bool) else float(value)
    except (TypeError, ValueError, OverflowError):
        return None


def answer_row(item_id: str, data: dict, file_bytes: bytes) -> dict:
    """One published answer file as an add_responses row.

    The request key carries a hash of the file, so re-importing the same file is a no-op and a
    changed file becomes a newer response (the long frame always uses the latest). A token
    count that cannot be one (``1e30``, ``2^70``, negative) raises ``BadInput``: the caller skips
    the file and names it.
    """
    raw = data.get("raw_response")
    has_llm = "llm_answer" in data
    llm = data.get("llm_answer")
    if raw is not None and not isinstance(raw, str):
        raw = json.dumps(raw, ensure_ascii=False)
    if raw is None and has_llm and llm is not None:  # no raw text kept: rebuild what the model said
        raw = llm if isinstance(llm, str) else json.dumps({"Answers": llm}, ensure_ascii=False)
    motivation = data.get("motivation")
    return {
        "item_id": item_id, "raw_text": raw, "llm_answer": llm if has_llm else None, "has_llm_answer": has_llm,
        "motivation": motivation if isinstance(motivation, str) and motivation.strip() else None,
        "input_tokens": jsonsafe.count_value(data.get("input_tokens"), "input_tokens"),
        "output_tokens": jsonsafe.count_value(data.get("output_tokens"), "output_tokens"),
        "latency_s": _float_or_none(data.get("processing_time")),
        "error": None, "image_sent": None, "repetition": 0,
        "request_key": f"{item_id}:{hashlib.sha256(file_bytes).hexdigest()[:16]}",
    }


def listing(folder: Path | str) -> Listing:
    """A folder's entries as (name, is a folder), in name order."""
    return [(entry.name, entry.is_dir()) for entry in entries(folder)]


def folder_rows(folder: str, names: Listing, item_ids: set[str] | frozenset[str], skipped: list[tuple[str, str]],
                max_bytes: int, max_text: int) -> Iterator[dict]:
    """The answer rows of ``names`` in one model_dir/condition folder, file by file; what is not an
    answer is named. Each file is opened and read once (its size checked on the open file)."""
    for name, is_dir in names:
        path = os.path.join(folder, name)
        if is_bookkeeping(name, is_dir):
            continue
        if is_dir:
            skipped.append((path, "a folder inside an answer folder (not read)"))
            continue
        stem, dot, suffix = name.rpartition(".")
        if not dot or suffix != "json":
            skipped.append((path, "not an answer file (<item id>.json)"))
            continue
        if stem not in item_ids:
            if stem.isdigit():
                skipped.append((path, f"no item {stem} in dataset/metadata"))
            else:
                skipped.append((path, "file name is not <item id>.json for an item in dataset/metadata"))
            continue
        loaded = read_json_object(path, skipped, max_bytes, max_text)
        if loaded is None:
            continue
        value, data = loaded
        try:
            yield answer_row(stem, value, data)
        except BadInput as exc:
            skipped.append((path, str(exc)))


# ---------------------------------------------------------------- the worker processes

#: One job: (model_dir, condition, folder, the names of a chunk of its entries).
Job = tuple[str, str, str, Listing]
#: One chunk of answers: (model_dir, condition, its rows, what was skipped in it).
Chunk = tuple[str, str, list[dict], list[tuple[str, str]]]

#: A worker's items, limits and scoring memo, loaded from the setup file its first job names.
_WORKER: dict[str, Any] = {}


def _ready() -> None:
    """A worker's first job: nothing, so that every worker starts (and imports) before the items are known."""


def _watch_parent(parent: int) -> None:
    """A worker's start: end this process when the importer that started it is gone (killed, say);
    the executor's queues would otherwise keep it waiting for work forever."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _read_and_score(setup: str, folder: str, names: Listing,
                    seen: frozenset[str]) -> tuple[list[dict], list[tuple[str, str]]]:
    """A worker's job: the rows of ``names``, each new one carrying its parse and scores (``scored``)."""
    if _WORKER.get("setup") != setup:
        with open(setup, "rb") as handle:
            items, item_ids, max_bytes, max_text = pickle.load(handle)
        _WORKER.update(setup=setup, items=items, item_ids=item_ids, limits=(max_bytes, max_text), memo={})
    items = _WORKER["items"]
    skipped: list[tuple[str, str]] = []
    rows = list(folder_rows(folder, names, _WORKER["item_ids"], skipped, *_WORKER["limits"]))
    todo = [row for row in rows if row["request_key"] not in seen and row["item_id"] in items]
    for row, scored in zip(todo, score_rows(todo, items, _WORKER["memo"])):
        if scored is not None:
            row["scored"] = scored
            del row["llm_answer"], row["has_llm_answer"]  # scored already: the writer needs neither (less to send)
    return rows, skipped


def default_workers() -> int:
    """One worker per core this process may use, at most ``MAX_WORKERS``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


def answer_jobs(folders: list[tuple[str, str, Path]], chunk_files: int = CHUNK_FILES) -> list[Job]:
    """The answer folders cut into chunks of at most ``chunk_files`` entries, in folder and name order."""
    jobs = []
    for model_dir, condition, folder in folders:
        names = listing(folder)
        jobs += [(model_dir, condition, str(folder), names[start:start + chunk_files])
                 for start in range(0, max(len(names), 1), chunk_files)]
    return jobs


class AnswerPool:
    """Worker processes that read, parse and score answer files (started early, so that they import
    while the items are written). Use as a context manager; ``open_pool`` decides whether one pays."""

    def __init__(self, workers: int):
        self.workers = workers
        self.folder = tempfile.TemporaryDirectory(prefix="eduart-import-")
        self.executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=_watch_parent, initargs=(os.getpid(),))
        for _ in range(workers):  # the executor starts one process per waiting job
            self.executor.submit(_ready)

    def __enter__(self) -> AnswerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)
        self.folder.cleanup()

    def chunks(self, jobs: list[Job], item_ids: set[str], items: dict[str, tuple[int, dict]], max_bytes: int,
               max_text: int, seen_for: Callable[[str, str], set[str]]) -> Iterator[Chunk]:
        """``answer_chunks`` through the workers, at most two jobs per worker in flight."""
        setup = os.path.join(self.folder.name, "setup.pickle")
        needed = {item_id: items[item_id] for item_id in item_ids if item_id in items}
        with open(setup, "wb") as handle:
            pickle.dump((needed, frozenset(item_ids), max_bytes, max_text), handle, protocol=pickle.HIGHEST_PROTOCOL)
        pending: deque[tuple[str, str, Future]] = deque()
        stored: tuple[tuple[str, str], set[str]] | None = None  # one folder's stored keys at a time
        for model_dir, condition, folder, names in jobs:
            if stored is None or stored[0] != (model_dir, condition):
                stored = ((model_dir, condition), seen_for(model_dir, condition))
            stems = {name.rpartition(".")[0] for name, _ in names}
            seen = frozenset(key for key in stored[1] if key.rpartition(":")[0] in stems)
            pending.append((model_dir, condition, self.executor.submit(_read_and_score, setup, folder, names, seen)))
            if len(pending) >= 2 * self.workers:
                yield _finished(pending.popleft())
        while pending:
            yield _finished(pending.popleft())


def open_pool(jobs: list[Job], workers: int | None = None) -> AnswerPool | contextlib.nullcontext:
    """An ``AnswerPool`` of ``workers`` processes, or a context holding None (the files are read here).

    Without ``workers`` the pool has ``default_workers()`` processes, and only for jobs of at least
    ``POOL_MIN_FILES`` entries; ``workers=1`` reads here; more is a pool of that size whatever the jobs.
    """
    if workers is None:
        small = sum(len(names) for *_, names in jobs) < POOL_MIN_FILES
        workers = 1 if small else default_workers()
    return AnswerPool(workers) if workers > 1 else contextlib.nullcontext()


def answer_chunks(jobs: list[Job], item_ids: set[str], items: dict[str, tuple[int, dict]], max_bytes: int,
                  max_text: int, seen_for: Callable[[str, str], set[str]],
                  pool: AnswerPool | None = None) -> Iterator[Chunk]:
    """The answer rows of every job, chunk by chunk in file order: files named after one of
    ``item_ids`` are answers; ``items`` are the dataset's current items, which score them.

    Through a ``pool`` the files are read, parsed and scored in its worker processes;
    ``seen_for(model_dir, condition)`` names the request keys already stored, which a worker reads
    but does not score again. Rows read here carry no scores: the writer scores them.
    """
    if pool is not None:
        yield from pool.chunks(jobs, item_ids, items, max_bytes, max_text, seen_for)
        return
    for model_dir, condition, folder, names in jobs:
        skipped: list[tuple[str, str]] = []
        rows = list(folder_rows(folder, names, item_ids, skipped, max_bytes, max_text))
        yield model_dir, condition, rows, skipped


def _finished(job: tuple[str, str, Future]) -> Chunk:
    model_dir, condition, future = job
    try:
        rows, skipped = future.result()
    except BrokenProcessPool:
        raise UserError("a worker process reading the answer files stopped unexpectedly; the batches already "
                        "committed are kept: run the import again to add the rest (or use --workers 1)") from None
    return model_dir, condition, rows, skipped

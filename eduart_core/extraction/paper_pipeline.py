"""Extract the questions of exam papers (PDF) with two extractors, then compare them by number.

Why on top of the folder pipeline: each question of a paper becomes one extraction page
(``<paper>/q<NN>``, its image the paper page where it starts), so comparison, the review studio,
decisions and promotion are the room's own. What a paper adds happens before that: pages are
read one at a time and stored (page image, text layer, embedded images as candidates), each
extractor is asked once per paper page through the same journaled runner, and its page replies
are joined into questions by number, with the answer key joined the same way. What one side
lacks is never dropped: a question only one extractor found is compared against an empty record
(every field queued) and named in the paper's notes, as are keys and questions without partner.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError
from ..store import Store
from ..vocab import BENCHMARK_KIND
from .merge import DEFAULT_IGNORABLE
from .paper_join import join_replies, parse_page_reply
from .pipeline import ExtractionSummary, load_prompt_pair, request_key, resolve_spec

__all__ = ["PaperSummary", "find_papers", "is_paper_input", "paper_schema", "read_papers", "run_paper_extraction"]


@dataclass
class PaperSummary(ExtractionSummary):
    papers: int = 0
    questions: int = 0
    problems: list[str] = field(default_factory=list)   # bad input: one line each
    notes: list[str] = field(default_factory=list)      # for review: one line each


def is_paper_input(path: Path) -> bool:
    """A PDF file, or a folder holding PDF files (else the folder of screenshots)."""
    path = Path(path)
    if path.suffix.lower() == ".pdf":
        return True  # also when it does not exist: find_papers says so in the words of a paper
    if path.is_file():
        return not path.suffix
    return path.is_dir() and any(p.suffix.lower() == ".pdf" for p in path.iterdir() if p.is_file())


def find_papers(path: Path) -> list[Path]:
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise UserError(f"--input {path}: no such file")
    return sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() == ".pdf")


def paper_schema() -> dict:
    """The JSON schema of one page's reply: the questions on it and a printed key, if any."""
    question = {"type": "object",
                "properties": {"number": {"type": "integer"}, "type": {"type": "string"},
                               "language": {"type": "string"},
                               "question_title": {"type": ["string", "null"]},
                               "instructions": {"type": ["string", "null"]},
                               "question_text": {"type": ["string", "null"]},
                               "choices": {"type": ["array", "null"], "items": {"type": "object"}},
                               "answers": {"type": "array", "items": {"type": "object"}},
                               "image": {"type": ["string", "null"]},
                               "region": {"type": ["array", "null"], "items": {"type": "number"}}},
                "required": ["number", "type", "question_text", "choices"]}
    return {"type": "object",
            "properties": {"questions": {"type": "array", "items": question},
                           "answer_key": {"type": "array", "items": {
                               "type": "object", "properties": {"number": {"type": "integer"},
                                                                "key": {"type": "string"}}}}},
            "required": ["questions"]}


def load_paper_prompts(prompts_dir: Path | None = None) -> tuple[str, str, str]:
    """The exam paper extraction's prompts and their hash (`pipeline.load_prompt_pair`)."""
    return load_prompt_pair(prompts_dir, "extraction_paper_system.md", "extraction_paper_user.md", paper_schema())


def render_paper_user(template: str, values: dict) -> str:
    names = "|".join(values)
    return re.sub(r"\{(" + names + r")\}", lambda m: str(values[m.group(1)]), template)


@dataclass
class _Page:
    paper: str
    page_no: int
    pages: int
    image_hash: str
    text: str | None
    candidates: dict[str, str]   # label -> image hash


MIMES = {".png": "image/png", ".jpg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
         ".bmp": "image/bmp", ".tif": "image/tiff"}
BATCH_PAGES = 8  # pages stored per transaction (and the most held in memory at once)


def read_papers(store: Store, papers: list[Path], summary: PaperSummary, say) -> list[_Page]:
    """Read and store every page, a few at a time; bad papers and images are named, the rest read."""
    from ..store import papers as paper_db
    from .paper_read import read_pages

    out: list[_Page] = []

    def flush(path: Path, batch: list, read: list[_Page]) -> None:
        stored = paper_db.save_pages(store, [{"paper": p.paper, "page_no": p.page_no, "source": path.name,
                                              "image": p.image, "page_text": p.text, "width_pt": p.width_pt,
                                              "height_pt": p.height_pt,
                                              "images": [{"label": c.label, "data": c.data, "bbox": c.bbox}
                                                         for c in p.images]} for p in batch])
        for page, saved in zip(batch, stored):
            read.append(_Page(page.paper, page.page_no, 0, saved["image_hash"], page.text, saved["candidates"]))
            say(f"  read {path.name} page {page.page_no}: {len(saved['candidates'])} image(s)")
        batch.clear()

    for path in papers:
        read: list[_Page] = []
        batch: list = []
        try:
            for page in read_pages(path):
                summary.problems += [f"{path.name} {p}" for p in page.problems]
                if page.text is None:
                    summary.problems.append(f"{path.name} page {page.page_no}: no text layer (a scan?); "
                                            "the extractors get the page image only")
                batch.append(page)
                if len(batch) >= BATCH_PAGES:
                    flush(path, batch, read)
            flush(path, batch, read)
        except UserError as exc:
            summary.problems.append(str(exc))
            continue
        for page in read:
            page.pages = len(read)
        out += read
        summary.papers += 1
    return out


def run_paper_extraction(store: Store, input_path: Path, extractors: dict[str, str], *, round: int = 1,
                         dataset: str = "extracted", key_file: Path | None = None, concurrency: int = 4,
                         rpm: float | None = None, retry=None, ignorable=DEFAULT_IGNORABLE,
                         prompts_dir: Path | None = None,
                         progress: Callable[[str], None] | None = None) -> PaperSummary:
    """Read every paper, ask both extractors once per page, join questions and keys by number,
    store every extraction and compare (agreed questions are promoted at once)."""
    from ..providers.base import ProviderRequest, RequestImage
    from ..providers.registry import make_provider
    from ..runner.journal import Journal
    from ..runner.pool import Job, run_jobs
    from ..store import papers as paper_db
    from ..store.items import image_path
    from ..store.runs import ensure_dataset
    from .answer_key import read_key_file
    from .paper_units import compare_paper

    say = progress or (lambda _: None)
    if sorted(extractors) != ["A", "B"]:
        raise UserError("give exactly two extractors, A=... and B=...")
    if round < 1:
        raise UserError("--round must be 1 or more")
    system, template, prompt_hash = load_paper_prompts(prompts_dir)
    papers = find_papers(input_path)
    if not papers:
        raise UserError(f"--input {input_path}: no PDF files found")
    file_key = read_key_file(key_file) if key_file else None
    specs = {label: resolve_spec(text) for label, text in extractors.items()}
    providers = {label: make_provider(spec) for label, spec in specs.items()}
    ensure_dataset(store, dataset, dataset, BENCHMARK_KIND)

    summary = PaperSummary()
    pages = read_papers(store, papers, summary, say)
    summary.pages = len(pages)
    schema = paper_schema()
    jobs = []
    for page in pages:
        for label, spec in specs.items():
            text = (page.text or "") + "\0" + ",".join(f"{k}={v}" for k, v in sorted(page.candidates.items()))
            key = request_key(round, label, spec.key, prompt_hash, page.image_hash, text)
            jobs.append(Job(key, payload={"page": page, "label": label, "spec": spec},
                            meta={"page_id": f"{page.paper}/p{page.page_no}", "round": round, "extractor": label,
                                  "model": spec.key, "prompt_hash": prompt_hash}))

    def call(job: Job) -> dict:
        page, spec = job.payload["page"], job.payload["spec"]
        user = render_paper_user(template, {"paper": page.paper, "page_no": page.page_no, "pages": page.pages,
                                            "page_text": page.text or "(this page has no text layer)",
                                            "labels": ", ".join(page.candidates) or "none"})
        files = {label: image_path(store, h) for label, h in page.candidates.items()} if spec.accepts_images else {}
        images = [RequestImage(f"Image {label}:", file.read_bytes(), MIMES.get(file.suffix.lower(), "image/jpeg"))
                  for label, file in files.items()]
        request = ProviderRequest(system=system, user_text=user,
                                  image=image_path(store, page.image_hash).read_bytes() if spec.accepts_images else None,
                                  image_mime="image/jpeg" if spec.accepts_images else None, json_schema=schema,
                                  temperature=spec.temperature if spec.temperature is not None else 0.0,
                                  max_output_tokens=spec.max_output_tokens or 8192, seed=spec.seed, images=images)
        reply = providers[job.payload["label"]].complete(request)
        return {"raw_text": reply.text, "input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens,
                "finish_reason": reply.finish_reason}

    journal_path = store.runs_dir / f"extract-papers-round{round}.jsonl"
    journal = Journal(journal_path)
    summary.jobs, summary.journal = len(jobs), str(journal_path)
    say(f"extract: {len(pages)} paper pages x 2 extractors, round {round}, journal {journal_path}")
    try:
        pool = run_jobs(jobs, call, journal, concurrency=concurrency, rpm=rpm, retry=retry, retry_errors=True,
                        progress=lambda r, rec: say(f"  {rec.get('page_id')} {rec.get('extractor')}: {rec['status']}"))
        latest = journal.latest()
    finally:
        journal.close()
    if pool.journal_error:
        raise UserError(f"{pool.journal_error}; extraction stopped: free space and run the same command again")
    summary.asked, summary.skipped, summary.cancelled = pool.ok + pool.errors, pool.skipped, pool.cancelled
    if summary.cancelled:
        return summary

    by_paper: dict[str, list[_Page]] = {}
    for page in pages:
        by_paper.setdefault(page.paper, []).append(page)
    entries = {(j.payload["page"].paper, j.payload["page"].page_no, j.meta["extractor"]): latest.get(j.request_key)
               for j in jobs}
    for paper, paper_pages in by_paper.items():
        replies: dict[str, list[tuple[int, dict, str | None]]] = {"A": [], "B": []}
        failures: list[str] = []
        for page in paper_pages:
            for label in ("A", "B"):
                entry = entries.get((paper, page.page_no, label)) or {}
                if entry.get("status") == "ok":
                    reply, error = parse_page_reply(entry.get("raw_text"))
                else:
                    reply, error = None, entry.get("error") or "request failed"
                if reply is None:
                    summary.errors += 1
                    failures.append(f"extractor {label} failed on page {page.page_no}: {error}")
                    continue
                summary.ok += 1
                replies[label].append((page.page_no, reply, entry.get("raw_text")))
        candidates = {k: v for page in paper_pages for k, v in page.candidates.items()}
        joined = {label: join_replies([(n, r) for n, r, _ in replies[label]], candidates) for label in ("A", "B")}
        result = compare_paper(store, paper, paper_pages, joined, replies, round=round, dataset=dataset,
                               specs=specs, prompt_hash=prompt_hash, file_key=file_key, ignorable=ignorable)
        notes = result.notes + [{"kind": "page_failed", "ref": f.split(": ")[0], "detail": f} for f in failures]
        paper_db.save_notes(store, paper, round, notes)
        summary.notes += [f"{paper}: {n['detail']}" for n in notes]
        summary.questions += result.questions
        summary.invalid += result.invalid
        for status, count in result.statuses.items():
            summary.statuses[status] = summary.statuses.get(status, 0) + count
    return summary

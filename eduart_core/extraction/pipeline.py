"""Extract item records from a folder of exam pages with two extractors, then compare them.

Why this shape: extraction is a long, paid, flaky job, like a model run, so it goes through the
same runner (concurrent, retried, rate-limited, journaled, resumable: a job whose key is in the
journal with status ok is never asked again). The store is only touched in short transactions
before and after the pool, never while requests are in flight. Every outcome is kept: a transport
error, an unparseable reply or a record that fails validation is stored as such, never dropped.

Input layout: ``DIR/<exercise>/<question>.png`` (also .jpg/.jpeg/.webp), optionally with
``<question>.html`` (reduced to its visible text) or ``<question>.txt`` next to it.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from ..errors import UserError
from ..store import Store
from ..store.core import PROJECT_ROOT
from ..vocab import BENCHMARK_KIND, BENCHMARK_LANGUAGES, EDUART_FORMATS
from .merge import DEFAULT_IGNORABLE

PROMPTS_DIR = PROJECT_ROOT / "prompts"
IMAGE_SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}
EXTRACTORS = ("A", "B")


@dataclass
class PageInput:
    page_id: str
    exercise: str
    question: str
    image: Path
    mime: str
    text: str | None
    text_source: str | None


@dataclass
class ExtractionSummary:
    pages: int = 0
    jobs: int = 0
    asked: int = 0
    skipped: int = 0
    ok: int = 0
    errors: int = 0
    invalid: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    cancelled: bool = False
    journal: str = ""


# --- input -------------------------------------------------------------------------------------

class _VisibleText(HTMLParser):
    """Collects text a reader would see: no scripts, styles or head; block tags break lines."""

    _HIDDEN = {"script", "style", "head", "title", "noscript", "template", "svg"}
    _BLOCKS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article",
               "ul", "ol", "table", "label", "option", "header", "footer", "form", "fieldset"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in self._HIDDEN:
            self._hidden += 1
        elif tag in self._BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in self._HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif tag in self._BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self._hidden:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """The visible text of an HTML page: one line per block, spaces collapsed, blank lines dropped."""
    parser = _VisibleText()
    parser.feed(html)
    parser.close()
    lines = [re.sub(r"[ \t\r\f\v\u00a0]+", " ", line).strip() for line in "".join(parser.parts).split("\n")]
    return "\n".join(line for line in lines if line)


def discover_pages(root: Path) -> list[PageInput]:
    """Every ``<exercise>/<question>.<image>`` under ``root``, sorted, with its page text."""
    root = Path(root)
    if not root.is_dir():
        raise UserError(f"--input {root}: not a folder")
    pages = []
    for image in sorted(p for p in root.glob("*/*") if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()):
        text, source = None, None
        html, txt = image.with_suffix(".html"), image.with_suffix(".txt")
        if html.exists():
            text, source = html_to_text(html.read_text(encoding="utf-8", errors="replace")), "html"
        elif txt.exists():
            text, source = txt.read_text(encoding="utf-8", errors="replace").strip(), "txt"
        exercise, question = image.parent.name, image.stem
        pages.append(PageInput(f"{exercise}/{question}", exercise, question, image,
                               IMAGE_SUFFIXES[image.suffix.lower()], text, source))
    if not pages:
        raise UserError(f"--input {root}: no pages found (expected <exercise>/<question>.png)")
    return pages


# --- prompts and replies -----------------------------------------------------------------------

def extraction_schema() -> dict:
    """One JSON schema for the item record of all 7 formats (the item record fields)."""
    text_or_null = {"type": ["string", "null"]}
    choice = {"anyOf": [
        {"type": "string"},
        {"type": "object", "properties": {"id": {"type": "string"}, "text": {"type": "string"},
                                          "options": {"type": "array", "items": {"type": "string"}}},
         "required": ["id"]}]}
    answer = {"type": "object", "properties": {k: {"type": "string"} for k in
                                               ("id", "description", "text", "error", "correct")}}

    return {"type": "object",
            "properties": {"type": {"type": "string", "enum": list(EDUART_FORMATS)},
                           "language": {"type": "string", "enum": list(BENCHMARK_LANGUAGES)},
                           "question_title": text_or_null, "instructions": text_or_null,
                           "question_text": text_or_null,
                           "choices": {"type": ["array", "null"], "items": choice},
                           "answers": {"type": "array", "items": answer},
                           "has_image": {"type": "boolean"}},
            "required": ["type", "language", "question_text", "choices", "answers"]}


def load_prompt_pair(prompts_dir: Path | None, system_name: str, user_name: str,
                     schema: dict) -> tuple[str, str, str]:
    """(system, user template, prompt hash) of two prompt files; the hash covers both templates and
    the reply schema, so a run records exactly what it asked."""
    folder = Path(prompts_dir) if prompts_dir else PROMPTS_DIR
    try:
        system = (folder / system_name).read_text(encoding="utf-8")
        user = (folder / user_name).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise UserError(f"extraction prompt missing: {exc.filename}") from None
    digest = hashlib.sha256("\0".join([system, user, json.dumps(schema, sort_keys=True)]).encode()).hexdigest()[:16]
    return system, user, digest


def load_prompts(prompts_dir: Path | None = None) -> tuple[str, str, str]:
    """The screenshot extraction's prompts and their hash (`load_prompt_pair`)."""
    return load_prompt_pair(prompts_dir, "extraction_system.md", "extraction_user.md", extraction_schema())


def render_user(template: str, page: PageInput) -> str:
    values = {"page_id": page.page_id, "exercise": page.exercise, "question": page.question,
              "page_text": page.text or "(no page text available)"}
    return re.sub(r"\{(page_id|exercise|question|page_text)\}", lambda m: values[m.group(1)], template)


_FENCE_RE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def parse_record(text: str | None) -> tuple[dict | None, str | None]:
    """The JSON object in a reply (bare, fenced, or with prose around it); (None, error) if none."""
    if not text or not text.strip():
        return None, "empty reply"
    candidates = [m.group(1) for m in _FENCE_RE.finditer(text)] + [text]
    for candidate in candidates:
        start, end = candidate.find("{"), candidate.rfind("}")
        if start < 0 or end <= start:
            continue
        try:
            value = json.loads(candidate[start:end + 1])
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            if isinstance(value.get("item"), dict):
                value = value["item"]
            return value, None
    return None, "reply holds no JSON object"


def parse_extractor(text: str) -> tuple[str, str]:
    """``A=PROVIDER:MODEL`` (or ``A=REGISTRY_KEY``) -> ("A", "PROVIDER:MODEL")."""
    label, sep, spec = text.partition("=")
    label = label.strip().upper()
    if not sep or label not in EXTRACTORS or not spec.strip():
        raise UserError(f"--extractor {text!r}: expected A=PROVIDER:MODEL or B=PROVIDER:MODEL")
    return label, spec.strip()


def resolve_spec(spec_text: str):
    """A registry key, or PROVIDER:MODEL (``openai_compatible:MODEL@BASE_URL`` for a local
    server) for a model not in the registry."""
    from ..providers.registry import PROVIDERS, adhoc_spec, get_spec, load_registry

    registry = load_registry()
    if spec_text in registry:
        return registry[spec_text]
    provider, sep, model_id = spec_text.partition(":")
    if sep and provider in PROVIDERS:
        model_id, at, base_url = model_id.partition("@")
        return adhoc_spec(provider, model_id, base_url=base_url if at else None)
    return get_spec(spec_text, registry)  # raises a one-line UserError listing the known keys


# --- the run -----------------------------------------------------------------------------------

def request_key(round: int, label: str, spec_key: str, prompt_hash: str, image_hash: str, text: str | None) -> str:
    raw = json.dumps([round, label, spec_key, prompt_hash, image_hash, text or ""])
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def run_extraction(store: Store, input_dir: Path, extractors: dict[str, str], *, round: int = 1,
                   dataset: str = "extracted", concurrency: int = 4, rpm: float | None = None,
                   retry=None, ignorable=DEFAULT_IGNORABLE, prompts_dir: Path | None = None,
                   providers: dict | None = None, progress: Callable[[str], None] | None = None) -> ExtractionSummary:
    """Run both extractors over every page, store every extraction, compare and queue/promote.

    ``extractors`` maps A and B to ``PROVIDER:MODEL`` (or a registry key). ``providers`` lets a
    caller hand in ready adapters per label (the same interface); normally they are made from
    the registry. Re-running the same round resumes from the journal.
    """
    from ..items import check_item
    from ..providers.base import ProviderRequest
    from ..providers.registry import make_provider
    from ..runner.journal import Journal
    from ..runner.pool import Job, run_jobs
    from ..store import extraction as db
    from ..store.items import add_image
    from ..store.runs import ensure_dataset
    from .review import record_comparisons

    say = progress or (lambda _: None)
    if sorted(extractors) != list(EXTRACTORS):
        raise UserError("give exactly two extractors, A=... and B=...")
    if round < 1:
        raise UserError("--round must be 1 or more")
    system, template, prompt_hash = load_prompts(prompts_dir)
    pages = discover_pages(input_dir)
    specs = {label: resolve_spec(text) for label, text in extractors.items()}
    if providers is None:
        providers = {label: make_provider(spec) for label, spec in specs.items()}

    ensure_dataset(store, dataset, dataset, BENCHMARK_KIND)
    page_rows, image_hashes = [], {}
    for page in pages:
        image_hashes[page.page_id] = add_image(store, page.image.read_bytes(), page.image.name)
        page_rows.append({"page_id": page.page_id, "dataset": dataset,
                          "item_id": f"{page.exercise}-{page.question}", "exercise": page.exercise,
                          "question": page.question, "image_hash": image_hashes[page.page_id],
                          "page_text": page.text, "text_source": page.text_source})
    db.save_pages(store, page_rows)

    schema = extraction_schema()
    jobs = []
    for page in pages:
        for label, spec in specs.items():
            key = request_key(round, label, spec.key, prompt_hash, image_hashes[page.page_id], page.text)
            jobs.append(Job(key, payload={"page": page, "label": label, "spec": spec},
                            meta={"page_id": page.page_id, "round": round, "extractor": label,
                                  "model": spec.key, "prompt_hash": prompt_hash}))

    def call(job: Job) -> dict:
        page, spec = job.payload["page"], job.payload["spec"]
        request = ProviderRequest(system=system, user_text=render_user(template, page),
                                  image=page.image.read_bytes() if spec.accepts_images else None,
                                  image_mime=page.mime if spec.accepts_images else None, json_schema=schema,
                                  temperature=spec.temperature if spec.temperature is not None else 0.0,
                                  max_output_tokens=spec.max_output_tokens or 4096, seed=spec.seed)
        reply = providers[job.payload["label"]].complete(request)
        return {"raw_text": reply.text, "input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens,
                "finish_reason": reply.finish_reason}

    journal_path = store.runs_dir / f"extract-round{round}.jsonl"
    journal = Journal(journal_path)
    summary = ExtractionSummary(pages=len(pages), jobs=len(jobs), journal=str(journal_path))
    say(f"extract: {len(pages)} pages x 2 extractors, round {round}, journal {journal_path}")
    try:
        pool = run_jobs(jobs, call, journal, concurrency=concurrency, rpm=rpm, retry=retry, retry_errors=True,
                        progress=lambda r, rec: say(f"  {rec.get('page_id')} {rec.get('extractor')}: {rec['status']}"))
        latest = journal.latest()
    finally:
        journal.close()
    if pool.journal_error:  # a full disk: what was journaled stays; the same command resumes
        raise UserError(f"{pool.journal_error}; extraction stopped: free space and run the same command again")
    summary.asked, summary.skipped, summary.cancelled = pool.ok + pool.errors, pool.skipped, pool.cancelled

    rows, records = [], {}
    for job in jobs:
        entry = latest.get(job.request_key)
        if entry is None:
            continue  # not asked (cancelled): the next run asks it
        page_id, label = job.meta["page_id"], job.meta["extractor"]
        row = {"page_id": page_id, "round": round, "extractor": label, "model": job.meta["model"],
               "prompt_hash": prompt_hash, "raw_response": entry.get("raw_text"),
               "input_tokens": entry.get("input_tokens"), "output_tokens": entry.get("output_tokens")}
        if entry.get("status") != "ok":
            row["error"] = entry.get("error") or "request failed"
            summary.errors += 1
        else:
            record, error = parse_record(entry.get("raw_text"))
            row["record"], row["error"] = record, error
            if record is None:
                summary.errors += 1
            else:
                summary.ok += 1
                problems = check_item(record, require_id=False)[1]  # the id comes at promotion
                row["validation_errors"] = list(problems) or None
                summary.invalid += bool(problems)
                records[(page_id, label)] = record
        rows.append(row)
    db.save_extractions(store, rows)

    if not summary.cancelled:
        pairs = [(page.page_id, records.get((page.page_id, "A")), records.get((page.page_id, "B")))
                 for page in pages]
        for result in record_comparisons(store, round, pairs, ignorable).values():
            summary.statuses[result.status] = summary.statuses.get(result.status, 0) + 1
    return summary

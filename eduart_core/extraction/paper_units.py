"""A paper's joined questions become extraction pages, one per question number, and are compared.

Why one page per question: the review studio, its decisions and promotion all work on one record
per extraction page; a question is what becomes an item. Its page image is the paper page where
the question starts, its text the text layer of every page it runs over. The two extractors'
questions are aligned by number; a number only one of them found is compared against an empty
record, so every field of it waits for a reviewer instead of being promoted or dropped silently.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..store import Store

ONLY = {"A": "only_a", "B": "only_b"}


@dataclass
class PaperResult:
    questions: int = 0
    invalid: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    notes: list[dict] = field(default_factory=list)


def page_id_of(paper: str, number: int) -> str:
    return f"{paper}/q{number:02d}"


def compare_paper(store: Store, paper: str, pages: list, joined: dict, replies: dict, *, round: int, dataset: str,
                  specs: dict, prompt_hash: str, file_key: dict[int, str] | None, ignorable) -> PaperResult:
    """Store the questions of one paper as extraction pages and extractions, then compare them.

    ``joined``: label -> (questions by number, printed key, problems) from ``join_replies``;
    ``replies``: label -> [(page number, reply, raw text)]; ``file_key``: a key given as a file,
    which then stands for both extractors' reading of the printed key.
    """
    from ..items import check_item
    from ..store import extraction as db
    from ..store import papers as paper_db
    from .answer_key import join_key
    from .review import record_comparisons

    result = PaperResult()
    seen: set[tuple[str, str]] = set()

    def note(kind: str, ref, detail: str) -> None:
        if (kind, str(ref)) not in seen:
            seen.add((kind, str(ref)))
            result.notes.append({"kind": kind, "ref": ref, "detail": detail})

    questions, key_notes = {}, {}
    for label in ("A", "B"):
        found, printed, problems = joined[label]
        for problem in problems:
            note("attach", f"{label}:{problem}", f"extractor {label}: {problem}")
        records = {n: q.record for n, q in found.items()}
        key_notes[label] = {(e["kind"], str(e["ref"])): e for e in join_key(records, file_key or printed)}
        questions[label] = found
    for kind_ref in sorted(set(key_notes["A"]) | set(key_notes["B"])):  # a gap of one side names that side
        sides = [label for label in ("A", "B") if kind_ref in key_notes[label]]
        entry = key_notes[sides[0]][kind_ref]
        note(entry["kind"], entry["ref"], entry["detail"] if len(sides) == 2 else f"extractor {sides[0]}: {entry['detail']}")
    page_of = {p.page_no: p for p in pages}
    raw_of = {label: {n: raw for n, _, raw in replies[label]} for label in ("A", "B")}
    numbers = sorted(set(questions["A"]) | set(questions["B"]))
    unit_rows, extraction_rows, placement_rows, pairs = [], [], [], []
    for number in numbers:
        page_id = page_id_of(paper, number)
        sides = {label: questions[label].get(number) for label in ("A", "B")}
        on = sorted({p for q in sides.values() if q for p in q.pages})
        texts = [page_of[p].text for p in on if page_of[p].text]
        unit_rows.append({"page_id": page_id, "dataset": dataset, "item_id": f"{paper}-q{number:02d}",
                          "exercise": paper, "question": f"q{number:02d}", "image_hash": page_of[on[0]].image_hash,
                          "page_text": "\n\n".join(texts) or None, "text_source": "pdf" if texts else "pdf-no-text"})
        for label, question in sides.items():
            if question is None:
                other = "B" if label == "A" else "A"
                note(ONLY[other], number, f"question {number} was found only by extractor {other}")
                continue
            problems = check_item(question.record, require_id=False)[1]
            result.invalid += bool(problems)
            extraction_rows.append({"page_id": page_id, "round": round, "extractor": label,
                                    "model": specs[label].key, "prompt_hash": prompt_hash,
                                    "raw_response": "\n\n".join(raw_of[label][p] or "" for p in question.pages),
                                    "record": question.record, "error": None,
                                    "validation_errors": list(problems) or None})
            placement_rows.append({"page_id": page_id, "round": round, "extractor": label, "paper": paper,
                                   "number": number, "pages": question.pages, "region": question.region or None,
                                   "image_label": question.image_label})
        a, b = (sides[label].record if sides[label] else None for label in ("A", "B"))
        pairs.append((page_id, a if a is not None else {}, b if b is not None else {}))
    db.save_pages(store, unit_rows)
    db.save_extractions(store, extraction_rows)
    paper_db.save_questions(store, placement_rows)
    for outcome in record_comparisons(store, round, pairs, ignorable).values():
        result.statuses[outcome.status] = result.statuses.get(outcome.status, 0) + 1
    result.questions = len(numbers)
    return result

"""A store whose every text field holds markdown and HTML that would load a remote resource if rendered.

Used by the browser test of text shown as text: item title, instructions, text, options, gold
answers and source; model display names and families; model answers and justifications; dataset
title; extraction records, extractor names, reviewer names and notes. The planted host is
203.0.113.9 (TEST-NET-3, never routable); nothing may ever request it.
"""
from __future__ import annotations

import json
from pathlib import Path

HOST = "203.0.113.9"
#: One payload per trick: a markdown image, an HTML image, a Streamlit colour directive, a link,
#: raw bold HTML and maths.
PAYLOAD = (f"![x](http://{HOST}/x.png) <img src=http://{HOST}/y.png> :red[redtext] "
           f"[link](http://{HOST}/l) <b>boldtag</b> $x^2$ <http://{HOST}/auto> http://{HOST}/bare "
           f"<script>fetch('http://{HOST}/js')</script> <svg><image href=\"http://{HOST}/svg.png\"/></svg>")
DATASET = "inj"
#: Model display names and families carrying markup (display names must be unique).
MODELS = {
    "inj-a": (f"Model A ![m](http://{HOST}/m.png)", f"Fam <img src=http://{HOST}/f.png>"),
    "inj-b": (f"Model B <img src=http://{HOST}/n.png> :red[x]", "Fam [f](http://203.0.113.9/f)"),
}


def _items() -> list[dict]:
    common = {"language": "en", "has_image": False, "image": None, "source": f"src {PAYLOAD}",
              "question_title": f"Title {PAYLOAD}", "instructions": f"Instructions {PAYLOAD}"}
    return [
        {**common, "item_id": "inj-0001", "type": "multiple_choice_radio", "question_text": f"Stem {PAYLOAD}",
         "choices": [{"id": "A", "text": f"Option A {PAYLOAD}"}, {"id": "B", "text": f"Option B {PAYLOAD}"}],
         "answers": [{"id": "A", "description": f"Option A {PAYLOAD}"}]},
        {**common, "item_id": "inj-0002", "type": "true_false", "question_text": f"Statements {PAYLOAD}",
         "choices": [{"id": "A", "text": f"Statement A {PAYLOAD}"}, {"id": "B", "text": f"Statement B {PAYLOAD}"}],
         "answers": [{"id": "A", "text": "True"}, {"id": "B", "text": "False"}]},
        {**common, "item_id": "inj-0003", "type": "completion_open", "question_text": f"Fill [A] in {PAYLOAD}",
         "choices": None, "answers": [{"id": "A", "description": f"gold {PAYLOAD}"}]},
        {**common, "item_id": "inj-0004", "type": "select_errors",
         "question_text": f"A passage with wrongword and {PAYLOAD}", "choices": None,
         "answers": [{"error": "wrongword", "correct": f"right {PAYLOAD}"}]},
    ]


def _answers(item: dict, right: bool) -> tuple[str, str]:
    """(raw response, justification) of a model, planted markup in both."""
    kind = item["type"]
    if kind == "multiple_choice_radio":
        answers = [{"id": "A" if right else "B", "text": PAYLOAD}]
    elif kind == "true_false":
        answers = [{"id": "A", "text": "TRUE"}, {"id": "B", "text": "TRUE" if not right else "FALSE"}]
    elif kind == "completion_open":
        answers = [{"id": "A", "text": item["answers"][0]["description"] if right else f"said {PAYLOAD}"}]
    else:
        answers = [{"id": "A", "text": "wrongword" if right else PAYLOAD}]
    reason = f"Because {PAYLOAD}"
    return json.dumps({"Answers": answers, "motivation": reason}), reason


def build_injection_store(path: Path) -> Path:
    """The store described above (no demo content, so every page shows planted text)."""
    from eduart_core.extraction import review
    from eduart_core.extraction.review import record_comparisons
    from eduart_core.scoring.item_writes import upsert_items
    from eduart_core.scoring.responses import add_responses
    from eduart_core.store import Store
    from eduart_core.store import extraction as db
    from eduart_core.store.runs import create_run, ensure_dataset, ensure_model, finish_run
    from eduart_core.team.identity import local
    from eduart_core.vocab import BENCHMARK_KIND, CONDITIONS

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    store = Store(path)
    ensure_dataset(store, DATASET, f"Dataset {PAYLOAD}", BENCHMARK_KIND)
    items = _items()
    upsert_items(store, items, dataset=DATASET, origin="test")
    for n, (key, (name, family)) in enumerate(MODELS.items()):
        ensure_model(store, key, name, family, "offline", key)
        for condition in CONDITIONS:
            run_id = f"{DATASET}:{key}:{condition}"
            create_run(store, run_id, DATASET, key, condition, "test")
            rows = []
            for i, item in enumerate(items):
                raw, reason = _answers(item, right=(i + n) % 2 == 0)
                rows.append({"item_id": item["item_id"], "raw_text": raw,
                             "motivation": reason if condition != CONDITIONS[0] else None})
            add_responses(store, run_id, rows)
            finish_run(store, run_id, "completed")
    # an extraction round whose two records disagree, a reviewer's flag with a note
    db.ensure_schema(store)
    page_id = "page-inj"
    db.save_pages(store, [{"page_id": page_id, "dataset": "inj-extraction", "item_id": "x0101", "exercise": "ex01",
                           "question": "q01", "image_hash": None, "page_text": f"page text {PAYLOAD}",
                           "text_source": "txt", "simulated": False}])
    record = {k: v for k, v in items[0].items() if k != "item_id"}
    other = {**record, "question_text": f"Other stem {PAYLOAD}"}
    db.save_extractions(store, [
        {"page_id": page_id, "round": 1, "extractor": side, "model": f"Extractor {side} {PAYLOAD}",
         "prompt_hash": "test", "raw_response": json.dumps(rec), "record": rec}
        for side, rec in (("A", record), ("B", other))])
    record_comparisons(store, 1, [(page_id, record, other)])
    # a name is at most 200 characters, so the payload's halves go to the names of the page's two reviewers
    half = PAYLOAD.index("<script>")
    for part in (PAYLOAD[:half], PAYLOAD[half:]):
        review.decide(store, page_id, 1, "question_text", "flag", local(f"Reviewer {part}"), note=f"Note {PAYLOAD}")
    return path

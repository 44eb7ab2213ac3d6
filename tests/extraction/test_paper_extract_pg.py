"""Exam papers in PDF on both backends: the paper tables, promotion with the attached images."""
from __future__ import annotations

import pg_kit

from eduart_core.store import extraction as db
from eduart_core.store import papers as paper_db
from eduart_core.store.items import get_item
from tests.extraction import paper_kit

backend, store = pg_kit.backend, pg_kit.store  # every test here runs on DuckDB and PostgreSQL


def test_paper_extraction_on_the_store(store, tmp_path, monkeypatch):
    from eduart_core.extraction.paper_pipeline import run_paper_extraction
    from tests.stubs import StubServer

    with StubServer(answer=paper_kit.stub_answer) as stub:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-paper")
        monkeypatch.setenv("OPENAI_BASE_URL", stub.url + "/v1")
        summary = run_paper_extraction(store, paper_kit.make_paper(tmp_path / "exam2024.pdf"),
                                       {"A": "openai:model-a", "B": "openai:model-b"}, dataset="papers")
    assert (summary.papers, summary.pages, summary.questions, summary.problems) == (1, 2, 6, [])
    assert summary.statuses == {"agreed": 4, "queued": 2}
    assert len(paper_db.load_images(store, "exam2024")) == 2
    assert len(paper_db.load_questions(store, round=1)) == 12
    assert db.load_outcomes(store, 1).set_index("page_id").loc["exam2024/q05", "merge_status"] == "queued"
    item = get_item(store, "papers", "exam2024-q02")
    assert item["image_hash"] == paper_db.load_images(store, "exam2024").set_index("label").loc["p1-1", "image_hash"]

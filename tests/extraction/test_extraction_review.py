"""Review decisions on a real store: audit log, conflicts, edit validation, promotion, stats."""
from __future__ import annotations

import copy

import pg_kit
import pytest

from eduart_core.errors import UserError
from eduart_core.extraction import review
from eduart_core.extraction.stats import discrepancy_table, round_status_table
from eduart_core.scoring.item_writes import upsert_items
from eduart_core.store import extraction as db
from eduart_core.store.items import get_item, item_history
from eduart_core.team.identity import local

backend, store = pg_kit.backend, pg_kit.store  # every test here runs on DuckDB and PostgreSQL

DATASET = "extracted"


def radio() -> dict:
    return {"type": "multiple_choice_radio", "language": "it", "question_title": "Il Rinascimento",
            "instructions": "Scegli la risposta corretta.",
            "question_text": "Chi dipinse la volta della cappella?",
            "choices": [{"id": "A", "text": "Un pittore veneto"}, {"id": "B", "text": "Un pittore toscano"},
                        {"id": "C", "text": "Nessuno dei due"}],
            "answers": [{"id": "B", "description": "Un pittore toscano"}],
            "has_image": False, "image": None}


def add_page(store, page_id: str = "ex01/q01") -> str:
    item_id = page_id.replace("/", "-")
    db.save_pages(store, [{"page_id": page_id, "dataset": DATASET, "item_id": item_id,
                           "exercise": page_id.split("/")[0], "question": page_id.split("/")[1]}])
    return item_id


def queued_pair() -> tuple[dict, dict]:
    a = radio()
    b = copy.deepcopy(a)
    b["question_text"] = "Chi dipinse la volta della Cappella?"              # case
    b["choices"][0]["text"] = "Un pittore venèto"                           # accents
    b["answers"] = [{"id": "A", "description": "Un pittore veneto"}]       # wrong key
    return a, b


def test_agreed_and_auto_merged_pages_are_promoted_without_review(store):
    item_id = add_page(store, "ex01/q01")
    result = review.record_comparison(store, "ex01/q01", 1, radio(), copy.deepcopy(radio()))
    assert result.status == "agreed"
    assert get_item(store, DATASET, item_id)["record"]["answers"] == radio()["answers"]
    add_page(store, "ex01/q02")
    b = radio()
    b["question_text"] = "Chi dipinse la volta della  cappella? "
    assert review.record_comparison(store, "ex01/q02", 1, radio(), b).status == "auto_merged"
    assert review.review_queue(store).empty


def test_every_decision_is_appended_and_last_field_promotes(store):
    item_id = add_page(store)
    a, b = queued_pair()
    assert review.record_comparison(store, "ex01/q01", 1, a, b).status == "queued"
    fields = review.page_fields(store, "ex01/q01", 1)
    assert set(fields["path"]) == {"question_text", "choices[A].text", "answers"}
    assert set(fields["state"]) == {"open"}

    r1 = review.decide(store, "ex01/q01", 1, "question_text", "accept_b", local("Anna"), based_on=None)
    assert not r1.page_resolved
    snapshot = db.load_decisions(store).to_dict("records")
    review.decide(store, "ex01/q01", 1, "question_text", "accept_a", local("Bruno"), based_on=r1.decision_id,
                  note="the screenshot has a small c")
    review.decide(store, "ex01/q01", 1, "choices[A].text", "accept_a", local("Anna"))
    last = review.decide(store, "ex01/q01", 1, "answers", "accept_a", local("Anna"))

    log = db.load_decisions(store, "ex01/q01")
    assert len(log) == 4
    assert log.to_dict("records")[:1] == snapshot  # earlier entries untouched
    second = log.iloc[1]
    assert (second["reviewer"], second["previous_value"], second["new_value"], second["note"]) == (
        "Bruno", "Chi dipinse la volta della Cappella?", "Chi dipinse la volta della cappella?",
        "the screenshot has a small c")
    assert log["decided_at"].notna().all()
    assert last.page_resolved and last.promoted_version == 1
    gold = get_item(store, DATASET, item_id)["record"]
    assert gold["question_text"] == a["question_text"] and gold["answers"] == a["answers"]
    assert review.review_queue(store).iloc[0]["status"] == "resolved"


def test_second_reviewer_on_stale_field_gets_conflict(store):
    add_page(store)
    review.record_comparison(store, "ex01/q01", 1, *queued_pair())
    seen = review.page_fields(store, "ex01/q01", 1).set_index("path").loc["answers", "decision_id"]
    assert seen is None
    review.decide(store, "ex01/q01", 1, "answers", "accept_a", local("Anna"), based_on=None)
    with pytest.raises(review.ReviewConflict) as info:
        review.decide(store, "ex01/q01", 1, "answers", "accept_b", local("Bruno"), based_on=None)
    assert "Anna" in str(info.value)
    log = db.load_decisions(store)
    assert list(log["reviewer"]) == ["Anna"]


def test_edit_that_breaks_the_item_is_rejected_and_nothing_saved(store):
    add_page(store)
    review.record_comparison(store, "ex01/q01", 1, *queued_pair())
    with pytest.raises(review.EditRejected):
        review.decide(store, "ex01/q01", 1, "answers", "edit", local("Anna"),
                      value=[{"id": "Z", "description": "nessuno"}])
    assert db.load_decisions(store).empty
    review.decide(store, "ex01/q01", 1, "choices[A].text", "edit", local("Anna"), value="Un pittore veneziano")
    assert review.working_record(store, "ex01/q01", 1)["choices"][0]["text"] == "Un pittore veneziano"


def test_flag_needs_note_and_keeps_page_open(store):
    add_page(store)
    review.record_comparison(store, "ex01/q01", 1, *queued_pair())
    with pytest.raises(UserError, match="a flag needs a note"):
        review.decide(store, "ex01/q01", 1, "answers", "flag", local("Anna"))
    review.decide(store, "ex01/q01", 1, "answers", "flag", local("Anna"), note="ask Carla: key unreadable")
    review.bulk_accept(store, local("Anna"), "case", side="A")
    review.bulk_accept(store, local("Anna"), "accents", side="A")
    queue = review.review_queue(store)
    assert queue.iloc[0]["status"] == "flagged"
    assert queue.iloc[0]["promoted_version"] is None
    # the colleague settles the flagged field on top of the flag: the page is promoted
    flag_id = review.page_fields(store, "ex01/q01", 1).set_index("path").loc["answers", "decision_id"]
    result = review.decide(store, "ex01/q01", 1, "answers", "accept_a", local("Carla"), based_on=int(flag_id))
    assert result.page_resolved and result.promoted_version == 1


def test_bulk_accept_across_queue_for_one_category(store):
    for pid in ("ex01/q01", "ex01/q02", "ex02/q01"):
        add_page(store, pid)
        review.record_comparison(store, pid, 1, *queued_pair())
    result = review.bulk_accept(store, local("Anna"), "accents", side="B")
    assert result.decided == 3 and not result.conflicts
    states = review.field_table(review.load_state(store, 1))
    accents = states[states["category"] == "accents"]
    assert set(accents["state"]) == {"resolved"}
    assert set(states[states["category"] != "accents"]["state"]) == {"open"}
    assert review.working_record(store, "ex02/q01", 1)["choices"][0]["text"] == "Un pittore venèto"
    one = review.bulk_accept(store, local("Anna"), "case", side="A", page_id="ex01/q02")
    assert one.decided == 1


def test_promotion_makes_new_version_and_rescores_responses(store):
    from eduart_core.scoring.responses import add_responses
    from eduart_core.store.runs import create_run, ensure_model

    item_id = add_page(store)
    old = radio() | {"item_id": item_id, "answers": [{"id": "A", "description": "Un pittore veneto"}]}
    upsert_items(store, [old], DATASET, origin="test")
    ensure_model(store, "sim-x", "Sim X", "sim", "offline", None, simulated=True)
    create_run(store, "r1", DATASET, "sim-x", "default", "simulated")
    add_responses(store, "r1", [{"item_id": item_id, "raw_text": '{"Answers":[{"id":"B"}]}'}])

    def score() -> float:
        from eduart_core.store.scores import load_responses
        return float(load_responses(store, DATASET, item_id).iloc[0]["strict_score"])

    assert score() == 0.0
    a, b = queued_pair()
    review.record_comparison(store, "ex01/q01", 1, a, b)
    for path in ("question_text", "choices[A].text", "answers"):
        result = review.decide(store, "ex01/q01", 1, path, "accept_a", local("Anna"))
    assert result.promoted_version == 2
    assert score() == 1.0
    history = item_history(store, DATASET, item_id)
    assert list(history["version"]) == [1, 2]


def test_round_statistics(store):
    for pid in ("ex01/q01", "ex01/q02", "ex02/q01"):
        add_page(store, pid)
    review.record_comparison(store, "ex01/q01", 1, *queued_pair())
    review.record_comparison(store, "ex01/q02", 1, radio(), radio())
    review.record_comparison(store, "ex02/q01", 1, radio(), None)
    a, b = queued_pair()
    b["answers"] = a["answers"]
    review.record_comparison(store, "ex01/q01", 2, a, b)
    review.record_comparison(store, "ex01/q02", 2, radio(), radio())
    status = round_status_table(db.load_outcomes(store)).set_index("round")
    assert status.loc[1, ["pages", "agreed", "queued", "failed"]].tolist() == [3, 1, 1, 1]
    assert status.loc[2, ["pages", "agreed", "queued"]].tolist() == [2, 1, 1]
    table = discrepancy_table(db.load_discrepancies(store))
    assert table.loc["content"].tolist() == [1, 0]
    assert table.loc["accents"].tolist() == [1, 1]
    assert table.loc["whitespace"].tolist() == [0, 0]
    by_field = discrepancy_table(db.load_discrepancies(store), by="field")
    assert by_field.loc["answers", "round 1"] == 1
    by_format = round_status_table(db.load_outcomes(store), by_format=True)
    assert set(by_format["format"]) == {"multiple_choice_radio"}


# --- extraction against the stub provider ----------------------------------------------------

def _pipeline_truth() -> dict[str, dict]:
    base = radio()
    accent = copy.deepcopy(base) | {"question_text": "Perché la volta della cappella è azzurra?"}
    tf = {"type": "true_false", "language": "it", "question_title": "Il Pantheon", "instructions": "Vero o falso?",
          "question_text": None, "choices": [{"id": "A", "text": "Ha una cupola."}, {"id": "B", "text": "È gotico."}],
          "answers": [{"id": "A", "text": "True"}, {"id": "B", "text": "False"}], "has_image": False}
    return {"ex01/q01": base, "ex01/q02": accent, "ex02/q01": tf, "ex02/q02": base}


@pytest.fixture
def pages_dir(tmp_path):
    from eduart_core.extraction.pages_render import render_page

    root = tmp_path / "pages"
    for page_id, record in _pipeline_truth().items():
        folder = root / page_id.split("/")[0]
        folder.mkdir(parents=True, exist_ok=True)
        stem = page_id.split("/")[1]
        (folder / f"{stem}.png").write_bytes(render_page(record))
        if page_id == "ex01/q01":
            (folder / f"{stem}.html").write_text(
                "<html><head><title>T</title><script>var secret = 1;</script></head>"
                "<body><h1>Il Rinascimento</h1><p>Chi dipinse la&nbsp;volta?</p><style>p{}</style></body></html>")
        else:
            (folder / f"{stem}.txt").write_text(record.get("question_text") or "statements")
    return root


def _answer(info) -> str:
    import json as _json
    import re as _re

    page_id = _re.search(r"Exam page (\S+)", info.user_text).group(1)
    record = copy.deepcopy(_pipeline_truth()[page_id])
    if info.model == "model-b":
        if page_id == "ex01/q02":
            record["question_text"] = record["question_text"].replace("Perché", "Perche'")
        if page_id == "ex02/q01":
            return "Sorry, I cannot read this page."
        if page_id == "ex02/q02":
            record["answers"] = [{"id": "A", "description": "x"}, {"id": "B", "description": "y"}]  # invalid radio
    return "```json\n" + _json.dumps(record, ensure_ascii=False) + "\n```"


def test_extract_stores_every_outcome_and_resumes(store, pages_dir, monkeypatch):
    from eduart_core.extraction.pipeline import run_extraction
    from eduart_core.runner.pool import RetryPolicy
    from tests.stubs import StubServer

    with StubServer(answer=_answer) as stub:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-extract")
        monkeypatch.setenv("OPENAI_BASE_URL", stub.url + "/v1")
        stub.faults.append({"kind": "status", "status": 500})             # retried
        stub.fault_for = lambda info: ({"kind": "status", "status": 400}  # not retryable: recorded
                                       if info.model == "model-a" and "Exam page ex02/q02" in info.user_text
                                       else None)
        extractors = {"A": "openai:model-a", "B": "openai:model-b"}
        retry = RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.02)
        first = run_extraction(store, pages_dir, extractors, round=1, dataset=DATASET, retry=retry)
        assert (first.pages, first.jobs) == (4, 8)
        rows = db.load_extractions(store, round=1).set_index(["page_id", "extractor"])
        assert len(rows) == 8
        assert "400" in rows.loc[("ex02/q02", "A"), "error"]
        garbage = rows.loc[("ex02/q01", "B")]
        assert garbage["record"] is None and garbage["raw_response"] == "Sorry, I cannot read this page."
        assert garbage["error"] == "reply holds no JSON object"
        assert rows.loc[("ex02/q02", "B"), "validation_errors"]
        statuses = db.load_outcomes(store, 1).set_index("page_id")["merge_status"].to_dict()
        assert statuses == {"ex01/q01": "agreed", "ex01/q02": "queued", "ex02/q01": "failed", "ex02/q02": "failed"}
        assert get_item(store, DATASET, "ex01-q01")["record"]["question_text"] == radio()["question_text"]

        # the HTML went in as visible text only
        html_request = stub.requests_for("Exam page ex01/q01")[0]
        assert "Chi dipinse la volta?" in html_request.user_text and "secret" not in html_request.user_text
        assert html_request.image and html_request.image.startswith(b"\x89PNG")
        assert "sk-test-extract" not in (store.runs_dir / "extract-round1.jsonl").read_text()

        # resume: only the failed request is asked again
        stub.fault_for = None
        asked_before = len(stub.requests)
        second = run_extraction(store, pages_dir, extractors, round=1, dataset=DATASET, retry=retry)
        assert len(stub.requests) == asked_before + 1
        assert second.skipped == 7
        rows = db.load_extractions(store, round=1).set_index(["page_id", "extractor"])
        assert rows.loc[("ex02/q02", "A"), "error"] is None
        assert db.load_outcomes(store, 1).set_index("page_id").loc["ex02/q02", "merge_status"] == "queued"


def test_extract_cli_rejects_missing_extractor(tmp_path, capsys):
    from eduart_core.cli import main

    (tmp_path / "in" / "ex1").mkdir(parents=True)
    code = main(["extract", "--input", str(tmp_path / "in"), "--extractor", "A=openai:x",
                 "--db", str(tmp_path / "s.duckdb")])
    assert code == 2
    assert "two extractors" in capsys.readouterr().err


def test_full_loop_through_the_cli(store_path, pages_dir, monkeypatch, capsys):
    """extract round 1, review the queue, extract round 2 with a better extractor, compare rounds."""
    from eduart_core.cli import main
    from eduart_core.store import Store
    from tests.stubs import StubServer

    round_two = {"on": False}

    def answer(info) -> str:
        if round_two["on"] and info.model == "model-b":
            import json as _json
            import re as _re
            page_id = _re.search(r"Exam page (\S+)", info.user_text).group(1)
            return _json.dumps(_pipeline_truth()[page_id], ensure_ascii=False)
        return _answer(info)

    with StubServer(answer=answer) as stub:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-loop")
        monkeypatch.setenv("OPENAI_BASE_URL", stub.url + "/v1")
        args = ["extract", "--input", str(pages_dir), "--extractor", "A=openai:model-a",
                "--extractor", "B=openai:model-b", "--db", str(store_path), "--dataset", DATASET]
        assert main(args + ["--round", "1"]) == 0
        out = capsys.readouterr().out
        assert "4 pages" in out and "queued 2" in out
        store = Store(store_path)
        queue = review.review_queue(store, 1)
        assert set(queue["page_id"]) == {"ex01/q02", "ex02/q02"}
        result = review.decide(store, "ex01/q02", 1, "question_text", "accept_a", local("Anna"))
        assert result.promoted_version == 1
        round_two["on"] = True
        assert main(args + ["--round", "2"]) == 0
        assert "agreed 4" in capsys.readouterr().out
        assert main(["extract-stats", "--db", str(store_path)]) == 0
        stats_out = capsys.readouterr().out
        assert "round 1" in stats_out and "round 2" in stats_out
        assert get_item(store, DATASET, "ex01-q02")["record"]["question_text"].startswith("Perché")


def test_round_without_discrepancies_still_has_a_column():
    import pandas as pd

    frame = pd.DataFrame({"round": [1, 1], "category": ["accents", "content"], "field": ["a", "b"]})
    table = discrepancy_table(frame, rounds=[1, 2])
    assert list(table.columns) == ["round 1", "round 2"]
    assert table["round 2"].sum() == 0 and table.loc["accents", "round 1"] == 1


def test_failed_and_unpromotable_pages_are_listed_for_attention(store):
    add_page(store, "ex01/q01")
    add_page(store, "ex01/q02")
    review.record_comparison(store, "ex01/q01", 1, radio(), None)
    bad = radio() | {"answers": [{"id": "Z", "description": "nobody"}]}
    assert review.record_comparison(store, "ex01/q02", 1, bad, copy.deepcopy(bad)).status == "agreed"
    attention = review.attention_pages(store).set_index("page_id")["problem"]
    assert attention["ex01/q01"].startswith("extraction failed")
    assert attention["ex01/q02"].startswith("not promoted")


def test_simultaneous_decisions_on_one_field_one_wins(store):
    import threading

    from eduart_core.store.core import Store

    add_page(store)
    review.record_comparison(store, "ex01/q01", 1, *queued_pair())
    barrier = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def reviewer(name: str, action: str) -> None:
        own = Store(store.path)  # each session has its own connections, as in the app
        barrier.wait()
        try:  # the store-level step of a decision (write connections only; see the lead's note on
            # read-only + read-write connections in one process)
            db.append_decision(own, "ex01/q01", 1, "answers", action, name, None, name, None, based_on=None)
            outcomes[name] = "saved"
        except review.ReviewConflict:
            outcomes[name] = "conflict"

    threads = [threading.Thread(target=reviewer, args=(n, a)) for n, a in (("Anna", "accept_a"), ("Bruno", "accept_b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes.values()) == ["conflict", "saved"]
    assert len(db.load_decisions(store)) == 1


def test_store_from_before_the_review_tables_is_migrated_on_demand(store_path):
    import duckdb

    from eduart_core.store.core import Store, migrate

    store = Store(store_path)  # a DuckDB file written by an older version
    from eduart_core.store.schema import MIGRATIONS

    store.path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(store.path))
    saved = list(MIGRATIONS)
    try:
        MIGRATIONS[:] = [m for m in saved if m[0] < 2]
        migrate(con)
    finally:
        MIGRATIONS[:] = saved
        con.close()
    db.ensure_schema(store)
    assert db.load_pages(store).empty and review.review_queue(store).empty

"""Batch mode pieces with exact expectations: custom ids, sizing, the ledger file, result parsing per
provider, the store migration and the usage sums."""
from __future__ import annotations

import json

import duckdb
import pytest

from eduart_core.providers import batch_bedrock, batch_gemini, batch_openai
from eduart_core.providers.batch_config import BatchLimits
from eduart_core.runner.batch.ids import ID_LENGTH, custom_id, job_tag
from eduart_core.runner.batch.ledger import Ledger
from eduart_core.runner.batch.prepare import split

BASE = dict(dataset="eduart", item_id="0042", model="gpt-5.5", condition="default", prompt_hash="abc123", turn=0)


def test_custom_id_is_a_stable_hash_of_dataset_item_model_condition_prompt_and_turn():
    first = custom_id(**BASE)
    assert first == custom_id(**BASE) and len(first) == ID_LENGTH
    assert first.isalnum() and first.upper() == first
    for field, other in (("dataset", "eduart2"), ("item_id", "0043"), ("model", "gpt-5.4-mini"),
                         ("condition", "motivation"), ("prompt_hash", "abc124"), ("turn", 1)):
        assert custom_id(**{**BASE, field: other}) != first, field
    assert custom_id(**BASE, repetition=0) == first  # normal runs: the six fields only
    assert custom_id(**BASE, repetition=2) != first  # --repeat runs can share one batch
    assert len(batch_bedrock.record_id(first)) == 11 and batch_bedrock.record_id(first).isalnum()
    assert job_tag("launch", "m:a0:t0:0000") != job_tag("launch", "m:a0:t0:0001")


def _limits(**kw) -> BatchLimits:
    return BatchLimits(provider="test", **kw)


def test_split_respects_counts_and_bytes_in_about_equal_contiguous_parts():
    ranges, reason = split([10] * 14, _limits(max_requests=4, max_bytes=10_000))
    assert reason is None and ranges == [(0, 4), (4, 8), (8, 11), (11, 14)]
    sizes = [100] * 10 + [1000] * 10
    ranges, reason = split(sizes, _limits(max_requests=100, max_bytes=3000))
    assert reason is None
    assert [a for a, _ in ranges] == sorted(a for a, _ in ranges) and ranges[0][0] == 0 and ranges[-1][1] == 20
    assert all(sum(sizes[a:b]) <= 3000 for a, b in ranges)
    assert split([], _limits()) == ([], None)


def test_split_refuses_what_cannot_be_batched():
    ranges, reason = split([10] * 7, _limits(min_requests=10))
    assert ranges == [] and "fewer than the provider's minimum of 10" in reason
    ranges, reason = split([10, 5000, 10], _limits(max_bytes=1000))
    assert ranges == [] and "more than 1,000 bytes per file" in reason
    # 12 requests of 100 bytes under 500 bytes per file need 3 files, but each would hold 4 < 5
    ranges, reason = split([100] * 12, _limits(max_bytes=500, min_requests=5))
    assert ranges == [] and "at least 5 requests" in reason


def test_ledger_replays_its_file_and_ignores_a_torn_last_line(tmp_path):
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path, "L")
    ledger.add_requests([{"custom_id": "A1", "run_id": "r", "item_id": "1"},
                         {"custom_id": "B2", "run_id": "r", "item_id": "2"}])
    ledger.put_job("m:a0:t0:0000", state="prepared", custom_ids=["A1", "B2"], n_requests=2)
    ledger.set_state(["A1", "B2"], state="submitted", job_key="m:a0:t0:0000", attempt=0)
    ledger.put_job("m:a0:t0:0000", job_id="batch_1", state="validating")
    ledger.set_state(["B2"], errors={"B2": "refused"}, state="failed")
    ledger.set_meta(first_submitted_at=123.0)
    size = path.stat().st_size
    ledger.put_job("m:a0:t0:0000", state="validating")  # unchanged: nothing appended
    assert path.stat().st_size == size
    ledger.close()
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"kind": "state", "ids": ["A1"], "fields": {"state": "answ')  # kill -9 mid-write
    again = Ledger(path, "L")
    assert again.jobs["m:a0:t0:0000"]["job_id"] == "batch_1" and again.meta["first_submitted_at"] == 123.0
    assert again.requests["A1"]["state"] == "submitted" and again.requests["A1"]["error"] is None
    assert (again.requests["B2"]["state"], again.requests["B2"]["error"]) == ("failed", "refused")
    again.set_state(["A1"], state="answered")  # the next append starts on its own line
    assert Ledger(path, "L").requests["A1"]["state"] == "answered"


def test_openai_result_lines():
    ok = batch_openai.parse_result({"custom_id": "X", "response": {"status_code": 200, "body": {
        "choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2}}}, "error": None})
    assert (ok.text, ok.input_tokens, ok.output_tokens, ok.finish_reason, ok.ok) == ("hi", 5, 2, "stop", True)
    bad = batch_openai.parse_result({"custom_id": "Y", "response": {"status_code": 400, "body": {
        "error": {"message": "bad image"}}}, "error": None})
    assert not bad.ok and bad.error == "HTTP 400: bad image"
    expired = batch_openai.parse_result({"custom_id": "Z", "response": None,
                                         "error": {"code": "batch_expired", "message": "expired before it ran"}})
    assert expired.error == "expired before it ran"
    assert batch_openai.parse_result({"response": {}}) is None


def test_gemini_and_bedrock_result_lines():
    ok = batch_gemini.parse_result({"key": "K", "response": {
        "candidates": [{"content": {"parts": [{"text": "thinking", "thought": True}, {"text": "answer"}]},
                        "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 3}}})
    assert (ok.text, ok.input_tokens, ok.output_tokens) == ("answer", 7, 3)
    blocked = batch_gemini.parse_result({"key": "K", "response": {"promptFeedback": {"blockReason": "SAFETY"}}})
    assert blocked.error == "refused: SAFETY"
    assert batch_gemini.parse_result({"key": "K", "error": {"code": 13, "message": "internal"}}).error == "internal"
    by_record = {"ABCDEFGHIJK": "ABCDEFGHIJKLMNOPQRSTUVWX"}
    ok = batch_bedrock.parse_result({"recordId": "ABCDEFGHIJK", "modelInput": {}, "modelOutput": {
        "output": {"message": {"content": [{"text": "a"}, {"text": "b"}]}}, "stopReason": "end_turn",
        "usage": {"inputTokens": 9, "outputTokens": 1}}}, by_record)
    assert (ok.custom_id, ok.text, ok.input_tokens, ok.finish_reason) == ("ABCDEFGHIJKLMNOPQRSTUVWX", "ab", 9, "end_turn")
    err = batch_bedrock.parse_result({"recordId": "ABCDEFGHIJK", "error": {"errorCode": 400,
                                                                          "errorMessage": "bad request"}}, by_record)
    assert err.error == "error 400: bad request"
    assert batch_bedrock.parse_result({"recordId": "ZZZZZZZZZZZ", "modelOutput": {}}, by_record) is None


def test_provider_errors_in_results_are_redacted():
    line = {"custom_id": "Y", "response": {"status_code": 401, "body": {"error": {
        "message": "Incorrect API key provided: sk-test-abcdefghijklmnop1234"}}}}
    assert "sk-test-abcdefghijklmnop1234" not in batch_openai.parse_result(line).error


def test_a_store_of_the_previous_schema_gains_the_ledger_and_cost_columns(tmp_path):
    from eduart_core.store import Store
    from eduart_core.store.core import schema_version
    from eduart_core.store.schema import MIGRATIONS

    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    schema_version(con)
    ours = next(number for number, name, _ in MIGRATIONS if name == "batch ledger and per-response cost")
    for number, name, statements in [m for m in MIGRATIONS if m[0] < ours]:
        for sql in statements:
            con.execute(sql)
        con.execute("INSERT INTO schema_version (version, name) VALUES (?, ?)", [number, name])
    con.execute("INSERT INTO responses (run_id, item_id, raw_text) VALUES ('r', '1', 'old answer')")
    con.close()
    store = Store(path)
    with store.connect() as con:
        assert schema_version(con) == MIGRATIONS[-1][0] >= ours
        assert con.execute("SELECT raw_text, cost_usd, batch_job_id FROM responses").fetchall() == [
            ("old answer", None, None)]
        assert con.execute("SELECT count(*) FROM batch_jobs").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM batch_requests").fetchone()[0] == 0


def test_run_usage_sums_per_run_and_per_model_and_condition(store):
    from runner_items import fill_store

    from eduart_core.scoring.responses import add_responses
    from eduart_core.store.batch import run_usage
    from eduart_core.store.runs import create_run, ensure_model

    fill_store(store, 1)
    ensure_model(store, "m", "Model M", "F", "openai", "m-1")
    for run, condition in (("r1", "default"), ("r2", "motivation"), ("r3", "default")):
        create_run(store, run, "demo", "m", condition, "live")
    add_responses(store, "r1", [{"item_id": "0001", "raw_text": "x", "input_tokens": 10, "output_tokens": 2,
                                 "cost_usd": 0.5, "batch_job_id": "b1", "request_key": "k1"},
                                {"item_id": "0002", "raw_text": "x", "input_tokens": 10, "output_tokens": 2,
                                 "cost_usd": 1.0, "request_key": "k2"}])
    add_responses(store, "r2", [{"item_id": "0001", "raw_text": "x", "input_tokens": 4, "output_tokens": 1,
                                 "cost_usd": 0.25, "batch_job_id": "b1", "request_key": "k3"}])
    add_responses(store, "r3", [{"item_id": "0003", "raw_text": None, "error": "HTTP 500", "request_key": "k4"}])
    per_run = run_usage(store).set_index("run_id")
    assert per_run.loc["r1", "mode"] == "mixed" and per_run.loc["r2", "mode"] == "batch"
    assert per_run.loc["r1", "cost_usd"] == pytest.approx(1.5) and per_run.loc["r1", "batch_jobs"] == 1
    assert (per_run.loc["r3", "answered"], per_run.loc["r3", "errors"]) == (0, 1)
    per_model = run_usage(store, by="model").set_index("condition")
    assert per_model.loc["default", "runs"] == 2 and per_model.loc["default", "input_tokens"] == 20
    assert per_model.loc["motivation", "cost_usd"] == pytest.approx(0.25)
    assert json.loads(per_model.reset_index().to_json(orient="records"))[0]["model"] == "Model M"


def test_the_estimate_table_speaks_words_and_says_not_offered_instead_of_none():
    import pandas as pd

    from eduart_core.runner.batch.estimate import COLUMNS, estimate_words

    est = pd.DataFrame([
        ["gpt", "default", 10, 0, 2, 1200, 300, 0, 0.02, 0.01, 0.5, "yes"],
        ["local", "default", 10, 0, 2, 1200, 300, 0, 0.0, None, None, "not available (no batch API): online"],
    ], columns=COLUMNS)
    shown = estimate_words(est)
    assert not [c for c in shown.columns if "_" in c], list(shown.columns)  # no raw names
    assert shown.isna().sum().sum() == 0 and "None" not in shown.astype(str).to_numpy()
    assert list(shown["Batch (USD)"]) == ["0.010000", "not offered"]
    assert list(shown["Batch discount"]) == ["50%", "—"]
    assert shown.iloc[1]["Batch mode"].startswith("not available (no batch API)")

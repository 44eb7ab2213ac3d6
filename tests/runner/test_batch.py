"""Batch mode flows: the real CLI, a real store in tmp_path, the real openai, google-genai and boto3
SDKs over HTTP to loopback stubs of the batch control planes (and moto's S3 server for Bedrock)."""
from __future__ import annotations

import base64
import json
import os
import re
import signal
import threading
import time

import pytest
from batch_env import MODELS, item_answer, journal_records, responses, table, use_registry
from batch_stubs import BatchStub, request_image
from runner_items import fill_store

from eduart_core.cli import main
from eduart_core.store import Store


@pytest.fixture
def stub(s3_url):
    with BatchStub(s3_endpoint=s3_url, answer=item_answer) as server:
        yield server


@pytest.fixture
def env(monkeypatch, tmp_path, stub, s3_url):
    return use_registry(monkeypatch, tmp_path, stub.url, s3_url)


def run(store: Store, *args: str) -> int:
    return main(["run", "--db", str(store.path), "--batch", "--poll-interval", "0.02", "--quiet", *args])


def answered_once(store: Store, records: list[dict], model: str, conditions=("default", "motivation")) -> list[dict]:
    """Every item has exactly one stored answer per condition, naming its own item (joined on id)."""
    rows = [r for r in responses(store) if r["model"] == model]
    for condition in conditions:
        mine = [r for r in rows if r["condition"] == condition]
        assert sorted(r["item_id"] for r in mine) == sorted(r["item_id"] for r in records), condition
        for r in mine:
            assert r["error"] is None
            assert f"answer to item {r['item_id']}" in r["raw_text"]
    return rows


def image_bytes(store: Store) -> dict[str, bytes]:
    with store.connect(read_only=True) as con:
        rows = con.execute("SELECT i.item_id, g.rel_path FROM items i JOIN images g USING (image_hash) "
                           "WHERE i.is_current").fetchall()
    return {item: (store.images_dir / rel).read_bytes() for item, rel in rows}


@pytest.mark.parametrize("provider", ["openai", "compatible", "gemini", "gemini-file", "bedrock"])
def test_happy_path_per_provider_records_batch_ids_tokens_cost_and_images(store, stub, env, monkeypatch,
                                                                          tmp_path, s3_url, provider, capsys):
    if provider == "gemini-file":
        use_registry(monkeypatch, tmp_path, stub.url, s3_url, gemini_inline_max=0)
    model = MODELS[provider.split("-")[0]]
    records = fill_store(store, 1)
    assert run(store, "--model", model, "--condition", "both") == 0
    rows = answered_once(store, records, model)
    assert len(stub.submissions) == 1 and stub.submissions[0][2] == 2 * len(records)  # conditions pooled
    job = next(iter(stub.jobs.values()))
    assert {r["batch_job_id"] for r in rows} == {job.id}
    # tokens and cost per response: the stub's counts at the registry price, batch discount 50%
    price = {"openai": (2.0, 8.0), "compatible": (1.0, 1.0), "gemini": (1.0, 4.0), "bedrock": (3.0, 15.0)}
    p_in, p_out = price[provider.split("-")[0]]
    assert all((r["input_tokens"], r["output_tokens"]) == (120, 30) for r in rows)
    assert all(r["cost_usd"] == pytest.approx((120 * p_in + 30 * p_out) / 1e6 * 0.5) for r in rows)
    # images went as base64 in the lines and are the stored image bytes
    images = image_bytes(store)
    sent = {}
    for line in job.lines:
        text = json.dumps(line)
        item = re.search(r"Exercise (\d{4})", text).group(1)
        sent.setdefault(item, set()).add(request_image(job.protocol, line))
    for item, images_sent in sent.items():
        assert images_sent == {images.get(item)}, item
    assert all(bool(r["image_sent"]) == (r["item_id"] in images) for r in rows)
    # the ledger in the store: one job, every request answered
    jobs = table(store, "batch_jobs")
    assert len(jobs) == 1 and jobs[0]["state"] == "completed" and jobs[0]["n_answered"] == 2 * len(records)
    assert jobs[0]["job_id"] == job.id and jobs[0]["actual_cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in rows))
    requests = table(store, "batch_requests")
    assert len(requests) == 2 * len(records) and {r["state"] for r in requests} == {"answered"}
    # scored like online answers, under both profiles; runs closed with the discounted totals
    with store.connect(read_only=True) as con:
        assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 2 * len(rows)
        runs = con.execute("SELECT status, cost_usd, CAST(params AS TEXT) FROM runs").fetchall()
    assert {r[0] for r in runs} == {"completed"}
    assert sum(r[1] for r in runs) == pytest.approx(sum(r["cost_usd"] for r in rows))
    assert all(json.loads(r[2])["mode"] == "batch" for r in runs)
    capsys.readouterr()
    assert main(["run", "--db", str(store.path), "--batch", "--status"]) == 0
    status = capsys.readouterr().out
    assert job.id in status and "completed" in status and f"joined {2 * len(records)} answered" in status


def test_requests_carry_the_online_prompt_schema_and_parameters(store, stub, env):
    fill_store(store, 1)
    assert run(store, "--model", "stub-gpt", "--model", "stub-gemini", "--model", "stub-claude") == 0
    by_protocol = {job.protocol: job.lines[0] for job in stub.jobs.values()}
    openai_body = by_protocol["openai"]["body"]
    assert by_protocol["openai"]["url"] == "/v1/chat/completions" and openai_body["model"] == "gpt-stub-1"
    assert "art-history examination" in openai_body["messages"][0]["content"]
    assert openai_body["response_format"]["json_schema"]["schema"]["required"] == ["Answers"]
    assert openai_body["max_completion_tokens"] == 256
    gemini = by_protocol["gemini"]["request"]
    assert "art-history examination" in json.dumps(gemini.get("systemInstruction") or gemini.get("system_instruction"))
    config = gemini.get("generationConfig") or {}
    assert config.get("responseMimeType") == "application/json" and config.get("temperature") == 1.0
    bedrock = by_protocol["bedrock"]
    assert re.fullmatch(r"[A-Z2-7]{11}", bedrock["recordId"])
    assert "outputConfig" not in bedrock["modelInput"]  # batch has no structured output: the parser does it
    assert bedrock["modelInput"]["inferenceConfig"] == {"temperature": 0.0, "maxTokens": 512}
    assert stub.jobs[next(k for k, j in stub.jobs.items() if j.protocol == "bedrock")].extra["type"] == "Converse"


def test_error_file_and_out_of_order_results_join_on_custom_id_and_failed_ids_are_resubmitted_once(store, stub, env):
    records = fill_store(store, 2)
    first = {}

    def outcome(job):
        if not first:
            first["id"] = job.id
            return {"fail": lambda cid, i: i % 3 == 0}  # every third request lands in the error file
        return {}

    stub.outcome = outcome
    assert run(store, "--model", "stub-gpt", "--condition", "both") == 0
    answered_once(store, records, "stub-gpt")
    assert [n for _, _, n in stub.submissions] == [28, 10]  # the 10 failed ids, resubmitted once
    jobs = sorted(table(store, "batch_jobs"), key=lambda j: j["attempt"])
    assert [(j["attempt"], j["n_answered"], j["n_errors"]) for j in jobs] == [(0, 18, 10), (1, 10, 0)]
    assert jobs[0]["error_location"] and jobs[0]["n_failed"] == 10
    requests = table(store, "batch_requests")
    assert {r["state"] for r in requests} == {"answered"}
    assert sum(1 for r in requests if r["attempt"] == 1) == 10


def test_expired_job_keeps_its_partial_results_and_resubmits_the_missing(store, stub, env):
    records = fill_store(store, 1)
    seen = []

    def outcome(job):
        seen.append(job.id)
        return {"final": "expired", "drop": lambda cid, i: i >= 5} if len(seen) == 1 else {}

    stub.outcome = outcome
    assert run(store, "--model", "stub-claude", "--condition", "both") == 0
    answered_once(store, records, "stub-claude")
    jobs = sorted(table(store, "batch_jobs"), key=lambda j: j["attempt"])
    assert [(j["state"], j["provider_state"], j["n_answered"], j["n_missing"]) for j in jobs] == [
        ("expired", "Expired", 5, 9), ("completed", "Completed", 9, 0)]
    assert [n for _, _, n in stub.submissions] == [14, 9]


def test_partially_completed_job_below_bedrock_minimum_is_completed_online(store, stub, env, capsys):
    records = fill_store(store, 1)
    calls = []

    def outcome(job):
        calls.append(job.id)
        return {"final": "partial", "fail": lambda cid, i: i < 3}

    stub.outcome = outcome
    assert run(store, "--model", "stub-claude", "--condition", "both") == 0
    rows = answered_once(store, records, "stub-claude")
    assert len(stub.submissions) == 1  # 3 failed records < the minimum of 5: asked online, not in batch
    assert len(stub.online_requests) == 3
    assert sum(1 for r in rows if r["batch_job_id"] is None) == 3
    out = capsys.readouterr().out
    assert "fewer than the provider's minimum of 5 per job: asked online instead" in out
    job = table(store, "batch_jobs")[0]
    assert (job["state"], job["provider_state"], job["n_errors"]) == ("partially_completed", "PartiallyCompleted", 3)
    states = {r["state"] for r in table(store, "batch_requests")}
    assert states == {"answered", "online"}


def test_failing_twice_records_an_error_and_retry_errors_gives_one_more_resubmission(store, stub, env, capsys):
    records = fill_store(store, 1)
    stub.outcome = lambda job: {"fail": lambda cid, i: "Exercise 0002" in json.dumps(job.lines[i])}
    assert run(store, "--model", "stub-gpt") == 1  # some requests failed: a resume can fix it
    assert [n for _, _, n in stub.submissions] == [7, 1]
    rows = responses(store)
    errors = [r for r in rows if r["error"]]
    assert [r["item_id"] for r in errors] == ["0002"] and "stub refused" in errors[0]["error"]
    assert "1 of 7 request(s) failed; ask them again with:" in capsys.readouterr().err
    stub.outcome = lambda job: {}
    launch = table(store, "batch_jobs")[0]["launch_id"]
    assert main(["run", "--db", str(store.path), "--resume", launch, "--retry-errors", "--poll-interval", "0.02",
                 "--quiet"]) == 0
    assert [n for _, _, n in stub.submissions] == [7, 1, 1]
    ok = [r for r in responses(store) if not r["error"]]
    assert sorted(r["item_id"] for r in ok) == sorted(r["item_id"] for r in records)


def test_bedrock_minimum_is_met_by_pooling_conditions_or_the_run_goes_online(store, stub, monkeypatch, tmp_path,
                                                                           s3_url, capsys):
    records = fill_store(store, 1)
    use_registry(monkeypatch, tmp_path, stub.url, s3_url, bedrock_min=10)
    assert run(store, "--model", "stub-claude", "--condition", "both") == 0  # 14 >= 10: one pooled job
    assert [n for _, _, n in stub.submissions] == [14]
    pooled = table(store, "batch_requests")
    assert len({r["job_key"] for r in pooled}) == 1 and {r["condition"] for r in pooled} == {"default", "motivation"}
    assert run(store, "--model", "stub-claude", "--condition", "default", "--run-id", "single") == 0
    assert len(stub.submissions) == 1  # 7 < 10 and nothing to pool with: asked online
    assert "fewer than the provider's minimum of 10 per job" in capsys.readouterr().out
    single = [r for r in responses(store) if r["run_id"].startswith("single")]
    assert len(single) == len(records) and all(r["batch_job_id"] is None for r in single)


def test_files_are_split_by_request_count_and_by_bytes(store, stub, monkeypatch, tmp_path, s3_url):
    records = fill_store(store, 2)  # 14 items
    use_registry(monkeypatch, tmp_path, stub.url, s3_url, openai_max_requests=4)
    assert run(store, "--model", "stub-gpt", "--run-id", "by-count") == 0
    assert sorted(n for _, _, n in stub.submissions) == [3, 3, 4, 4]
    answered_once(store, records, "stub-gpt", conditions=("default",))
    sizes = [len(u) for u in stub.uploads]
    use_registry(monkeypatch, tmp_path, stub.url, s3_url, openai_max_bytes=max(sizes) // 2)
    assert run(store, "--model", "stub-gpt", "--run-id", "by-bytes") == 0
    new = stub.uploads[4:]
    assert len(new) > 4 and all(len(u) <= max(sizes) // 2 for u in new)
    assert sum(n for _, _, n in stub.submissions[4:]) == len(records)


def test_dry_run_shows_online_and_batch_cost_side_by_side(store, env, capsys):
    fill_store(store, 1)
    assert main(["run", "--db", str(store.path), "--model", "stub-gpt", "--model", "chance", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "online USD" in out and "batch USD" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("stub-gpt"))
    online, batch = (float(x) for x in line.split()[7:9])
    assert online > 0 and batch == pytest.approx(online * 0.5, abs=1e-4)
    chance = next(ln for ln in out.splitlines() if ln.startswith("chance "))
    assert chance.split()[8] == "-"
    assert "chance: batch not available (provider offline has no batch API): online" in out
    assert "USD with --batch" in out


def test_deadline_cancels_the_batch_and_asks_the_rest_online(store, stub, env, capsys):
    records = fill_store(store, 1)
    stub.hold = True  # the batch never finishes on its own
    assert run(store, "--model", "stub-gemini", "--batch-deadline", "0.0002") == 0  # under a second
    job = next(iter(stub.jobs.values()))
    assert job.state in ("cancelling", "cancelled")
    rows = answered_once(store, records, "stub-gemini", conditions=("default",))
    assert all(r["batch_job_id"] is None for r in rows) and len(stub.online_requests) == len(records)
    assert "batch deadline passed: 7 unanswered requests are asked online now" in capsys.readouterr().out
    assert {r["state"] for r in table(store, "batch_requests")} == {"online"}


def test_offline_models_run_online_next_to_batch_models(store, stub, env, capsys):
    records = fill_store(store, 1)
    assert run(store, "--model", "stub-gpt", "--model", "chance") == 0
    assert "chance: provider offline has no batch API: asked online" in capsys.readouterr().out
    assert len([r for r in responses(store) if r["model"] == "chance"]) == len(records)
    answered_once(store, records, "stub-gpt", conditions=("default",))


def test_sigterm_stops_polling_and_the_launch_stays_in_batch_mode(store, stub, env, capsys):
    records = fill_store(store, 1)
    stub.hold = True
    stop = threading.Event()

    def cancel_when_polling():  # the Runs page's Cancel (SIGTERM) once the job is being polled
        while not stop.is_set():
            if stub.submissions and stub.polls >= 2:
                os.kill(os.getpid(), signal.SIGTERM)
                return
            time.sleep(0.01)

    watcher = threading.Thread(target=cancel_when_polling, daemon=True)
    watcher.start()
    try:
        assert run(store, "--model", "stub-gpt", "--run-id", "held") == 130
    finally:
        stop.set()
    captured = capsys.readouterr()
    assert "1 batch jobs go on at the provider: collect them with" in captured.err
    assert "--resume held" in captured.err
    with store.connect(read_only=True) as con:
        assert {r[0] for r in con.execute("SELECT status FROM runs").fetchall()} == {"cancelled"}
    stub.hold = False
    # the same command without --batch must not ask online what is already in a batch job
    assert main(["run", "--db", str(store.path), "--model", "stub-gpt", "--run-id", "held", "--quiet",
                 "--poll-interval", "0.02"]) == 0
    assert "has batch jobs: continuing in batch mode" in capsys.readouterr().out
    assert len(stub.submissions) == 1 and not stub.online_requests
    answered_once(store, records, "stub-gpt", conditions=("default",))


def test_batch_limits_are_read_from_the_registry(tmp_path, monkeypatch):
    from eduart_core.errors import UserError
    from eduart_core.providers.batch_config import load_batch_limits

    shipped = load_batch_limits()
    assert shipped["openai"].max_requests == 50000 and shipped["openai"].max_bytes == 200_000_000
    assert shipped["bedrock"].min_requests == 100 and shipped["gemini"].inline_max_bytes == 20_000_000
    assert all(limit.price_factor == 0.5 for limit in shipped.values())
    user = tmp_path / "m.toml"
    user.write_text("[batch.openai]\ndiscount = 0.4\n", encoding="utf-8")
    assert load_batch_limits(user)["openai"].price_factor == pytest.approx(0.6)
    assert load_batch_limits(user)["openai"].max_requests == 50000  # the rest stays shipped
    user.write_text("[batch.offline]\ndiscount = 0.5\n", encoding="utf-8")
    with pytest.raises(UserError, match="batch.offline: no batch support"):
        load_batch_limits(user)
    user.write_text("[batch.gemini]\ndiscount = 2\n", encoding="utf-8")
    with pytest.raises(UserError, match="discount must be a number"):
        load_batch_limits(user)


def test_bedrock_batch_without_role_or_bucket_names_what_to_set(store, stub, env, monkeypatch, tmp_path, capsys):
    fill_store(store, 1)
    registry = tmp_path / "models.toml"
    registry.write_text(re.sub(r"(role_arn|s3_uri) = .*\n", "", registry.read_text()), encoding="utf-8")
    assert run(store, "--model", "stub-claude") == 2
    err = capsys.readouterr().err
    assert "EDUART_BEDROCK_ROLE_ARN" in err and "EDUART_BEDROCK_S3_URI" in err
    assert not stub.submissions


def test_keys_never_reach_the_store_ledger_logs_or_uploaded_files(store, stub, env, caplog, capsys):
    """Every file next to the store (journals, ledger, kept input files), every table, every upload the
    stubs received, the output and every log record at DEBUG. One exception, outside our code: botocore's
    own DEBUG dump of a signed request shows the AWS access key id (not the secret) in the SigV4
    credential scope, so the id is checked in our loggers only."""
    import logging

    from batch_env import SECRETS

    caplog.set_level(logging.DEBUG)
    fill_store(store, 1)
    stub.outcome = lambda job: {"fail": lambda cid, i: i == 0}
    assert run(store, "--model", "stub-gpt", "--model", "stub-gemini", "--model", "stub-claude", "--condition",
               "both", "--keep-batch-files") == 1  # the first request of every job fails, twice
    assert main(["run", "--db", str(store.path), "--batch", "--status"]) == 0
    secrets = [v for v in SECRETS.values()]
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("eduart_core"))
    assert SECRETS["AWS_ACCESS_KEY_ID"] not in ours
    everything = "\n".join(r.getMessage() for r in caplog.records)
    for name in ("OPENAI_API_KEY", "GEMINI_API_KEY", "AWS_SECRET_ACCESS_KEY"):
        assert SECRETS[name] not in everything, name
    haystacks = {"output": "".join(capsys.readouterr())}
    folder = store.path.parent
    for path in folder.rglob("*"):
        if path.is_file():
            haystacks[str(path)] = path.read_bytes().decode("latin-1")
    with store.connect(read_only=True) as con:
        for (name,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall():
            haystacks[f"table {name}"] = con.execute(f"SELECT * FROM {name}").df().to_csv()
    for i, upload in enumerate(stub.uploads):
        haystacks[f"upload {i}"] = upload.decode("latin-1")
    assert len(stub.uploads) >= 3 and any(p.suffix == ".jsonl" for p in folder.rglob("_batches/*/files/*"))
    for where, text in haystacks.items():
        for secret in secrets:
            assert secret not in text, f"{secret[:8]}... found in {where}"
            assert base64.b64encode(secret.encode()).decode() not in text, where
    assert len(journal_records(store)) >= 3 * 14


def test_a_compatible_server_declared_with_a_batch_api_that_has_none_is_asked_online(store, monkeypatch, tmp_path,
                                                                                     capsys):
    from stubs import StubServer

    records = fill_store(store, 1)
    with StubServer(answer=lambda info: item_answer("openai", {"body": info.body})) as plain:  # chat only
        registry = tmp_path / "declared.toml"
        registry.write_text(f'[models."plain"]\ndisplay_name = "Plain"\nprovider = "openai_compatible"\n'
                            f'api_model_id = "plain"\nbase_url = "{plain.url}/v1"\nbatch_api = true\n')
        monkeypatch.setenv("EDUART_MODELS", str(registry))
        assert main(["run", "--db", str(store.path), "--batch", "--model", "plain", "--quiet",
                     "--poll-interval", "0.02"]) == 0
        assert len(plain.requests) == len(records)  # the upload to /v1/files got a 404: every item online
    assert "the server has no batch API" in capsys.readouterr().out
    rows = responses(store)
    assert len(rows) == len(records) and all(r["error"] is None and r["batch_job_id"] is None for r in rows)


def test_a_compatible_server_named_without_an_entry_is_asked_online_without_trying_batch(store, capsys):
    from stubs import StubServer

    records = fill_store(store, 1)
    with StubServer(answer=lambda info: item_answer("openai", {"body": info.body})) as plain:  # chat only
        assert main(["run", "--db", str(store.path), "--batch", "--provider", "openai_compatible", "--base-url",
                     f"{plain.url}/v1", "--model-id", "plain", "--quiet", "--poll-interval", "0.02"]) == 0
        assert len(plain.requests) == len(records)
    out = capsys.readouterr().out
    assert "openai_compatible:plain: the server declares no batch API" in out
    assert "the server has no batch API" not in out  # no batch upload was tried
    rows = responses(store)
    assert len(rows) == len(records) and all(r["error"] is None and r["batch_job_id"] is None for r in rows)


def test_show_runs_prints_usage_per_run_per_model_and_the_batch_jobs(store, stub, env, capsys):
    records = fill_store(store, 1)
    assert run(store, "--model", "stub-gemini", "--condition", "both") == 0
    capsys.readouterr()

    def show(*args):
        assert main(["show", "runs", "--db", str(store.path), "--dataset", "demo", *args]) == 0
        return json.loads(capsys.readouterr().out)

    per_run = show()
    assert {r["condition"] for r in per_run} == {"default", "motivation"}
    assert all(r["mode"] == "batch" and r["batch_answers"] == len(records) and r["batch_jobs"] == 1 for r in per_run)
    per_model = show("--option", "by=model")
    assert [(r["model"], r["runs"]) for r in per_model] == [("Stub Gemini", 1), ("Stub Gemini", 1)]
    assert sum(r["cost_usd"] for r in per_model) == pytest.approx(sum(r["cost_usd"] for r in per_run))
    jobs = show("--option", "by=job")
    assert len(jobs) == 1 and jobs[0]["state"] == "completed" and jobs[0]["n_answered"] == 2 * len(records)


@pytest.mark.parametrize("provider", ["openai", "gemini", "bedrock"])
def test_a_create_call_that_times_out_is_looked_up_not_repeated(store, stub, env, provider, capsys):
    records = fill_store(store, 1)
    stub.create_delay_s = 3.0  # longer than --timeout: the job exists, the runner never hears of it
    assert run(store, "--model", MODELS[provider], "--condition", "both", "--timeout", "1") == 0
    assert len(stub.submissions) == 1
    if provider == "bedrock":  # botocore retries the create with the same clientRequestToken: idempotent
        assert stub.idempotent_creates >= 1
    else:  # the SDK does not retry; the runner finds the job by its tag
        assert "created by an interrupted submission" in capsys.readouterr().out
    answered_once(store, records, MODELS[provider])

"""Runner flows: real CLI, real store in tmp_path, real SDKs over HTTP to stub servers."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pg_kit
import pytest
from runner_items import fill_store
from stubs import StubServer

from eduart_core.cli import main
from eduart_core.errors import UserError
from eduart_core.store import Store

backend, store = pg_kit.backend, pg_kit.store  # every test here runs on DuckDB and PostgreSQL

ROOT = Path(__file__).resolve().parents[2]


def _responses(store: Store, where: str = "TRUE") -> list[tuple]:
    with store.connect(read_only=True) as con:
        return con.execute(f"SELECT r.run_id, r.item_id, r.raw_text, r.error, r.image_sent, r.input_tokens "
                           f"FROM responses r WHERE {where} ORDER BY r.run_id, r.item_id, r.response_id").fetchall()


def _runs(store: Store) -> dict[str, dict]:
    with store.connect(read_only=True) as con:
        frame = con.frame("SELECT * FROM runs")
    return {row["run_id"]: row for row in frame.to_dict("records")}


def _answer(info) -> str:
    """A stub model that answers 'A' or 'TRUE' to everything (parseable for every format)."""
    return json.dumps({"Answers": [{"id": "A", "text": "TRUE"}], "motivation": "Because it is so."})


def _adhoc(stub: StubServer, store: Store, *extra: str) -> int:
    return main(["run", "--db", str(store.path), "--provider", "openai_compatible", "--base-url",
                 f"{stub.url}/v1", "--model-id", "stub-model", "--quiet", "--backoff", "0.05", *extra])


def test_chance_run_scores_every_item_and_rerun_asks_nothing(store, capsys):
    records = fill_store(store, 2)
    assert main(["run", "--db", str(store.path), "--model", "chance", "--condition", "both", "--quiet"]) == 0
    rows = _responses(store)
    assert len(rows) == 2 * len(records)
    with store.connect(read_only=True) as con:
        n_scores = con.execute("SELECT count(*) FROM scores").fetchone()[0]
    assert n_scores == 2 * len(rows)  # strict and paper
    runs = _runs(store)
    assert {r["status"] for r in runs.values()} == {"completed"}
    assert len({r["prompt_hash"] for r in runs.values()}) == 2  # default and motivation templates differ
    journal = Path(next(iter(runs.values()))["journal_path"])
    before = journal.read_bytes()
    assert main(["run", "--db", str(store.path), "--model", "chance", "--condition", "both", "--quiet"]) == 0
    assert journal.read_bytes() == before
    assert len(_responses(store)) == len(rows)
    assert "0 answered now, 28 already answered" in capsys.readouterr().out
    assert main(["run", "--db", str(store.path), "--model", "chance", "--condition", "both", "--dry-run"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("chance") and "default" in ln)
    assert line.split()[2] == "0" and line.split()[-1] == "14"  # nothing left to ask, 14 already answered


def test_adhoc_model_both_conditions_sends_images_and_schema(store):
    records = fill_store(store)
    with StubServer(answer=_answer) as stub:
        assert _adhoc(stub, store, "--condition", "both", "--concurrency", "4") == 0
        seen = list(stub.requests)
    assert len(seen) == 2 * len(records)
    with_image = [r for r in seen if r.image is not None]
    assert len(with_image) == 2 * sum(r["has_image"] for r in records)
    assert all(r.image[:2] == b"\xff\xd8" and r.image_mime == "image/jpeg" for r in with_image)
    assert all("art-history examination" in r.system for r in seen)
    motivation = [r for r in seen if "motivation" in r.schema["properties"]]
    assert len(motivation) == len(records)
    rows = _responses(store)
    assert sum(bool(r[4]) for r in rows) == len(with_image)


def test_text_only_and_refuse_images_are_recorded(store):
    records = fill_store(store)
    n_images = sum(r["has_image"] for r in records)
    with StubServer(answer=_answer) as stub:
        assert _adhoc(stub, store, "--text-only", "--run-id", "textonly") == 0
        assert all(r.image is None for r in stub.requests)
        assert len(stub.requests) == len(records)
    rows = _responses(store, "run_id LIKE 'textonly%'")
    assert len(rows) == len(records) and not any(r[4] for r in rows)
    with StubServer(answer=_answer) as stub:
        assert _adhoc(stub, store, "--refuse-images", "--run-id", "refuse", "--no-cache") == 0
        assert len(stub.requests) == len(records) - n_images
    run = [r for r in _runs(store).values() if r["run_id"].startswith("refuse")][0]
    assert json.loads(run["params"])["images_refused"] == n_images


def test_faults_are_retried_and_run_completes(store):
    records = fill_store(store)
    with StubServer(answer=_answer) as stub:
        stub.faults.extend([{"kind": "status", "status": 429, "retry_after": 0.2},
                            {"kind": "status", "status": 500},
                            {"kind": "malformed"}, {"kind": "empty"},
                            {"kind": "timeout", "sleep_s": 1.5}])
        t0 = time.monotonic()
        assert _adhoc(stub, store, "--concurrency", "1", "--timeout", "0.5") == 0
        elapsed = time.monotonic() - t0
        n_requests = len(stub.requests)
    assert n_requests == len(records) + 5  # each fault cost exactly one extra request
    assert elapsed >= 0.2  # Retry-After was honoured
    rows = _responses(store)
    assert len(rows) == len(records) and not any(r[3] for r in rows)
    assert list(_runs(store).values())[0]["n_errors"] == 0


def test_client_errors_persist_until_retry_errors_succeeds(store, capsys):
    fill_store(store)
    target = "mosaic"  # the select_errors item
    with StubServer(answer=_answer) as stub:
        stub.fault_for = lambda info: {"kind": "status", "status": 400} if target in info.user_text else None
        assert _adhoc(stub, store, "--run-id", "errs") == 1  # exit 1: some requests failed
        assert len(stub.requests_for(target)) == 1  # no retry on a 400
        assert "--retry-errors" in capsys.readouterr().err
        run = list(_runs(store).values())[0]
        assert run["n_errors"] == 1
        errors = _responses(store, "error IS NOT NULL")
        assert len(errors) == 1 and "400" in errors[0][3]
        # Resuming without --retry-errors asks nothing again; the error stays.
        assert _adhoc(stub, store, "--resume", "errs") == 1
        assert len(stub.requests) == 7
        stub.fault_for = None
        assert _adhoc(stub, store, "--resume", "errs", "--retry-errors") == 0
        assert len(stub.requests) == 8 and len(stub.requests_for(target)) == 2
    rows = _responses(store, "item_id = '0007'")
    assert rows[0][3] is not None and rows[-1][3] is None  # error kept in history, newest answer is good
    assert list(_runs(store).values())[0]["n_errors"] == 0


def test_cache_never_pays_twice_across_launches(store):
    records = fill_store(store)
    with StubServer(answer=_answer) as stub:
        assert _adhoc(stub, store, "--run-id", "first") == 0
        assert _adhoc(stub, store, "--run-id", "second") == 0
        assert len(stub.requests) == len(records)
    runs = _runs(store)
    first = next(r for k, r in runs.items() if k.startswith("first"))
    second = next(r for k, r in runs.items() if k.startswith("second"))
    assert first["input_tokens"] == 100 * len(records) and second["input_tokens"] == 0
    assert len(_responses(store, "run_id LIKE 'second%'")) == len(records)


def test_rpm_limit_spaces_requests(store):
    fill_store(store)
    with StubServer(answer=_answer) as stub:
        assert _adhoc(stub, store, "--rpm", "600", "--concurrency", "8", "--limit", "4") == 0
        times = sorted(r.time for r in stub.requests)
    assert times[-1] - times[0] >= 0.25  # 4 starts at 0.1 s spacing


def test_dry_run_estimates_tokens_and_cost_without_asking(store, capsys, monkeypatch):
    fill_store(store)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dryrun-0000000000")
    assert main(["run", "--db", str(store.path), "--model", "gpt-5.5", "--condition", "both", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "tiktoken o200k_base" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("gpt-5.5") and "motivation" in ln)
    parts = line.split()
    assert int(parts[2]) == 7 and int(parts[4]) == 3 and int(parts[5]) > 1000 and float(parts[7]) > 0
    assert not (store.runs_dir / "_launches").exists()


@pytest.mark.skipif(any((ROOT / f).exists() for f in (".env", ".streamlit/secrets.toml")),
                    reason="a local .env or Streamlit secrets file provides keys on this machine")
def test_bad_filter_and_missing_key_are_one_line_errors(store, capsys):
    fill_store(store)
    assert main(["run", "--db", str(store.path), "--model", "chance", "--items", "colour=red"]) == 2
    assert "unknown field 'colour'" in capsys.readouterr().err
    assert main(["run", "--db", str(store.path), "--model", "gpt-5.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "OPENAI_API_KEY" in err and len(err.splitlines()) == 1
    assert main(["run", "--db", str(store.path), "--model", "chance", "--items", "type=true_false,image=true",
                 "--quiet"]) == 0
    assert len(_responses(store)) == 1


@pytest.mark.parametrize(("flags", "words"), [
    (["--sample", "99999999999"], "more than the 7 items"),
    (["--sample", "0"], "stratified sample size (--sample): 0"),
    (["--repeat", "99999999999"], "use a whole number from 1 to 20 (the limit is 20 repetitions (EDUART_MAX_REPETITIONS))"),
    (["--repeat", "0"], "repetitions (--repeat): 0"),
    (["--limit", "-1"], "items to ask (--limit)"),
    (["--concurrency", "100000"], "EDUART_MAX_CONCURRENCY"),
    (["--rpm", "-3"], "requests per minute (--rpm)"),
    (["--rpm", "nan"], "requests per minute (--rpm)"),
    (["--timeout", "0"], "timeout per request"),
    (["--max-attempts", "0"], "attempts per request"),
])
def test_a_number_a_launch_cannot_mean_is_one_line_and_asks_nothing(store, capsys, flags, words):
    """The CLI reaches the same check as the Runs page (`plan_launch`): one line naming the field and
    its bound, exit 2, no launch, nothing asked (a --dry-run estimate is refused too)."""
    fill_store(store)
    for dry in ([], ["--dry-run"]):
        assert main(["run", "--db", str(store.path), "--model", "chance", "--quiet", *flags, *dry]) == 2
        err = capsys.readouterr().err.strip()
        assert words in err and len(err.splitlines()) == 1, err
    assert _responses(store) == [] and not (store.runs_dir / "_launches").exists()


def test_the_repetition_limit_is_read_from_its_variable(store, monkeypatch):
    from eduart_core.runner.launch import LaunchOptions, plan_launch

    fill_store(store)
    monkeypatch.setenv("EDUART_MAX_REPETITIONS", "30")
    assert len(plan_launch(store, LaunchOptions(models=["chance"], repeat=25)).jobs) == 25 * 7
    monkeypatch.setenv("EDUART_MAX_REPETITIONS", "2")
    with pytest.raises(UserError, match="from 1 to 2"):
        plan_launch(store, LaunchOptions(models=["chance"], repeat=3))


def test_repeat_sample_feeds_reproducibility(store):
    from eduart_core.runner.repro import reproducibility
    from eduart_core.store.journal import load_repetition_answers

    fill_store(store, 3)
    assert main(["run", "--db", str(store.path), "--model", "chance", "--repeat", "3", "--sample", "10",
                 "--quiet"]) == 0
    runs = _runs(store)
    assert sorted(r["repetition"] for r in runs.values()) == [1, 2, 3]
    table = reproducibility(load_repetition_answers(store))
    row = table.iloc[0]
    assert row["repetitions"] == 3 and row["items"] == 10
    assert 0.0 <= row["identical_share"] < 1.0  # chance answers differ between repetitions


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "eduart_core", *args]


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    return env


@pytest.mark.slow  # a real kill
def test_kill_9_then_resume_never_asks_an_answered_item_again(store):
    records = fill_store(store, 3)  # 21 items
    journal_glob = "kill*/responses.jsonl"
    with StubServer(latency_s=0.3, answer=_answer) as stub:
        args = ["run", "--db", str(store.path), "--provider", "openai_compatible", "--base-url", f"{stub.url}/v1",
                "--model-id", "slow", "--run-id", "kill", "--concurrency", "2", "--quiet"]
        proc = subprocess.Popen(_cli(*args), env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 240  # a busy machine starts the CLI slowly
        journal = None
        while time.monotonic() < deadline:
            found = list(store.runs_dir.glob(journal_glob))
            if found and found[0].read_text().count("\n") >= 4:
                journal = found[0]
                break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert journal is not None
        answered = {json.loads(ln)["item_id"] for ln in journal.read_text().splitlines() if ln.strip()}
        assert 4 <= len(answered) < len(records)
        asked_before = len(stub.requests)
        done = subprocess.run(_cli("run", "--db", str(store.path), "--resume", "kill", "--concurrency", "4",
                                   "--quiet"), env=_env(), capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        asked_after = stub.requests[asked_before:]
        per_item = {r["item_id"]: len(stub.requests_for(f"Exercise {r['item_id']}\n")) for r in records}
    assert not any(f"Exercise {i}\n" in r.user_text for r in asked_after for i in answered)
    assert len(asked_after) == len(records) - len(answered)
    assert all(per_item[i] == 1 for i in answered)  # answered before the kill: asked exactly once
    assert all(1 <= n <= 2 for n in per_item.values())  # in flight at the kill: asked again once
    rows = _responses(store)
    assert sorted(r[1] for r in rows) == sorted(r["item_id"] for r in records)  # exactly one response each
    lines = [json.loads(ln) for ln in journal.read_text().splitlines() if ln.strip()]
    keys = [rec["request_key"] for rec in lines]
    assert len(keys) == len(set(keys)) == len(records)
    assert list(_runs(store).values())[0]["status"] == "completed"


@pytest.mark.slow
def test_dashboard_reads_while_a_run_writes(store):
    from eduart_core.store.runs import list_runs

    fill_store(store, 4)
    with StubServer(latency_s=0.25, answer=_answer) as stub:
        proc = subprocess.Popen(_cli("run", "--db", str(store.path), "--provider", "openai_compatible",
                                     "--base-url", f"{stub.url}/v1", "--model-id", "slow", "--concurrency", "2",
                                     "--quiet"), env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        reads, counts = 0, []
        try:
            while proc.poll() is None:
                frame = list_runs(Store(store.path, lock_timeout_s=5))
                if not frame.empty:
                    counts.append(int(frame["n_responses"].sum()))
                reads += 1
                time.sleep(0.1)
        finally:
            err = proc.communicate(timeout=60)[1]
        assert proc.returncode == 0, err
    assert reads >= 5
    assert counts and counts[-1] > counts[0] or len(set(counts)) > 1  # saw the run progress while reading
    assert len(_responses(store)) == 28


def test_registry_gemini_and_bedrock_models_through_the_runner(store, monkeypatch):
    fill_store(store)
    with StubServer(answer=_answer) as stub:
        monkeypatch.setenv("GEMINI_API_KEY", "gem-test-key-000000")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", stub.url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIATESTTESTTEST0000")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test-secret-000000000")
        monkeypatch.setenv("AWS_REGION", "us-east-1")
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", stub.url)
        assert main(["run", "--db", str(store.path), "--model", "gemini-3.5-flash", "--model", "claude-haiku-4.5",
                     "--run-id", "multi", "--quiet", "--limit", "3"]) == 0
        assert main(["run", "--db", str(store.path), "--run-id", "multi", "--resume", "--quiet"]) == 0
        seen = list(stub.requests)
    assert sorted(r.protocol for r in seen) == ["bedrock"] * 3 + ["gemini"] * 3  # the resume asked nothing
    assert {r.temperature for r in seen if r.protocol == "gemini"} == {1.0}
    assert {r.temperature for r in seen if r.protocol == "bedrock"} == {0.0}
    assert {r.model for r in seen} == {"gemini-3.5-flash", "us.anthropic.claude-haiku-4-5-20251001-v1:0"}
    assert all((r.image is not None) == ("Exercise 0003" in r.user_text) for r in seen)  # 0003 has an image
    rows = _responses(store)
    assert len(rows) == 6 and all(r[5] == 100 for r in rows)
    runs = _runs(store)
    assert all(r["cost_usd"] > 0 for r in runs.values())


def test_torn_journal_line_is_skipped_and_repaired(tmp_path):
    from eduart_core.runner.journal import Journal, read_records

    path = tmp_path / "responses.jsonl"
    path.write_text('{"request_key": "a", "status": "ok"}\n{"request_key": "b", "sta')  # crash mid-write
    assert [r["request_key"] for r in read_records(path)] == ["a"]
    journal = Journal(path)
    journal.append({"request_key": "c", "status": "ok"})
    journal.close()
    assert [r["request_key"] for r in read_records(path)] == ["a", "c"]


def test_stratified_sample_covers_every_stratum(store):
    from eduart_core.runner.selection import select_items
    from eduart_core.store.items import load_items

    fill_store(store, 3)
    items = load_items(store, "demo")
    chosen = select_items(items, None, None, 10)
    assert len(chosen) == 10
    assert set(chosen["type"]) == set(items["type"])  # one stratum per format here, each represented
    assert list(select_items(items, None, None, 10)["item_id"]) == list(chosen["item_id"])  # seeded


def test_model_without_image_input_never_drops_images_silently(store, tmp_path, monkeypatch, capsys):
    records = fill_store(store)
    with StubServer(answer=_answer) as stub:
        registry = tmp_path / "models.toml"
        registry.write_text('[models."blind"]\ndisplay_name = "Blind"\nprovider = "openai_compatible"\n'
                            f'api_model_id = "blind"\nbase_url = "{stub.url}/v1"\naccepts_images = false\n')
        monkeypatch.setenv("EDUART_MODELS", str(registry))
        assert main(["run", "--db", str(store.path), "--model", "blind", "--quiet"]) == 2
        assert "--text-only" in capsys.readouterr().err and not stub.requests
        assert main(["run", "--db", str(store.path), "--model", "blind", "--text-only", "--quiet"]) == 0
        assert len(stub.requests) == len(records) and all(r.image is None for r in stub.requests)
    rows = _responses(store)
    assert len(rows) == len(records) and not any(r[4] for r in rows)  # image_sent recorded False


def _cache_keys(store: Store, prompts: Path, name: str = "cache_key",
                url: str = "http://127.0.0.1:9") -> dict[str, str]:
    from eduart_core.runner.launch import LaunchOptions, plan_launch

    options = LaunchOptions(adhoc={"provider": "openai_compatible", "model_id": "stub-model",
                                   "base_url": f"{url}/v1"}, dataset="demo", launch_id="keys")
    return {job.meta["item_id"]: job.payload[name] for job in plan_launch(store, options, prompts_dir=prompts).jobs}


def test_a_change_to_one_formats_rules_leaves_the_other_formats_requests_cached(store, tmp_path):
    """Each request is keyed by its own format's templates: new numeric-style rules for true/false
    items change the keys of the true/false requests only."""
    import shutil

    records = fill_store(store)
    prompts = tmp_path / "prompts"
    shutil.copytree(ROOT / "prompts", prompts)
    before = _cache_keys(store, prompts)
    rules = prompts / "formats" / "true_false.md"
    rules.write_text(rules.read_text(encoding="utf-8") + "\nAnswer every statement, even when unsure.\n",
                     encoding="utf-8")
    os.utime(rules, ns=(time.time_ns(), time.time_ns() + 10**9))
    after = _cache_keys(store, prompts)
    changed = {item for item in before if before[item] != after[item]}
    assert changed == {r["item_id"] for r in records if r["type"] == "true_false"}


def test_replies_cached_before_keys_were_per_format_are_still_served(store):
    """A cache written when every request was keyed by all templates together still answers: the
    launch pays nothing again, and the entry is copied to the request's current key."""
    from eduart_core.runner.cache import ResponseCache

    records = fill_store(store)
    with StubServer(answer=_answer) as stub:
        assert _adhoc(stub, store, "--run-id", "first") == 0
        current = _cache_keys(store, ROOT / "prompts", url=stub.url)
        legacy = _cache_keys(store, ROOT / "prompts", "legacy_cache_key", url=stub.url)
        cache = ResponseCache(store.cache_dir / "responses")
        for item, key in current.items():  # the cache as an older version wrote it
            path = cache._path(key)
            target = cache._path(legacy[item])
            target.parent.mkdir(parents=True, exist_ok=True)
            path.rename(target)
        assert all(cache.get(key) is None for key in current.values())
        assert _adhoc(stub, store, "--run-id", "second") == 0
        assert len(stub.requests) == len(records)  # the second launch asked nothing
    assert all(cache.get(key) is not None for key in current.values())

"""Sweeps across providers: one launch asks every provider at once, each at its own limits from
models.toml (launch flags as defaults), fairly between its models, with dialogues in turn order;
a sweep killed with SIGKILL resumes and asks nothing answered twice. Real CLI, real SDKs over
HTTP to stub servers, real store."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from runner_items import fill_store
from stubs import StubServer

from eduart_core.cli import main
from eduart_core.errors import UserError
from eduart_core.runner.journal import Journal
from eduart_core.runner.pool import Job, Limit, Pool
from eduart_core.store import Store

ROOT = Path(__file__).resolve().parents[2]


def _answer(info) -> str:
    return json.dumps({"Answers": [{"id": "A", "text": "TRUE"}], "motivation": "Because it is so."})


def _registry(tmp_path: Path, openai_url: str, gemini_url: str, online: str = "", b2: str = "") -> Path:
    """Two models at a stub speaking OpenAI, two at a stub speaking Gemini; ``online`` and ``b2``
    add [online.*] tables and fields of model b2."""
    text = ""
    for key, provider, url in (("a1", "openai", f"{openai_url}/v1"), ("a2", "openai", f"{openai_url}/v1"),
                               ("b1", "gemini", gemini_url), ("b2", "gemini", gemini_url)):
        text += (f'[models.{key}]\ndisplay_name = "Model {key}"\nprovider = "{provider}"\n'
                 f'api_model_id = "{key}-id"\nbase_url = "{url}"\n' + (b2 if key == "b2" else "") + "\n")
    path = tmp_path / "models.toml"
    path.write_text(text + online, encoding="utf-8")
    return path


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-sweep-000000")
    monkeypatch.setenv("GEMINI_API_KEY", "gem-test-sweep-000000")


def _run(store: Store, *args: str) -> int:
    return main(["run", "--db", str(store.path), "--quiet", "--backoff", "0.05", *args])


def test_one_launch_asks_every_provider_at_once_each_at_its_own_limit(store, tmp_path, monkeypatch, keys):
    records = fill_store(store, 2)  # 14 items
    with StubServer(latency_s=0.05, answer=_answer) as a, StubServer(latency_s=0.05, answer=_answer) as b:
        registry = _registry(tmp_path, a.url, b.url, online="[online.openai]\nconcurrency = 2\n",
                             b2="concurrency = 1\n")
        monkeypatch.setenv("EDUART_MODELS", str(registry))
        # gemini has no [online] table: the launch flag is its limit
        assert _run(store, "--model", "a1", "--model", "a2", "--model", "b1", "--model", "b2",
                    "--condition", "both", "--concurrency", "3") == 0
        seen_a, seen_b = list(a.requests), list(b.requests)
        assert a.peak == 2  # [online.openai] concurrency = 2, reached and never passed
        assert 2 <= b.peak <= 3  # --concurrency 3 where models.toml says nothing
        assert b.peak_by_model["b2-id"] == 1  # the model's own limit inside its provider's
    assert len(seen_a) == len(seen_b) == 2 * 2 * len(records)
    # both providers were asked at the same time, not one after the other
    assert min(r.time for r in seen_b) < max(r.time for r in seen_a)
    assert min(r.time for r in seen_a) < max(r.time for r in seen_b)
    # a provider's models take turns: both are among its first requests
    assert {r.model for r in seen_a[:6]} == {"a1-id", "a2-id"}
    with store.connect(read_only=True) as con:
        assert con.execute("SELECT count(*) FROM responses WHERE error IS NULL").fetchone()[0] == 8 * len(records)


def test_a_providers_rpm_spaces_its_requests_only(store, tmp_path, monkeypatch, keys):
    fill_store(store)
    with StubServer(answer=_answer) as a, StubServer(answer=_answer) as b:
        registry = _registry(tmp_path, a.url, b.url, online="[online.gemini]\nrpm = 600\nconcurrency = 4\n")
        monkeypatch.setenv("EDUART_MODELS", str(registry))
        assert _run(store, "--model", "a1", "--model", "b1", "--condition", "both", "--limit", "4",
                    "--concurrency", "4") == 0
        starts = sorted(r.time for r in b.requests)
        assert len(starts) == 8 and len(a.requests) == 8
    assert starts[-1] - starts[0] >= 0.6  # 600 per minute: 8 starts 0.1 s apart (arrivals jitter a little)


def test_dialogues_keep_their_turn_order_within_each_model_of_a_sweep(store, tmp_path, monkeypatch, keys):
    from dialogue_items import fill_dialogue

    fill_dialogue(store)

    def label(info) -> str:
        return info.user_text.split(":")[0].rsplit("\n", 1)[-1]

    def reply(info) -> str:
        return json.dumps({"Answers": [{"id": "A"}], "motivation": f"reply to {label(info)}"})

    with StubServer(latency_s=0.05, answer=reply) as a, StubServer(latency_s=0.05, answer=reply) as b:
        monkeypatch.setenv("EDUART_MODELS", str(_registry(tmp_path, a.url, b.url)))
        assert _run(store, "--model", "a1", "--model", "b2", "--condition", "both", "--concurrency", "8") == 0
        seen = list(a.requests) + list(b.requests)
    streams: dict[tuple[str, bool], list] = {}
    for request in seen:
        streams.setdefault((request.model, "motivation" in request.schema["properties"]), []).append(request)
    assert len(streams) == 4
    for requests in streams.values():
        turns = {label(r): r for r in requests}
        one, two, three = turns["TURN-ONE"], turns["TURN-TWO"], turns["TURN-THREE"]
        assert one.time < two.time < three.time
        said = [m["text"] for m in three.messages if m["role"] == "assistant"]
        assert len(said) == 2 and "reply to TURN-ONE" in said[0] and "reply to TURN-TWO" in said[1]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "eduart_core", *args]


@pytest.mark.slow  # a real kill
def test_a_sweep_killed_mid_way_resumes_and_asks_nothing_answered_twice(store, tmp_path, keys):
    records = fill_store(store, 3)  # 21 items, 4 models x 2 conditions: 168 requests
    with StubServer(latency_s=0.2, answer=_answer) as a, StubServer(latency_s=0.2, answer=_answer) as b:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "EDUART_MODELS": str(_registry(tmp_path, a.url, b.url))}
        args = ["run", "--db", str(store.path), "--model", "a1", "--model", "a2", "--model", "b1", "--model", "b2",
                "--condition", "both", "--run-id", "sweep", "--concurrency", "3", "--quiet"]
        proc = subprocess.Popen(_cli(*args), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 240  # a busy machine starts the CLI slowly
        journals: list[Path] = []
        while time.monotonic() < deadline:
            journals = list(store.runs_dir.glob("sweep*/responses.jsonl"))
            lines = {p: p.read_text().count("\n") for p in journals}
            if len(journals) >= 4 and sum(lines.values()) >= 20 and len([n for n in lines.values() if n]) >= 4:
                break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        before = [json.loads(ln) for p in journals for ln in p.read_text().splitlines() if ln.strip()]
        answered = {(r["model"], r["condition"], r["item_id"]) for r in before if r["status"] == "ok"}
        assert 20 <= len(answered) < 8 * len(records)
        assert len({m for m, _, _ in answered}) >= 3  # several providers' models were under way at the kill
        asked_before = len(a.requests), len(b.requests)
        done = subprocess.run(_cli("run", "--db", str(store.path), "--resume", "sweep", "--concurrency", "3",
                                   "--quiet"), env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        after = a.requests[asked_before[0]:] + b.requests[asked_before[1]:]
    asked_again = []
    for request in after:
        model = request.model.removesuffix("-id")
        condition = "motivation" if "motivation" in request.schema["properties"] else "default"
        item = request.user_text.split("Exercise ", 1)[1].split("\n", 1)[0]
        asked_again.append((model, condition, item))
    assert not set(asked_again) & answered  # nothing answered before the kill was asked again
    assert len(asked_again) == len(set(asked_again)) == 8 * len(records) - len(answered)
    with store.connect(read_only=True) as con:
        stored = con.execute("SELECT count(*), count(DISTINCT run_id || '/' || item_id) FROM responses "
                             "WHERE error IS NULL").fetchone()
        statuses = {s for (s,) in con.execute("SELECT status FROM runs").fetchall()}
    assert stored == (8 * len(records), 8 * len(records)) and statuses == {"completed"}


# ---------------------------------------------------------------- the pool's lanes, without HTTP

class _Recorder:
    """A call that sleeps a little and records the order of starts and the most in flight per limit."""

    def __init__(self, limit_of: dict[str, tuple[str, ...]], sleep_s: float = 0.02):
        self.limit_of, self.sleep_s = limit_of, sleep_s
        self.lock = threading.Lock()
        self.now: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        self.order: list[str] = []

    def __call__(self, job: Job) -> dict:
        names = self.limit_of[job.lane]
        with self.lock:
            self.order.append(job.request_key)
            for name in names:
                self.now[name] = self.now.get(name, 0) + 1
                self.peak[name] = max(self.peak.get(name, 0), self.now[name])
        time.sleep(self.sleep_s)
        with self.lock:
            for name in names:
                self.now[name] -= 1
        return {"raw_text": "ok"}


def test_lanes_take_turns_and_never_pass_a_shared_limit(tmp_path):
    one = Limit("provider p", concurrency=1)
    call = _Recorder({"a": ("provider p",), "b": ("provider p",), "c": ("provider p",)}, sleep_s=0.0)
    jobs = [Job(f"{lane}{i}", lane=lane, meta={"run_id": lane}) for lane in "abc" for i in range(3)]
    result = Pool(call, Journal(tmp_path / "j.jsonl"), limits={lane: (one,) for lane in "abc"}).run(jobs)
    assert result.ok == 9
    assert call.order == ["a0", "b0", "c0", "a1", "b1", "c1", "a2", "b2", "c2"]  # round robin, order kept


def test_a_providers_lanes_take_turns_while_another_provider_keeps_the_workers_busy(tmp_path):
    """Provider p (one at a time, fast answers) has lanes p1 and p2; provider q (two at a time, slow
    answers) has q1 and q2. Whenever p frees its slot, p1 and p2 must alternate, wherever the
    other provider's turns have got to."""
    p, q = Limit("provider p", 1), Limit("provider q", 2)
    limits = {"p1": (p,), "p2": (p,), "q1": (q,), "q2": (q,)}
    started: list[str] = []
    lock = threading.Lock()

    def call(job: Job) -> dict:
        with lock:
            started.append(job.lane)
        time.sleep(0.01 if job.lane.startswith("p") else 0.03)
        return {"raw_text": "ok"}

    jobs = [Job(f"{lane}-{i}", lane=lane, meta={"run_id": lane}) for lane in limits for i in range(12)]
    result = Pool(call, Journal(tmp_path / "j.jsonl"), concurrency=10, limits=limits).run(jobs)
    assert result.ok == 48
    of_p = [lane for lane in started if lane.startswith("p")]
    assert of_p == ["p1", "p2"] * 12


def test_every_limit_holds_for_its_lanes_while_other_providers_run(tmp_path):
    p, q, model = Limit("provider p", 3), Limit("provider q", 2), Limit("model m", 1)
    limits = {"p1": (p,), "p2": (p, model), "q1": (q,)}
    call = _Recorder({"p1": ("provider p",), "p2": ("provider p", "model m"), "q1": ("provider q",)})
    jobs = [Job(f"{lane}-{i}", lane=lane, meta={"run_id": lane}) for lane in limits for i in range(12)]
    result = Pool(call, Journal(tmp_path / "j.jsonl"), concurrency=50, limits=limits).run(jobs)
    assert result.ok == 36
    assert call.peak == {"provider p": 3, "model m": 1, "provider q": 2}


def test_bad_online_limits_are_one_line_errors(tmp_path, monkeypatch):
    from eduart_core.providers.online_config import load_online_limits
    from eduart_core.providers.registry import load_registry

    path = tmp_path / "models.toml"
    path.write_text("[online.nosuch]\nconcurrency = 4\n", encoding="utf-8")
    with pytest.raises(UserError, match="online.nosuch: unknown provider"):
        load_online_limits(path)
    path.write_text("[online.openai]\nconcurrency = 0\n", encoding="utf-8")
    with pytest.raises(UserError, match="online.openai.concurrency must be a whole number"):
        load_online_limits(path)
    path.write_text('[models.x]\ndisplay_name = "X"\nprovider = "openai"\napi_model_id = "x"\nrpm = -5\n',
                    encoding="utf-8")
    with pytest.raises(UserError, match="models.x.rpm must be a positive number"):
        load_registry(path)
    path.write_text("[online.openai]\nconcurrency = 4\nrpm = 120\n", encoding="utf-8")
    assert load_online_limits(path)["openai"].rpm == 120

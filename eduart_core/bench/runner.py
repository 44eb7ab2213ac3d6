"""`bench runner`: requests per second of the runner against local stubs with fixed latency.

The stub (an OpenAI-compatible chat endpoint that sleeps ``--latency-ms`` per request) runs in
its own process so it does not compete with the runner for the GIL. The bench drives the real
launch path (items from a temporary store, prompts, the OpenAI SDK over HTTP, journal, live
ingestion into DuckDB; cache off) and prints achieved requests per second next to the ideal
``concurrency / latency``. It also runs the same launch with an in-process provider that only
sleeps the latency (no SDK, no HTTP). "Runner overhead" is the mean gap a worker leaves between
the end of one call and the start of its next (journal append and flush, progress, queue, rate
limiter); "call beyond latency" is what the SDK and HTTP add to the stub's sleep.
Target: at least 90% of ideal at concurrency 16 and 64; overhead under 5 ms.

``--sweep``: four stub providers (OpenAI, Gemini, Bedrock and an OpenAI-compatible server, each
spoken to by its real SDK) with latencies of 100, 200, 400 and 800 ms and limits of their own in a
temporary ``models.toml`` (``[online.<provider>]``), three models each, both conditions. Each
provider's models are launched alone, then all twelve in one launch. Target: the sweep's wall time
at most 1.15x that of the slowest provider alone (a launch that asked model by model would take
about the sum of the times alone).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ..vocab import MCQ_TYPE

_TEXT = '{"Answers": [{"id": "A"}]}'
ANSWER = json.dumps({"id": "bench", "object": "chat.completion", "created": 0, "model": "bench",
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": _TEXT}}],
                     "usage": {"prompt_tokens": 50, "completion_tokens": 8, "total_tokens": 58}}).encode()
#: The same answer in Gemini's generateContent and Bedrock's converse wire formats.
GEMINI_ANSWER = json.dumps({"candidates": [{"content": {"role": "model", "parts": [{"text": _TEXT}]},
                                            "finishReason": "STOP", "index": 0}],
                            "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 8,
                                              "totalTokenCount": 58}}).encode()
BEDROCK_ANSWER = json.dumps({"output": {"message": {"role": "assistant", "content": [{"text": _TEXT}]}},
                             "stopReason": "end_turn", "usage": {"inputTokens": 50, "outputTokens": 8,
                                                                "totalTokens": 58},
                             "metrics": {"latencyMs": 1}}).encode()


def serve(latency_s: float) -> None:
    """The stub process: prints its port, answers every POST after ``latency_s``.

    A minimal asyncio HTTP/1.1 server (keep-alive, Content-Length bodies): one event loop costs
    far less CPU than a thread per connection, so on a small machine the stub does not steal the
    runner's CPU and the bench measures the runner, not the stub.
    """
    import asyncio

    def reply(body: bytes) -> bytes:
        return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(body)).encode() + b"\r\nConnection: keep-alive\r\n\r\n" + body)

    openai, gemini, bedrock = reply(ANSWER), reply(GEMINI_ANSWER), reply(BEDROCK_ANSWER)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                header = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in header.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:].strip())
                if length:
                    await reader.readexactly(length)
                target = header.split(b" ", 2)[1] if header.count(b" ") >= 2 else b""
                await asyncio.sleep(latency_s)
                writer.write(gemini if b":generateContent" in target
                             else bedrock if target.endswith(b"/converse") else openai)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512)
        print(server.sockets[0].getsockname()[1], flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def _bench_items(n: int) -> list[dict]:
    letters = "ABCD"
    return [{"item_id": f"b{i:05d}", "type": MCQ_TYPE, "language": "en", "has_image": False,
             "image": None, "question_text": f"Benchmark question {i}: which option is first?",
             "choices": [{"id": c, "text": f"option {c.lower()} of {i}"} for c in letters],
             "answers": [{"id": "A", "description": f"option a of {i}"}], "source": "bench"} for i in range(n)]


class SleepProvider:
    """Answers after sleeping the stub latency, in process: isolates the runner's own cost."""

    def __init__(self, latency_s: float):
        self.latency_s = latency_s

    def complete(self, request):
        from ..providers.base import ProviderReply

        time.sleep(self.latency_s)
        return ProviderReply('{"Answers": [{"id": "A"}]}', 50, 8, "stop")


class Timed:
    """Wraps a provider and records (thread, start, end) of every call, to measure the gap the
    runner leaves between two calls on one worker (its own overhead per request)."""

    def __init__(self, inner):
        self.inner = inner
        self.calls: list[tuple[int, float, float]] = []
        self._lock = threading.Lock()

    def complete(self, request):
        start = time.perf_counter()
        try:
            return self.inner.complete(request)
        finally:
            end = time.perf_counter()
            with self._lock:
                self.calls.append((threading.get_ident(), start, end))

    def gaps_ms(self) -> list[float]:
        by_thread: dict[int, list[tuple[float, float]]] = {}
        for ident, start, end in self.calls:
            by_thread.setdefault(ident, []).append((start, end))
        gaps = []
        for calls in by_thread.values():
            calls.sort()
            gaps += [(b[0] - a[1]) * 1000 for a, b in zip(calls, calls[1:])]
        return gaps


def one_run(store, url: str | None, n_items: int, concurrency: int, latency_s: float, tag: str) -> dict:
    from ..providers.registry import make_provider
    from ..runner.launch import LaunchOptions, execute, plan_launch

    options = LaunchOptions(adhoc={"provider": "openai_compatible", "model_id": "bench",
                                   "base_url": f"{url}/v1" if url else "http://127.0.0.1:9/v1"},
                            dataset="bench", launch_id=tag, concurrency=concurrency, use_cache=False,
                            limit=n_items, timeout_s=30)
    plan = plan_launch(store, options)
    spec = plan.members[0].spec
    timed = Timed(SleepProvider(latency_s) if url is None else make_provider(spec, timeout_s=30))
    summary = execute(store, plan, progress=False, providers={spec.key: timed})
    result = summary["result"]
    achieved = result.ok / result.wall_s
    ideal = concurrency / latency_s
    gaps = timed.gaps_ms()
    call_ms = statistics.mean(end - start for _, start, end in timed.calls) * 1000 - latency_s * 1000
    return {"achieved": achieved, "ideal": ideal, "ratio": achieved / ideal,
            "overhead_ms": statistics.mean(gaps) if gaps else 0.0, "call_extra_ms": call_ms,
            "ok": result.ok, "errors": result.errors, "wall_s": result.wall_s}


def max_in_flight(calls: list[tuple[int, float, float]]) -> int:
    """The most calls that overlapped at any moment."""
    events = sorted([(start, 1) for _, start, _ in calls] + [(end, -1) for _, _, end in calls],
                    key=lambda e: (e[0], e[1]))
    peak = now = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    return peak


#: The sweep's stub providers: (provider, latency in ms, [online.<provider>] limits).
SWEEP_PROVIDERS = (("openai", 100, {"concurrency": 2}),
                   ("gemini", 200, {"concurrency": 8, "rpm": 900}),
                   ("bedrock", 400, {"concurrency": 6}),
                   ("openai_compatible", 800, {"concurrency": 10}))
SWEEP_MODELS_PER_PROVIDER = 3


def _start_stub(latency_s: float) -> tuple[subprocess.Popen, str]:
    stub = subprocess.Popen([sys.executable, "-m", "eduart_core.bench.runner", "--serve", str(latency_s)],
                            stdout=subprocess.PIPE, text=True)
    return stub, f"http://127.0.0.1:{int(stub.stdout.readline())}"


def _sweep_registry(path: Path, urls: dict[str, str]) -> dict[str, list[str]]:
    """Write the sweep's models.toml (three models per stub provider, each provider's limits);
    returns provider -> model keys."""
    lines, models = [], {}
    for provider, _latency, limits in SWEEP_PROVIDERS:
        base = urls[provider] + ("/v1" if provider.startswith("openai") else "")
        models[provider] = []
        for n in range(1, SWEEP_MODELS_PER_PROVIDER + 1):
            key = f"sweep-{provider}-{n}"
            models[provider].append(key)
            lines += [f'[models."{key}"]', f'display_name = "Sweep {provider} {n}"', 'family = "Bench"',
                      f'provider = "{provider}"', f'api_model_id = "bench-{n}"', f'base_url = "{base}"',
                      "accepts_images = true", ""]
        lines += [f"[online.{provider}]", *(f"{k} = {v}" for k, v in limits.items()), ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return models


def _sweep_launch(store, models: list[str], n_items: int, tag: str, timed: dict[str, Timed], secrets) -> dict:
    """One launch of ``models`` (both conditions); wall time from planning to the last answer stored."""
    from ..providers.registry import load_registry, make_provider
    from ..runner.launch import LaunchOptions, execute, plan_launch

    registry = load_registry()
    t0 = time.perf_counter()
    options = LaunchOptions(models=models, conditions=["default", "motivation"], dataset="bench", launch_id=tag,
                            use_cache=False, limit=n_items, timeout_s=30)
    plan = plan_launch(store, options, registry=registry)
    providers = {}
    for key in models:
        spec = registry[key]
        inner = make_provider(spec, timeout_s=30, secrets=secrets)
        providers[key] = _Counted(inner, timed[spec.provider])
    summary = execute(store, plan, progress=False, providers=providers)
    wall = time.perf_counter() - t0
    result = summary["result"]
    return {"wall_s": wall, "ok": result.ok, "errors": result.errors, "requests": len(plan.jobs)}


class _Counted:
    """A provider whose calls are recorded in a ``Timed`` shared by every model of its provider."""

    def __init__(self, inner, timed: Timed):
        self.inner, self.timed = inner, timed

    def complete(self, request):
        start = time.perf_counter()
        try:
            return self.inner.complete(request)
        finally:
            end = time.perf_counter()
            with self.timed._lock:
                self.timed.calls.append((threading.get_ident(), start, end))


def sweep_main(args) -> int:
    """The sweep bench (module doc): every provider alone, then all at once; medians of ``--repeat``."""
    import os

    from ..providers.secrets import SecretSource
    from ..scoring.item_writes import upsert_items
    from ..store import Store

    stubs = []
    try:
        urls = {}
        for provider, latency_ms, _ in SWEEP_PROVIDERS:
            stub, urls[provider] = _start_stub(latency_ms / 1000.0)
            stubs.append(stub)
        with tempfile.TemporaryDirectory(prefix="eduart-bench-sweep-") as tmp:
            registry_path = Path(tmp) / "models.toml"
            models = _sweep_registry(registry_path, urls)
            saved = os.environ.get("EDUART_MODELS")
            os.environ["EDUART_MODELS"] = str(registry_path)
            secrets = SecretSource(root=Path(tmp), environ={
                "OPENAI_API_KEY": "sk-bench", "GEMINI_API_KEY": "bench-key", "AWS_ACCESS_KEY_ID": "AKIABENCH",
                "AWS_SECRET_ACCESS_KEY": "bench-secret", "AWS_REGION": "us-east-1"})
            try:
                store = Store(Path(tmp) / "bench.duckdb")
                upsert_items(store, _bench_items(args.items), "bench", "bench")
                per_provider = 2 * SWEEP_MODELS_PER_PROVIDER * args.items
                print(f"runner sweep bench: {len(SWEEP_PROVIDERS)} stub providers x {SWEEP_MODELS_PER_PROVIDER} "
                      f"models x 2 conditions x {args.items} items ({per_provider} requests per provider, "
                      f"{per_provider * len(SWEEP_PROVIDERS)} in the sweep), {args.repeat} runs (medians)")
                for provider, latency_ms, limits in SWEEP_PROVIDERS:
                    rate = limits["concurrency"] / (latency_ms / 1000.0)
                    if limits.get("rpm"):
                        rate = min(rate, limits["rpm"] / 60.0)
                    shown = ", ".join(f"{k} {v}" for k, v in limits.items())
                    print(f"  {provider:18} latency {latency_ms:4d} ms, {shown:26} -> at most {rate:5.1f} req/s, "
                          f"ideal {per_provider / rate:5.1f} s alone")
                from ..providers.registry import load_registry, make_provider

                registry = load_registry()
                for provider, _, _ in SWEEP_PROVIDERS:  # the SDKs' imports are not part of a launch
                    make_provider(registry[models[provider][0]], secrets=secrets)
                alone: dict[str, list[float]] = {p: [] for p, _, _ in SWEEP_PROVIDERS}
                sweeps: list[float] = []
                peaks: dict[str, list[int]] = {p: [] for p, _, _ in SWEEP_PROVIDERS}
                failures = 0
                for rep in range(args.repeat):
                    for provider, _, _ in SWEEP_PROVIDERS:
                        timed = {p: Timed(None) for p, _, _ in SWEEP_PROVIDERS}
                        run = _sweep_launch(store, models[provider], args.items, f"alone-{provider}-{rep}", timed,
                                            secrets)
                        alone[provider].append(run["wall_s"])
                        failures += run["errors"]
                    timed = {p: Timed(None) for p, _, _ in SWEEP_PROVIDERS}
                    everything = [key for provider, _, _ in SWEEP_PROVIDERS for key in models[provider]]
                    run = _sweep_launch(store, everything, args.items, f"sweep-{rep}", timed, secrets)
                    sweeps.append(run["wall_s"])
                    failures += run["errors"]
                    shown = ", ".join(f"{p} {alone[p][-1]:.2f} s" for p in alone)
                    print(f"  run {rep + 1}: alone {shown}; sweep {run['wall_s']:.2f} s", flush=True)
                    for provider in peaks:
                        peaks[provider].append(max_in_flight(timed[provider].calls))
            finally:
                if saved is None:
                    os.environ.pop("EDUART_MODELS", None)
                else:
                    os.environ["EDUART_MODELS"] = saved
        medians = {p: statistics.median(v) for p, v in alone.items()}
        for provider, _, limits in SWEEP_PROVIDERS:
            print(f"  {provider:18} alone {medians[provider]:6.2f} s   in the sweep at most "
                  f"{max(peaks[provider])} in flight (limit {limits['concurrency']})")
        slowest = max(medians.values())
        total = sum(medians.values())
        sweep = statistics.median(sweeps)
        print(f"slowest provider alone {slowest:.2f} s; one after another (model by model) {total:.2f} s; "
              f"sweep of all {len(SWEEP_PROVIDERS)} at once {sweep:.2f} s = {sweep / slowest:.2f}x the slowest"
              + (f"  ({failures} failed requests)" if failures else ""))
        verdict = "meets" if sweep <= 1.15 * slowest and not failures else "misses"
        print(f"target (sweep <= 1.15x the slowest provider alone): {verdict}")
    finally:
        for stub in stubs:
            stub.terminate()
            stub.wait(10)
    return 0


def main(args) -> int:
    from ..scoring.item_writes import upsert_items
    from ..store import Store

    if args.items is None:
        args.items = 40 if args.sweep else 400
    if args.sweep:
        return sweep_main(args)

    latency_s = args.latency_ms / 1000.0
    stub = subprocess.Popen([sys.executable, "-m", "eduart_core.bench.runner", "--serve", str(latency_s)],
                            stdout=subprocess.PIPE, text=True)
    try:
        port = int(stub.stdout.readline())
        url = f"http://127.0.0.1:{port}"
        with tempfile.TemporaryDirectory(prefix="eduart-bench-") as tmp:
            store = Store(Path(tmp) / "bench.duckdb")
            upsert_items(store, _bench_items(args.items), "bench", "bench")
            print(f"runner bench: {args.items} requests, latency {args.latency_ms:g} ms, "
                  f"concurrency {args.concurrency}, {args.repeat} runs (medians)")
            rows = {"HTTP stub via OpenAI SDK": [], "in-process sleep (runner only)": []}
            for rep in range(args.repeat):
                rows["HTTP stub via OpenAI SDK"].append(one_run(store, url, args.items, args.concurrency, latency_s, f"http{rep}"))
                rows["in-process sleep (runner only)"].append(one_run(store, None, args.items, args.concurrency, latency_s, f"null{rep}"))
            for name, runs in rows.items():
                med = {k: statistics.median(r[k] for r in runs)
                       for k in ("achieved", "ratio", "overhead_ms", "call_extra_ms")}
                errors = sum(r["errors"] for r in runs)
                print(f"{name:32} achieved {med['achieved']:7.1f} req/s  ideal {runs[0]['ideal']:7.1f} req/s  "
                      f"{100 * med['ratio']:5.1f}% of ideal  runner overhead {med['overhead_ms']:5.2f} ms/request  "
                      f"call beyond latency {med['call_extra_ms']:6.2f} ms" + (f"  ({errors} errors)" if errors else ""))
            bound = args.items / (-(-args.items // args.concurrency) * args.concurrency)
            if bound < 0.999:
                print(f"note: {args.items} requests in rounds of {args.concurrency} cap the rate at "
                      f"{100 * bound:.1f}% of ideal (the last round is not full); use a multiple of the concurrency")
            http = statistics.median(r["ratio"] for r in rows["HTTP stub via OpenAI SDK"])
            overhead = statistics.median(r["overhead_ms"] for r in rows["HTTP stub via OpenAI SDK"])
            verdict = "meets" if http >= 0.9 and overhead < 5 else "misses"
            print(f"target (>= 90% of ideal over HTTP, runner overhead < 5 ms per request): {verdict}")
    finally:
        stub.terminate()
        stub.wait(10)
    return 0


def register(bench_sub) -> None:
    parser = bench_sub.add_parser("runner", help="requests per second of the runner against a local stub",
                                  description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency-ms", type=float, default=200.0, help="stub latency per request (default 200)")
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight (default 16)")
    parser.add_argument("--items", type=int, default=None,
                        help="requests per run (default 400; with --sweep: items per model and condition, default 40)")
    parser.add_argument("--repeat", type=int, default=3, help="runs to take the median of (default 3)")
    parser.add_argument("--sweep", action="store_true",
                        help="four stub providers with their own latency and limits, alone and all at once")
    parser.set_defaults(func=main)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        serve(float(sys.argv[2]))

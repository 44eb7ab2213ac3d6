"""`bench runner`: requests per second of the runner against a local stub with fixed latency.

The stub (an OpenAI-compatible chat endpoint that sleeps ``--latency-ms`` per request) runs in
its own process so it does not compete with the runner for the GIL. The bench drives the real
launch path (items from a temporary store, prompts, the OpenAI SDK over HTTP, journal, live
ingestion into DuckDB; cache off) and prints achieved requests per second next to the ideal
``concurrency / latency``. It also runs the same launch with an in-process provider that only
sleeps the latency (no SDK, no HTTP). "Runner overhead" is the mean gap a worker leaves between
the end of one call and the start of its next (journal append and flush, progress, queue, rate
limiter); "call beyond latency" is what the SDK and HTTP add to the stub's sleep.
Target: at least 90% of ideal at concurrency 16 and 64; overhead under 5 ms.
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

ANSWER = json.dumps({"id": "bench", "object": "chat.completion", "created": 0, "model": "bench",
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": '{"Answers": [{"id": "A"}]}'}}],
                     "usage": {"prompt_tokens": 50, "completion_tokens": 8, "total_tokens": 58}}).encode()


def serve(latency_s: float) -> None:
    """The stub process: prints its port, answers every POST after ``latency_s``.

    A minimal asyncio HTTP/1.1 server (keep-alive, Content-Length bodies): one event loop costs
    far less CPU than a thread per connection, so on a small machine the stub does not steal the
    runner's CPU and the bench measures the runner, not the stub.
    """
    import asyncio

    head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(ANSWER)).encode() + b"\r\nConnection: keep-alive\r\n\r\n" + ANSWER)

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
                await asyncio.sleep(latency_s)
                writer.write(head)
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
    return [{"item_id": f"b{i:05d}", "type": "multiple_choice_radio", "language": "en", "has_image": False,
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


def main(args) -> int:
    from ..store import Store
    from ..store.items import upsert_items

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
    parser.add_argument("--items", type=int, default=400, help="requests per run (default 400)")
    parser.add_argument("--repeat", type=int, default=3, help="runs to take the median of (default 3)")
    parser.set_defaults(func=main)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        serve(float(sys.argv[2]))

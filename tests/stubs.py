"""Stub HTTP servers on 127.0.0.1 speaking the OpenAI chat completions, Gemini generateContent
and Bedrock converse wire protocols (and the OpenAI / Gemini embedding endpoints), with a request
log and fault injection.

Why real HTTP: the SDKs (openai, google-genai, boto3) are exercised exactly as in production,
including their serialisation of images and schemas, without any network or mock of our code.

Use::

    with StubServer(latency_s=0.05) as stub:
        stub.faults.append({"kind": "status", "status": 429, "retry_after": 1})
        ... point a provider at stub.url ...
        stub.requests  # list of RequestInfo, in arrival order
        stub.peak, stub.peak_by_model  # most requests in flight at once (all, per model)
"""
from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote


@dataclass
class RequestInfo:
    protocol: str            # openai | gemini | bedrock
    path: str
    model: str
    system: str | None
    user_text: str
    image: bytes | None
    image_mime: str | None
    schema: dict | None
    temperature: float | None
    headers: dict
    body: dict
    fault: str | None = None
    time: float = field(default_factory=time.time)
    # every message after the system prompt, in order: {"role": "user"|"assistant", "text", "image"}
    # (user_text and image above are those of the last user message: the current question)
    messages: list = field(default_factory=list)
    #: every part of the current (last user) message in order: ("text", str) or ("image", (mime, bytes))
    parts: list = field(default_factory=list)

    @property
    def images(self) -> list[tuple[str, bytes]]:
        """Every image of the current message, in order, as (mime, bytes)."""
        return [value for kind, value in self.parts if kind == "image"]


def _last_user(messages: list[dict]) -> tuple[str, bytes | None, str | None]:
    for message in reversed(messages):
        if message["role"] == "user":
            return message["text"], message["image"], message["mime"]
    return "", None, None


def _last_parts(messages: list[dict]) -> list:
    for message in reversed(messages):
        if message["role"] == "user":
            return message["parts"]
    return []


def _b64(data: str, urlsafe: bool) -> bytes:
    padded = data + "=" * (-len(data) % 4)
    return base64.urlsafe_b64decode(padded) if urlsafe else base64.b64decode(padded)


def parse_openai(path: str, body: dict, headers: dict) -> RequestInfo:
    system, messages = None, []
    for message in body.get("messages", []):
        content = message.get("content")
        if message.get("role") == "system":
            system = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
            continue
        text, image, mime, seq = "", None, None, []
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for part in parts:
            if part.get("type") == "text":
                text += part.get("text", "")
                seq.append(("text", part.get("text", "")))
            elif part.get("type") == "image_url":
                url = part["image_url"]["url"]
                match = re.match(r"data:([^;]+);base64,(.*)", url, re.S)
                if match:
                    data = _b64(match.group(2), urlsafe=False)
                    seq.append(("image", (match.group(1), data)))
                    if image is None:  # the item image; option images follow it
                        mime, image = match.group(1), data
        messages.append({"role": message.get("role"), "text": text, "image": image, "mime": mime, "parts": seq})
    text, image, mime = _last_user(messages)
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema")
    return RequestInfo("openai", path, body.get("model", ""), system, text, image, mime, schema,
                       body.get("temperature"), headers, body, messages=messages, parts=_last_parts(messages))


def parse_gemini(path: str, body: dict, headers: dict) -> RequestInfo:
    model = unquote(path.split("/models/", 1)[1].split(":", 1)[0])
    system = " ".join(p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", [])) or None
    messages = []
    for content in body.get("contents", []):
        text, image, mime, seq = "", None, None, []
        for part in content.get("parts", []):
            if "text" in part:
                text += part["text"]
                seq.append(("text", part["text"]))
            inline = part.get("inlineData") or part.get("inline_data")
            if inline:
                kind = inline.get("mimeType") or inline.get("mime_type")
                data = _b64(inline["data"], urlsafe=True)
                seq.append(("image", (kind, data)))
                if image is None:  # the item image; option images follow it
                    mime, image = kind, data
        role = "assistant" if content.get("role") == "model" else "user"
        messages.append({"role": role, "text": text, "image": image, "mime": mime, "parts": seq})
    text, image, mime = _last_user(messages)
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    return RequestInfo("gemini", path, model, system, text, image, mime, schema, config.get("temperature"),
                       headers, body, messages=messages, parts=_last_parts(messages))


def parse_bedrock(path: str, body: dict, headers: dict) -> RequestInfo:
    model = unquote(path.split("/model/", 1)[1].rsplit("/converse", 1)[0])
    system = " ".join(s.get("text", "") for s in body.get("system", [])) or None
    messages = []
    for message in body.get("messages", []):
        text, image, mime, seq = "", None, None, []
        for block in message.get("content", []):
            if "text" in block:
                text += block["text"]
                seq.append(("text", block["text"]))
            if "image" in block:
                kind = "image/" + block["image"].get("format", "jpeg")
                data = _b64(block["image"]["source"]["bytes"], urlsafe=False)
                seq.append(("image", (kind, data)))
                if image is None:  # the item image; option images follow it
                    mime, image = kind, data
        messages.append({"role": message.get("role"), "text": text, "image": image, "mime": mime, "parts": seq})
    text, image, mime = _last_user(messages)
    schema = None
    text_format = (body.get("outputConfig") or {}).get("textFormat") or {}
    raw_schema = ((text_format.get("structure") or {}).get("jsonSchema") or {}).get("schema")
    if raw_schema:
        schema = json.loads(raw_schema)
    return RequestInfo("bedrock", path, model, system, text, image, mime, schema,
                       (body.get("inferenceConfig") or {}).get("temperature"), headers, body, messages=messages,
                       parts=_last_parts(messages))


def stub_vector(text: str, dim: int = 64) -> list[float]:
    """A deterministic bag-of-words vector: texts sharing words are similar, others are not."""
    vector = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        vector[sum(word.encode()) % dim] += 1.0
    return vector


def parse_embeddings(path: str, body: dict, headers: dict) -> RequestInfo:
    """OpenAI /v1/embeddings or Gemini :batchEmbedContents; `user_text` joins the inputs."""
    if path.endswith("/embeddings"):
        inputs = body.get("input") or []
        inputs = [inputs] if isinstance(inputs, str) else list(inputs)
        return RequestInfo("openai_embeddings", path, body.get("model", ""), None, "\n".join(inputs), None, None,
                           None, None, headers, body, parts=[("text", t) for t in inputs])
    model = unquote(path.split("/models/", 1)[1].split(":", 1)[0])
    inputs = ["".join(p.get("text", "") for p in (r.get("content") or {}).get("parts", []))
              for r in body.get("requests", [])]
    return RequestInfo("gemini_embeddings", path, model, None, "\n".join(inputs), None, None, None, None,
                       headers, body, parts=[("text", t) for t in inputs])


def default_answer(info: RequestInfo) -> str:
    return '{"Answers": [{"id": "A"}]}'


class StubServer:
    """One threaded server that answers all three protocols. Thread-safe request log."""

    def __init__(self, latency_s: float = 0.0, answer: Callable[[RequestInfo], str] | None = None,
                 port: int = 0):
        self.latency_s = latency_s
        self.answer = answer or default_answer
        self.faults: list[dict] = []                       # consumed first in, first out
        self.fault_for: Callable[[RequestInfo], dict | None] | None = None
        self.requests: list[RequestInfo] = []
        self.lock = threading.Lock()
        self.tokens = (100, 20)
        # requests being answered now, and the most ever at once (overall and per model)
        self.in_flight = 0
        self.peak = 0
        self.in_flight_by_model: dict[str, int] = {}
        self.peak_by_model: dict[str, int] = {}
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # one small response must not wait for a delayed ACK

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                stub._handle(self)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):  # a client that hung up (timeout, kill -9)
                pass

        self.server = Server(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.server.request_queue_size = 256
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ------------------------------------------------------------ handling
    def _send(self, handler, status: int, payload: bytes, headers: dict | None = None) -> None:
        self._land(handler)
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        for k, v in (headers or {}).items():
            handler.send_header(k, v)
        handler.end_headers()
        if payload:
            handler.wfile.write(payload)

    def _handle(self, handler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = handler.path.split("?", 1)[0]
        headers = {k.lower(): v for k, v in handler.headers.items()}
        if path.endswith("/embeddings") or ":batchEmbedContents" in path:
            info = parse_embeddings(path, body, headers)
        elif path.endswith("/chat/completions"):
            info = parse_openai(path, body, headers)
        elif ":generateContent" in path:
            info = parse_gemini(path, body, headers)
        elif path.endswith("/converse"):
            info = parse_bedrock(path, body, headers)
        else:
            self._send(handler, 404, b'{"error": "unknown path"}')
            return
        with self.lock:
            fault = self.faults.pop(0) if self.faults else None
            if fault is None and self.fault_for is not None:
                fault = self.fault_for(info)
            info.fault = fault["kind"] if fault else None
            self.requests.append(info)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            now = self.in_flight_by_model[info.model] = self.in_flight_by_model.get(info.model, 0) + 1
            self.peak_by_model[info.model] = max(self.peak_by_model.get(info.model, 0), now)
        handler.eduart_flight = info  # counted out just before the reply is written (``_send``)
        try:
            self._answer(handler, info, fault)
        finally:
            self._land(handler)

    def _land(self, handler) -> None:
        """The request is answered: no longer in flight (once, before the client can see the reply)."""
        info = getattr(handler, "eduart_flight", None)
        if info is None:
            return
        handler.eduart_flight = None
        with self.lock:
            self.in_flight -= 1
            self.in_flight_by_model[info.model] -= 1

    def _answer(self, handler, info: RequestInfo, fault: dict | None) -> None:
        if self.latency_s:
            time.sleep(self.latency_s)
        if fault:
            kind = fault["kind"]
            if kind == "timeout":
                time.sleep(fault.get("sleep_s", 5.0))
                try:
                    self._send(handler, 200, self._success(info, self.answer(info)))
                except OSError:
                    pass
                return
            if kind == "status":
                self._error(handler, info, fault["status"], fault.get("retry_after"))
                return
            if kind == "malformed":
                self._send(handler, 200, b'{"choices": [ this is not json')
                return
            if kind == "empty":
                self._send(handler, 200, b"")
                return
        self._send(handler, 200, self._success(info, self.answer(info)))

    def _success(self, info: RequestInfo, text: str) -> bytes:
        tin, tout = self.tokens
        texts = [value for kind, value in info.parts if kind == "text"]
        if info.protocol == "openai_embeddings":
            payload = {"object": "list", "model": info.model, "usage": {"prompt_tokens": tin, "total_tokens": tin},
                       "data": [{"object": "embedding", "index": i, "embedding": stub_vector(t)}
                                for i, t in enumerate(texts)]}
            return json.dumps(payload).encode()
        if info.protocol == "gemini_embeddings":
            return json.dumps({"embeddings": [{"values": stub_vector(t)} for t in texts]}).encode()
        if info.protocol == "openai":
            payload = {"id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()),
                       "model": info.model, "choices": [{"index": 0, "finish_reason": "stop",
                                                         "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}}
        elif info.protocol == "gemini":
            payload = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                       "finishReason": "STOP", "index": 0}],
                       "usageMetadata": {"promptTokenCount": tin, "candidatesTokenCount": tout,
                                         "totalTokenCount": tin + tout}, "modelVersion": info.model}
        else:
            payload = {"output": {"message": {"role": "assistant", "content": [{"text": text}]}},
                       "stopReason": "end_turn", "usage": {"inputTokens": tin, "outputTokens": tout,
                                                          "totalTokens": tin + tout},
                       "metrics": {"latencyMs": 1}}
        return json.dumps(payload).encode()

    def _error(self, handler, info: RequestInfo, status: int, retry_after: float | None) -> None:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        if info.protocol in ("openai", "openai_embeddings"):
            payload = {"error": {"message": f"stub error {status}", "type": "stub", "code": str(status)}}
        elif info.protocol in ("gemini", "gemini_embeddings"):
            payload = {"error": {"code": status, "message": f"stub error {status}",
                                 "status": "RESOURCE_EXHAUSTED" if status == 429 else "INTERNAL"}}
        else:
            kind = {429: "ThrottlingException", 401: "UnrecognizedClientException", 403: "AccessDeniedException",
                    503: "ServiceUnavailableException"}.get(
                status, "ValidationException" if status < 500 else "InternalServerException")
            headers["x-amzn-ErrorType"] = f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"
            payload = {"message": f"stub error {status}"}
        self._send(handler, status, json.dumps(payload).encode(), headers)

    # ------------------------------------------------------------ helpers for tests
    def requests_for(self, needle: str) -> list[RequestInfo]:
        with self.lock:
            return [r for r in self.requests if needle in r.user_text]

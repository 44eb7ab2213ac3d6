"""A loopback stub of three batch control planes: the OpenAI Files + Batches API, Gemini Batch Mode
(File API resumable upload, batchGenerateContent, operations, download) and the Bedrock model
invocation job API (which reads its input from, and writes its output to, an S3 server such as
moto's ThreadedMotoServer through boto3).

Why real HTTP: the SDKs (openai, google-genai, boto3) run exactly as in production, so the tests
check their serialisation and our use of them, without network and without mocking our code.

A job stays running while ``hold`` is set; once released it finishes after ``polls_to_finish``
polls with the outcome ``outcome(job)`` returns (default: every request answered). Results are
always written in a shuffled order (the runner must join on ids). ``submissions`` records one
entry per job created, with the sha256 of its input; ``uploads`` every uploaded file's bytes.
"""
from __future__ import annotations

import base64
import hashlib
import itertools
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse


@dataclass
class StubJob:
    protocol: str                 # openai | gemini | bedrock
    id: str
    model: str
    tag: str
    lines: list[dict]             # the input lines as sent (parsed JSON)
    sha: str
    created: float = field(default_factory=time.time)
    polls: int = 0
    state: str = "running"        # running | completed | expired | failed | partial | cancelling | cancelled
    results: list[dict] = field(default_factory=list)   # (id, ok, text|error) after finishing
    extra: dict = field(default_factory=dict)

    def ids(self) -> list[str]:
        if self.protocol == "openai":
            return [ln["custom_id"] for ln in self.lines]
        if self.protocol == "gemini":
            return [ln["key"] for ln in self.lines]
        return [ln["recordId"] for ln in self.lines]


def conversation(protocol: str, line: dict) -> list[tuple[str, str, bytes | None]]:
    """(role, text, image bytes) of every message of one input line, oldest first; roles user|assistant."""
    out = []
    if protocol == "openai":
        for message in line["body"]["messages"]:
            if message["role"] == "system":
                continue
            content = message["content"]
            if isinstance(content, str):
                out.append((message["role"], content, None))
                continue
            text = "".join(p.get("text", "") for p in content if p.get("type") == "text")
            image = next((base64.b64decode(p["image_url"]["url"].split(",", 1)[1]) for p in content
                          if p.get("type") == "image_url"), None)
            out.append((message["role"], text, image))
    elif protocol == "gemini":
        for content in line["request"]["contents"]:
            text = "".join(p.get("text", "") for p in content["parts"] if "text" in p)
            image = None
            for part in content["parts"]:
                data = part.get("inlineData") or part.get("inline_data")
                if data:
                    raw = data["data"]
                    padded = raw + "=" * (-len(raw) % 4)
                    image = base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
            out.append(("user" if content.get("role", "user") == "user" else "assistant", text, image))
    else:
        for message in line["modelInput"]["messages"]:
            text = "".join(b.get("text", "") for b in message["content"] if "text" in b)
            image = next((base64.b64decode(b["image"]["source"]["bytes"]) for b in message["content"]
                          if "image" in b), None)
            out.append((message["role"], text, image))
    return out


def question_parts(protocol: str, line: dict) -> list[tuple[str, object]]:
    """("text", str) and ("image", bytes) parts of the question of one input line, in order."""
    def b64(text: str) -> bytes:
        padded = text + "=" * (-len(text) % 4)
        return base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))

    out: list[tuple[str, object]] = []
    if protocol == "openai":
        for part in line["body"]["messages"][-1]["content"]:
            if part.get("type") == "text":
                out.append(("text", part["text"]))
            elif part.get("type") == "image_url":
                out.append(("image", b64(part["image_url"]["url"].split(",", 1)[1])))
    elif protocol == "gemini":
        for part in line["request"]["contents"][-1]["parts"]:
            data = part.get("inlineData") or part.get("inline_data")
            out.append(("image", b64(data["data"])) if data else ("text", part.get("text", "")))
    else:
        for block in line["modelInput"]["messages"][-1]["content"]:
            out.append(("image", b64(block["image"]["source"]["bytes"])) if "image" in block
                       else ("text", block.get("text", "")))
    return out


def request_text(protocol: str, line: dict) -> str:
    """The user text of the question an input line asks (its last message)."""
    return conversation(protocol, line)[-1][1]


def request_image(protocol: str, line: dict) -> bytes | None:
    """The image bytes sent with the question of an input line, or None."""
    return conversation(protocol, line)[-1][2]


def default_answer(protocol: str, line: dict) -> str:
    return json.dumps({"Answers": [{"id": "A", "text": "TRUE"}], "motivation": "Because it is so."})


class BatchStub:
    """One threaded server for the three batch protocols."""

    def __init__(self, s3_endpoint: str | None = None, answer: Callable[[str, dict], str] | None = None):
        self.answer = answer or default_answer
        self.hold = False
        self.polls_to_finish = 1
        self.outcome: Callable[[StubJob], dict] = lambda job: {}
        self.jobs: dict[str, StubJob] = {}
        self.files: dict[str, bytes] = {}
        self.uploads: list[bytes] = []
        self.submissions: list[tuple[str, str, int]] = []
        self.polls = 0
        self.headers_seen: list[dict] = []
        self.tokens = (120, 30)
        self.lock = threading.RLock()
        self._ids = itertools.count(1)
        self._sessions: dict[str, dict] = {}
        self.s3_endpoint = s3_endpoint
        self._s3 = None
        self.idempotent_creates = 0        # Bedrock creates answered with an existing job (same token)
        self.create_delay_s = 0.0          # sleep after creating a job, before answering (crash window)
        self.online_requests: list[tuple[str, str]] = []   # (protocol, user text) of online calls
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def do_GET(self):
                stub._dispatch(self, "GET")

            def do_POST(self):
                stub._dispatch(self, "POST")

            def do_DELETE(self):
                stub._dispatch(self, "DELETE")

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> BatchStub:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ------------------------------------------------------------ plumbing
    def _send(self, handler, status: int, payload, headers: dict | None = None, raw: bool = False) -> None:
        body = payload if raw else json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/octet-stream" if raw else "application/json")
        handler.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            handler.send_header(k, v)
        handler.end_headers()
        handler.wfile.write(body)

    def _dispatch(self, handler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        parsed = urlparse(handler.path)
        path, query = parsed.path, parse_qs(parsed.query)
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self.lock:
            self.headers_seen.append(headers)
        try:
            if path.endswith("/chat/completions") or ":generateContent" in path or path.endswith("/converse"):
                self._online(handler, path, raw)
            elif path.startswith("/v1/files") or path.startswith("/v1/batches"):
                self._openai(handler, method, path, query, raw, headers)
            elif path.startswith("/upload/") or path.startswith("/v1beta/") or path.startswith("/download/"):
                self._gemini(handler, method, path, query, raw, headers)
            elif path.startswith("/model-invocation-job"):
                self._bedrock(handler, method, path, query, raw, headers)
            else:
                self._send(handler, 404, {"error": {"message": f"unknown path {path}"}})
        except Exception as exc:  # a stub bug shows up as a 500 with its message
            self._send(handler, 500, {"error": {"message": f"stub error: {type(exc).__name__}: {exc}"}})

    def _online(self, handler, path: str, raw: bytes) -> None:
        """One online request (the remainder of a batch launch): answered at once."""
        body = json.loads(raw or b"{}")
        tin, tout = self.tokens
        if path.endswith("/chat/completions"):
            protocol, line = "openai", {"body": body}
            text = self.answer(protocol, line)
            payload = {"id": "chatcmpl-stub", "object": "chat.completion", "model": body.get("model"),
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}}
        elif ":generateContent" in path:
            protocol, line = "gemini", {"request": body}
            text = self.answer(protocol, line)
            payload = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                       "finishReason": "STOP", "index": 0}],
                       "usageMetadata": {"promptTokenCount": tin, "candidatesTokenCount": tout,
                                         "totalTokenCount": tin + tout}}
        else:
            protocol, line = "bedrock", {"modelInput": body}
            text = self.answer(protocol, line)
            payload = {"output": {"message": {"role": "assistant", "content": [{"text": text}]}},
                       "stopReason": "end_turn", "usage": {"inputTokens": tin, "outputTokens": tout,
                                                          "totalTokens": tin + tout}, "metrics": {"latencyMs": 1}}
        with self.lock:
            self.online_requests.append((protocol, request_text(protocol, line)))
        self._send(handler, 200, payload)

    def _reply_after_delay(self, handler, payload: dict) -> None:
        """Answer a create call after ``create_delay_s``: the job exists, its id has not reached the runner."""
        if self.create_delay_s:
            self.lock.release()  # other calls (a resumed runner) go on meanwhile
            try:
                time.sleep(self.create_delay_s)
            finally:
                self.lock.acquire()
        self._send(handler, 200, payload)

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):05d}"

    # ------------------------------------------------------------ job lifecycle
    def _advance(self, job: StubJob) -> None:
        """One poll: a released job finishes after ``polls_to_finish`` polls."""
        job.polls += 1
        self.polls += 1
        if job.state == "cancelling":
            job.state = "cancelled"
            self._finish(job, {"final": "cancelled", "drop": lambda cid, i: True})
            return
        if job.state != "running" or self.hold:
            return
        if job.polls >= self.polls_to_finish:
            self._finish(job, self.outcome(job))

    def _finish(self, job: StubJob, plan: dict) -> None:
        final = plan.get("final", "completed")
        fail = plan.get("fail") or (lambda cid, i: False)
        drop = plan.get("drop") or (lambda cid, i: False)
        if final == "failed":
            drop = lambda cid, i: True  # noqa: E731
        results = []
        for index, (cid, line) in enumerate(zip(job.ids(), job.lines)):
            if drop(cid, index):
                continue
            if fail(cid, index):
                results.append({"id": cid, "ok": False, "error": f"stub refused request {index}"})
            else:
                results.append({"id": cid, "ok": True, "text": self.answer(job.protocol, line)})
        in_order = [r["id"] for r in results]
        random.Random(len(results)).shuffle(results)
        if len(results) > 1 and [r["id"] for r in results] == in_order:
            results.reverse()  # never in input order
        job.results = results
        job.state = final
        if job.protocol == "bedrock":
            self._bedrock_write_output(job)

    def tokens_for(self) -> tuple[int, int]:
        return self.tokens

    # ------------------------------------------------------------ OpenAI
    def _openai_batch(self, job: StubJob) -> dict:
        status = {"running": "in_progress" if job.polls else "validating", "completed": "completed",
                  "partial": "completed", "expired": "expired", "failed": "failed", "cancelling": "cancelling",
                  "cancelled": "cancelled"}[job.state]
        done = job.state not in ("running", "cancelling")
        ok = sum(1 for r in job.results if r["ok"])
        bad = sum(1 for r in job.results if not r["ok"])
        return {"id": job.id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
                "input_file_id": job.extra["input_file_id"], "completion_window": "24h", "status": status,
                "output_file_id": job.extra.get("output_file_id") if done else None,
                "error_file_id": job.extra.get("error_file_id") if done else None,
                "created_at": int(job.created), "metadata": job.extra.get("metadata") or {},
                "request_counts": {"total": len(job.lines), "completed": ok if done else 0,
                                   "failed": bad if done else 0}}

    def _openai_files(self, job: StubJob) -> None:
        out, err = [], []
        tin, tout = self.tokens_for()
        for r in job.results:
            if r["ok"]:
                out.append({"id": f"batch_req_{r['id']}", "custom_id": r["id"], "error": None,
                            "response": {"status_code": 200, "request_id": "req", "body": {
                                "id": "chatcmpl-stub", "object": "chat.completion", "model": job.model,
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": r["text"]}}],
                                "usage": {"prompt_tokens": tin, "completion_tokens": tout,
                                          "total_tokens": tin + tout}}}})
            else:
                err.append({"id": f"batch_req_{r['id']}", "custom_id": r["id"], "error": None,
                            "response": {"status_code": 400, "request_id": "req", "body": {
                                "error": {"message": r["error"], "type": "invalid_request_error"}}}})
        if out:
            fid = self._new_id("file-out")
            self.files[fid] = "".join(json.dumps(x) + "\n" for x in out).encode()
            job.extra["output_file_id"] = fid
        if err:
            fid = self._new_id("file-err")
            self.files[fid] = "".join(json.dumps(x) + "\n" for x in err).encode()
            job.extra["error_file_id"] = fid

    def _openai(self, handler, method, path, query, raw, headers) -> None:
        parts = [p for p in path.split("/") if p]  # v1, files|batches, id, action
        with self.lock:
            if parts[1] == "files" and method == "POST" and len(parts) == 2:
                message = BytesParser(policy=email_policy).parsebytes(
                    b"Content-Type: " + headers["content-type"].encode() + b"\r\n\r\n" + raw)
                data, name, purpose = b"", "upload.jsonl", None
                for part in message.iter_parts():
                    field_name = part.get_param("name", header="content-disposition")
                    if field_name == "file":
                        data = part.get_payload(decode=True)
                        name = part.get_filename() or name
                    elif field_name == "purpose":
                        purpose = part.get_content().strip()
                fid = self._new_id("file-in")
                self.files[fid] = data
                self.uploads.append(data)
                self._send(handler, 200, {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                                          "filename": name, "purpose": purpose or "batch", "status": "processed"})
                return
            if parts[1] == "files" and method == "GET" and len(parts) == 4 and parts[3] == "content":
                data = self.files.get(parts[2])
                if data is None:
                    self._send(handler, 404, {"error": {"message": "no such file"}})
                else:
                    self._send(handler, 200, data, raw=True)
                return
            if parts[1] == "batches" and method == "POST" and len(parts) == 2:
                body = json.loads(raw)
                data = self.files[body["input_file_id"]]
                lines = [json.loads(ln) for ln in data.splitlines() if ln.strip()]
                job = StubJob("openai", self._new_id("batch_"), lines[0]["body"]["model"] if lines else "",
                              (body.get("metadata") or {}).get("eduart_tag", ""), lines,
                              hashlib.sha256(data).hexdigest(),
                              extra={"input_file_id": body["input_file_id"], "metadata": body.get("metadata")})
                self.jobs[job.id] = job
                self.submissions.append(("openai", job.sha, len(lines)))
                self._reply_after_delay(handler, self._openai_batch(job))  # the crash window
                return
            if parts[1] == "batches" and method == "GET" and len(parts) == 2:
                data = [self._openai_batch(j) for j in sorted(self.jobs.values(), key=lambda j: -j.created)
                        if j.protocol == "openai"]
                self._send(handler, 200, {"object": "list", "data": data, "has_more": False,
                                          "first_id": data[0]["id"] if data else None,
                                          "last_id": data[-1]["id"] if data else None})
                return
            if parts[1] == "batches" and len(parts) >= 3:
                job = self.jobs.get(parts[2])
                if job is None:
                    self._send(handler, 404, {"error": {"message": "no such batch"}})
                    return
                if method == "POST" and len(parts) == 4 and parts[3] == "cancel":
                    if job.state == "running":
                        job.state = "cancelling"
                    self._send(handler, 200, self._openai_batch(job))
                    return
                before = job.state
                self._advance(job)
                if before in ("running", "cancelling") and job.state not in ("running", "cancelling"):
                    self._openai_files(job)
                self._send(handler, 200, self._openai_batch(job))
                return
        self._send(handler, 404, {"error": {"message": f"unknown openai path {path}"}})

    # ------------------------------------------------------------ Gemini
    def _gemini_operation(self, job: StubJob) -> dict:
        state = {"running": "BATCH_STATE_RUNNING" if job.polls else "BATCH_STATE_PENDING",
                 "completed": "BATCH_STATE_SUCCEEDED", "partial": "BATCH_STATE_SUCCEEDED",
                 "expired": "BATCH_STATE_EXPIRED", "failed": "BATCH_STATE_FAILED",
                 "cancelling": "BATCH_STATE_RUNNING", "cancelled": "BATCH_STATE_CANCELLED"}[job.state]
        metadata = {"@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
                    "name": job.id, "displayName": job.tag, "model": job.model, "state": state,
                    "createTime": "2026-11-30T09:00:00Z"}
        done = job.state not in ("running", "cancelling")
        if done and job.results and job.state in ("completed", "partial"):
            tin, tout = self.tokens_for()
            responses = []
            for r in job.results:
                if r["ok"]:
                    responses.append({"key": r["id"], "response": {
                        "candidates": [{"content": {"role": "model", "parts": [{"text": r["text"]}]},
                                        "finishReason": "STOP", "index": 0}],
                        "usageMetadata": {"promptTokenCount": tin, "candidatesTokenCount": tout,
                                          "totalTokenCount": tin + tout}}})
                else:
                    responses.append({"key": r["id"], "error": {"code": 400, "message": r["error"]}})
            if job.extra.get("inline"):
                metadata["output"] = {"inlinedResponses": {"inlinedResponses": [
                    {"metadata": {"key": x.pop("key")}, **x} for x in responses]}}
            else:
                fid = job.extra.setdefault("output_file", self._new_id("files/out-"))
                self.files[fid] = "".join(json.dumps(x) + "\n" for x in responses).encode()
                metadata["output"] = {"responsesFile": fid}
        return {"name": job.id, "metadata": metadata, "done": done}

    def _gemini(self, handler, method, path, query, raw, headers) -> None:
        with self.lock:
            if path.startswith("/upload/") and method == "POST":
                command = headers.get("x-goog-upload-command", "")
                if command == "start":
                    body = json.loads(raw or b"{}")
                    session = self._new_id("session-")
                    self._sessions[session] = {"data": b"", "file": body.get("file") or {}}
                    self._send(handler, 200, {}, headers={
                        "x-goog-upload-url": f"{self.url}/upload/v1beta/files/{session}",
                        "x-goog-upload-status": "active"})
                    return
                session = path.rsplit("/", 1)[-1]
                state = self._sessions[session]
                state["data"] += raw
                if "finalize" in command:
                    name = self._new_id("files/in-")
                    self.files[name] = state["data"]
                    self.uploads.append(state["data"])
                    info = {"name": name, "displayName": state["file"].get("displayName", ""),
                            "mimeType": state["file"].get("mimeType", "jsonl"), "sizeBytes": str(len(state["data"])),
                            "state": "ACTIVE", "uri": f"{self.url}/v1beta/{name}"}
                    self._send(handler, 200, {"file": info}, headers={"x-goog-upload-status": "final"})
                else:
                    self._send(handler, 200, {}, headers={"x-goog-upload-status": "active"})
                return
            if ":batchGenerateContent" in path and method == "POST":
                body = json.loads(raw)["batch"]
                model = unquote(path.split("/models/", 1)[1].split(":", 1)[0])
                source = body["inputConfig"]
                if "fileName" in source:
                    data = self.files[source["fileName"]]
                    lines = [json.loads(ln) for ln in data.splitlines() if ln.strip()]
                    inline = False
                else:
                    lines = [{"key": r["metadata"]["key"], "request": r["request"]}
                             for r in source["requests"]["requests"]]
                    data = json.dumps(lines, sort_keys=True).encode()
                    inline = True
                job = StubJob("gemini", self._new_id("batches/b"), f"models/{model}", body.get("displayName", ""),
                              lines, hashlib.sha256(data).hexdigest(), extra={"inline": inline})
                self.jobs[job.id] = job
                self.submissions.append(("gemini", job.sha, len(lines)))
                self._reply_after_delay(handler, self._gemini_operation(job))
                return
            rest = path.split("/v1beta/", 1)[1] if "/v1beta/" in path else path
            if rest == "batches" and method == "GET":
                ops = [self._gemini_operation(j) for j in sorted(self.jobs.values(), key=lambda j: -j.created)
                       if j.protocol == "gemini"]
                self._send(handler, 200, {"operations": ops})
                return
            if rest.startswith("batches/") and method == "POST" and rest.endswith(":cancel"):
                job = self.jobs[rest[: -len(":cancel")]]
                if job.state == "running":
                    job.state = "cancelling"
                self._send(handler, 200, {})
                return
            if rest.startswith("batches/") and method == "GET":
                job = self.jobs.get(rest)
                if job is None:
                    self._send(handler, 404, {"error": {"code": 404, "message": "no such batch", "status": "NOT_FOUND"}})
                    return
                self._advance(job)
                self._send(handler, 200, self._gemini_operation(job))
                return
            if rest.startswith("files/") and ":download" in rest:
                name = rest.split(":download", 1)[0]
                data = self.files.get(name)
                if data is None:
                    self._send(handler, 404, {"error": {"code": 404, "message": "no such file", "status": "NOT_FOUND"}})
                else:
                    self._send(handler, 200, data, raw=True)
                return
        self._send(handler, 404, {"error": {"code": 404, "message": f"unknown gemini path {path}", "status": "NOT_FOUND"}})

    # ------------------------------------------------------------ Bedrock
    def s3(self):
        if self._s3 is None:
            import boto3

            self._s3 = boto3.client("s3", endpoint_url=self.s3_endpoint, region_name="us-east-1",
                                    aws_access_key_id="stub", aws_secret_access_key="stub")
        return self._s3

    @staticmethod
    def _split_s3(uri: str) -> tuple[str, str]:
        rest = uri[len("s3://"):]
        bucket, _, key = rest.partition("/")
        return bucket, key

    def _bedrock_job(self, job: StubJob) -> dict:
        status = {"running": "InProgress" if job.polls else "Submitted", "completed": "Completed",
                  "partial": "PartiallyCompleted", "expired": "Expired", "failed": "Failed",
                  "cancelling": "Stopping", "cancelled": "Stopped"}[job.state]
        done = job.state not in ("running", "cancelling")
        ok = sum(1 for r in job.results if r["ok"])
        return {"jobArn": job.id, "jobName": job.tag, "modelId": job.model, "roleArn": job.extra["roleArn"],
                "clientRequestToken": job.extra.get("token"), "status": status,
                "submitTime": "2026-11-30T09:00:00Z", "lastModifiedTime": "2026-11-30T09:00:00Z",
                "inputDataConfig": job.extra["input"], "outputDataConfig": job.extra["output"],
                "timeoutDurationInHours": job.extra.get("timeout", 24),
                "modelInvocationType": job.extra.get("type", "InvokeModel"),
                "totalRecordCount": len(job.lines), "processedRecordCount": len(job.results) if done else 0,
                "successRecordCount": ok if done else 0,
                "errorRecordCount": (len(job.results) - ok) if done else 0,
                **({"message": job.extra["message"]} if job.extra.get("message") else {})}

    def _bedrock_write_output(self, job: StubJob) -> None:
        bucket, prefix = self._split_s3(job.extra["output"]["s3OutputDataConfig"]["s3Uri"])
        in_key = self._split_s3(job.extra["input"]["s3InputDataConfig"]["s3Uri"])[1]
        short = job.id.rsplit("/", 1)[-1]
        tin, tout = self.tokens_for()
        by_id = {ln["recordId"]: ln for ln in job.lines}
        lines = []
        for r in job.results:
            line = {"recordId": r["id"], "modelInput": by_id[r["id"]]["modelInput"]}
            if r["ok"]:
                line["modelOutput"] = {"output": {"message": {"role": "assistant", "content": [{"text": r["text"]}]}},
                                       "stopReason": "end_turn",
                                       "usage": {"inputTokens": tin, "outputTokens": tout, "totalTokens": tin + tout}}
            else:
                line["error"] = {"errorCode": 400, "errorMessage": r["error"]}
            lines.append(line)
        base = f"{prefix.rstrip('/')}/{short}/"
        name = in_key.rsplit("/", 1)[-1]
        if lines:
            self.s3().put_object(Bucket=bucket, Key=f"{base}{name}.out",
                                 Body="".join(json.dumps(x) + "\n" for x in lines).encode())
        manifest = {"totalRecordCount": len(job.lines), "processedRecordCount": len(job.results),
                    "successRecordCount": sum(1 for r in job.results if r["ok"]),
                    "errorRecordCount": sum(1 for r in job.results if not r["ok"]),
                    "inputTokenCount": tin * len(job.results), "outputTokenCount": tout * len(job.results)}
        self.s3().put_object(Bucket=bucket, Key=f"{base}manifest.json.out", Body=json.dumps(manifest).encode())

    def _bedrock_error(self, handler, status: int, kind: str, message: str) -> None:
        self._send(handler, status, {"message": message},
                   headers={"x-amzn-ErrorType": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"})

    def _bedrock(self, handler, method, path, query, raw, headers) -> None:
        with self.lock:
            if path == "/model-invocation-job" and method == "POST":
                body = json.loads(raw)
                token = body.get("clientRequestToken")
                for existing in self.jobs.values():
                    if existing.protocol == "bedrock" and token and existing.extra.get("token") == token:
                        self.idempotent_creates += 1
                        self._send(handler, 200, {"jobArn": existing.id})  # idempotent create
                        return
                uri = body["inputDataConfig"]["s3InputDataConfig"]["s3Uri"]
                bucket, key = self._split_s3(uri)
                data = self.s3().get_object(Bucket=bucket, Key=key)["Body"].read()
                self.uploads.append(data)
                lines = [json.loads(ln) for ln in data.splitlines() if ln.strip()]
                arn = f"arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/{self._new_id('job')}"
                job = StubJob("bedrock", arn, body["modelId"], body["jobName"], lines, hashlib.sha256(data).hexdigest(),
                              extra={"token": token, "roleArn": body["roleArn"], "input": body["inputDataConfig"],
                                     "output": body["outputDataConfig"], "type": body.get("modelInvocationType"),
                                     "timeout": body.get("timeoutDurationInHours")})
                self.jobs[arn] = job
                self.submissions.append(("bedrock", job.sha, len(lines)))
                self._reply_after_delay(handler, {"jobArn": arn})
                return
            if path == "/model-invocation-jobs" and method == "GET":
                needle = (query.get("nameContains") or [""])[0]
                summaries = [self._bedrock_job(j) for j in self.jobs.values()
                             if j.protocol == "bedrock" and needle in j.tag]
                self._send(handler, 200, {"invocationJobSummaries": summaries})
                return
            rest = unquote(path[len("/model-invocation-job/"):])
            stop = rest.endswith("/stop")
            arn = rest[: -len("/stop")] if stop else rest
            job = self.jobs.get(arn)
            if job is None:
                self._bedrock_error(handler, 404, "ResourceNotFoundException", f"no job {arn}")
                return
            if stop and method == "POST":
                if job.state == "running":
                    job.state = "cancelling"
                self._send(handler, 200, {})
                return
            self._advance(job)
            self._send(handler, 200, self._bedrock_job(job))

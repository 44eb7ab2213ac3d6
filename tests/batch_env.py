"""Shared set-up of the batch tests: a model registry pointing at the loopback stubs, fake keys that
are easy to search for, an S3 server (moto) with a bucket, and helpers to read back what was stored."""
from __future__ import annotations

import json
import re
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from eduart_core.store import Store

# Distinctive fake secrets: a test greps every file, table and log line for them.
SECRETS = {
    "OPENAI_API_KEY": "sk-test-BATCHSECRETopenai000111222",
    "GEMINI_API_KEY": "AIzaBATCHSECRETgemini00011122233344",
    "AWS_ACCESS_KEY_ID": "AKIABATCHSECRETID0001",
    "AWS_SECRET_ACCESS_KEY": "awsBATCHSECRETaccess/key0001112223334",
}
BUCKET = "eduart-batch"
MODELS = {"openai": "stub-gpt", "gemini": "stub-gemini", "bedrock": "stub-claude", "compatible": "stub-local"}


def start_moto() -> tuple[object, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from moto.server import ThreadedMotoServer
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, f"http://{host}:{port}"


@contextmanager
def moto_s3() -> Iterator[str]:
    """moto's S3 server on 127.0.0.1 with the batch bucket (Bedrock's input and output); yields its URL."""
    server, url = start_moto()
    try:
        make_bucket(url)
        yield url
    finally:
        server.stop()


def wait_until(condition: Callable[[], object], timeout: float, *, step: float = 0.05,
               what: str = "timed out") -> None:
    """Poll ``condition`` until it holds (a run in another thread or process gets somewhere); fail with ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(step)
    raise AssertionError(what)


def write_registry(folder: Path, stub_url: str, *, bedrock_min: int = 5, gemini_inline_max: int = 20_000_000,
                   openai_max_requests: int = 50000, openai_max_bytes: int = 200_000_000) -> Path:
    """A registry of four stub models; the S3 prefix is unique per call (tests share one S3 server)."""
    path = folder / "models.toml"
    prefix = uuid.uuid4().hex[:12]
    path.write_text(f"""
[models."stub-gpt"]
display_name = "Stub GPT"
family = "OpenAI"
provider = "openai"
api_model_id = "gpt-stub-1"
base_url = "{stub_url}/v1"
max_output_tokens = 256
price_in_per_mtok = 2.0
price_out_per_mtok = 8.0

[models."stub-local"]
display_name = "Stub local server"
family = "Local"
provider = "openai_compatible"
api_model_id = "local-stub"
base_url = "{stub_url}/v1"
batch_api = true
temperature = 0.0
price_in_per_mtok = 1.0
price_out_per_mtok = 1.0

[models."stub-gemini"]
display_name = "Stub Gemini"
family = "Google"
provider = "gemini"
api_model_id = "gemini-stub"
base_url = "{stub_url}"
temperature = 1.0
price_in_per_mtok = 1.0
price_out_per_mtok = 4.0

[models."stub-claude"]
display_name = "Stub Claude"
family = "Anthropic"
provider = "bedrock"
api_model_id = "anthropic.claude-stub-v1:0"
temperature = 0.0
max_output_tokens = 512
price_in_per_mtok = 3.0
price_out_per_mtok = 15.0

[batch.openai]
max_requests = {openai_max_requests}
max_bytes = {openai_max_bytes}

[batch.gemini]
inline_max_bytes = {gemini_inline_max}

[batch.bedrock]
min_requests = {bedrock_min}
role_arn = "arn:aws:iam::123456789012:role/EduArtBatch"
s3_uri = "s3://{BUCKET}/{prefix}/runs"
""", encoding="utf-8")
    return path


def batch_environ(registry: Path, stub_url: str, s3_url: str) -> dict[str, str]:
    return {**SECRETS, "EDUART_MODELS": str(registry), "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL_BEDROCK": stub_url, "AWS_ENDPOINT_URL_S3": s3_url,
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": stub_url}


def use_registry(monkeypatch, folder: Path, stub_url: str, s3_url: str, **limits) -> Path:
    """Write the stub registry into ``folder`` and point this test's environment (keys, endpoints,
    registry) at it and at the stubs; ``limits`` as for ``write_registry``."""
    registry = write_registry(folder, stub_url, **limits)
    for key, value in batch_environ(registry, stub_url, s3_url).items():
        monkeypatch.setenv(key, value)
    return registry


def item_answer(protocol: str, line: dict) -> str:
    """A stub model whose answer names the item it was asked about (proves the join by custom id)."""
    from batch_stubs import request_text

    text = request_text(protocol, line)
    marker = re.search(r"Exercise (\d{4})", text)
    return json.dumps({"Answers": [{"id": "A", "text": "TRUE"}],
                       "motivation": f"answer to item {marker.group(1) if marker else '?'}"})


def make_bucket(s3_url: str) -> None:
    import boto3

    s3 = boto3.client("s3", endpoint_url=s3_url, region_name="us-east-1", aws_access_key_id="stub",
                      aws_secret_access_key="stub")
    try:
        s3.create_bucket(Bucket=BUCKET)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass


def responses(store: Store) -> list[dict]:
    with store.connect(read_only=True) as con:
        frame = con.execute(
            "SELECT r.run_id, r.item_id, r.raw_text, r.error, r.image_sent, r.input_tokens, r.output_tokens, "
            "r.cost_usd, r.batch_job_id, u.model, u.condition FROM responses r JOIN runs u USING (run_id) "
            "ORDER BY r.run_id, r.item_id, r.response_id").df()
    return _records(frame)


def _records(frame) -> list[dict]:
    """Rows as dicts with None for every missing value (pandas gives NaN/NA for NULL)."""
    frame = frame.astype(object)
    return frame.where(frame.notna(), None).to_dict("records")


def table(store: Store, name: str) -> list[dict]:
    with store.connect(read_only=True) as con:
        return _records(con.execute(f"SELECT * FROM {name}").df())


def journal_records(store: Store) -> list[dict]:
    out = []
    for path in store.runs_dir.glob("*/responses.jsonl"):
        out += [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    return out

"""Provider adapters with their real SDKs against loopback stubs; registry; secrets; chance."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from stubs import StubServer

from eduart_core.errors import UserError
from eduart_core.providers.base import ProviderError, ProviderRequest, redact
from eduart_core.providers.registry import load_registry, make_provider
from eduart_core.providers.secrets import SecretSource, provider_status

IMAGE = b"\xff\xd8\xff\xe0fake-jpeg-bytes\x00\x01\xfe"
SCHEMA = {"type": "object", "properties": {"Answers": {"type": "array"}}, "required": ["Answers"]}


def _providers(url: str) -> dict:
    from eduart_core.providers.bedrock import BedrockProvider
    from eduart_core.providers.gemini import GeminiProvider
    from eduart_core.providers.openai_chat import OpenAIChatProvider

    return {
        "openai": OpenAIChatProvider("gpt-test", api_key="sk-test", base_url=f"{url}/v1", timeout_s=1.0),
        "gemini": GeminiProvider("gemini-test", api_key="gem-test-key", base_url=url, timeout_s=1.0),
        "bedrock": BedrockProvider("us.anthropic.claude-test-v1:0", endpoint_url=url, timeout_s=1.0,
                                   credentials={"region_name": "us-east-1", "aws_access_key_id": "x",
                                                "aws_secret_access_key": "y"}),
    }


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


@pytest.mark.parametrize("name", ["openai", "gemini", "bedrock"])
def test_adapter_sends_system_text_image_schema_and_temperature(stub, name):
    provider = _providers(stub.url)[name]
    reply = provider.complete(ProviderRequest("SYSTEM PROMPT", "USER TEXT", image=IMAGE, image_mime="image/jpeg",
                                              json_schema=SCHEMA, temperature=0.0, max_output_tokens=50))
    assert json.loads(reply.text) == {"Answers": [{"id": "A"}]}
    assert (reply.input_tokens, reply.output_tokens) == (100, 20)
    sent = stub.requests[-1]
    assert sent.protocol == name
    assert sent.system == "SYSTEM PROMPT" and sent.user_text == "USER TEXT"
    assert sent.image == IMAGE and sent.image_mime == "image/jpeg"
    assert sent.schema == SCHEMA
    assert sent.temperature == 0.0
    provider.complete(ProviderRequest("S", "TEXT ONLY", temperature=None))
    plain = stub.requests[-1]
    assert plain.image is None and plain.schema is None and plain.temperature is None


def test_bedrock_model_id_with_colon_and_gemini_path(stub):
    providers = _providers(stub.url)
    providers["bedrock"].complete(ProviderRequest("s", "u"))
    providers["gemini"].complete(ProviderRequest("s", "u"))
    assert stub.requests[0].model == "us.anthropic.claude-test-v1:0"
    assert stub.requests[1].path == "/v1beta/models/gemini-test:generateContent"


@pytest.mark.parametrize("name", ["openai", "gemini", "bedrock"])
@pytest.mark.parametrize("fault,status,retryable,retry_after", [
    ({"kind": "status", "status": 429, "retry_after": 7}, 429, True, 7.0),
    ({"kind": "status", "status": 503}, 503, True, None),
    ({"kind": "status", "status": 400}, 400, False, None),
    ({"kind": "status", "status": 401}, 401, False, None),
    ({"kind": "malformed"}, None, True, None),
    ({"kind": "empty"}, None, True, None),
    ({"kind": "timeout", "sleep_s": 2.0}, None, True, None),
])
def test_adapter_classifies_failures(stub, name, fault, status, retryable, retry_after):
    stub.faults.append(fault)
    with pytest.raises(ProviderError) as info:
        _providers(stub.url)[name].complete(ProviderRequest("s", "u"))
    assert info.value.status == status
    assert info.value.retryable is retryable
    assert info.value.retry_after == retry_after
    assert len(stub.requests) == 1  # the SDK itself never retries: the runner owns retries


def test_registry_has_published_models_and_temperature_policy():
    registry = load_registry()
    published = [k for k, s in registry.items() if s.provider in ("openai", "gemini", "bedrock")]
    assert len(published) == 12
    import csv

    ref = Path(__file__).resolve().parents[3] / "shared" / "reference" / "eduart2026_published_type_scores.csv"
    if ref.exists():
        with open(ref) as handle:
            ids = {row["api_model_id"] for row in csv.DictReader(handle)}
        assert ids == {registry[k].api_model_id for k in published}
    for spec in registry.values():
        if spec.family in ("Anthropic", "Qwen", "Mistral"):
            assert spec.temperature == 0.0 and spec.provider == "bedrock"
        if spec.family == "Google":
            assert spec.temperature == 1.0
        if spec.family == "OpenAI":
            assert spec.temperature is None
    assert registry["chance"].provider == "offline"
    assert registry["local-llava"].base_url.startswith("http://localhost:11434")


def test_user_registry_overrides_and_bad_registry_is_one_line(tmp_path, monkeypatch):
    path = tmp_path / "models.toml"
    path.write_text('[models."chance"]\ndisplay_name = "Coin"\nprovider = "offline"\napi_model_id = "chance"\n'
                    '[models."mine"]\ndisplay_name = "Mine"\nprovider = "openai_compatible"\n'
                    'api_model_id = "m"\nbase_url = "http://127.0.0.1:9/v1"\naccepts_images = false\n')
    monkeypatch.setenv("EDUART_MODELS", str(path))
    registry = load_registry()
    assert registry["chance"].display_name == "Coin" and registry["mine"].accepts_images is False
    assert "gpt-5.5" in registry
    path.write_text('[models."x"]\nprovider = "nope"\n')
    with pytest.raises(UserError, match="missing display_name"):
        load_registry()


def test_chance_answers_come_from_the_items_options_and_are_seeded():
    from runner_items import make_records

    provider = make_provider(load_registry()["chance"])
    for record in make_records():
        request = ProviderRequest("s", record["question_text"], item=record)
        first = json.loads(provider.complete(request).text)["Answers"]
        assert first == json.loads(provider.complete(request).text)["Answers"]
        if record["type"] == "multiple_choice_radio":
            assert first[0]["id"] in {c["id"] for c in record["choices"]}
        if record["type"] == "completion_closed":
            assert first[0]["text"] in record["choices"][0]["options"]
        if record["type"] == "true_false":
            assert [a["id"] for a in first] == ["A", "B"]


def test_secret_sources_in_order_env_dotenv_streamlit(tmp_path):
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-from-dotenv-000000\nGEMINI_API_KEY=gem-dotenv-0000000\n")
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text(
        'GEMINI_API_KEY = "gem-streamlit-000000"\nAWS_ACCESS_KEY_ID = "AKIAFROMSTREAMLIT00"\n'
        'AWS_SECRET_ACCESS_KEY = "secret-streamlit-0000"\n')
    source = SecretSource(root=tmp_path, environ={"OPENAI_API_KEY": "sk-from-env-00000000"})
    assert source.get("OPENAI_API_KEY") == "sk-from-env-00000000"
    assert source.get("GEMINI_API_KEY") == "gem-dotenv-0000000"
    assert source.get("AWS_ACCESS_KEY_ID") == "AKIAFROMSTREAMLIT00"
    status = provider_status(source)
    assert status["openai"] == {"configured": True, "source": "environment", "needs": "OPENAI_API_KEY"}
    assert status["bedrock"]["source"] == "streamlit secrets"
    empty = provider_status(SecretSource(root=tmp_path / "none", environ={}))
    assert not empty["gemini"]["configured"] and "GEMINI_API_KEY" in empty["gemini"]["needs"]
    assert empty["offline"]["configured"]


def test_missing_key_names_what_to_set():
    registry = load_registry()
    with pytest.raises(UserError, match="GEMINI_API_KEY"):
        make_provider(registry["gemini-3.5-flash"], secrets=SecretSource(root=Path("/nonexistent"), environ={}))


def test_redact_removes_key_shapes_and_registered_secrets():
    from eduart_core.providers.base import register_secret

    register_secret("plain-secret-value-42")
    text = redact("bad key sk-proj-ABCDEFGH12345678 AIzaSyA12345678901234567890123 AKIAABCDEFGHIJKLMNOP "
                  "Authorization: Bearer abcdefghijklmnopqrstuv plain-secret-value-42")
    for leaked in ("sk-proj-ABCDEFGH", "AIzaSy", "AKIAABCD", "abcdefghijklmnopqrstuv", "plain-secret"):
        assert leaked not in text


def test_keys_never_reach_store_journal_or_logs(store, monkeypatch, capsys, caplog):
    from runner_items import fill_store

    from eduart_core.cli import main

    key = "sk-test-SUPERSECRET-0123456789"
    fill_store(store)
    caplog.set_level(logging.DEBUG)
    with StubServer(answer=lambda info: '{"Answers": [{"id": "A"}]}') as stub:
        # A misbehaving server that echoes the Authorization header into its error message.
        stub.fault_for = lambda info: ({"kind": "status", "status": 401} if "mosaic" in info.user_text else None)
        original = stub._error

        def echoing_error(handler, info, status, retry_after):
            auth = info.headers.get("authorization", "")
            payload = json.dumps({"error": {"message": f"invalid key {auth} ({auth.split()[-1]})"}}).encode()
            stub._send(handler, status, payload)

        stub._error = echoing_error
        monkeypatch.setenv("OPENAI_API_KEY", key)
        monkeypatch.setenv("OPENAI_BASE_URL", f"{stub.url}/v1")
        assert main(["run", "--db", str(store.path), "--model", "gpt-5.4-nano", "--quiet"]) == 1  # one request failed (401): exit 1
        assert all(r.headers.get("authorization") == f"Bearer {key}" for r in stub.requests)
        stub._error = original
    out = capsys.readouterr()
    with store.connect(read_only=True) as con:
        error = con.execute("SELECT error FROM responses WHERE error IS NOT NULL").fetchone()[0]
    assert "401" in error and "[redacted]" in error
    files = [store.path, *store.runs_dir.rglob("*"), *store.cache_dir.rglob("*")]
    for path in files:
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
    assert key not in out.out + out.err + caplog.text


def test_the_provider_table_is_the_one_source_of_names_choices_and_messages():
    """Names, `run --provider` choices, credential status and messages all come from `adapters.ADAPTERS`."""
    from eduart_core.cli import build_parser
    from eduart_core.providers import adapters, registry, secrets

    assert registry.PROVIDERS == tuple(adapters.ADAPTERS)
    run = build_parser()._subparsers._group_actions[0].choices["run"]
    choices = next(a.choices for a in run._actions if "--provider" in a.option_strings)
    assert list(choices) == [n for n, a in adapters.ADAPTERS.items() if a.adhoc]
    empty = SecretSource(root=Path("/nonexistent"), environ={})
    assert list(provider_status(empty)) == list(adapters.ADAPTERS)
    for name, entry in adapters.ADAPTERS.items():
        assert entry.needs in secrets.missing_message(name)
        assert provider_status(empty)[name]["configured"] == entry.keyless
        assert entry.installed()  # every SDK of the table is in requirements.txt


def test_a_provider_whose_sdk_is_missing_is_one_line_naming_the_package():
    from dataclasses import replace

    from eduart_core.providers import adapters

    missing = replace(adapters.ADAPTERS["offline"], package="eduart_no_such_sdk", pip_name="eduart-no-such-sdk")
    with pytest.raises(UserError, match="needs the Python package eduart-no-such-sdk"):
        missing.build(load_registry()["chance"], SecretSource(root=Path("/nonexistent"), environ={}))

"""Which batch backend serves which provider, and where its credentials and settings come from.

An explicit registry (provider -> factory): adding a provider's batch API is one entry here plus
its limits in ``models.toml``. Keys come from the same ``SecretSource`` as online runs (env, .env,
Streamlit secrets), read by the provider's entry in the provider table (`adapters.ADAPTERS`), and
go nowhere else; endpoints for local servers and tests are the model's ``base_url`` or the
provider's address variables (`adapters.Adapter.base_url_env`), and for Bedrock batch
``AWS_ENDPOINT_URL_BEDROCK`` and ``AWS_ENDPOINT_URL_S3``.

Whether a model is asked in batch is decided here (`batch_unavailable`), for the estimate, the
Runs page and the batch engine alike. An OpenAI-compatible server is any server at all (Ollama,
vLLM, llama.cpp), and most serve chat only, so its models have a batch API only when their
registry entry says ``batch_api = true``; a model named without an entry never has one.
"""
from __future__ import annotations

from collections.abc import Callable

from ..errors import UserError
from . import secrets as secrets_mod
from .adapters import ADAPTERS
from .batch_base import BatchBackend
from .batch_config import BatchLimits, load_batch_limits
from .registry import ModelSpec


def _openai(spec: ModelSpec, limits: BatchLimits, source, timeout_s: float) -> BatchBackend:
    from .batch_openai import OpenAIBatch

    key = ADAPTERS[spec.provider].credentials(source) or "not-needed"
    return OpenAIBatch(spec.provider, spec.api_model_id, limits, api_key=key,
                       base_url=ADAPTERS[spec.provider].base_url(spec, source), timeout_s=timeout_s)


def _gemini(spec: ModelSpec, limits: BatchLimits, source, timeout_s: float) -> BatchBackend:
    from .batch_gemini import GeminiBatch

    key = ADAPTERS[spec.provider].credentials(source)
    return GeminiBatch(spec.api_model_id, limits, api_key=key,
                       base_url=ADAPTERS[spec.provider].base_url(spec, source), timeout_s=timeout_s)


def _bedrock(spec: ModelSpec, limits: BatchLimits, source, timeout_s: float) -> BatchBackend:
    from .batch_bedrock import BedrockBatch

    creds = ADAPTERS[spec.provider].credentials(source)
    role = source.get("EDUART_BEDROCK_ROLE_ARN") or limits.role_arn
    s3_uri = source.get("EDUART_BEDROCK_S3_URI") or limits.s3_uri
    if not role or not s3_uri:
        raise UserError("Bedrock batch needs an IAM role Bedrock can assume and an S3 location for the files: "
                        "set EDUART_BEDROCK_ROLE_ARN and EDUART_BEDROCK_S3_URI (s3://bucket/prefix), or role_arn "
                        "and s3_uri under [batch.bedrock] in your models TOML")
    return BedrockBatch(spec.api_model_id, limits, credentials=creds, role_arn=role, s3_uri=s3_uri,
                        bedrock_endpoint=source.get("AWS_ENDPOINT_URL_BEDROCK"),
                        s3_endpoint=source.get("AWS_ENDPOINT_URL_S3"), timeout_s=timeout_s)


#: provider -> factory(spec, limits, secret source, timeout_s) -> BatchBackend
BACKENDS: dict[str, Callable[..., BatchBackend]] = {
    "openai": _openai,
    "openai_compatible": _openai,
    "gemini": _gemini,
    "bedrock": _bedrock,
}


#: Providers whose servers differ: batch only for a model whose entry declares ``batch_api = true``.
DECLARED_BY_SERVER = frozenset({"openai_compatible"})


def batch_unavailable(spec: ModelSpec, limits: dict[str, BatchLimits] | None = None) -> str | None:
    """Why ``spec`` cannot be asked in batch, in words for the estimate and the run; None when it can."""
    limits = limits if limits is not None else load_batch_limits()
    if spec.provider not in BACKENDS or spec.provider not in limits:
        return f"provider {spec.provider} has no batch API"
    if spec.batch_api is False:
        return "its models.toml entry says batch_api = false"
    if spec.provider in DECLARED_BY_SERVER and spec.batch_api is not True:
        return ("the server declares no batch API (batch_api = true in a models.toml entry for a server "
                "that serves /v1/files and /v1/batches)")
    return None


def supports_batch(spec: ModelSpec, limits: dict[str, BatchLimits] | None = None) -> bool:
    """Whether the batch engine, the estimate and the Runs page ask ``spec`` in batch."""
    return batch_unavailable(spec, limits) is None


def make_batch_backend(spec: ModelSpec, *, limits: dict[str, BatchLimits] | None = None, secrets=None,
                       timeout_s: float = 120.0) -> BatchBackend:
    """The batch backend for ``spec``; ``UserError`` naming what to set when something is missing."""
    limits = limits if limits is not None else load_batch_limits()
    reason = batch_unavailable(spec, limits)
    if reason is not None:
        raise UserError(f"model {spec.key}: {reason}")
    source = secrets if secrets is not None else secrets_mod.SecretSource()
    return BACKENDS[spec.provider](spec, limits[spec.provider], source, timeout_s)

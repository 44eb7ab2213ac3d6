"""Which batch backend serves which provider, and where its credentials and settings come from.

An explicit registry (provider -> factory): adding a provider's batch API is one entry here plus
its limits in ``models.toml``. Keys come from the same ``SecretSource`` as online runs (env, .env,
Streamlit secrets), read by the provider's entry in the provider table (`adapters.ADAPTERS`), and
go nowhere else; endpoints for local servers and tests come from the
standard variables (``OPENAI_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``, ``AWS_ENDPOINT_URL_BEDROCK``,
``AWS_ENDPOINT_URL_S3``).
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
                       base_url=spec.base_url or source.get("OPENAI_BASE_URL"), timeout_s=timeout_s)


def _gemini(spec: ModelSpec, limits: BatchLimits, source, timeout_s: float) -> BatchBackend:
    from .batch_gemini import GeminiBatch

    key = ADAPTERS[spec.provider].credentials(source)
    return GeminiBatch(spec.api_model_id, limits, api_key=key,
                       base_url=spec.base_url or source.get("GOOGLE_GEMINI_BASE_URL"), timeout_s=timeout_s)


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


def supports_batch(spec: ModelSpec, limits: dict[str, BatchLimits] | None = None) -> bool:
    limits = limits if limits is not None else load_batch_limits()
    return spec.provider in BACKENDS and spec.provider in limits


def make_batch_backend(spec: ModelSpec, *, limits: dict[str, BatchLimits] | None = None, secrets=None,
                       timeout_s: float = 120.0) -> BatchBackend:
    """The batch backend for ``spec``; ``UserError`` naming what to set when something is missing."""
    limits = limits if limits is not None else load_batch_limits()
    if spec.provider not in BACKENDS or spec.provider not in limits:
        raise UserError(f"model {spec.key}: provider {spec.provider} has no batch API")
    source = secrets if secrets is not None else secrets_mod.SecretSource()
    return BACKENDS[spec.provider](spec, limits[spec.provider], source, timeout_s)

"""The provider table: one entry per API, each owning its secrets, its SDK and its builder.

Why a table: the names of the providers, the `run --provider` choices, the credential status of
the Runs page and the "set X" messages all derive from these entries, so a provider is known in
one place. Adding one is a module with a ``build(spec, credentials, source, timeout_s)`` function
and one line in `ADAPTERS`. The adapter module (and its SDK) is imported only when a model of
that provider is built; the table itself imports nothing but the standard library, so the
registry, the secrets and the batch backends can all read it.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import UserError


class Secrets(Protocol):
    """What the table needs of a secret source (`secrets.SecretSource`): a value and where it is from."""

    def get(self, name: str) -> str | None: ...

    def where(self, name: str) -> str | None: ...


def first_key(adapter: Adapter, source: Secrets) -> str | None:
    """The value of the first of the adapter's secret names that is set (an API key)."""
    for names in adapter.secrets:
        for name in names:
            value = source.get(name)
            if value:
                return value
    return None


def aws_credentials(_: Adapter | None, source: Secrets) -> dict | None:
    """boto3 client arguments for Bedrock, or None when nothing is configured."""
    region = source.get("AWS_REGION") or source.get("AWS_DEFAULT_REGION") or "us-east-1"
    key_id, secret = source.get("AWS_ACCESS_KEY_ID"), source.get("AWS_SECRET_ACCESS_KEY")
    if key_id and secret:
        creds = {"region_name": region, "aws_access_key_id": key_id, "aws_secret_access_key": secret}
        token = source.get("AWS_SESSION_TOKEN")
        if token:
            creds["aws_session_token"] = token
        return creds
    if source.get("AWS_PROFILE"):
        return {"region_name": region, "profile_name": source.get("AWS_PROFILE")}
    token = source.get("AWS_BEARER_TOKEN_BEDROCK")
    if token:
        os.environ.setdefault("AWS_BEARER_TOKEN_BEDROCK", token)
        return {"region_name": region}
    return None


@dataclass(frozen=True)
class Adapter:
    """One provider API: how its models are built and what they need."""

    name: str
    #: the adapter module under ``eduart_core.providers``, with ``build(spec, credentials, source, timeout_s)``
    module: str
    #: the secret names it reads, as alternatives: every name of one group set = configured
    secrets: tuple[tuple[str, ...], ...] = ()
    #: what to set, in words (CLI, Runs page, the missing-credential message)
    needs: str = "nothing"
    #: import name and pip name of the SDK the module needs (None: standard library only)
    package: str | None = None
    pip_name: str | None = None
    #: True: runs without credentials (a local server; the key is optional)
    keyless: bool = False
    #: True: a model of this provider can be named on the command line (`run --provider`)
    adhoc: bool = True
    #: the environment names of the server's address, for models that name no ``base_url``
    base_url_env: tuple[str, ...] = ()
    #: the credentials handed to ``build`` (an API key by default), None when not configured
    read: Callable[[Adapter, Secrets], Any] = first_key

    def installed(self) -> bool:
        """Whether the SDK this provider needs can be imported."""
        return self.package is None or importlib.util.find_spec(self.package.split(".")[0]) is not None

    def configured_from(self, source: Secrets) -> str | None:
        """Where the credentials come from ("environment", ".env", "streamlit secrets"), None when missing."""
        for names in self.secrets:
            places = [source.where(name) for name in names]
            if all(places):
                return places[0]
        return None

    def base_url(self, spec: Any, source: Secrets) -> str | None:
        """The model's own ``base_url``, else the first of ``base_url_env`` that is set, else None
        (the SDK's default address)."""
        return spec.base_url or next((value for value in map(source.get, self.base_url_env) if value), None)

    def credentials(self, source: Secrets) -> Any:
        """The credentials ``build`` gets; a one-line UserError naming what to set when they are required and missing."""
        value = self.read(self, source)
        if value is None and not self.keyless:
            raise UserError(missing_message(self.name))
        return value

    def build(self, spec: Any, source: Secrets, *, timeout_s: float = 120.0) -> Any:
        """The adapter object for one model of this provider (its SDK imported now)."""
        if not self.installed():
            raise UserError(f"provider '{self.name}' needs the Python package {self.pip_name or self.package}: "
                            f"pip install {self.pip_name or self.package} (or pip install -r requirements.txt)")
        credentials = self.credentials(source)
        module = importlib.import_module(f"{__package__}.{self.module}")
        return module.build(spec, credentials, source, timeout_s)


#: Every provider, in the order they are listed (CLI, Runs page, error messages).
ADAPTERS: dict[str, Adapter] = {a.name: a for a in (
    Adapter("openai", "openai_chat", (("OPENAI_API_KEY",),), "OPENAI_API_KEY", "openai", "openai",
            base_url_env=("OPENAI_BASE_URL",)),
    Adapter("openai_compatible", "openai_chat", (("OPENAI_COMPATIBLE_API_KEY",),),
            "nothing (optional OPENAI_COMPATIBLE_API_KEY)", "openai", "openai", keyless=True,
            base_url_env=("OPENAI_BASE_URL",)),
    Adapter("gemini", "gemini", (("GEMINI_API_KEY",), ("GOOGLE_API_KEY",)), "GEMINI_API_KEY (or GOOGLE_API_KEY)",
            "google.genai", "google-genai", base_url_env=("GOOGLE_GEMINI_BASE_URL",)),
    Adapter("bedrock", "bedrock", (("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"), ("AWS_PROFILE",),
                                   ("AWS_BEARER_TOKEN_BEDROCK",)),
            "AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK) and AWS_REGION",
            "boto3", "boto3", read=aws_credentials, base_url_env=("AWS_ENDPOINT_URL_BEDROCK_RUNTIME",)),
    Adapter("offline", "offline", keyless=True, adhoc=False, read=lambda adapter, source: None),
)}


def adapter(name: str) -> Adapter:
    """The entry of one provider; a one-line error naming the known ones."""
    if name not in ADAPTERS:
        raise UserError(f"unknown provider {name!r}; use one of {', '.join(ADAPTERS)}")
    return ADAPTERS[name]


def adhoc_providers() -> tuple[str, ...]:
    """The providers a model can be named for on the command line (`run --provider`)."""
    return tuple(name for name, a in ADAPTERS.items() if a.adhoc)


def missing_message(provider: str) -> str:
    """The one line shown when a provider's credentials are missing: what to set and where."""
    needs = ADAPTERS[provider].needs if provider in ADAPTERS else "?"
    return (f"no credentials for provider '{provider}': set {needs} in the environment, "
            f"a .env file or .streamlit/secrets.toml")


def provider_status(source: Secrets) -> dict[str, dict]:
    """Per provider: configured or not, from where, and what to set. Never the key itself."""
    status = {}
    for name, a in ADAPTERS.items():
        where = None if a.keyless else a.configured_from(source)
        status[name] = {"configured": a.keyless or bool(where), "source": where, "needs": a.needs}
    return status

"""Where API keys come from, and the promise that they go nowhere else.

Order: the process environment, then a ``.env`` file (python-dotenv, never overriding the
environment), then Streamlit secrets (``.streamlit/secrets.toml``, read with tomllib because the
library must not import Streamlit). Every value handed out is registered with ``base.redact`` so
it is scrubbed from any error message that might quote it. Which names each provider reads, and
what to set when they are missing, is the provider table's (`adapters.ADAPTERS`).
"""
from __future__ import annotations

import os
import tomllib
from pathlib import Path

from . import adapters
from .base import register_secret

PROJECT_ROOT = Path(__file__).resolve().parents[2]

class SecretSource:
    """Looks a name up in env, .env and Streamlit secrets, in that order."""

    def __init__(self, root: Path | None = None, environ: dict | None = None):
        self.environ = environ if environ is not None else os.environ
        roots = [Path.cwd()] if root is None else [Path(root)]
        if root is None and PROJECT_ROOT not in roots:
            roots.append(PROJECT_ROOT)
        self._dotenv: dict[str, str] = {}
        self._streamlit: dict[str, str] = {}
        for base in reversed(roots):  # cwd wins over the project root
            self._dotenv.update(_read_dotenv(base / ".env"))
            self._streamlit.update(_read_streamlit(base / ".streamlit" / "secrets.toml"))

    def get(self, name: str) -> str | None:
        value = self.environ.get(name) or self._dotenv.get(name) or self._streamlit.get(name)
        if value:
            register_secret(value)
        return value or None

    def where(self, name: str) -> str | None:
        """Which source holds ``name`` (for the Runs page), never the value."""
        if self.environ.get(name):
            return "environment"
        if self._dotenv.get(name):
            return ".env"
        if self._streamlit.get(name):
            return "streamlit secrets"
        return None


def _read_dotenv(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    from dotenv import dotenv_values

    return {k: v for k, v in dotenv_values(path).items() if v}


def _read_streamlit(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    flat: dict[str, str] = {}
    for key, value in data.items():
        if isinstance(value, (str, int)):
            flat[key] = str(value)
        elif isinstance(value, dict):  # [openai] api_key = ... style sections
            for sub, inner in value.items():
                if isinstance(inner, str):
                    flat.setdefault(sub.upper() if sub.isupper() else sub, inner)
    return flat


def provider_status(source: SecretSource | None = None) -> dict[str, dict]:
    """Per provider (`adapters.ADAPTERS`): configured or not, from where, and what to set. Never the key itself."""
    return adapters.provider_status(source or SecretSource())


def aws_credentials(source: SecretSource) -> dict | None:
    """boto3 client arguments for Bedrock, or None when nothing is configured."""
    return adapters.aws_credentials(None, source)


missing_message = adapters.missing_message

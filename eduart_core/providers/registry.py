"""The model registry: which models exist, how to reach them, what they cost.

Why a TOML file shipped with the package: researchers add a model by editing a text file, not
code. ``EDUART_MODELS=path`` points at the user's own file, whose entries replace or extend the
shipped ones key by key. Both files are read on every call of ``load_registry`` (every page run,
every command); the variable itself comes from the environment of the process that reads it.
"""
from __future__ import annotations

import os
import re
import tomllib
import urllib.parse
from dataclasses import dataclass, fields, replace
from pathlib import Path

from ..errors import UserError
from ..vocab import MODEL_KIND, MODEL_KINDS
from .adapters import ADAPTERS

SHIPPED_REGISTRY = Path(__file__).with_name("models.toml")
#: The provider names, from the provider table (`adapters.ADAPTERS`).
PROVIDERS = tuple(ADAPTERS)


@dataclass(frozen=True)
class ModelSpec:
    """Everything needed to call one model and price its calls."""

    key: str
    display_name: str
    family: str
    provider: str
    api_model_id: str
    base_url: str | None = None
    accepts_images: bool = True
    temperature: float | None = None
    seed: int | None = None
    max_output_tokens: int | None = None
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0
    #: `vocab.MODEL_KINDS`: a `baseline` (such as `chance`) is a reference mark, not an examinee.
    kind: str = MODEL_KIND
    #: This model's own online limits (requests in flight, requests per minute), within its
    #: provider's (``[online.<provider>]``); None: only the provider's limits apply.
    concurrency: int | None = None
    rpm: float | None = None
    #: Whether the model's server has a batch API (`providers.batch_registry.batch_unavailable`):
    #: None, its provider decides; an OpenAI-compatible server has one only when this says so.
    batch_api: bool | None = None
    #: The model's training cutoff as an ISO date or its start ("2025", "2025-06"): items published
    #: after it cannot have been trained on (`views.contamination.contamination_period`).
    cutoff: str | None = None

    def cost(self, input_tokens: int | None, output_tokens: int | None) -> float:
        """USD for the given token counts at the registry prices."""
        return ((input_tokens or 0) * self.price_in_per_mtok
                + (output_tokens or 0) * self.price_out_per_mtok) / 1e6

    def with_overrides(self, **changes) -> ModelSpec:
        return replace(self, **changes)


_FIELD_NAMES = {f.name for f in fields(ModelSpec)}
_ISO_START = re.compile(r"\d{4}(-\d{2}(-\d{2})?)?")


def _parse(path: Path) -> dict[str, ModelSpec]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"model registry {path} not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"model registry {path}: invalid TOML: {exc}") from None
    specs: dict[str, ModelSpec] = {}
    for key, entry in (data.get("models") or {}).items():
        if not isinstance(entry, dict):
            raise UserError(f"model registry {path}: models.{key} is not a table")
        unknown = set(entry) - _FIELD_NAMES
        if unknown:
            raise UserError(f"model registry {path}: models.{key}: unknown field(s) {', '.join(sorted(unknown))}")
        missing = [name for name in ("display_name", "provider", "api_model_id") if name not in entry]
        if missing:
            raise UserError(f"model registry {path}: models.{key}: missing {', '.join(missing)}")
        if entry["provider"] not in PROVIDERS:
            raise UserError(f"model registry {path}: models.{key}: provider must be one of {', '.join(PROVIDERS)}")
        if entry.get("kind", MODEL_KIND) not in MODEL_KINDS:
            raise UserError(f"model registry {path}: models.{key}: kind must be one of {', '.join(MODEL_KINDS)}")
        check_online_limits(entry, f"model registry {path}: models.{key}")
        if "cutoff" in entry:
            check_cutoff(entry["cutoff"], f"model registry {path}: models.{key}.cutoff")
        if not isinstance(entry.get("batch_api", False), bool):
            raise UserError(f"model registry {path}: models.{key}.batch_api must be true or false")
        entry = {"family": entry.get("family", "Other"), **entry}
        specs[key] = ModelSpec(key=key, **entry)
    return specs


def check_cutoff(value: object, where: str) -> str:
    """A training cutoff as an ISO date or its start ("2025", "2025-06", "2025-06-30"), or one line."""
    if not isinstance(value, str) or not _ISO_START.fullmatch(value):
        raise UserError(f"{where} must be a date as text: \"2025\", \"2025-06\" or \"2025-06-30\", not {value!r}")
    return value


def check_online_limits(entry: dict, where: str) -> None:
    """``concurrency`` a positive whole number, ``rpm`` a positive number, when given."""
    concurrency = entry.get("concurrency")
    if concurrency is not None and (isinstance(concurrency, bool) or not isinstance(concurrency, int)
                                    or concurrency < 1):
        raise UserError(f"{where}.concurrency must be a whole number of at least 1")
    rpm = entry.get("rpm")
    if rpm is not None and (isinstance(rpm, bool) or not isinstance(rpm, int | float) or not 0 < rpm < float("inf")):
        raise UserError(f"{where}.rpm must be a positive number of requests per minute")


def load_registry(path: str | os.PathLike | None = None) -> dict[str, ModelSpec]:
    """Shipped models, then the user's file (``path`` or ``$EDUART_MODELS``) on top, key by key."""
    specs = _parse(SHIPPED_REGISTRY)
    user = path or os.environ.get("EDUART_MODELS")
    if user:
        specs.update(_parse(Path(user).expanduser()))
    return specs


def get_spec(key: str, registry: dict[str, ModelSpec] | None = None) -> ModelSpec:
    registry = registry if registry is not None else load_registry()
    if key not in registry:
        raise UserError(f"unknown model '{key}'; known: {', '.join(sorted(registry))}")
    return registry[key]


def check_base_url(url: str, where: str = "the base URL") -> str:
    """``url`` stripped, when it is an http(s) address with a host; else one line saying what to give.

    The address is not repeated in the message (it may hold a password), and a user:password part
    is refused: a key belongs in the provider's key variable, never in a URL that is recorded."""
    url = str(url).strip()
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 -- raises on a port that is not a number
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"{where} must be an http:// or https:// address of the server, "
                        "e.g. http://127.0.0.1:8000/v1")
    if parts.username or parts.password:
        raise UserError(f"{where} must not hold a user name or password: set the key as "
                        "OPENAI_COMPATIBLE_API_KEY instead")
    return url


def adhoc_spec(provider: str, model_id: str, base_url: str | None = None,
               accepts_images: bool = True, display_name: str | None = None) -> ModelSpec:
    """A model named by provider, API model id (and server) without a registry entry: ``run
    --provider --model-id --base-url`` and the Runs page's "An OpenAI-compatible server"."""
    if provider not in PROVIDERS:
        raise UserError(f"--provider must be one of {', '.join(PROVIDERS)}")
    model_id = str(model_id or "").strip()
    if not model_id:
        raise UserError("an ad-hoc model needs its API model id (--model-id)")
    if provider == "openai_compatible" and not base_url:
        raise UserError("--provider openai_compatible needs --base-url URL")
    if base_url:
        base_url = check_base_url(base_url, "--base-url")
    safe = model_id.replace("/", "_").replace(":", "_")
    return ModelSpec(key=f"{provider}:{safe}", display_name=(display_name or "").strip() or f"{model_id} ({provider})",
                     family="Other", provider=provider, api_model_id=model_id, base_url=base_url,
                     accepts_images=accepts_images)


def make_provider(spec: ModelSpec, *, timeout_s: float = 120.0, secrets=None):
    """The adapter for ``spec``; raises ``UserError`` naming the variable to set when a key is missing
    (or the package to install when the provider's SDK is not there)."""
    from . import secrets as secrets_mod

    source = secrets if secrets is not None else secrets_mod.SecretSource()
    if spec.provider not in ADAPTERS:
        raise UserError(f"unknown provider {spec.provider}")
    return ADAPTERS[spec.provider].build(spec, source, timeout_s=timeout_s)

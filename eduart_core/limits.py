"""Size and time limits, configurable through environment variables.

Why limits at all: files and answers come from other people and other machines. Without a bound,
one record with a 200 MB text field or one image declaring 20000 x 20000 pixels takes the
dashboard from a few hundred MB to many GB, and one ``Retry-After: 100000`` parks a worker for a
day. Every limit has a default that no real benchmark comes near, an environment variable to
raise it, and the variable's name appears in every message that a limit produces, so the user
knows what to change.

The values are read from the environment on every call (cheap), so a test or a long-running
server picks up a change without a restart.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .errors import UserError

MB = 1024 * 1024


class LimitConfigError(UserError):
    """An environment variable of a limit holds no usable value (never a per-file problem)."""


@dataclass(frozen=True)
class Limit:
    """One configurable limit: the variable that sets it, its unit and default."""

    env: str
    default: float
    unit: str          # how the variable is written: "MB", "Mpx", "characters", "seconds"
    scale: float = 1.0  # value in the variable x scale = value used by the code (MB -> bytes)
    doc: str = ""


#: Every limit, by the name the code uses. The README lists the same table.
LIMITS: dict[str, Limit] = {
    "max_file_bytes": Limit("EDUART_MAX_FILE_MB", 50, "MB", MB,
                            "largest item, answer or JSONL file an import reads"),
    "max_text_chars": Limit("EDUART_MAX_TEXT_CHARS", 200_000, "characters", 1,
                            "longest text field in an imported record or answer"),
    "max_image_bytes": Limit("EDUART_MAX_IMAGE_MB", 20, "MB", MB, "largest image file"),
    "max_image_pixels": Limit("EDUART_MAX_IMAGE_MPX", 50, "Mpx", 1_000_000,
                              "largest image in pixels (width x height)"),
    "max_shown_chars": Limit("EDUART_MAX_SHOWN_CHARS", 4_000, "characters", 1,
                             "longest answer shown in full on a page (longer: truncated, with a download)"),
    "retry_after_cap_s": Limit("EDUART_RETRY_AFTER_CAP_S", 300, "seconds", 1,
                               "longest wait a server's Retry-After can impose, jitter included"),
    "ingest_wait_s": Limit("EDUART_INGEST_WAIT_S", 120, "seconds", 1,
                           "how long a run's final ingest waits for a busy store"),
    "max_repetitions": Limit("EDUART_MAX_REPETITIONS", 20, "repetitions", 1,
                             "most repetitions of a reproducibility check (each one asks every item again)"),
    "max_concurrency": Limit("EDUART_MAX_CONCURRENCY", 64, "requests", 1,
                             "most requests in flight at once per provider that a launch may ask for"),
}

#: JSON nesting deeper than this is refused (real records nest 3-4 levels); not configurable
#: because the recursive code below the importers (copy, dump, the SQL JSON type) needs a bound.
MAX_JSON_DEPTH = 64


def limit(name: str) -> float:
    """The current value of limit ``name`` in the code's unit (bytes, pixels, characters, seconds)."""
    spec = LIMITS[name]
    raw = os.environ.get(spec.env)
    if raw is None or not raw.strip():
        return spec.default * spec.scale
    try:
        value = float(raw)
    except ValueError:
        raise LimitConfigError(f"{spec.env}={raw!r}: expected a number of {spec.unit}") from None
    if not value > 0 or value == float("inf"):
        raise LimitConfigError(f"{spec.env}={raw!r}: expected a positive number of {spec.unit}")
    return value * spec.scale


def int_limit(name: str) -> int:
    return int(limit(name))


def describe(name: str) -> str:
    """``50 MB (EDUART_MAX_FILE_MB)``: the current value and how to change it, for messages."""
    spec = LIMITS[name]
    value = limit(name) / spec.scale
    shown = f"{value:g}" if spec.unit != "characters" else f"{int(value):,}"
    return f"{shown} {spec.unit} ({spec.env})"
